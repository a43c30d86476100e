//! Search snippets: the words around a phrase match, with the match in `[brackets]`.
//!
//! The full-text index finds the step; this finds where in its text the phrase is, the way
//! the index tokenizes (words of letters and digits, case-insensitive), on sanitized text.

use crate::sanitize::sanitize;

/// A one-line excerpt of `text` around the first match of `terms` (in order), or `None` when
/// the phrase is not in the text. Words are split as SQLite's `unicode61` tokenizer splits them
/// (letters and digits; `_` and punctuation separate) and compared case-insensitively. When the
/// index matched on something this cannot see (diacritics folded by the tokenizer), the first
/// term alone is looked for.
pub fn snippet(text: &str, terms: &[&str], radius: usize) -> Option<String> {
    let clean = sanitize(text);
    let terms: Vec<String> = terms.iter().flat_map(|t| words(t)).map(|(_, _, w)| w).collect();
    let tokens = words(&clean);
    let (start, end) = find_phrase(&tokens, &terms).or_else(|| find_phrase(&tokens, terms.get(..1)?))?;
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

/// Words as (byte start, byte end, lowercase text).
fn words(text: &str) -> Vec<(usize, usize, String)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i, text[s..i].to_lowercase()));
                start = None;
            }
            _ => {}
        }
    }
    out
}

/// Byte range of the first run of consecutive tokens equal to `terms`, the last one allowed
/// to be a prefix (as the search treats it).
fn find_phrase(tokens: &[(usize, usize, String)], terms: &[String]) -> Option<(usize, usize)> {
    if terms.is_empty() || tokens.len() < terms.len() {
        return None;
    }
    let last = terms.len() - 1;
    tokens
        .windows(terms.len())
        .find(|w| {
            w.iter()
                .zip(terms)
                .enumerate()
                .all(|(i, (t, term))| if i == last { t.2.starts_with(term.as_str()) } else { &t.2 == term })
        })
        .map(|w| (w[0].0, w[w.len() - 1].1))
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
    fn underscores_separate_words_like_the_index_tokenizer() {
        let t = "see pydicom/pixel_data_handlers/numpy_handler.py line 4";
        assert_eq!(snippet(t, &["numpy", "handler"], 4).as_deref(), Some("...ers/[numpy_handler].py ..."));
        assert_eq!(snippet("ÉCOLE normale", &["école"], 20).as_deref(), Some("[ÉCOLE] normale"));
        // Only the first word is found: still a snippet.
        assert_eq!(snippet("café au lait", &["cafe", "au"], 20), None);
        assert_eq!(snippet("a cafe, then", &["cafe", "zzz"], 3).as_deref(), Some("a [cafe], t..."));
    }

    #[test]
    fn the_last_word_may_be_a_prefix() {
        assert_eq!(
            snippet("raise ZeroDivisionError()", &["zerodiv"], 40).as_deref(),
            Some("raise [ZeroDivisionError]()")
        );
        assert_eq!(snippet("a cannot b", &["not"], 40), None);
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
