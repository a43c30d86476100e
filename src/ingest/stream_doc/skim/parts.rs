//! A big file skimmed on several cores. The file is cut into parts; the first is skimmed as a
//! whole file is, and each other part is lexed on a thread of its own as if it began inside a
//! string (nearly every byte of a trajectory is inside one), its tokens kept. When the scanner
//! reaches a part, it knows the state the part really begins in: inside a string its tokens are
//! replayed (a few per message, against the megabytes lexed), otherwise the part is lexed again
//! from the state the scanner has. Either way the skim is the one a single pass gives.

use super::lex::{Lexer, Recorded};
use super::{BOM, Scanner, Skim, SkimError, Str, lex};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Parts smaller than this are not worth a thread.
const MIN_PART: u64 = 32 << 20;
/// How far past a cut its backslashes are looked over (a run this long drops the cut).
const WINDOW: usize = 4096;

/// Skim the file at `path` for the lists of `lists`, on as many cores as its size is worth.
pub fn skim_file(path: &Path, lists: &[&str]) -> Result<Skim, SkimError> {
    let size = std::fs::metadata(path)?.len();
    let open = |at: u64| -> std::io::Result<std::fs::File> {
        let mut f = std::fs::File::open(path)?;
        f.seek(SeekFrom::Start(at))?;
        Ok(f)
    };
    skim_split(&open, lists, &cuts(size)).map(|(skim, _)| skim)
}

/// [`skim_file`] of a document held in memory.
pub fn skim_bytes(bytes: &[u8], lists: &[&str]) -> Result<Skim, SkimError> {
    let open = |at: u64| -> std::io::Result<&[u8]> {
        let at = usize::try_from(at).map_err(std::io::Error::other)?;
        Ok(bytes.get(at..).unwrap_or_default())
    };
    skim_split(&open, lists, &cuts(bytes.len() as u64)).map(|(skim, _)| skim)
}

/// Where a document of `size` bytes is cut: a part per core its size is worth.
fn cuts(size: u64) -> Vec<u64> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
    let parts = (size / MIN_PART).clamp(1, cores.max(1));
    (1..parts).map(|k| size / parts * k).collect()
}

/// Skim the document `open(offset)` reads from `offset` on, in parts cut near `cuts` (in
/// increasing order); with the skim, how many parts were replayed rather than lexed again.
pub(super) fn skim_split<R: Read>(
    open: &(dyn Fn(u64) -> std::io::Result<R> + Sync),
    lists: &[&str],
    cuts: &[u64],
) -> Result<(Skim, usize), SkimError> {
    let mut starts = Vec::new();
    for &cut in cuts {
        // The first part holds the byte-order mark whole, if there is one.
        if let Some(start) = past_backslashes(open, cut)?
            && start > BOM.len() as u64
            && starts.last().is_none_or(|&last| start > last)
        {
            starts.push(start);
        }
    }
    let ends: Vec<Option<u64>> = starts.iter().map(|&s| Some(s)).chain([None]).collect();
    let mut scanner = Scanner::new(lists);
    let mut lexer = Lexer::default();
    let (at, ahead) = std::thread::scope(|scope| {
        let ahead: Vec<_> = starts
            .iter()
            .zip(&ends[1..])
            .map(|(&start, &end)| {
                scope.spawn(move || -> Result<(Recorded, Lexer, u64), SkimError> {
                    let mut lexer = Lexer::inside_a_string();
                    let mut recorded = Recorded::new(start);
                    let at = lex(open(start)?, start, limit(start, end), &mut lexer, &mut recorded)?;
                    Ok((recorded, lexer, at))
                })
            })
            .collect();
        let at = lex(open(0)?, 0, limit(0, ends[0]), &mut lexer, &mut scanner);
        let ahead: Vec<_> = ahead.into_iter().map(|h| h.join()).collect();
        Ok::<_, SkimError>((at, ahead))
    })?;
    let mut at = at?;
    let mut replayed = 0;
    for ((start, end), part) in starts.iter().zip(&ends[1..]).zip(ahead) {
        // A part ends short only where the file does: the parts after it have nothing.
        if at < *start {
            break;
        }
        // A part lexed from a wrong guess, or whose thread failed, is lexed again from here.
        let ahead = match part {
            Ok(Ok((recorded, ahead_lexer, ahead_at))) if scanner.in_string == Some(Str::Skip) && lexer.in_string => {
                recorded.replay(&mut scanner)?.then_some((ahead_lexer, ahead_at))
            }
            _ => None,
        };
        match ahead {
            Some((ahead_lexer, ahead_at)) => {
                lexer = ahead_lexer;
                at = ahead_at;
                replayed += 1;
            }
            None => at = lex(open(*start)?, *start, limit(*start, *end), &mut lexer, &mut scanner)?,
        }
    }
    Ok((scanner.finish(at)?, replayed))
}

/// The bytes from `start` to `end` (`None`: the end of the file).
fn limit(start: u64, end: Option<u64>) -> u64 {
    end.map_or(u64::MAX, |e| e - start)
}

/// The first offset after `cut` whose byte before is not a backslash, so a part that begins
/// there inside a string has no escape pending; `None` past the end of the file or a long run
/// of backslashes.
fn past_backslashes<R: Read>(
    open: &(dyn Fn(u64) -> std::io::Result<R> + Sync),
    cut: u64,
) -> Result<Option<u64>, SkimError> {
    let Some(from) = cut.checked_sub(1) else { return Ok(None) };
    let mut window = Vec::with_capacity(WINDOW);
    open(from)?.take(WINDOW as u64).read_to_end(&mut window)?;
    // The last byte of the file ends no part before it.
    let found = window.iter().position(|&b| b != b'\\').filter(|&i| i + 1 < window.len());
    Ok(found.map(|i| from + i as u64 + 1))
}
