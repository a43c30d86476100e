//! A step's terms as stored: whole in `step_terms` (pieces that overlap, so a phrase is inside
//! one), and its distinct terms in `step_words` (what the trigram index reads); the terms
//! thread's loop (`aside.rs`).

use super::Pg;
use super::aside::Job;
use super::copy::CopyRows;
use crate::error::StoreError;
use crate::sanitize::sanitize;
use crate::store::terms;
use std::sync::mpsc::{Receiver, SyncSender};

/// A step's terms are stored in pieces of about this many bytes, each starting this many bytes
/// (whole terms) before the previous one ends: a phrase up to [`OVERLAP`] long is inside a piece.
pub(super) const PIECE: usize = 1 << 20;
pub(super) const OVERLAP: usize = 64 << 10;

/// Steps' terms on their way to `step_terms` (whole, in pieces) and `step_words` (each distinct
/// term once, under the trigram index).
#[derive(Default)]
pub(super) struct TermRows {
    terms: CopyRows,
    words: CopyRows,
}

impl TermRows {
    /// A step's document of terms.
    pub fn push(&mut self, step_id: i64, doc: &str) {
        for (piece, text) in pieces(doc).enumerate() {
            self.terms.int(step_id).int(piece as i64).text(text).end();
        }
        let words = words(doc);
        for (piece, text) in pieces(&words).enumerate() {
            self.words.int(step_id).int(piece as i64).text(text).end();
        }
    }

    /// About 16 MB are waiting.
    pub fn full(&self) -> bool {
        self.terms.len() + self.words.len() >= 16 << 20
    }

    /// Write what is waiting.
    pub fn send(&mut self, pg: &Pg) -> Result<(), StoreError> {
        if !self.terms.is_empty() {
            pg.copy_in("COPY step_terms (step_id, piece, terms) FROM STDIN", self.terms.data())?;
        }
        if !self.words.is_empty() {
            pg.copy_in("COPY step_words (step_id, piece, words) FROM STDIN", self.words.data())?;
        }
        self.terms.clear();
        self.words.clear();
        Ok(())
    }
}

/// A document's distinct terms, ` a b c ` in byte order: what the trigram index reads (the
/// trigrams of a text are those of its distinct words, as `pg_trgm` splits it into words).
pub(super) fn words(doc: &str) -> String {
    let mut seen: Vec<&str> = doc.split([' ', terms::FIELD_BREAK]).filter(|w| !w.is_empty()).collect();
    seen.sort_unstable();
    seen.dedup();
    let mut out = String::with_capacity(seen.iter().map(|w| w.len() + 1).sum::<usize>() + 1);
    out.push(' ');
    for w in seen {
        out.push_str(w);
        out.push(' ');
    }
    out
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
                    pg.abandon();
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
                pg.abandon();
                rows = TermRows::default();
                failed = None;
                forget(pg, &ids)
            }
        };
        if answer.is_err() {
            pg.abandon();
        }
        if reply.send(answer).is_err() {
            return;
        }
    }
    pg.abandon();
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
    pg.exec("DELETE FROM step_words WHERE step_id = ANY($1)", &[&ids])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_the_distinct_terms_of_every_field_once() {
        assert_eq!(words(" b a \n a c \n "), " a b c ");
        assert_eq!(words(" \n "), " ");
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
