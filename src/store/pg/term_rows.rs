//! A step's terms as stored: whole in `step_terms` (pieces that overlap, so a phrase is inside
//! one), and the keys a phrase is looked up by in `step_lexemes` (each distinct term and each
//! distinct pair of neighbouring terms, a `tsvector` under a GIN index, migration 5); the terms
//! thread's loop (`aside.rs`).

use super::Pg;
use super::aside::Job;
use super::copy::CopyRows;
use super::enc;
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::sql::Sql;
use crate::store::terms;
use std::sync::mpsc::{Receiver, SyncSender};

/// A step's terms are stored in pieces of about this many bytes, each starting this many bytes
/// (whole terms) before the previous one ends: a phrase up to [`OVERLAP`] long is inside a piece.
pub(super) const PIECE: usize = 1 << 20;
pub(super) const OVERLAP: usize = 64 << 10;

/// A key is cut to this many characters (a `tsvector` lexeme holds at most 2,047 bytes); the
/// migration cuts with `left(key, 500)`, the same.
pub(super) const KEY_CHARS: usize = 500;

/// A step's keys are stored in rows of about this many bytes (a `tsvector` holds at most 1 MB of
/// lexemes): sorted, a key goes to row `(bytes of the keys up to it, each plus one) / KEY_ROW`,
/// as the migration numbers them.
pub(super) const KEY_ROW: usize = 512 << 10;

/// Steps' terms on their way to `step_terms` (whole, in pieces) and `step_lexemes` (their keys).
#[derive(Default)]
pub(super) struct TermRows {
    terms: CopyRows,
    keys: CopyRows,
}

impl TermRows {
    /// A step's document of terms.
    pub fn push(&mut self, step_id: i64, doc: &str) {
        let doc = enc(doc);
        for (piece, text) in pieces(&doc).enumerate() {
            self.terms.int(step_id).int(piece as i64).stored(text).end();
        }
        for (row, lexemes) in key_rows(&keys(&doc)) {
            self.keys.int(step_id).int(row as i64).stored(&lexemes).end();
        }
    }

    /// About 16 MB are waiting.
    pub fn full(&self) -> bool {
        self.terms.len() + self.keys.len() >= 16 << 20
    }

    /// Write what is waiting.
    pub fn send(&mut self, pg: &Pg) -> Result<(), StoreError> {
        if !self.terms.is_empty() {
            pg.copy_in("COPY step_terms (step_id, piece, terms) FROM STDIN", self.terms.data())?;
        }
        if !self.keys.is_empty() {
            pg.copy_in("COPY step_lexemes (step_id, piece, lexemes) FROM STDIN", self.keys.data())?;
        }
        self.terms.clear();
        self.keys.clear();
        Ok(())
    }
}

/// A text cut to [`KEY_CHARS`] characters.
pub(super) fn cut(key: &str) -> &str {
    key.char_indices().nth(KEY_CHARS).map_or(key, |(i, _)| &key[..i])
}

