//! Large JSON-lines files (OpenHands `output.jsonl`, `all_preds.jsonl`, SWE-bench datasets) read
//! a line at a time: told by their first lines ([`sniff`]), hashed without being held, then
//! parsed in batches that the pipeline writes into one open transaction, so memory stays bounded
//! by a batch and the longest line (a longer line than [`Limits::max_line`] is skipped, never
//! held) however large the file is.

mod lines;
mod sniff;

pub use lines::{LineParser, line_parser};
pub use sniff::sniff;

use crate::error::IngestError;
use crate::model::{Format, Parsed};
use lines::io;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Size and blake3 hash of a file, read in chunks.
pub fn hash_file(path: &Path) -> Result<(u64, [u8; 32]), IngestError> {
    let mut file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    let mut hasher = blake3::Hasher::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut size = 0u64;
    loop {
        let n = file.read(&mut buf).map_err(|e| io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
        size += n as u64;
    }
    Ok((size, *hasher.finalize().as_bytes()))
}

/// Bounds of a streamed read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A batch is handed over once about this much input has been read.
    pub batch_bytes: u64,
    /// A longer line is not held: it is read through and skipped, with a warning.
    pub max_line: u64,
}

/// A line buffer larger than this is freed once its line is parsed, not kept for the next line.
const KEEP_BUFFER: usize = 16 << 20;

/// Parse the file line by line and hand `emit` a batch whenever about `limits.batch_bytes` of
/// input have been read (and once at the end). Bad lines, and lines over `limits.max_line`,
/// become warnings naming their line; the file fails only when no line could be read. `emit`
/// returns false to stop early. Memory: the longest line kept, its parsed value and what the
/// adapter builds from it, one at a time.
pub fn read_batches(
    path: &Path,
    format: Format,
    limits: Limits,
    mut emit: impl FnMut(Parsed, u64) -> bool,
) -> Result<(), IngestError> {
    let parse = line_parser(format).ok_or_else(|| IngestError::shape(path, "not a JSON-lines format"))?;
    let mut reader = BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(|e| io(path, e))?);
    let mut buf = Vec::new();
    let mut batch = Parsed::default();
    let mut batch_size = 0u64;
    let (mut lineno, mut offset, mut good) = (0usize, 0u64, 0usize);
    let mut first_error: Option<IngestError> = None;
    // A task given again by a later line (the rows of one instance) is not written twice.
    let mut tasks = crate::ingest::dataset::task::Seen::default();
    loop {
        let (n, kept) = next_line(&mut reader, &mut buf, limits.max_line).map_err(|e| io(path, e))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        let line_start = offset;
        offset += n;
        batch_size += n;
        let outcome = if !kept {
            Err(long_line(path, lineno, n, limits.max_line))
        } else if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        } else {
            let value = {
                let text = match std::str::from_utf8(&buf) {
                    Ok(t) => std::borrow::Cow::Borrowed(t),
                    Err(e) => {
                        batch.warnings.push(format!(
                            "{}: line {lineno}, byte {}: invalid UTF-8 replaced with U+FFFD",
                            path.display(),
                            line_start + e.valid_up_to() as u64
                        ));
                        String::from_utf8_lossy(&buf)
                    }
                };
                let last = buf.last() != Some(&b'\n');
                super::json::parse_line(path, lineno, &text, last, &mut batch.warnings)
            };
            if buf.capacity() > KEEP_BUFFER {
                buf = Vec::new();
            }
            value.and_then(|v| parse(path, lineno, &v))
        };
        match outcome {
            Ok(mut p) => {
                tasks.keep_new(&mut p.tasks);
                batch.absorb(p);
                good += 1;
            }
            Err(e) => {
                batch.warnings.push(e.to_string());
                first_error.get_or_insert(e);
            }
        }
        if batch_size >= limits.batch_bytes {
            if !emit(std::mem::take(&mut batch), batch_size) {
                return Ok(());
            }
            batch_size = 0;
        }
    }
    if good == 0 {
        return Err(first_error.unwrap_or(IngestError::Empty { path: path.to_path_buf() }));
    }
    emit(batch, batch_size);
    Ok(())
}

/// Read the next line, its newline included, into `buf` (cleared first), keeping at most `max`
/// bytes: a longer line is read through and not kept. Returns the line's length in the file (0
/// at the end) and whether it was kept.
fn next_line(reader: &mut impl BufRead, buf: &mut Vec<u8>, max: u64) -> std::io::Result<(u64, bool)> {
    buf.clear();
    let (mut len, mut kept) = (0u64, true);
    loop {
        let chunk = reader.fill_buf()?;
        if chunk.is_empty() {
            break;
        }
        let (n, done) = match chunk.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        len += n as u64;
        if kept && len <= max {
            buf.extend_from_slice(&chunk[..n]);
        } else if kept {
            kept = false;
            *buf = Vec::new();
        }
        reader.consume(n);
        if done {
            break;
        }
    }
    Ok((len, kept))
}

