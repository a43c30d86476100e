//! What a substitution did to a line the run never showed, read back from a later view of that
//! line (or the submitted patch's new side). `sed -i 'Ns/old/new/'` with a plain pattern and a
//! plain replacement: the line shown afterwards is the result, so the line before is one whose
//! substitution gives it. Every such line is tried (each place the replacement stands put back
//! to the pattern's text, all of them, or none: the substitution matched nothing); the effect
//! is known only when exactly one of them gives the line shown.

use super::pattern::{Pattern, Replacement};
use std::rc::Rc;

/// One substitution on one numbered line, pattern and replacement plain text.
#[derive(Debug)]
pub struct LineSubst {
    /// The line it addressed, numbered as the file was when it ran.
    pub line: usize,
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
    /// The substitution run on `text` (`text` itself when nothing matched).
    fn forward(&self, text: &str) -> String {
        self.re.substitute(text, &self.with, self.nth, self.global).unwrap_or_else(|| text.to_string())
    }

    /// What the line was, given what it became; `None` when more than one line (or none)
    /// would have become it.
    pub fn invert(&self, shown: &str) -> Option<Inverted> {
        if self.from.is_empty() || self.to.is_empty() || self.from == self.to {
            return None;
        }
        let mut candidates: Vec<String> = vec![shown.to_string()];
        for (at, _) in shown.match_indices(&self.to) {
            candidates.push(format!("{}{}{}", &shown[..at], self.from, &shown[at + self.to.len()..]));
        }
        candidates.push(shown.replace(&self.to, &self.from));
        candidates.sort_unstable();
        candidates.dedup();
        let mut fits = candidates.into_iter().filter(|c| self.forward(c) == shown);
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
        assert_eq!(s.line, 12);
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
    fn only_one_plain_substitution_on_one_line_is_inverted() {
        for script in ["s/a/b/", "3s/a.*/b/", "3s/a/&b/", "3,5s/a/b/", "3s/a/b/;4d", "/x/s/a/b/", "3!s/a/b/"] {
            let s = Script::sed(script, false, false).ok();
            assert!(s.as_ref().and_then(|s| s.line_subst()).is_none(), "{script}");
        }
    }
}
