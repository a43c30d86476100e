//! What a substitution did to a line the run never showed, read back from a later view of that
//! line (or the submitted patch's new side). `sed -i 'Ns/old/new/'` with a plain pattern and a
//! plain replacement: the line shown afterwards is the result, so the line before is one whose
//! substitution gives it. Every such line is tried (each place the replacement stands put back
//! to the pattern's text, all of them, or none: the substitution matched nothing); the effect
//! is known only when exactly one of them gives the line shown.
//!
//! The same holds for a substitution on every line (`sed -i 's/old/new/g'`, `perl -pi -e
//! 's/old/new/g'`) for each line it may have changed unseen, and through a chain: a line
//! rewritten by several substitutions before a view shows it is inverted one step at a time,
//! latest first, as long as each step is determined ([`super::replay`] walks the chain).

use super::known::{EditId, Known, Line, Seg};
use super::pattern::{Pattern, Replacement};
use std::rc::Rc;

/// The edit that wrote line `n` of `known` when the line's text was never shown (read without
/// splitting gaps; `None` for a line in a gap, a line shown, or one whose place is unknown).
pub fn unseen_origin(known: &Known, n: usize) -> Option<EditId> {
    let mut at = 1usize;
    for seg in &known.segs {
        match seg {
            Seg::Line(Line { text, origin, .. }) => {
                if at == n {
                    return if text.is_none() { *origin } else { None };
                }
                at += 1;
            }
            Seg::Gap { len: Some(len), .. } => {
                if n < at + len {
                    return None;
                }
                at += len;
            }
            Seg::Gap { len: None, .. } => return None,
        }
    }
    None
}

/// The most places of the replacement's text a line shown may have to be inverted.
const MAX_PLACES: usize = 256;

/// One substitution on one numbered line, or on every line, pattern and replacement plain text.
#[derive(Debug)]
pub struct LineSubst {
    /// The line it addressed, numbered as the file was when it ran; `None`: every line.
    pub line: Option<usize>,
    /// The edit that wrote the addressed line before (a substitution on it, also waiting for
    /// a view), when the line was never shown: the next step of the chain.
    pub prev: Option<EditId>,
    pub(super) re: Rc<Pattern>,
    pub(super) with: Replacement,
    pub(super) nth: usize,
    pub(super) global: bool,
    /// The pattern's text and the replacement's.
    pub(super) from: String,
    pub(super) to: String,
}

/// What a later view says the substitution did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inverted {
    /// It matched nothing: the line shown is the line it ran on.
    Unchanged,
    /// The line before it ran.
    Was(String),
}

impl LineSubst {
    /// Whether the substitution run on `text` gives `shown` (`text` itself when nothing
    /// matched; a pattern that passes the engine's bound gives nothing).
    fn gives(&self, text: &str, shown: &str) -> bool {
        match self.re.substitute(text, &self.with, self.nth, self.global, shown.len()) {
            Ok(Some(out)) => out == shown,
            Ok(None) => text == shown,
            Err(_) => false,
        }
    }

    /// What the line was, given what it became; `None` when more than one line (or none)
    /// would have become it.
    pub fn invert(&self, shown: &str) -> Option<Inverted> {
        if self.from.is_empty() || self.to.is_empty() || self.from == self.to {
            return None;
        }
        // Each place is a candidate line, each as long as the line: past a few hundred places
        // the work grows with their square, for a line no view tells apart anyway.
        if shown.match_indices(&self.to).nth(MAX_PLACES).is_some() {
            return None;
        }
        let mut candidates: Vec<String> = vec![shown.to_string()];
        for (at, _) in shown.match_indices(&self.to) {
            candidates.push(format!("{}{}{}", &shown[..at], self.from, &shown[at + self.to.len()..]));
        }
        candidates.push(shown.replace(&self.to, &self.from));
        candidates.sort_unstable();
        candidates.dedup();
        let mut fits = candidates.into_iter().filter(|c| self.gives(c, shown));
        let was = fits.next()?;
        if fits.next().is_some() {
            return None;
        }
        Some(if was == shown { Inverted::Unchanged } else { Inverted::Was(was) })
    }
}

#[cfg(test)]
mod tests {
    use super::super::sed::Script;
    use super::*;

    fn subst(script: &str) -> LineSubst {
        Script::sed(script, false, false).ok().and_then(|s| s.line_subst()).unwrap_or_else(|| panic!("{script}"))
    }

    #[test]
    fn a_line_shown_after_a_substitution_says_what_it_was() {
        let s = subst("12s/handler/handler_v3/");
        assert_eq!(s.line, Some(12));
        assert_eq!(s.invert("    x = handler_v3(y)"), Some(Inverted::Was("    x = handler(y)".into())));
        // Without the pattern's text and without the replacement: it matched nothing.
        assert_eq!(s.invert("    x = other(y)"), Some(Inverted::Unchanged));
        let g = subst("4s/ab/ab_c/g");
        assert_eq!(g.invert("ab_c + ab_c"), Some(Inverted::Was("ab + ab".into())));
    }

    #[test]
    fn what_more_than_one_line_could_have_become_stays_unknown() {
        // `bar` may have been there before, or made by the substitution.
        let s = subst("3s/foo/bar/");
        assert_eq!(s.invert("x = bar"), None);
        // With `g` every `bar` may be old or new.
        let g = subst("3s/foo/bar/g");
        assert_eq!(g.invert("bar bar"), None);
    }

    #[test]
    fn a_substitution_on_every_line_inverts_each_line_shown() {
        let g = subst("s/token/token_g7/g");
        assert_eq!(g.line, None);
        assert_eq!(g.invert("a(token_g7, token_g7)"), Some(Inverted::Was("a(token, token)".into())));
        assert_eq!(g.invert("nothing here"), Some(Inverted::Unchanged));
        let perl = Script::perl("s/token/token_g7/g").ok().and_then(|s| s.line_subst());
        assert_eq!(perl.and_then(|p| p.invert("x = token_g7")), Some(Inverted::Was("x = token".into())));
    }

    #[test]
    fn only_one_plain_substitution_on_one_line_or_every_line_is_inverted() {
        for script in ["3s/a.*/b/", "3s/a/&b/", "3,5s/a/b/", "3s/a/b/;4d", "/x/s/a/b/", "3!s/a/b/", "s/a/b/;s/c/d/"] {
            let s = Script::sed(script, false, false).ok();
            assert!(s.as_ref().and_then(|s| s.line_subst()).is_none(), "{script}");
        }
    }
}