/// A line over the limit: skipped, named with its size.
fn long_line(path: &Path, line: usize, len: u64, max: u64) -> IngestError {
    IngestError::parse(
        path,
        Some(crate::error::Location::Line(line)),
        format!(
            "{} is over the limit of {} for one line: the line is skipped",
            crate::error::bytes(len),
            crate::error::bytes(max)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(batch_bytes: u64) -> Limits {
        Limits { batch_bytes, max_line: u64::MAX }
    }

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap_or_else(|e| panic!("{e}"));
        p
    }

    #[test]
    fn a_line_over_the_limit_is_skipped_and_named_with_its_size() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let line = |i: usize, patch: &str| {
            format!("{{\"model_name_or_path\": \"m\", \"instance_id\": \"i{i}\", \"model_patch\": \"{patch}\"}}\n")
        };
        let long = line(1, &"p".repeat(5000));
        let text = format!("{}{long}{}", line(0, "p"), line(2, "p"));
        let p = write(dir.path(), "all_preds.jsonl", &text);
        let mut batches = Vec::new();
        read_batches(&p, Format::SweAgentPreds, Limits { batch_bytes: 1 << 20, max_line: 1000 }, |b, n| {
            batches.push((b, n));
            true
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let ids: Vec<&str> =
            batches.iter().flat_map(|(b, _)| b.predictions.iter().map(|p| p.instance_id.as_str())).collect();
        assert_eq!(ids, vec!["i0", "i2"]);
        assert_eq!(batches.iter().map(|(_, n)| n).sum::<u64>(), text.len() as u64, "every byte is counted");
        let warnings: Vec<&String> = batches.iter().flat_map(|(b, _)| b.warnings.iter()).collect();
        assert_eq!(
            warnings,
            vec![&format!(
                "{}: line 2: 4.9 KiB ({} bytes) is over the limit of 1000 bytes for one line: the line is skipped",
                p.display(),
                long.len()
            )]
        );
    }

    /// A dataset's lines are read as rows of the file's format, even where their keys tell no
    /// dataset (`--format` on a file streamed for its size): a SWE-rebench row without its
    /// `resolved` column is a run without a verdict, not a line of no known dataset.
    #[test]
    fn dataset_lines_are_read_as_the_format_given() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let line = |i: usize| {
            format!(
                "{{\"trajectory_id\": \"t{i}\", \"instance_id\": \"a__b-{i}\", \"model_patch\": \"\", \"trajectory\": [{{\"role\": \"user\", \"content\": \"Fix it.\"}}, {{\"role\": \"assistant\", \"content\": \"Done.\"}}]}}\n"
            )
        };
        let p = write(dir.path(), "rows.jsonl", &format!("{}{}", line(0), line(1)));
        let mut runs = Vec::new();
        read_batches(&p, Format::SweRebenchOpenHands, Limits { batch_bytes: 1 << 20, max_line: 1 << 20 }, |b, _| {
            runs.extend(b.runs.into_iter().map(|r| (r.instance_id, r.format)));
            true
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let want = |i: usize| (format!("a__b-{i}"), Some(Format::SweRebenchOpenHands));
        assert_eq!(runs, [want(0), want(1)]);
    }

    #[test]
    fn batches_cover_every_good_line_and_name_the_bad_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut text = String::new();
        for i in 0..10 {
            if i == 4 {
                text.push_str("{\"instance_id\": \"broken\n");
            } else {
                text.push_str(&format!(
                    "{{\"model_name_or_path\": \"m\", \"instance_id\": \"i{i}\", \"model_patch\": \"p\"}}\n"
                ));
            }
        }
        let p = write(dir.path(), "all_preds.jsonl", &text);
        let mut batches = Vec::new();
        read_batches(&p, Format::SweAgentPreds, limits(150), |b, _| {
            batches.push(b);
            true
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(batches.len() > 2, "several batches: {}", batches.len());
        let ids: Vec<String> =
            batches.iter().flat_map(|b| b.predictions.iter().map(|p| p.instance_id.clone())).collect();
        assert_eq!(ids.len(), 9);
        let warnings: Vec<&String> = batches.iter().flat_map(|b| b.warnings.iter()).collect();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("line 5"), "{}", warnings[0]);
    }

    #[test]
    fn a_last_line_cut_mid_write_is_named_as_the_cut() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let line = |i: usize| {
            format!("{{\"model_name_or_path\": \"m\", \"instance_id\": \"i{i}\", \"model_patch\": \"p\"}}\n")
        };
        let text = format!("{}{}{{\"model_name_or_path\": \"m\", \"instance_id\": \"i", line(0), line(1));
        let p = write(dir.path(), "all_preds.jsonl", &text);
        let mut batches = Vec::new();
        read_batches(&p, Format::SweAgentPreds, limits(1 << 20), |b, _| {
            batches.push(b);
            true
        })
        .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(batches.iter().map(|b| b.predictions.len()).sum::<usize>(), 2);
        let warnings: Vec<&String> = batches.iter().flat_map(|b| b.warnings.iter()).collect();
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("line 3, column "), "{}", warnings[0]);
        assert!(warnings[0].contains("truncated inside this line"), "{}", warnings[0]);
    }

    #[test]
    fn a_file_of_only_bad_lines_fails() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let p = write(dir.path(), "x.jsonl", "{\"a\n{\"b\n");
        assert!(read_batches(&p, Format::OpenHands, limits(1 << 20), |_, _| true).is_err());
    }
}
