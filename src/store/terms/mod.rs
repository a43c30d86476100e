//! Text split into search terms exactly as SQLite's FTS5 `unicode61` tokenizer splits it (the
//! tokenizer of `steps_fts`, with its defaults: letters, digits and private-use characters are
//! token characters, case folded, diacritics removed, a term cut after 32,768 bytes), so that a
//! store without FTS5 (PostgreSQL) finds a phrase where SQLite finds it: `pydicom`, `line 1`,
//! `__init__.py` (`init py`), `2.0` (`2 0`) alike.
//!
//! A step's searchable texts become one line of terms ([`document`]): each field's terms joined
//! by single spaces, the fields (thought, action, observation) apart, so a phrase matches when
//! ` a b c` occurs in it (the last term a prefix), and never across two fields.

mod unicode61;

use unicode61::{BASE_LETTER, BLOCK, DATA, DIACRITIC, FOLD, FOLD_OFFSET, MAP};

/// The longest term FTS5 keeps (`FTS5_MAX_TOKEN_SIZE`): longer ones are cut, in the index and in
/// a query alike.
pub const MAX_TERM: usize = 32768;

/// What separates fields in a [`document`]: no term holds it, and it is not a space.
pub const FIELD_BREAK: char = '\n';

/// Unicode categories (SQLite's numbering) whose characters are token characters: `L*`, `N*`,
/// `Co`, and 0 (code points the tables do not list).
fn is_token_category(category: u16) -> bool {
    matches!(category, 0 | 5..=9 | 13..=15 | 30 | 31)
}

/// SQLite's category of a code point (`sqlite3Fts5UnicodeCategory`).
fn category(code: u32) -> u16 {
    if code >= 1 << 20 {
        return 0;
    }
    let plane = (code >> 16) as usize;
    let (mut lo, mut hi) = (BLOCK[plane] as usize, BLOCK[plane + 1] as usize);
    let key = (code & 0xFFFF) as u16;
    let mut found = None;
    while hi > lo {
        let test = (hi + lo) / 2;
        if key >= MAP[test] {
            found = Some(test);
            lo = test + 1;
        } else {
            hi = test;
        }
    }
    let Some(at) = found else { return 0 };
    if u32::from(key) >= u32::from(MAP[at]) + u32::from(DATA[at] >> 5) {
        return 0;
    }
    match DATA[at] & 0x1F {
        30 if (key - MAP[at]) & 1 == 1 => 5,
        30 => 9,
        c => c,
    }
}

/// A combining diacritical mark that may sit inside a term (`sqlite3Fts5UnicodeIsdiacritic`).
fn is_diacritic(code: u32) -> bool {
    const MASK0: u32 = 0x08029FDF;
    const MASK1: u32 = 0x000361F8;
    if !(768..=817).contains(&code) {
        return false;
    }
    if code < 768 + 32 { MASK0 & (1 << (code - 768)) != 0 } else { MASK1 & (1 << (code - 768 - 32)) != 0 }
}

/// The letter without its diacritic, for `remove_diacritics=1` (`fts5_remove_diacritic`).
fn remove_diacritic(code: u32) -> u32 {
    let key = (code << 3) | 7;
    let (mut lo, mut hi, mut at) = (0i64, DIACRITIC.len() as i64 - 1, 0usize);
    while hi >= lo {
        let test = ((hi + lo) / 2) as usize;
        if key >= u32::from(DIACRITIC[test]) {
            at = test;
            lo = test as i64 + 1;
        } else {
            hi = test as i64 - 1;
        }
    }
    if BASE_LETTER[at] & 0x80 != 0 {
        return code;
    }
    let entry = u32::from(DIACRITIC[at]);
    if code > (entry >> 3) + (entry & 7) { code } else { u32::from(BASE_LETTER[at] & 0x7F) }
}

/// Lower case, without diacritics (`sqlite3Fts5UnicodeFold` with `remove_diacritics=1`); 0 for a
/// mark that folds to nothing.
fn fold(code: u32) -> u32 {
    if code < 128 {
        return if (b'A' as u32..=b'Z' as u32).contains(&code) { code + 32 } else { code };
    }
    if code < 65536 {
        let at = FOLD.partition_point(|&(first, _, _)| u32::from(first) <= code).saturating_sub(1);
        let (first, flags, range) = FOLD[at];
        let (first, flags) = (u32::from(first), u32::from(flags));
        let mut folded = code;
        if code < first + u32::from(range) && (1 & flags & (first ^ code)) == 0 {
            folded = (code + u32::from(FOLD_OFFSET[(flags >> 1) as usize])) & 0xFFFF;
        }
        return remove_diacritic(folded);
    }
    if (66560..66600).contains(&code) { code + 40 } else { code }
}

/// A character as FTS5 reads it: U+FFFE and U+FFFF become U+FFFD.
fn code_of(c: char) -> u32 {
    match c as u32 {
        0xFFFE | 0xFFFF => 0xFFFD,
        code => code,
    }
}

fn is_token_char(code: u32) -> bool {
    if code < 128 {
        return code != 0 && is_token_category(category(code));
    }
    is_token_category(category(code))
}

/// Calls `each` with every term of `text`, in order (folded; at most [`MAX_TERM`] bytes, cut at a
/// character boundary).
pub fn each_term(text: &str, mut each: impl FnMut(&str)) {
    let mut term = String::new();
    let mut chars = text.chars();
    loop {
        // Separators, up to the first character of a term (a diacritic cannot start one).
        let first = loop {
            match chars.next() {
                None => return,
                Some(c) if is_token_char(code_of(c)) => break code_of(c),
                Some(_) => {}
            }
        };
        term.clear();
        push_folded(&mut term, first);
        for c in chars.by_ref() {
            let code = code_of(c);
            let inside = if code < 128 { is_token_char(code) } else { is_token_char(code) || is_diacritic(code) };
            if !inside {
                break;
            }
            push_folded(&mut term, code);
        }
        each(cut(&term));
    }
}

fn push_folded(term: &mut String, code: u32) {
    let folded = fold(code);
    if folded != 0
        && let Some(c) = char::from_u32(folded)
    {
        term.push(c);
    }
}

/// A term cut to [`MAX_TERM`] bytes, at a character boundary.
fn cut(term: &str) -> &str {
    if term.len() <= MAX_TERM {
        return term;
    }
    let mut end = MAX_TERM;
    while !term.is_char_boundary(end) {
        end -= 1;
    }
    &term[..end]
}

/// The terms of `text`, in order.
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    each_term(text, |t| out.push(t.to_string()));
    out
}

/// A step's searchable fields as one line of terms: each field ` t1 t2 ... ` with
/// [`FIELD_BREAK`] between fields.
pub fn document(fields: &[&str]) -> String {
    let mut doc = String::with_capacity(fields.iter().map(|f| f.len()).sum::<usize>() + 8);
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            doc.push(FIELD_BREAK);
        }
        doc.push(' ');
        each_term(field, |t| {
            doc.push_str(t);
            doc.push(' ');
        });
    }
    doc
}

/// A phrase as its terms joined by spaces after a leading space (` a b c`): a document holds the
/// phrase (the last term a prefix, as `"a b c"*` in FTS5) exactly when it contains this text.
/// `None` when the phrase has no terms (FTS5 matches nothing then).
pub fn phrase(text: &str) -> Option<String> {
    let mut out = String::new();
    each_term(text, |t| {
        out.push(' ');
        out.push_str(t);
    });
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests;
