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

/// If the file is JSON lines of a line format, that format. Reads only its first two lines.
pub fn sniff(path: &Path, forced: Option<Format>) -> Result<Option<Format>, IngestError> {
    let mut reader = BufReader::new(std::fs::File::open(path).map_err(|e| io(path, e))?);
    let mut head = Vec::new();
    let mut lines = 0;
    let mut buf = Vec::new();
    while lines < 2 {
        buf.clear();
        if reader.read_until(b'\n', &mut buf).map_err(|e| io(path, e))? == 0 {
            break;
        }
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        head.extend_from_slice(&buf);
        lines += 1;
    }
    let text = String::from_utf8_lossy(&head);
    if !detect::is_jsonl(&text) {
        return Ok(None);
    }
    let format = match forced {
        Some(f) => f,
        None => match detect::detect(&detect::shape(&text), &text) {
            Detected::Format(f) => f,
            _ => return Ok(None),
        },
    };
    Ok(line_parser(format).map(|_| format))
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

/// Parse the file line by line and hand `emit` a batch whenever about `batch_bytes` of input
/// have been read (and once at the end). Bad lines become warnings naming their line; the file
/// fails only when no line could be read. `emit` returns false to stop early.
pub fn read_batches(
    path: &Path,
    format: Format,
    batch_bytes: u64,
    mut emit: impl FnMut(Parsed, u64) -> bool,
) -> Result<(), IngestError> {
    let parse = line_parser(format).ok_or_else(|| IngestError::shape(path, "not a JSON-lines format"))?;
    let mut reader = BufReader::with_capacity(1 << 20, std::fs::File::open(path).map_err(|e| io(path, e))?);
    let mut buf = Vec::new();
    let mut batch = Parsed::default();
    let mut batch_size = 0u64;
    let (mut lineno, mut offset, mut good) = (0usize, 0usize, 0usize);
    let mut first_error: Option<IngestError> = None;
    loop {
        buf.clear();
        let n = reader.read_until(b'\n', &mut buf).map_err(|e| io(path, e))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        let line_start = offset;
        offset += n;
        batch_size += n as u64;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let text = match std::str::from_utf8(&buf) {
            Ok(t) => std::borrow::Cow::Borrowed(t),
            Err(e) => {
                batch.warnings.push(format!(
                    "{}: line {lineno}, byte {}: invalid UTF-8 replaced with U+FFFD",
                    path.display(),
                    line_start + e.valid_up_to()
                ));
                String::from_utf8_lossy(&buf)
            }
        };
        let last = buf.last() != Some(&b'\n');
        let outcome = super::json::parse_line(path, lineno, &text, last, &mut batch.warnings)
            .and_then(|v| parse(path, lineno, &v));
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
        if batch_size >= batch_bytes {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        read_batches(&p, Format::SweAgentPreds, 150, |b, _| {
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
        read_batches(&p, Format::SweAgentPreds, 1 << 20, |b, _| {
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
        assert!(read_batches(&p, Format::OpenHands, 1 << 20, |_, _| true).is_err());
    }
}
