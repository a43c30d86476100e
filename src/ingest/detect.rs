//! Format detection by content. File names are not trusted (`.traj`, `.json`, `.jsonl` are all
//! used for several formats); the top-level keys decide.

use crate::model::Format;
use serde::de::{Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::fmt;

/// What a file's content looks like.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Shape {
    /// One JSON object; its top-level keys in order.
    Object(Vec<String>),
    /// JSON lines; the keys of the first line's object.
    Lines(Vec<String>),
    /// A JSON array; the keys of its first item when that is an object (empty otherwise).
    Array(Vec<String>),
    /// Not JSON: plain text.
    Text,
}

/// The decision for a file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Detected {
    Format(Format),
    /// JSON whose format depends on nested values (wrapped reports, `preds.json` dicts, event
    /// lists): the caller parses it and asks [`detect_value`].
    NeedsValue,
    /// Text that is not an input of any kind (a README, a script): skipped, not an error.
    NotInput,
    /// A SWE-agent demonstration (an object holding only `history`): a prompt example, not a run.
    Demonstration,
    /// A known agent's or harness's file that is not read, and what it is (a conversation's
    /// state without its events, a lock file, an LLM completion log, a recording out of its trial).
    NotRead(&'static str),
}

/// Look at the shape of a document. For objects this scans the whole document once without
/// building it (serde's `IgnoredAny`), so it is cheap next to the real parse.
pub fn shape(text: &str) -> Shape {
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if t.starts_with('[') {
        if is_bracketed_log(t) {
            return Shape::Text;
        }
        return Shape::Array(first_item_keys(t).unwrap_or_default());
    }
    if !t.starts_with('{') || is_asciicast(t) {
        return Shape::Text;
    }
    if is_jsonl(t) {
        // The keys of the first line that parses: a broken first line must not hide the rest.
        let keys =
            t.lines().filter(|l| !l.trim().is_empty()).take(16).find_map(|l| top_keys(l).ok()).unwrap_or_default();
        return Shape::Lines(keys);
    }
    match top_keys(t) {
        Ok(keys) => Shape::Object(keys),
        // Broken JSON: the adapter's real parse will report where.
        Err(_) => Shape::Object(Vec::new()),
    }
}

/// A log whose lines start with bracketed tags or times (`[astropy__astropy__5.0]
/// [astropy__astropy-12907] Task Metadata:`, `[2025-05-01 10:00:01] started`, `[INFO] ...`): text,
/// though it starts with `[`. Its first line has a JSON syntax error before any string or
/// object opens; a JSON array's first line is valid, cut (a pretty-printed `[`, a file cut
/// mid-write) or broken only inside its strings and objects, and stays JSON.
fn is_bracketed_log(t: &str) -> bool {
    let line = t.lines().next().unwrap_or_default();
    let Err(e) = serde_json::from_str::<IgnoredAny>(line) else { return false };
    // Nesting too deep is JSON too (its parse reports the limit).
    if e.classify() != serde_json::error::Category::Syntax || e.line() != 1 || e.to_string().contains("recursion") {
        return false;
    }
    let upto = line.char_indices().nth(e.column()).map_or(line.len(), |(i, _)| i);
    !line[..upto].contains(['"', '{'])
}

