//! Worker threads: take the next unit, read it, tell whether it changed, parse it, and hand the
//! result to the writer — whole, in batches for a large JSON-lines file, or a step at a time for
//! a large mini-swe-agent document (`document`).

use super::document;
use super::piece::{Piece, Work};
use super::{Options, WINDOW};
use crate::error::IngestError;
use crate::ingest::source::{self, Unit, UnitKind};
use crate::ingest::stream_doc::read;
use crate::ingest::{dataset, parse_loaded, stream};
use crate::model::Format;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;
use std::sync::{Condvar, Mutex};

/// State the workers and the writer share.
pub struct Shared<'a> {
    pub units: &'a [Unit],
    pub known: &'a HashMap<String, Vec<u8>>,
    pub opts: &'a Options,
    pub next: Mutex<usize>,
    /// How many units the writer has finished.
    pub written: (Mutex<usize>, Condvar),
}

impl Shared<'_> {
    fn take(&self) -> usize {
        let mut n = self.next.lock().unwrap_or_else(|p| p.into_inner());
        let i = *n;
        *n += 1;
        i
    }

    /// Block until the writer has finished all units before `limit`.
    fn wait_written(&self, limit: usize) {
        let (lock, cv) = &self.written;
        let mut w = lock.lock().unwrap_or_else(|p| p.into_inner());
        while *w < limit {
            w = cv.wait(w).unwrap_or_else(|p| p.into_inner());
        }
    }
}

pub fn run(shared: &Shared<'_>, tx: SyncSender<(usize, Piece)>) {
    loop {
        let i = shared.take();
        let Some(unit) = shared.units.get(i) else { break };
        shared.wait_written((i + 1).saturating_sub(WINDOW));
        // A parser bug must not take the run down (or leave the writer waiting for this unit
        // forever): a panic becomes this unit's error.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| one(shared, i, unit, &tx)));
        let sent = outcome.unwrap_or_else(|panic| {
            let error = crate::error::internal(&unit.path, &panic);
            tx.send((i, Piece::End(Some(error)))).is_ok()
        });
        if !sent {
            break;
        }
    }
}

/// Process one unit; false when the writer has gone away.
fn one(shared: &Shared<'_>, i: usize, unit: &Unit, tx: &SyncSender<(usize, Piece)>) -> bool {
    let opts = shared.opts;
    let size = unit_size(unit);
    if unit.kind == UnitKind::File && unit.archive.is_none() && starts_parquet(&unit.path) {
        return parquet_shard(shared, i, unit, tx);
    }
    if unit.kind == UnitKind::File {
        // The first bytes decide what is not worth reading at all (binary content), before a
        // large file is read whole or streamed.
        if let Err(e) = source::sniff_as(&unit.real(&unit.path), &unit.path) {
            // Binary content: an error in a file named as an input, else a file to skip.
            let work = match e {
                IngestError::Parse { .. } => match crate::ingest::binary_outcome(e) {
                    Ok(outcome) => Work::Parsed { size, hash: [0; 32], outcome },
                    Err(e) => Work::Failed(size, e),
                },
                e => Work::Failed(size, e),
            };
            return tx.send((i, Piece::Whole(work))).is_ok();
        }
        // A member of an archive is read whole (up to the document limit), not streamed.
        if size >= opts.stream_bytes && unit.archive.is_none() {
            match stream::sniff(&unit.path, opts.forced) {
                Ok(Some(format)) => return streamed(shared, i, unit, format, tx),
                Ok(None) if opts.forced.is_none() && read::takes(&unit.path, opts.max_document) => {
                    return stepwise(shared, i, unit, tx);
                }
                Ok(None) => {}
                Err(e) => return tx.send((i, Piece::Whole(Work::Failed(size, e)))).is_ok(),
            }
        }
    }
    tx.send((i, Piece::Whole(whole(unit.clone(), shared.known, opts)))).is_ok()
}

/// A large JSON-lines file: hashed, then (when changed) parsed in batches once it is the unit
/// being written, so its batches go straight into its open transaction.
fn streamed(shared: &Shared<'_>, i: usize, unit: &Unit, format: Format, tx: &SyncSender<(usize, Piece)>) -> bool {
    let (size, hash) = match stream::hash_file(&unit.path) {
        Ok(h) => h,
        Err(e) => return tx.send((i, Piece::Whole(Work::Failed(unit_size(unit), e)))).is_ok(),
    };
    if is_unchanged(shared.known, &unit.path, &hash) {
        return tx.send((i, Piece::Whole(Work::Unchanged(size)))).is_ok();
    }
    shared.wait_written(i);
    if tx.send((i, Piece::Begin { format, size, hash })).is_err() {
        return false;
    }
    let mut alive = true;
    let limits = stream::Limits { batch_bytes: shared.opts.batch_bytes, max_line: shared.opts.max_document };
    let result = stream::read_batches(&unit.path, format, limits, |batch, bytes| {
        alive = tx.send((i, Piece::Batch(batch, bytes))).is_ok();
        alive
    });
    alive && tx.send((i, Piece::End(result.err()))).is_ok()
}

