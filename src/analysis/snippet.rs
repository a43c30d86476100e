//! Search snippets: the words around a phrase match, with the match in `[brackets]`.
//!
//! The full-text index finds the step; this finds where in its text the phrase is, the way
//! the index tokenizes (words of letters and digits, case-insensitive), on sanitized text.
//!
//! A stored text may be hundreds of megabytes (one observation), so it is read in pieces
//! ([`Finder::feed`]): only a window of the last [`KEEP`] bytes is kept between pieces, and a
//! snippet is bounded however long the text or the matched word (a base64 blob is one word): the
//! match shows at most `4 × radius` bytes plus the phrase's own length, then `…`.

use crate::sanitize::sanitize;

/// Bytes of sanitized text kept from one piece to the next: a match starting in them is looked
/// for again once more text has come, so it gets its words and the context after it.
const KEEP: usize = 64 << 10;

/// A one-line excerpt of `text` around the first match of `terms` (in order), or `None` when
/// the phrase is not in the text. Words are split as SQLite's `unicode61` tokenizer splits them
/// (letters and digits; `_` and punctuation separate) and compared case-insensitively. When the
/// index matched on something this cannot see (diacritics folded by the tokenizer), the first
/// term alone is looked for.
pub fn snippet(text: &str, terms: &[&str], radius: usize) -> Option<String> {
    let mut finder = Finder::new(terms, radius);
    finder.feed(text).or_else(|| finder.finish())
}

/// [`snippet`] over a text that comes in pieces, in order, holding a bounded window of it.
pub struct Finder {
    /// The phrase's words, lowercase.
    terms: Vec<String>,
    radius: usize,
    /// The longest match shown whole, in bytes.
    cap: usize,
    /// Bytes kept between pieces (at least [`KEEP`]; more for a very long phrase).
    keep: usize,
    /// Sanitized text not yet dropped: the end of the text seen so far.
    window: String,
    /// Sanitized bytes dropped before `window`.
    dropped: usize,
    /// `window` starts inside a word: its first word is a fragment, never a match.
    fragment: bool,
    /// Raw text held back from sanitizing: what may be the start of an escape sequence or of
    /// `\r\n`, which sanitize reads with what follows.
    pending: String,
    /// The first match of the first term alone, for when the whole phrase is nowhere.
    fallback: Option<String>,
}

impl Finder {
    pub fn new(terms: &[&str], radius: usize) -> Finder {
        let terms: Vec<String> =
            terms.iter().flat_map(|t| words(t, false).into_iter().map(|(a, b)| lower(&t[a..b]))).collect();
        let cap = 4 * radius + terms.iter().map(|t| t.len() + 1).sum::<usize>();
        Finder {
            terms,
            radius,
            cap,
            keep: KEEP.max(2 * (cap + 2 * radius)),
            window: String::new(),
            dropped: 0,
            fragment: false,
            pending: String::new(),
            fallback: None,
        }
    }

    /// Read the next piece of the text. The snippet as soon as the phrase is found with enough
    /// text after it; `None` until then.
    pub fn feed(&mut self, piece: &str) -> Option<String> {
        self.pending.push_str(piece);
        let ready = sanitize_boundary(&self.pending);
        self.window.push_str(&sanitize(&self.pending[..ready]));
        self.pending.drain(..ready);
        // Looked at once twice the kept window has come, so each byte is looked at about twice
        // however small the pieces.
        if self.window.len() < 2 * self.keep {
            return None;
        }
        self.look(false)
    }

    /// The text has ended: the snippet of the phrase in its last part, else of the first term's
    /// first match, else `None`.
    pub fn finish(mut self) -> Option<String> {
        let rest = std::mem::take(&mut self.pending);
        self.window.push_str(&sanitize(&rest));
        self.look(true).or(self.fallback)
    }

    /// Look for the phrase in the window. A match is taken once it starts before the last
    /// `keep` bytes (or the text has ended); one that starts later is found again in the next
    /// window, which still holds it.
    fn look(&mut self, last: bool) -> Option<String> {
        let tokens = words(&self.window, self.fragment);
        let settled = if last { self.window.len() } else { self.window.len().saturating_sub(self.keep) };
        let phrase = find_phrase(&self.window, &tokens, &self.terms, last);
        if let Some((start, end)) = phrase.filter(|(start, _)| *start < settled || last) {
            return Some(self.render(start, end, last));
        }
        if self.fallback.is_none()
            && let Some((start, end)) =
                self.terms.get(..1).and_then(|first| find_phrase(&self.window, &tokens, first, last))
            && (start < settled || last)
        {
            self.fallback = Some(self.render(start, end, last));
        }
        if !last && settled > 0 {
            let cut = floor_boundary(&self.window, settled);
            let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
            self.fragment = word(self.window[..cut].chars().next_back()) && word(self.window[cut..].chars().next());
            self.window.drain(..cut);
            self.dropped += cut;
        }
        None
    }

    /// The snippet of the match at `start..end` of the window.
    fn render(&self, start: usize, end: usize, last: bool) -> String {
        let w = &self.window;
        let shown = if end - start > self.cap { floor_boundary(w, start + self.cap) } else { end };
        let cut = shown < end;
        let from = floor_boundary(w, start.saturating_sub(self.radius));
        let to = if cut { end } else { ceil_boundary(w, (end + self.radius).min(w.len())) };
        let one_line = |s: &str| s.replace(['\n', '\t'], " ");
        format!(
            "{}{}[{}{}]{}{}",
            if self.dropped + from > 0 { "..." } else { "" },
            one_line(&w[from..start]),
            one_line(&w[start..shown]),
            if cut { "…" } else { "" },
            one_line(&w[end..to]),
            if cut || to < w.len() || !last { "..." } else { "" }
        )
    }
}