/// Decide the format from the shape alone where the keys are enough.
pub fn detect(shape: &Shape, text: &str) -> Detected {
    let has = |keys: &[String], k: &str| keys.iter().any(|x| x == k);
    match shape {
        Shape::Object(keys) => {
            if is_atif(keys) {
                Detected::Format(Format::Atif)
            } else if let Some(d) = agent_object(keys) {
                d
            } else if let Some(k) = crate::ingest::dataset::row::Kind::of_record(keys, text) {
                // One row of a published dataset (its `trajectory` is no `.traj`'s).
                Detected::Format(k.format())
            } else if has(keys, "trajectory") || has(keys, "attempts") {
                Detected::Format(Format::SweAgent)
            } else if has(keys, "trajectory_format") || (has(keys, "messages") && has(keys, "info")) {
                Detected::Format(Format::MiniSweAgent)
            } else if has(keys, "model_patch") && has(keys, "instance_id") {
                Detected::Format(Format::SweAgentPreds)
            } else if crate::ingest::polybench::is_result_keys(keys) {
                // SWE-PolyBench `<id>_result.json`: one instance's evaluation.
                Detected::Format(Format::SwebenchReport)
            } else if has(keys, "resolved_ids") || has(keys, "unresolved_ids") || has(keys, "ids_resolved") {
                // SWE-bench harness and sb-cli summaries; SWE-smith's spells `ids_resolved`.
                Detected::Format(Format::SwebenchSummary)
            } else if has(keys, "stats") && has(keys, "resolved") && has(keys, "resolved_per_project") {
                // AutoCodeRover's `final_report.json`.
                Detected::Format(Format::SwebenchSummary)
            } else if has(keys, "tests_status") || has(keys, "patch_successfully_applied") {
                Detected::Format(Format::SwebenchReport)
            } else if has(keys, "resolved") && crate::ingest::experiments::RESULTS_KEYS.iter().any(|k| has(keys, k)) {
                // SWE-bench/experiments `results/results.json`: instance ids by verdict.
                Detected::Format(Format::SwebenchSummary)
            } else if let Some(f) = record_format(keys, text) {
                Detected::Format(f)
            } else if keys.len() == 1 && has(keys, "history") {
                Detected::Demonstration
            } else {
                Detected::NeedsValue
            }
        }
        Shape::Lines(keys) => {
            if let Some(f) = session_lines(keys) {
                Detected::Format(f)
            } else if let Some(f) = record_format(keys, text) {
                Detected::Format(f)
            } else if has(keys, "model_patch") {
                Detected::Format(Format::SweAgentPreds)
            } else if has(keys, "trajectory_format") {
                Detected::Format(Format::MiniSweAgent)
            } else {
                Detected::NeedsValue
            }
        }
        Shape::Array(keys) => match record_format(keys, text) {
            // A list of records: every record format's reader takes a list too.
            Some(f) => Detected::Format(f),
            // mini-swe-agent before `trajectory_format` existed: a bare list of messages.
            None if is_message(keys) => Detected::Format(Format::MiniSweAgent),
            None => Detected::NeedsValue,
        },
        Shape::Text => {
            if is_unittest_output(text) {
                Detected::Format(Format::UnittestText)
            } else if is_eval_log(text) {
                Detected::Format(Format::SwebenchEvalLog)
            } else if is_aider_history(text) {
                Detected::Format(Format::Aider)
            } else if crate::ingest::rovo_dev::is_transcript(text) {
                Detected::Format(Format::RovoDev)
            } else if is_asciicast(text.trim_start_matches('\u{feff}').trim_start()) {
                Detected::NotRead("an asciinema recording outside a Terminal-Bench trial folder (its trial reads it)")
            } else {
                Detected::NotInput
            }
        }
    }
}

/// An object of the agents and harnesses beyond the SWE-bench family, told by its keys (the
/// traps: Moatless' `trajectory.json` is not ATIF; a Terminal-Bench run's `results.json` has
/// `resolved_ids` as a SWE-bench run summary does).
fn agent_object(keys: &[String]) -> Option<Detected> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    let format = if (has("name") && has("transitions") && has("transition_rules"))
        || (has("root") && has("selector") && has("max_iterations"))
    {
        Format::Moatless
    } else if is_v1_event(keys) {
        Format::OpenHandsV1
    } else if (has("is_resolved") && has("failure_mode")) || (has("results") && has("n_resolved")) {
        Format::TerminalBench
    } else if has("id") && has("agent") && has("persistence_dir") {
        return Some(Detected::NotRead(
            "an OpenHands V1 conversation's state (base_state.json) with no events beside it: nothing to read",
        ));
    } else if has("n_total_trials") && has("stats") {
        return Some(Detected::NotRead("a Harbor job's summary (its trials are read; any file name)"));
    } else if has("harbor") && has("invocation") && has("schema_version") {
        return Some(Detected::NotRead("a Harbor job's lock file (the trials' configuration)"));
    } else if has("task_id") && has("setup_info") && has("task_info") {
        return Some(Detected::NotRead("an AutoCodeRover task's meta.json outside its task folder (not read)"));
    } else if has("lockfile_version") && has("harness") {
        return Some(Detected::NotRead("a Terminal-Bench lock file (the run's configuration)"));
    } else if has("run_id") && has("dataset_name") && has("agent_name") {
        return Some(Detected::NotRead("a Terminal-Bench run's metadata, with no trial folder beside it"));
    } else if has("messages") && has("response") && has("kwargs") && has("context_window") {
        return Some(Detected::NotRead(
            "an OpenHands LLM completion log: one model call (the conversation's events are the run)",
        ));
    } else {
        return None;
    };
    Some(Detected::Format(format))
}