/// Whether a file begins as Parquet does (`PAR1`).
fn starts_parquet(path: &std::path::Path) -> bool {
    use std::io::Read;
    // Only a regular file is opened here: opening a FIFO would block (`load` says what it is).
    if !std::fs::metadata(path).is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut head = [0u8; 4];
    std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head)).is_ok() && dataset::parquet::is_parquet(&head)
}

/// A dataset's Parquet shard: told by its columns or `--format` (a shard of no known dataset is
/// skipped, its columns named), hashed, then (when changed) read a row group at a time once it is the unit
/// being written, each group's runs a batch of its open transaction.
fn parquet_shard(shared: &Shared<'_>, i: usize, unit: &Unit, tx: &SyncSender<(usize, Piece)>) -> bool {
    let path = &unit.path;
    let size = unit_size(unit);
    let kind = match dataset::parquet::shape_of_file(path, shared.opts.forced) {
        Ok(dataset::parquet::Shape::Dataset(k)) => k,
        Ok(dataset::parquet::Shape::Unknown(columns)) => {
            let outcome = crate::ingest::Outcome::Skipped(crate::ingest::unknown_parquet(&columns));
            return tx.send((i, Piece::Whole(Work::Parsed { size, hash: [0; 32], outcome }))).is_ok();
        }
        Err(e) => return tx.send((i, Piece::Whole(Work::Failed(size, e)))).is_ok(),
    };
    let (size, hash) = match stream::hash_file(path) {
        Ok(h) => h,
        Err(e) => return tx.send((i, Piece::Whole(Work::Failed(size, e)))).is_ok(),
    };
    if is_unchanged(shared.known, path, &hash) {
        return tx.send((i, Piece::Whole(Work::Unchanged(size)))).is_ok();
    }
    shared.wait_written(i);
    if tx.send((i, Piece::Begin { format: kind.format(), size, hash })).is_err() {
        return false;
    }
    let mut alive = true;
    let result = dataset::parquet::read_groups(path, kind, shared.opts.parquet, |batch, bytes| {
        alive = tx.send((i, Piece::Batch(batch, bytes))).is_ok();
        alive
    });
    alive && tx.send((i, Piece::End(result.err()))).is_ok()
}

/// A large document read a step at a time (`document`), once the writer is on it; when the
/// step reader does not take it, read whole.
fn stepwise(shared: &Shared<'_>, i: usize, unit: &Unit, tx: &SyncSender<(usize, Piece)>) -> bool {
    let path = &unit.path;
    // Only a path stored before may be unchanged: its hash first, before anything is written.
    if shared.known.contains_key(source::key(path).as_ref()) {
        match stream::hash_file(path) {
            Ok((size, hash)) if is_unchanged(shared.known, path, &hash) => {
                return tx.send((i, Piece::Whole(Work::Unchanged(size)))).is_ok();
            }
            Ok(_) => {}
            Err(e) => return tx.send((i, Piece::Whole(Work::Failed(unit_size(unit), e)))).is_ok(),
        }
    }
    // The writer writes this unit's pieces as they come, not after the units before it.
    shared.wait_written(i);
    match document::streamed(unit, i, tx, shared.opts.max_document) {
        Some(alive) => alive,
        None => tx.send((i, Piece::Whole(whole(unit.clone(), shared.known, shared.opts)))).is_ok(),
    }
}

fn is_unchanged(known: &HashMap<String, Vec<u8>>, path: &std::path::Path, hash: &[u8; 32]) -> bool {
    known.get(source::key(path).as_ref()).is_some_and(|h| h.as_slice() == hash)
}

pub fn unit_size(u: &Unit) -> u64 {
    let files: Vec<&PathBuf> = if u.members.is_empty() { vec![&u.path] } else { u.members.iter().collect() };
    files.iter().filter_map(|p| std::fs::metadata(u.real(p)).ok()).map(|m| m.len()).sum()
}

fn whole(unit: Unit, known: &HashMap<String, Vec<u8>>, opts: &Options) -> Work {
    let size = unit_size(&unit);
    let loaded = match source::load(unit, opts.max_document) {
        Ok(l) => l,
        Err(e) => return Work::Failed(size, e),
    };
    if is_unchanged(known, &loaded.unit.path, &loaded.hash) {
        return Work::Unchanged(loaded.size);
    }
    match parse_loaded(&loaded, opts.forced) {
        Ok(outcome) => Work::Parsed { size: loaded.size, hash: loaded.hash, outcome },
        Err(e) => Work::Failed(loaded.size, e),
    }
}