/// How much of `raw` can be sanitized now without what follows it: all but a trailing `\r` and
/// an escape sequence that starts in the last 4 KiB (sanitize removes a whole sequence; cut in
/// two, its end would show as text).
fn sanitize_boundary(raw: &str) -> usize {
    let tail = floor_boundary(raw, raw.len().saturating_sub(4096));
    let escape = raw[tail..].rfind(['\u{1b}', '\u{9b}', '\u{9d}']).map(|i| tail + i);
    let end = escape.unwrap_or(raw.len());
    if raw[..end].ends_with('\r') { end - 1 } else { end }
}

fn lower(word: &str) -> String {
    word.chars().flat_map(char::to_lowercase).collect()
}

/// Whether `word`, lowercased, starts with `term` (lowercase).
fn starts_with(word: &str, term: &str) -> bool {
    let mut lowered = word.chars().flat_map(char::to_lowercase);
    term.chars().all(|t| lowered.next() == Some(t))
}

/// Whether `word`, lowercased, is `term` (lowercase).
fn equals(word: &str, term: &str) -> bool {
    let mut lowered = word.chars().flat_map(char::to_lowercase);
    term.chars().all(|t| lowered.next() == Some(t)) && lowered.next().is_none()
}

/// Words as byte ranges; `fragment`: the first word is the end of a word cut off, left out.
fn words(text: &str, fragment: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices().chain(std::iter::once((text.len(), ' '))) {
        match (c.is_alphanumeric(), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if fragment && out.first().is_some_and(|w| w.0 == 0) {
        out.remove(0);
    }
    out
}

/// Byte range of the first run of consecutive words equal to `terms`, the last one allowed to be
/// a prefix (as the search treats it). Unless the text has ended (`last`), a word that reaches
/// the end of `text` may go on in the next piece: it can only be the last term's prefix.
fn find_phrase(text: &str, tokens: &[(usize, usize)], terms: &[String], last: bool) -> Option<(usize, usize)> {
    if terms.is_empty() || tokens.len() < terms.len() {
        return None;
    }
    let n = terms.len() - 1;
    tokens
        .windows(terms.len())
        .find(|w| {
            w.iter().zip(terms).enumerate().all(|(i, (&(a, b), term))| {
                let word = &text[a..b];
                if i == n { starts_with(word, term) } else { (last || b < text.len()) && equals(word, term) }
            })
        })
        .map(|w| (w[0].0, w[n].1))
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

    /// The snippet of a text fed in pieces of `size` bytes (cut on character boundaries).
    fn in_pieces(text: &str, terms: &[&str], size: usize) -> Option<String> {
        let mut finder = Finder::new(terms, 60);
        let mut rest = text;
        while !rest.is_empty() {
            let (piece, after) = rest.split_at(ceil_boundary(rest, size.min(rest.len())));
            if let Some(found) = finder.feed(piece) {
                return Some(found);
            }
            rest = after;
        }
        finder.finish()
    }

    #[test]
    fn pieces_of_any_size_give_the_snippet_of_the_whole_text() {
        // Filler of words, colour codes and CRLFs, longer than the kept window several times.
        let unit = "said \u{1b}[1;31mnothing\u{1b}[0m of note ökonomie\r\n";
        let filler = unit.repeat(300_000 / unit.len());
        let at_end = format!("{filler}so it was not been APPLIED at all");
        let straddling = format!("{}not been applied{}", &filler[..KEEP + 3], &filler[..2 * KEEP]);
        let cases: [(&str, &[&str]); 4] = [
            (&at_end, &["not", "been", "appl"]),
            (&straddling, &["not", "been", "applied"]),
            (&at_end, &["ökonomie"]),
            (&at_end, &["nothing", "of", "zzz"]),
        ];
        for (text, terms) in cases {
            let whole = snippet(text, terms, 60);
            assert!(whole.is_some(), "{terms:?}");
            for size in [1, 7, 4096, KEEP - 1, KEEP + 5, 1 << 20] {
                assert_eq!(in_pieces(text, terms, size), whole, "{terms:?} in pieces of {size}");
            }
        }
        assert_eq!(
            snippet(&at_end, &["not", "been", "appl"], 10).as_deref(),
            Some("...so it was [not been APPLIED] at all")
        );
        assert_eq!(in_pieces(&filler, &["zzz"], 1000), None);
    }

    #[test]
    fn a_giant_word_is_cut_in_the_snippet() {
        let text = format!("header iVBOR{} trailer", "x".repeat(5_000_000));
        for size in [4096, 1 << 20, text.len()] {
            let s = in_pieces(&text, &["ivbor"], size).unwrap_or_default();
            assert!(s.starts_with("header [iVBORxxx"), "{}", &s[..s.len().min(100)]);
            assert!(s.ends_with("xxx…]..."), "{}", &s[s.len().saturating_sub(100)..]);
            assert!(s.len() <= 4 * 60 + 7 + 20, "{} bytes", s.len());
        }
        // Context after a long match is not shown, context before it is.
        let text = format!("{} tail {}", "y".repeat(1000), "z".repeat(1000));
        let s = snippet(&text, &["tail"], 5).unwrap_or_default();
        assert_eq!(s, "...yyyy [tail] zzzz...");
    }

    #[test]
    fn multibyte_text_is_cut_on_boundaries() {
        let t = format!("{} match {}", "é".repeat(50), "ü".repeat(50));
        let s = snippet(&t, &["match"], 7).unwrap_or_default();
        assert!(s.contains("[match]"), "{s}");
    }
}