/// The keys of a document of terms (as stored): each distinct term, and each pair of terms next
/// to each other in a field as ` a b` (a space first: a term's prefix never matches a pair), each
/// cut ([`cut`]); distinct, in byte order.
pub(super) fn keys(doc: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for field in doc.split(terms::FIELD_BREAK) {
        // Where the space before the previous term is, and where this one starts.
        let (mut before, mut at) = (None, 0);
        for term in field.split(' ') {
            if term.is_empty() {
                before = None;
            } else {
                out.push(cut(term));
                if let Some(b) = before {
                    out.push(cut(&field[b..at + term.len()]));
                }
                before = at.checked_sub(1);
            }
            at += term.len() + 1;
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Sorted keys in their rows, each row as `tsvector` text (`'a' ' a b'`).
pub(super) fn key_rows(keys: &[&str]) -> Vec<(usize, String)> {
    let mut rows: Vec<(usize, String)> = Vec::new();
    let mut bytes = 0;
    for key in keys {
        bytes += key.len() + 1;
        let row = bytes / KEY_ROW;
        if rows.last().is_none_or(|(r, _)| *r != row) {
            rows.push((row, String::new()));
        }
        if let Some((_, text)) = rows.last_mut() {
            if !text.is_empty() {
                text.push(' ');
            }
            quote_into(text, key);
        }
    }
    rows
}

/// A lexeme quoted as `tsvector` and `tsquery` text read it.
pub(super) fn quote_into(out: &mut String, lexeme: &str) {
    out.push('\'');
    for c in lexeme.chars() {
        match c {
            '\'' => out.push_str("''"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    out.push('\'');
}

/// A document of terms in pieces of about [`PIECE`] bytes, each starting at a term (a space)
/// about [`OVERLAP`] bytes before the previous one ends.
pub(super) fn pieces(doc: &str) -> impl Iterator<Item = &str> {
    let mut start = Some(0);
    std::iter::from_fn(move || {
        let from = start?;
        if doc.len() - from <= PIECE {
            start = None;
            return Some(&doc[from..]);
        }
        // End after a space, so the piece's last term is whole.
        let mut end = from + PIECE;
        while end > from && !doc.is_char_boundary(end) {
            end -= 1;
        }
        let end = doc[..end].rfind(' ').map_or(doc.len(), |i| i + 1).max(from + 1);
        // The next piece starts at a term at least OVERLAP before this end.
        let back = end.saturating_sub(OVERLAP).max(from + 1);
        let mut at = back;
        while at > from && !doc.is_char_boundary(at) {
            at -= 1;
        }
        let next = doc[..at].rfind(' ').filter(|&i| i > from).unwrap_or(at);
        start = Some(next);
        Some(&doc[from..end])
    })
}

/// The thread: a transaction per unit, its terms sent with `COPY` about 16 MB at a time. After a
/// failure the unit's later jobs are skipped until its `End`, which answers the error.
pub(super) fn serve(pg: &Pg, inbox: &Receiver<Job>, reply: &SyncSender<Result<(), StoreError>>) {
    let mut rows = TermRows::default();
    let mut failed: Option<StoreError> = None;
    while let Ok(job) = inbox.recv() {
        let answer = match job {
            Job::Steps(steps) => {
                if failed.is_none()
                    && let Err(e) = write(pg, &mut rows, &steps)
                {
                    pg.rollback();
                    rows = TermRows::default();
                    failed = Some(e);
                }
                continue;
            }
            Job::End => match failed.take() {
                Some(e) => Err(e),
                None => rows.send(pg).and_then(|_| if pg.in_transaction.get() { pg.run("COMMIT") } else { Ok(()) }),
            },
            Job::Forget(ids) => {
                pg.rollback();
                rows = TermRows::default();
                failed = None;
                forget(pg, &ids)
            }
        };
        if answer.is_err() {
            pg.rollback();
        }
        if reply.send(answer).is_err() {
            return;
        }
    }
    pg.rollback();
}

fn write(pg: &Pg, rows: &mut TermRows, steps: &[(i64, [String; 3])]) -> Result<(), StoreError> {
    if !pg.in_transaction.get() {
        pg.run("BEGIN")?;
    }
    for (id, [thought, action, observation]) in steps {
        let fields = [sanitize(thought), sanitize(action), sanitize(observation)];
        rows.push(*id, &terms::document(&[&fields[0], &fields[1], &fields[2]]));
        if rows.full() {
            rows.send(pg)?;
        }
    }
    Ok(())
}

fn forget(pg: &Pg, ids: &[i64]) -> Result<(), StoreError> {
    if ids.is_empty() {
        return Ok(());
    }
    pg.exec("DELETE FROM step_terms WHERE step_id = ANY($1)", &[&ids])?;
    pg.exec("DELETE FROM step_lexemes WHERE step_id = ANY($1)", &[&ids])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_the_distinct_terms_and_pairs_of_neighbours_within_a_field() {
        assert_eq!(keys(" b a b a \n c \n "), [" a b", " b a", "a", "b", "c"]);
        assert_eq!(keys(" \n "), Vec::<&str>::new());
        let long = "é".repeat(KEY_CHARS + 3);
        let doc = format!(" {long} x ");
        let got = keys(&doc);
        assert_eq!(got.len(), 3, "{:?}", got.iter().map(|k| k.chars().count()).collect::<Vec<_>>());
        assert!(got.iter().all(|k| k.chars().count() <= KEY_CHARS), "keys are cut");
        assert!(got.contains(&cut(&long)) && got.contains(&"x"));
    }

    #[test]
    fn key_rows_are_quoted_and_numbered_by_the_bytes_before_them() {
        assert_eq!(key_rows(&["a", "it's", "b\\c", " a b"]), [(0, r"'a' 'it''s' 'b\\c' ' a b'".to_string())]);
        let many: Vec<String> = (0..200_000).map(|i| format!("k{i:06}")).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let rows = key_rows(&refs);
        assert_eq!(rows.iter().map(|r| r.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
        // 8 bytes a key: row 1 starts at the key whose bytes up to it reach KEY_ROW.
        assert!(rows[1].1.starts_with(&format!("'k{:06}'", KEY_ROW / 8 - 1)), "{:.20}", rows[1].1);
    }

    #[test]
    fn pieces_overlap_and_start_at_a_term() {
        let doc: String = (0..400_000).map(|i| format!(" w{i}")).collect::<String>() + " ";
        let parts: Vec<&str> = pieces(&doc).collect();
        assert!(parts.len() > 1, "{}", parts.len());
        for p in &parts {
            assert!(p.starts_with(' ') && p.ends_with(' ') && p.len() <= PIECE, "{}", &p[..20]);
        }
        // Every phrase of up to OVERLAP bytes is inside one piece.
        for at in [PIECE - 10, 2 * PIECE - 5_000, doc.len() - 30] {
            let start = doc[..at].rfind(' ').unwrap_or(0);
            let end = doc[start + 1..].find(' ').map_or(doc.len(), |e| start + 1 + e);
            let phrase = &doc[start..(start + 40_000).min(doc.len())];
            let _ = end;
            assert!(parts.iter().any(|p| p.contains(phrase)), "phrase at {at}");
        }
        assert_eq!(pieces(" a b ").collect::<Vec<_>>(), [" a b "]);
    }
}
