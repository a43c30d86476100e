//! Text into HTML: every string from a trajectory goes through [`esc`] (or [`push_esc`]) on its
//! way into the page, in text and in attribute values alike. It is first made visible as the
//! terminal sees it (`sanitize`: escape sequences removed, hidden text shown, bidi overrides and
//! invisible characters replaced), then the five characters HTML gives a meaning are escaped,
//! so no byte of it can open a tag, end an attribute or reorder what a reader sees.

use crate::sanitize::sanitize;

/// Appends `text`, sanitized and escaped, to `out`.
pub fn push_esc(out: &mut String, text: &str) {
    let clean = sanitize(text);
    let mut rest: &str = &clean;
    while let Some(at) = rest.find(['&', '<', '>', '"', '\'']) {
        out.push_str(&rest[..at]);
        out.push_str(match rest.as_bytes()[at] {
            b'&' => "&amp;",
            b'<' => "&lt;",
            b'>' => "&gt;",
            b'"' => "&quot;",
            _ => "&#39;",
        });
        rest = &rest[at + 1..];
    }
    out.push_str(rest);
}

/// `text`, sanitized and escaped.
pub fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    push_esc(&mut out, text);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_quotes_and_hidden_text_come_out_inert() {
        let text = "<script>alert('x')</script> \" onload=\"x\" a&b \u{202e}evil\u{202c} \u{1b}]0;title\u{7}";
        let out = esc(text);
        for bad in ['<', '>', '"', '\'', '\u{202e}', '\u{202c}', '\u{1b}', '\u{7}'] {
            assert!(!out.contains(bad), "{bad:?} in {out}");
        }
        assert!(
            out.starts_with("&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &quot; onload=&quot;x&quot; a&amp;b "),
            "{out}"
        );
        assert!(out.contains("title"), "hidden text is shown: {out}");
    }
}
