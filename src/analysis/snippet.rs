//! Search snippets: the words around a phrase match, with the match in `[brackets]`.
//!
//! The full-text index finds the step; this finds where in its text the phrase is, the way
//! the index tokenizes (words of letters and digits, case-insensitive), on sanitized text.

use crate::sanitize::sanitize;

/// A one-line excerpt of `text` around the first match of `terms` (in order, separated only by
/// non-word characters), or `None` when the phrase is not in the text.
pub fn snippet(text: &str, terms: &[&str], radius: usize) -> Option<String> {
    let clean = sanitize(text);
    let (start, end) = find_phrase(&clean, terms)?;
    let from = floor_boundary(&clean, start.saturating_sub(radius));
    let to = ceil_boundary(&clean, (end + radius).min(clean.len()));
    let one_line = |s: &str| s.replace(['\n', '\t'], " ");
    Some(format!(
        "{}{}[{}]{}{}",
        if from > 0 { "..." } else { "" },
        one_line(&clean[from..start]),
        one_line(&clean[start..end]),
        one_line(&clean[end..to]),
        if to < clean.len() { "..." } else { "" }
    ))
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Byte range of the phrase: each term a whole word (ASCII case-insensitive), consecutive
/// terms separated by non-word characters only.
fn find_phrase(text: &str, terms: &[&str]) -> Option<(usize, usize)> {
    let first = terms.first()?;
    let mut from = 0;
    while let Some(at) = find_word(text, first, from) {
        let mut end = at + first.len();
        let mut ok = true;
        for term in &terms[1..] {
            let gap = text[end..].find(|c: char| is_word(c)).map(|g| end + g);
            match gap {
                Some(g) if word_at(text, term, g) => end = g + term.len(),
                _ => {
                    ok = false;
                    break;
                }
            }
        }
        if ok {
            return Some((at, end));
        }
        from = at + first.len();
    }
    None
}

fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    text.get(from..)?.char_indices().map(|(i, _)| from + i).find(|&at| word_at(text, word, at))
}

/// Whether `word` stands at byte `at` as a whole word.
fn word_at(text: &str, word: &str, at: usize) -> bool {
    let Some(candidate) = text.get(at..at + word.len()) else { return false };
    if !candidate.eq_ignore_ascii_case(word) {
        return false;
    }
    let before_ok = text[..at].chars().next_back().is_none_or(|c| !is_word(c));
    let after_ok = text[at + word.len()..].chars().next().is_none_or(|c| !is_word(c));
    before_ok && after_ok
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phrase_is_bracketed_with_context() {
        let t = "line one\nYour changes have NOT been applied. Please fix";
        assert_eq!(
            snippet(t, &["not", "been", "applied"], 10).as_deref(),
            Some("...nges have [NOT been applied]. Please f...")
        );
    }

    #[test]
    fn whole_words_only_and_colour_codes_ignored() {
        let t = "cannot do it; \u{1b}[31mnot\u{1b}[0m now";
        assert_eq!(snippet(t, &["not"], 100).as_deref(), Some("cannot do it; [not] now"));
        assert_eq!(snippet("cannot", &["not"], 5), None);
    }

    #[test]
    fn multibyte_text_is_cut_on_boundaries() {
        let t = format!("{} match {}", "é".repeat(50), "ü".repeat(50));
        let s = snippet(&t, &["match"], 7).unwrap_or_default();
        assert!(s.contains("[match]"), "{s}");
    }
}
