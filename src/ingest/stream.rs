//! Large JSON-lines files (OpenHands `output.jsonl`, `all_preds.jsonl`, SWE-bench datasets) read
//! a line at a time: hashed without being held, then parsed in batches that the pipeline writes
//! into one open transaction, so memory stays bounded by a batch however large the file is.

use super::detect::{self, Detected};
use super::{openhands, predictions, swebench_dataset};
use crate::error::IngestError;
use crate::model::{Format, Parsed};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;

/// Parses one line of a JSON-lines format.
pub type LineParser = fn(&Path, usize, &Value) -> Result<Parsed, IngestError>;

/// The line parser of a format whose files are JSON lines.
pub fn line_parser(format: Format) -> Option<LineParser> {
    match format {
        Format::OpenHands => Some(openhands::parse_line),
        Format::SweAgentPreds => Some(predictions::parse_line),
        Format::SwebenchDataset => Some(swebench_dataset::parse_line),
        _ => None,
    }
}

fn io(path: &Path, source: std::io::Error) -> IngestError {
    IngestError::Io { path: path.to_path_buf(), source }
}

/// If the file is JSON lines of a line format, that format. Reads at most its first 16 lines, a
/// byte at a time through a small scanner that keeps only the top-level keys: a first line of
/// 500 MB costs no memory. JSON lines: the first two non-empty lines open objects (or the only
/// line does, in a `.jsonl` file), and the first of them that closes its object before its
/// newline gives the keys detection reads.
pub fn sniff(path: &Path, forced: Option<Format>) -> Result<Option<Format>, IngestError> {
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(|e| io(path, e))?);
    let mut starts = Vec::new();
    let mut keys = None;
    for _ in 0..16 {
        let Some(first) = skip_blank(&mut reader).map_err(|e| io(path, e))? else { break };
        if starts.len() < 2 {
            if first != b'{' {
                // Not an object: not JSON lines, whatever the rest holds.
                return Ok(None);
            }
            starts.push(first);
        }
        if keys.is_some() && starts.len() == 2 {
            break;
        }
        let line = scan_line(&mut reader).map_err(|e| io(path, e))?;
        if keys.is_none() && line.whole {
            keys = Some(line.keys);
        }
    }
    let jsonl = starts.len() == 2 || (starts.len() == 1 && path.extension().is_some_and(|e| e == "jsonl"));
    let Some(keys) = keys.filter(|_| jsonl) else { return Ok(None) };
    let format = match forced {
        Some(f) => f,
        None => match detect::detect(&detect::Shape::Lines(keys), "") {
            Detected::Format(f) => f,
            _ => return Ok(None),
        },
    };
    Ok(line_parser(format).map(|_| format))
}

/// Skip whitespace, blank lines and a byte-order mark; the next byte, not consumed, or `None` at
/// the end.
fn skip_blank(reader: &mut impl BufRead) -> std::io::Result<Option<u8>> {
    loop {
        let buf = reader.fill_buf()?;
        let Some(&first) = buf.first() else { return Ok(None) };
        if buf.starts_with(b"\xef\xbb\xbf") {
            reader.consume(3);
        } else if first.is_ascii_whitespace() {
            reader.consume(1);
        } else {
            return Ok(Some(first));
        }
    }
}

/// What [`scan_line`] saw of a line.
struct LineShape {
    /// Top-level member names as written (escapes not decoded), a bounded number.
    keys: Vec<String>,
    /// The line held one value, closed before the newline (not cut, not a pretty-printed start).
    whole: bool,
}

/// Read one line through its newline, following strings and nesting to collect the top-level
/// keys of the object it opens. Keeps no more than the keys (at most 256, each cut at 256 bytes).
fn scan_line(reader: &mut impl BufRead) -> std::io::Result<LineShape> {
    let (mut depth, mut in_string, mut escaped, mut expect_key, mut closed) = (0usize, false, false, false, false);
    let mut key: Option<Vec<u8>> = None;
    let mut keys = Vec::new();
    let mut trailing = false;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let (part, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (&buf[..i], Some(i + 1)),
            None => (buf, None),
        };
        for &c in part {
            if in_string {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => {
                        in_string = false;
                        if let Some(k) = key.take()
                            && keys.len() < 256
                        {
                            keys.push(String::from_utf8_lossy(&k).into_owned());
                        }
                        continue;
                    }
                    _ => {}
                }
                if let Some(k) = key.as_mut().filter(|k| k.len() < 256) {
                    k.push(c);
                }
                continue;
            }
            match c {
                b'{' | b'[' => {
                    trailing |= closed;
                    depth += 1;
                    expect_key = depth == 1 && c == b'{';
                }
                b'}' | b']' => {
                    trailing |= closed;
                    depth = depth.saturating_sub(1);
                    closed |= depth == 0;
                }
                b',' => expect_key = depth == 1,
                b':' => expect_key = false,
                b'"' => {
                    in_string = true;
                    trailing |= closed;
                    key = (depth == 1 && expect_key).then(Vec::new);
                }
                c if c.is_ascii_whitespace() => {}
                _ => trailing |= closed,
            }
        }
        let n = done.unwrap_or(buf.len());
        reader.consume(n);
        if done.is_some() {
            break;
        }
    }
    Ok(LineShape { keys, whole: closed && depth == 0 && !in_string && !trailing })
}

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
            Ok(p) => {
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
    fn jsonl_files_of_line_formats_are_sniffed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let oh = write(
            dir.path(),
            "o.jsonl",
            "{\"instance_id\": \"a\", \"history\": []}\n{\"instance_id\": \"b\", \"history\": []}\n",
        );
        assert_eq!(sniff(&oh, None).ok().flatten(), Some(Format::OpenHands));
        let one = write(dir.path(), "one.json", "{\"trajectory\": []}\n");
        assert_eq!(sniff(&one, None).ok().flatten(), None);
    }

    #[test]
    fn sniff_reads_keys_past_long_values_and_broken_lines() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let long = "x\\\"{[".repeat(100_000);
        let text = format!(
            "\u{feff}\n{{\"instance_id\": \"broken\n{{\"instance_id\": \"a\", \"instruction\": \"{long}\", \"metrics\": {{\"history\": 1}}, \"history\": []}}\n"
        );
        let p = write(dir.path(), "output.json", &text);
        assert_eq!(sniff(&p, None).ok().flatten(), Some(Format::OpenHands));
        // One line: JSON lines only when the name says so.
        let line = "{\"model_name_or_path\": \"m\", \"instance_id\": \"i\", \"model_patch\": \"p\"}\n";
        assert_eq!(sniff(&write(dir.path(), "preds.jsonl", line), None).ok().flatten(), Some(Format::SweAgentPreds));
        assert_eq!(sniff(&write(dir.path(), "preds.json", line), None).ok().flatten(), None);
        // A pretty-printed document, a cut one, an array: not JSON lines.
        let pretty = "{\n  \"instance_id\": \"a\",\n  \"history\": []\n}\n";
        assert_eq!(sniff(&write(dir.path(), "p.jsonl", pretty), None).ok().flatten(), None);
        let cut = "{\"instance_id\": \"a\", \"history\": [\n{\"instance_id\": \"b\", \"history\": [\n";
        assert_eq!(sniff(&write(dir.path(), "c.jsonl", cut), None).ok().flatten(), None);
        assert_eq!(sniff(&write(dir.path(), "a.jsonl", "[1]\n[2]\n"), None).ok().flatten(), None);
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
