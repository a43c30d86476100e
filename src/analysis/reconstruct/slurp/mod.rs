//! Substitutions that see a file's whole text at once, newlines and all: `perl -0777 -pi -e
//! 's/.../.../s'` (Perl's slurp mode; `-0` too, for a text file holds no NUL) and `sed -z -i
//! 's/.../.../'` (lines split at NUL: again the whole text). The patterns are translated
//! ([`translate`]) for the `regex` crate and run on the file's known lines as a Python script's
//! `re.sub` is ([`super::pyscript::Doc`]): on a file known whole, exactly; on a file with lines
//! never shown, only a pattern whose matches stay within what the run showed (plain text, or no
//! operator that reaches past a line's end) is run there, the rest of the file assumed not to
//! match (the edit partial); anything else leaves the edit unknown.

mod apply;
pub mod translate;

use super::known::Known;
use super::pattern::{Replacement, perl_statements};
use super::pyscript::Doc;
use super::sed::Unsupported;
use super::sed::parse::substitutions;
use std::cell::Cell;
use translate::{Flags, Translated};

/// One substitution on the whole text.
#[derive(Debug)]
struct Sub {
    re: regex::bytes::Regex,
    pattern: Translated,
    with: Replacement,
    global: bool,
    /// The match replaced first (sed's `s/a/b/2`), from 1.
    nth: usize,
}

/// A whole-text script: substitutions in order.
#[derive(Debug)]
pub struct Slurp {
    subs: Vec<Sub>,
}

/// The most substitutions a script may have (each pattern compiled costs memory).
const MAX_SUBS: usize = 1_000;

/// The longest text a substitution may make (`s/./&&&&&&&&/gs` on a large file is not made).
const MAX_TEXT: usize = 1 << 24;

impl Slurp {
    /// A `perl -0777 -pe` script: `s///` statements with flags `g`, `s`, `m`, `x`, `i`.
    pub fn perl(source: &str) -> Result<Slurp, Unsupported> {
        let mut subs = Vec::new();
        for st in perl_statements(source).map_err(|e| Unsupported(e.into()))? {
            if st.flags.chars().any(|f| !"gsmxi".contains(f)) || st.flags.matches('x').count() > 1 {
                return Err(Unsupported(format!("perl s flags {}", st.flags)));
            }
            let has = |f: char| st.flags.contains(f);
            let flags =
                Flags { single_line: has('s'), multi_line: has('m'), extended: has('x'), ignore_case: has('i') };
            let pattern = translate::perl(&st.re, flags).map_err(|e| Unsupported(e.into()))?;
            let with =
                Replacement::perl(&st.with).ok_or_else(|| Unsupported("perl variables in a replacement".into()))?;
            subs.push(Sub::new(pattern, with, has('g'), 1)?);
            if subs.len() > MAX_SUBS {
                return Err(Unsupported::too_large());
            }
        }
        Ok(Slurp { subs })
    }

    /// A `sed -z` script of `s` commands (`-E`: extended syntax).
    pub fn sed(source: &str, extended: bool) -> Result<Slurp, Unsupported> {
        let mut subs = Vec::new();
        for s in substitutions(source)? {
            let pattern = translate::sed(&s.re, extended, s.ignore_case).map_err(|e| Unsupported(e.into()))?;
            subs.push(Sub::new(pattern, Replacement::sed(&s.with), s.global, s.nth)?);
            if subs.len() > MAX_SUBS {
                return Err(Unsupported::too_large());
            }
        }
        Ok(Slurp { subs })
    }

    /// How many substitutions it makes.
    pub fn len(&self) -> usize {
        self.subs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.subs.is_empty()
    }

    /// The script run on a file as known; `None` when what it did cannot be known there.
    pub fn run(&self, known: &Known) -> Option<Doc> {
        let mut doc = Doc::new(known.clone());
        for s in &self.subs {
            if doc.has_gaps() && ((s.pattern.crosses && s.pattern.literal.is_none()) || s.nth > 1) {
                return None;
            }
            let failed = Cell::new(false);
            let limit = (!s.global).then_some(1);
            doc = doc.rewrite(limit, &|text, left| s.apply(text, left, &failed))?;
            if failed.get() {
                return None;
            }
        }
        Some(doc)
    }

    /// Each substitution's old and new text, when every one is plain text both sides: what
    /// the script says it changed, even where the file was never shown.
    pub fn literals(&self) -> Option<Vec<(String, String)>> {
        self.subs.iter().map(|s| Some((s.pattern.literal.clone()?, s.with.literal()?))).collect()
    }
}

impl Sub {
    fn new(pattern: Translated, with: Replacement, global: bool, nth: usize) -> Result<Sub, Unsupported> {
        let re = translate::compile(&pattern).map_err(|e| Unsupported(e.into()))?;
        Ok(Sub { re, pattern, with, global, nth })
    }

    /// The substitution on `text`, replacing at most `left` matches: the new text and the
    /// matches replaced. `failed` is set for what cannot be made here (a match that splits a
    /// character, an empty match, whose places Perl and sed count apart).
    fn apply(&self, text: &str, left: Option<usize>, failed: &Cell<bool>) -> (String, usize) {
        let bytes = text.as_bytes();
        let mut out = String::with_capacity(text.len());
        let (mut last, mut seen, mut made) = (0, 0, 0);
        for caps in self.re.captures_iter(bytes) {
            let Some(m) = caps.get(0) else { break };
            if m.is_empty() || !text.is_char_boundary(m.start()) || !text.is_char_boundary(m.end()) {
                failed.set(true);
                return (text.to_string(), 0);
            }
            seen += 1;
            if seen < self.nth {
                continue;
            }
            if left.is_some_and(|l| made >= l) || (!self.global && seen > self.nth) {
                break;
            }
            let group = |g: usize| match caps.get(g) {
                Some(c) => text.get(c.start()..c.end()).unwrap_or_else(|| {
                    failed.set(true);
                    ""
                }),
                None => "",
            };
            out.push_str(&text[last..m.start()]);
            self.with.expand_with(&group, &mut out);
            if out.len() > MAX_TEXT {
                failed.set(true);
                return (text.to_string(), 0);
            }
            last = m.end();
            made += 1;
        }
        if failed.get() {
            return (text.to_string(), 0);
        }
        out.push_str(&text[last..]);
        (out, made)
    }
}

#[cfg(test)]
mod tests;
