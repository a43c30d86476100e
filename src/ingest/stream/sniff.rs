//! Telling a large file that is JSON lines from one JSON document without holding either: the
//! first lines are read through a scanner that keeps only the top-level keys.

use super::lines::{io, line_parser};
use crate::error::IngestError;
use crate::ingest::detect::{self, Detected};
use crate::model::Format;
use std::io::{BufRead, BufReader};
use std::path::Path;

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
        None => match detect::detect(&detect::Shape::Lines(keys), &head(path)?) {
            Detected::Format(f) => f,
            _ => return Ok(None),
        },
    };
    Ok(line_parser(format).map(|_| format))
}

/// The file's first bytes, as text: where detection looks for a dataset's sign beside its keys
/// (R2E-Gym's `<github_issue>`, in the first line's first user message, after a system prompt
/// of a few KB).
fn head(path: &Path) -> Result<String, IngestError> {
    use std::io::Read;
    const HEAD: u64 = 256 << 10;
    let mut bytes = Vec::new();
    let file = std::fs::File::open(path).map_err(|e| io(path, e))?;
    file.take(HEAD).read_to_end(&mut bytes).map_err(|e| io(path, e))?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
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
        // `messages` alone: R2E-Gym's rows when the first line wraps an issue (after a long
        // system prompt), an OpenAI fine-tuning file's lines otherwise.
        let line = |user: &str| {
            let system = "You are a programming agent. ".repeat(500);
            format!(
                "{{\"messages\": [{{\"role\": \"system\", \"content\": \"{system}\"}}, {{\"role\": \"user\", \"content\": \"{user}\"}}]}}\n"
            )
        };
        let r2e = line("<github_issue>It breaks.</github_issue>").repeat(2);
        assert_eq!(sniff(&write(dir.path(), "r.jsonl", &r2e), None).ok().flatten(), Some(Format::R2eGymSft));
        let tune = line("Capital of France?").repeat(2);
        assert_eq!(sniff(&write(dir.path(), "t.jsonl", &tune), None).ok().flatten(), None);
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
}