/// An OpenHands V1 event: `kind` (its class), `id`, `source`, `timestamp`.
fn is_v1_event(keys: &[String]) -> bool {
    ["kind", "id", "source", "timestamp"].iter().all(|k| keys.iter().any(|x| x == k))
}

/// The session formats written one record per line, told by their first line's keys: OpenHands
/// V1 events, Codex CLI rollouts (`{timestamp, type, payload}`), Claude Code transcripts (a
/// record with `sessionId` and `uuid`, or a `summary` or `file-history-snapshot` record first),
/// OpenClaw sessions (a `session` header with `version`), Agentless localisation and repair
/// outputs.
fn session_lines(keys: &[String]) -> Option<Format> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if is_v1_event(keys) {
        Some(Format::OpenHandsV1)
    } else if has("type") && has("payload") && has("timestamp") {
        Some(Format::CodexCli)
    } else if (has("sessionId") && has("type") && (has("uuid") || has("parentUuid")))
        || (has("type") && has("leafUuid") && has("summary"))
        || (has("type") && has("messageId") && has("snapshot"))
    {
        Some(Format::ClaudeCode)
    } else if has("type") && has("version") && has("id") && has("cwd") && !has("sessionId") {
        Some(Format::OpenClaw)
    } else if (has("found_files") && (has("file_traj") || has("found_edit_locs") || has("found_related_locs")))
        || (has("raw_output") && has("traj") && has("try_count"))
    {
        Some(Format::Agentless)
    } else {
        None
    }
}

/// Aider's chat history: markdown whose sessions open with `# aider chat started at`.
pub fn is_aider_history(text: &str) -> bool {
    let head = text.get(..text.len().min(4096)).unwrap_or(text);
    head.lines().any(|l| l.starts_with("# aider chat started at "))
}

/// An asciinema v2 recording: a header object with `version` and `width`, then event arrays.
pub fn is_asciicast(t: &str) -> bool {
    let mut lines = t.lines().map(str::trim).filter(|l| !l.is_empty());
    let (Some(header), Some(second)) = (lines.next(), lines.next()) else { return false };
    second.starts_with('[')
        && top_keys(header).is_ok_and(|k| k.iter().any(|x| x == "version") && k.iter().any(|x| x == "width"))
}

/// The format of a record (a JSON-lines line, an object, a list's first item) told by its keys
/// (and, for a dataset told by a common column alone, a sign in `text`: `Kind::of_record`):
/// a published dataset's row (`ingest::dataset`), OpenHands output (the resolver's, and the evaluation's of every year), multi-SWE-bench
/// predictions and tasks, SWE-bench tasks.
fn record_format(keys: &[String], text: &str) -> Option<Format> {
    let has = |k: &str| keys.iter().any(|x| x == k);
    if let Some(k) = crate::ingest::dataset::row::Kind::of_record(keys, text) {
        // A published dataset's row (SWE-smith's has an instance id and a patch, as a task does).
        Some(k.format())
    } else if has("history") && has("issue") && has("git_patch") {
        Some(Format::OpenHandsResolver)
    } else if has("history") && (has("instance_id") || has("instance") || has("instruction")) {
        // `instance_id` since mid-2024; OpenDevin's 2024 lines have `id`, `instance`, `instruction`.
        Some(Format::OpenHands)
    } else if is_multi_swebench_task(keys) {
        Some(Format::MultiSwebenchDataset)
    } else if has("fix_patch") && has("org") && has("repo") && has("number") {
        Some(Format::MultiSwebenchPreds)
    } else if is_dataset_instance(keys) {
        Some(Format::SwebenchDataset)
    } else {
        None
    }
}

