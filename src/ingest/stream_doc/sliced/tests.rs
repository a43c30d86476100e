use super::*;
use crate::analysis::reconstruct::Exec;
use crate::ingest::stream_doc::read::read_as;
use crate::ingest::stream_doc::{ReadError, StepSink};
use crate::model::{Edit, Run, Step};
use std::path::PathBuf;

/// Everything the reading hands over, in order, as text.
#[derive(Default)]
struct Record(Vec<String>);

impl StepSink for Record {
    fn begin(&mut self, run: &Run) -> bool {
        self.0.push(format!("{run:?}"));
        true
    }
    fn step(&mut self, step: Step, edits: Vec<Edit>, how: Exec) -> bool {
        self.0.push(format!("{step:?} {edits:?} {how:?}"));
        true
    }
}

/// A reading of `path`, from slices or as a stream: what the sink got, then the document or
/// the error, with the progress counted.
fn reading(path: &Path, sliced: bool) -> (Vec<String>, String) {
    let progress = AtomicU64::new(0);
    let skim = if sliced { skim_for(path) } else { None };
    assert_eq!(skim.is_some(), sliced, "{}: skimmed for the slices", path.display());
    let mut sink = Record::default();
    let end = match read_as(path, &mut sink, &progress, skim) {
        Ok(doc) => format!("{doc:?} read {}", progress.load(Ordering::Relaxed)),
        Err(ReadError::Invalid(e)) => format!("invalid: {e}"),
        Err(e) => format!("{e:?}"),
    };
    (sink.0, end)
}

fn corpus_minis() -> Vec<PathBuf> {
    let root = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/corpus/mini-swe-agent-1"));
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .flat_map(|d| std::fs::read_dir(d.path()).into_iter().flatten().flatten())
        .map(|f| f.path())
        .filter(|p| p.to_string_lossy().ends_with(".traj.json"))
        .collect();
    out.sort();
    out
}

/// Each real mini-swe-agent document reads the same from slices as from the stream: the same
/// runs and steps handed over in the same order, the same ending, size, hash and progress.
#[test]
fn every_real_mini_swe_agent_document_reads_the_same_from_slices() {
    let paths = corpus_minis();
    assert!(paths.len() >= 3, "{paths:?}");
    for path in &paths {
        let (stream, slices) = (reading(path, false), reading(path, true));
        assert!(stream.1.starts_with("Document"), "{}: {}", path.display(), stream.1);
        assert!(stream.0.len() > 10, "{}", path.display());
        assert_eq!(slices, stream, "{}", path.display());
    }
}

/// `text` written as a file and read both ways; whether the slices were tried (the skim took it).
fn both_ways(dir: &Path, text: &[u8]) -> bool {
    let path = dir.join("doc.traj.json");
    std::fs::write(&path, text).expect("write");
    let stream = reading(&path, false);
    if skim_for(&path).is_none() {
        return false;
    }
    let slices = reading(&path, true);
    assert_eq!(slices.1, stream.1, "{}", String::from_utf8_lossy(text));
    if stream.1.starts_with("Document") {
        assert_eq!(slices.0, stream.0);
    }
    true
}

/// Broken copies of a real document: cut anywhere, bytes changed between and inside values,
/// things after the end. The slices never take what the stream refuses, and an error is the
/// stream's own (message and position).
#[test]
fn a_broken_document_is_refused_from_slices_as_from_the_stream() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = corpus_minis().into_iter().next().expect("a real document");
    let text = std::fs::read(&path).expect("read");
    let skim = skim_for(&path).expect("a mini-swe-agent document");
    let mut variants: Vec<Vec<u8>> = Vec::new();
    // Cut at 150 places, and just before the end.
    for k in (1..150).map(|k| text.len() * k / 150).chain([text.len() - 1]) {
        variants.push(text[..k].to_vec());
    }
    let splice = |at: u64, drop: usize, put: &[u8]| {
        let at = at as usize;
        [&text[..at], put, &text[(at + drop).min(text.len())..]].concat()
    };
    // Between elements: the comma dropped, doubled, changed; a number glued to a value.
    for e in skim.elements.iter().take(12) {
        for (drop, put) in [(1, &b""[..]), (0, b","), (1, b";"), (0, b"e5"), (0, b"1"), (0, b"]"), (0, b"}")] {
            variants.push(splice(e.end, drop, put));
        }
        // Inside a value: a quote dropped, a bracket added, a bad escape.
        variants.push(splice(e.start + 3, 1, b""));
        variants.push(splice(e.start + 1, 0, b"\\q"));
        variants.push(splice(e.start, 0, b"["));
    }
    // Between members: the colon, the comma; inside a small member's value.
    for m in &skim.members {
        variants.push(splice(m.start - 1, 1, b" "));
        variants.push(splice(m.start, 0, b"0"));
        if m.end < text.len() as u64 - 1 {
            variants.push(splice(m.end, 1, b""));
        }
    }
    // After the document, and a byte-order mark before it.
    for tail in [&b" x"[..], b"{}", b"\n", b"null"] {
        variants.push([&text[..], tail].concat());
    }
    variants.push([&b"\xef\xbb\xbf"[..], &text[..]].concat());
    // Commas and keys the skim does not check (it tracks nesting, not JSON): only the skeleton
    // of what lies between the values finds these.
    let doc = |info: &str, list: &str| {
        format!(
            r#"{{"info": {{"submission": ""}}{info} "trajectory_format": "mini-swe-agent-1", "messages": [
            {{"role": "system", "content": "s"}}{list} {{"role": "user", "content": "t"}}]}}"#
        )
        .into_bytes()
    };
    let glue = [doc(",", ","), doc(",,", ","), doc(",", ",,"), doc(", ,", ","), doc(",", ",\n,")];
    let refused = [doc(",", ", 1,"), doc(",", ",]"), doc(", :", ","), doc(", 7:", ",")];
    variants.extend(glue.iter().chain(&refused).cloned());
    let tried = variants.iter().filter(|v| both_ways(dir.path(), v)).count();
    assert!(tried > 80, "the slices were tried on {tried} of {} copies", variants.len());
}

/// A file that changed after its skim: its values are no longer where the skim found them. The
/// stream takes the new file, so the reading asks for a whole read (what it handed over is not
/// trusted) rather than naming an error the file does not have.
#[test]
fn a_file_changed_after_its_skim_is_read_whole() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("doc.traj.json");
    let text = std::fs::read_to_string(corpus_minis().into_iter().next().expect("a real document")).expect("read");
    std::fs::write(&path, &text).expect("write");
    let skim = skim_for(&path).expect("a mini-swe-agent document");
    std::fs::write(&path, text.replacen("\"content\": \"", "\"content\": \"moved ", 1)).expect("rewrite");
    let read = read_as(&path, &mut Record::default(), &AtomicU64::new(0), Some(skim));
    assert!(matches!(read, Err(ReadError::Whole(_))), "{read:?}");
    assert!(read_as(&path, &mut Record::default(), &AtomicU64::new(0), None).is_ok(), "the stream takes it");
}