/// A multi-SWE-bench task: the fix patch and what identifies the PR, with the test patch or
/// the test lists the predictions file never has.
fn is_multi_swebench_task(keys: &[String]) -> bool {
    let has = |k: &str| keys.iter().any(|x| x == k);
    has("fix_patch")
        && (has("instance_id") || (has("org") && has("repo") && has("number")))
        && ["test_patch", "f2p_tests", "p2p_tests", "fixed_tests", "resolved_issues"].iter().any(|k| has(k))
}

/// A chat message: `role` and `content`.
fn is_message(keys: &[String]) -> bool {
    keys.iter().any(|k| k == "role") && keys.iter().any(|k| k == "content")
}

/// The SWE-bench harness's `*.eval.log` of before mid-2024: `Task Metadata:` and the instance
/// id at its start (lines may carry a `[testbed] [instance]` prefix).
pub fn is_eval_log(text: &str) -> bool {
    let head = text.get(..text.len().min(4096)).unwrap_or(text);
    head.contains("Task Metadata:") && head.contains("- Instance ID:")
}

/// The format of a JSON object cut mid-write, from the top-level keys written before the cut
/// (the one cut included): the same rules as [`detect`], and mini-swe-agent's `messages` alone
/// when every key is one of its own (its `info` and `trajectory_format` may come after the cut).
/// R2E-Gym's `messages` alone is not told so (no text is looked at for its sign, and more keys
/// may have come after the cut).
pub fn detect_cut(keys: &[String]) -> Option<Format> {
    const MINI: &[&str] = &["info", "messages", "trajectory_format", "instance_id"];
    match detect(&Shape::Object(keys.to_vec()), "") {
        Detected::Format(f) => Some(f),
        _ if keys.iter().any(|k| k == "messages") && keys.iter().all(|k| MINI.contains(&k.as_str())) => {
            Some(Format::MiniSweAgent)
        }
        _ => None,
    }
}

/// An ATIF trajectory (Harbor RFC 0001): `schema_version`, `agent` and `steps`.
fn is_atif(keys: &[String]) -> bool {
    ["schema_version", "agent", "steps"].iter().all(|k| keys.iter().any(|x| x == k))
}

/// A SWE-bench dataset instance (a task with its gold patch): `instance_id` and `patch`, and
/// none of the keys of the records that also carry an instance id and a patch somewhere:
/// predictions (`model_patch`, `model_name_or_path`) and OpenHands output lines (`history`,
/// `instance`, `test_result`).
fn is_dataset_instance(keys: &[String]) -> bool {
    let has = |k: &str| keys.iter().any(|x| x == k);
    has("instance_id")
        && has("patch")
        && !["model_patch", "model_name_or_path", "history", "instance", "test_result"].iter().any(|k| has(k))
}

/// Formats that can only be told apart by nested values.
pub fn detect_value(v: &serde_json::Value) -> Option<Format> {
    use serde_json::Value;
    match v {
        Value::Array(items) => {
            let first = items.iter().find(|i| i.is_object())?;
            if first.get("model_patch").is_some() {
                Some(Format::SweAgentPreds)
            } else if is_openhands_event(first) {
                Some(Format::OpenHandsEvents)
            } else {
                None
            }
        }
        Value::Object(map) => {
            if is_openhands_event(v) {
                return Some(Format::OpenHandsEvents);
            }
            let first = map.values().next()?;
            if !map.values().all(Value::is_object) {
                return None;
            }
            if first.get("tests_status").is_some() || first.get("patch_successfully_applied").is_some() {
                Some(Format::SwebenchReport)
            } else if first.get("model_patch").is_some() {
                Some(Format::SweAgentPreds)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// An OpenHands (V0) event: an `id` and an `action` or an `observation` named by a string (a V1
/// event's are objects).
pub fn is_openhands_event(v: &serde_json::Value) -> bool {
    v.get("id").is_some()
        && (v.get("action").is_some_and(serde_json::Value::is_string)
            || v.get("observation").is_some_and(serde_json::Value::is_string))
}

/// JSON lines: the first two non-empty lines each open an object, and one of the first few
/// lines is a whole JSON value. (A pretty-printed document's second line opens a key, not an
/// object; a one-line document has no second line.)
pub fn is_jsonl(text: &str) -> bool {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    let (Some(a), Some(b)) = (lines.next(), lines.next()) else { return false };
    a.starts_with('{')
        && b.starts_with('{')
        && text.lines().filter(|l| !l.trim().is_empty()).take(16).any(|l| serde_json::from_str::<IgnoredAny>(l).is_ok())
}

/// Python unittest text output: a `Ran N test(s) in` line followed by `OK` or `FAILED (...)`.
pub fn is_unittest_output(text: &str) -> bool {
    let mut ran = false;
    for line in text.lines() {
        let line = line.trim_end();
        if line.starts_with("Ran ") && line.contains(" test") && line.contains(" in ") {
            ran = true;
        } else if ran && (line == "OK" || line.starts_with("OK (") || line.starts_with("FAILED (")) {
            return true;
        }
    }
    false
}

/// The keys of the first item of a JSON array when it is an object, without building any value
/// (the other items are skipped, not parsed into values). `None` for an empty array, a first
/// item that is not an object, or broken JSON (the adapter's real parse reports where).
fn first_item_keys(text: &str) -> Option<Vec<String>> {
    struct First;
    impl<'de> Visitor<'de> for First {
        type Value = Option<Vec<String>>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON array")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let first = seq.next_element::<FirstKeys>()?.and_then(|k| k.0);
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(first)
        }
    }
    /// An item's keys when it is an object; any other value is skipped.
    struct FirstKeys(Option<Vec<String>>);
    impl<'de> serde::Deserialize<'de> for FirstKeys {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct AnyValue;
            impl<'de> Visitor<'de> for AnyValue {
                type Value = FirstKeys;
                fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                    f.write_str("any JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<FirstKeys, A::Error> {
                    Ok(FirstKeys(Some(KeysOf.visit_map(map)?)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<FirstKeys, A::Error> {
                    while seq.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(FirstKeys(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
                fn visit_str<E>(self, _: &str) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
                fn visit_unit<E>(self) -> Result<FirstKeys, E> {
                    Ok(FirstKeys(None))
                }
            }
            d.deserialize_any(AnyValue)
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_seq(First).ok().flatten()
}

/// Collects an object's keys, skipping its values.
struct KeysOf;
impl<'de> Visitor<'de> for KeysOf {
    type Value = Vec<String>;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
        let mut keys = Vec::new();
        while let Some(k) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            keys.push(k.into_owned());
            map.next_value::<IgnoredAny>()?;
        }
        Ok(keys)
    }
}

/// Collect the top-level keys of a JSON object without building its values.
fn top_keys(text: &str) -> Result<Vec<String>, serde_json::Error> {
    // serde_json's recursion limit stays on: 10,000-deep nesting fails cleanly.
    let mut de = serde_json::Deserializer::from_str(text);
    de.deserialize_map(KeysOf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_are_told_apart_by_keys() {
        let s = shape(r#"{"environment": "swe_main", "trajectory": [], "history": [], "info": {}}"#);
        assert_eq!(detect(&s, ""), Detected::Format(Format::SweAgent));
        let s = shape(r#"{"info": {}, "messages": [], "trajectory_format": "mini-swe-agent-1", "instance_id": "x"}"#);
        assert_eq!(detect(&s, ""), Detected::Format(Format::MiniSweAgent));
        let s = shape(r#"{"x": {"resolved": true, "tests_status": {}}}"#);
        assert_eq!(detect(&s, ""), Detected::NeedsValue);
        let s = shape(r#"{"resolved_ids": [], "schema_version": 2}"#);
        assert_eq!(detect(&s, ""), Detected::Format(Format::SwebenchSummary));
    }

    #[test]
    fn jsonl_is_recognised_by_its_first_line() {
        let s = shape("{\"instance_id\": \"a\", \"history\": []}\n{\"instance_id\": \"b\", \"history\": []}\n");
        assert_eq!(detect(&s, ""), Detected::Format(Format::OpenHands));
        let s = shape("{\"instance_id\": \"a\", \"model_patch\": \"\"}\n");
        // a single line is a plain object
        assert_eq!(detect(&s, ""), Detected::Format(Format::SweAgentPreds));
        // A broken first line: the next line decides.
        let s = shape("{\"instance_id\": \"a\", \"hist\n{\"instance_id\": \"b\", \"history\": []}\n");
        assert_eq!(detect(&s, ""), Detected::Format(Format::OpenHands));
        assert!(!is_jsonl("{\n  \"a\": 1\n}\n"));
    }

    #[test]
    fn unittest_text_is_recognised_and_other_text_is_not_input() {
        let t = "F.\n======\nFAIL: test_x (__main__.T.test_x)\n------\nRan 2 tests in 0.001s\n\nFAILED (failures=1)\n";
        assert_eq!(detect(&shape(t), t), Detected::Format(Format::UnittestText));
        let t = "# A readme\n";
        assert_eq!(detect(&shape(t), t), Detected::NotInput);
    }

    #[test]
    fn formats_met_in_the_wild_are_told_by_their_keys() {
        let lines = |a: &str, b: &str| format!("{a}\n{b}\n");
        let f = |text: &str| detect(&shape(text), text);
        // OpenDevin 2024: `id`, `instance`, `instruction`, `history` of pairs.
        let t = lines(
            r#"{"id": "P_1", "instance": {}, "instruction": "i", "history": [[{}, {}]]}"#,
            r#"{"id": "P_2", "instance": {}, "instruction": "i", "history": []}"#,
        );
        assert_eq!(f(&t), Detected::Format(Format::OpenHands));
        let t = lines(
            r#"{"issue": {}, "instruction": "i", "git_patch": "", "history": [], "success": true}"#,
            r#"{"issue": {}, "instruction": "i", "git_patch": "", "history": [], "success": false}"#,
        );
        assert_eq!(f(&t), Detected::Format(Format::OpenHandsResolver));
        let t = lines(
            r#"{"org": "o", "repo": "r", "number": "1", "fix_patch": "d"}"#,
            r#"{"org": "o", "repo": "r", "number": "2", "fix_patch": "d"}"#,
        );
        assert_eq!(f(&t), Detected::Format(Format::MultiSwebenchPreds));
        let t = lines(
            r#"{"org": "o", "repo": "r", "number": 1, "fix_patch": "d", "test_patch": "t", "f2p_tests": {}}"#,
            r#"{"org": "o", "repo": "r", "number": 2, "fix_patch": "d", "test_patch": "t", "f2p_tests": {}}"#,
        );
        assert_eq!(f(&t), Detected::Format(Format::MultiSwebenchDataset));
        let t = r#"[{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]"#;
        assert_eq!(f(t), Detected::Format(Format::MiniSweAgent));
        let t = r#"{"history": [{"role": "system", "content": "s"}]}"#;
        assert_eq!(f(t), Detected::Demonstration);
        // Unknown JSON lines are told by their first line alone (the caller skips them).
        let t = lines(r#"{"a": 1}"#, r#"{"a": 2}"#);
        assert_eq!((shape(&t), f(&t)), (Shape::Lines(vec!["a".to_string()]), Detected::NeedsValue));
    }

    #[test]
    fn an_eval_log_starting_with_a_bracket_is_text_not_json() {
        let log = "[astropy__astropy__4.3] [astropy__astropy-12907] Task Metadata:\n\t- Instance ID: astropy__astropy-12907\n";
        assert_eq!(shape(log), Shape::Text);
        assert_eq!(detect(&shape(log), log), Detected::Format(Format::SwebenchEvalLog));
        let old = "Task Metadata:\n\t- Instance ID: django__django-11099\n\t- Testbed: /tmp/x\n";
        assert_eq!(detect(&shape(old), old), Detected::Format(Format::SwebenchEvalLog));
        // JSON arrays stay arrays.
        for json in ["[1, 2]", "[\"a\"] ", "[[1]]\n", "[\n  {\"a\": 1}\n]", "[true]"] {
            assert!(matches!(shape(json), Shape::Array(_)), "{json}");
        }
        for other in ["[INFO] starting\n", "[2025-05-01 10:00:01] instance x started\n"] {
            assert_eq!(detect(&shape(other), other), Detected::NotInput, "{other}");
        }
        // Broken or cut JSON stays JSON: its parse names where.
        for json in ["[{\"a\": 1,, }]", "[\"a\" \"b\"]", "[{\"a\": ", "[\n"] {
            assert!(matches!(shape(json), Shape::Array(_)), "{json}");
        }
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(10_000), "]".repeat(10_000));
        // Skipping a value does not recurse: the keys are read; the adapter's real parse then
        // stops at serde_json's recursion limit and reports the position.
        assert_eq!(shape(&deep), Shape::Object(vec!["a".to_string()]));
    }
}
