//! Terminal escape sequences in trajectory text must never reach the terminal through the text
//! output of `trajan`, while `--json` output keeps the text exactly (JSON-escaped).

use crate::common::*;
use std::ffi::OsStr;

/// ANSI colours, an OSC 52 clipboard write (BEL-terminated), an OSC title (ST-terminated),
/// cursor movement, a carriage return, backspaces, NUL, DEL and a C1 CSI.
const HOSTILE: &str = "\u{1b}[31mredword\u{1b}[0m plainword \
                       \u{1b}]52;c;ZXZpbCBjbGlwYm9hcmQ=\u{7} clipword \
                       \u{1b}]0;titlepayload\u{1b}\\ titleword \
                       \u{1b}[2J\u{1b}[1;1H homeword\rcarriage back\u{8}\u{8}space \
                       nul\u{0}end del\u{7f}x c1\u{9b}31mcsi";

/// Bytes a terminal would act on: C0 controls except `\n` and `\t`, DEL, and the C1 controls
/// (U+0080..U+009F, encoded `c2 80`..`c2 9f` in UTF-8).
fn terminal_controls(out: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(out);
    text.char_indices()
        .filter(|(_, c)| {
            let n = *c as u32;
            (n < 0x20 && *c != '\n' && *c != '\t') || n == 0x7f || (0x80..=0x9f).contains(&n)
        })
        .map(|(i, c)| format!("U+{:04X} at byte {i}", c as u32))
        .collect()
}

fn hostile_case() -> Case {
    let case = Case::new();
    case.write("esc__case-1.traj", swe_agent_traj(HOSTILE).as_bytes());
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    case
}

fn assert_clean(what: &str, out: &std::process::Output) {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stdout.contains(&0x1b), "{what}: ESC in output");
    assert!(!out.stdout.contains(&0x00), "{what}: NUL in output");
    assert!(!out.stdout.contains(&0x07), "{what}: BEL in output");
    assert_eq!(terminal_controls(&out.stdout), Vec::<String>::new(), "{what}: control characters in output");
}

#[test]
fn show_text_output_has_no_escape_sequences_or_controls() {
    let case = hostile_case();
    for args in [vec!["show", "esc__case-1"], vec!["show", "esc__case-1", "--step", "0"]] {
        let args: Vec<&OsStr> = args.iter().map(OsStr::new).collect();
        let out = case.cli(&args);
        assert_clean("show", &out);
        let text = String::from_utf8_lossy(&out.stdout);
        // The visible words survive; colour and cursor codes go; the text a terminal would hide
        // in OSC sequences is shown, inert, in a marker.
        for word in ["redword", "plainword", "clipword", "titleword", "homeword", "carriage", "space", "end", "csi"] {
            assert!(text.contains(word), "{word:?} missing from:\n{text}");
        }
        for marker in ["⟦OSC 52;c;ZXZpbCBjbGlwYm9hcmQ=⟧ clipword", "⟦OSC 0;titlepayload⟧ titleword"] {
            assert!(text.contains(marker), "{marker:?} missing from:\n{text}");
        }
        assert!(text.contains("\u{2400}") && !text.contains("[31m") && !text.contains("[2J"), "{text}");
        // NUL and backspace are shown as visible symbols, not dropped silently.
        assert!(text.contains("nul\u{2400}end"), "{text}");
        assert!(text.contains("back\u{2408}\u{2408}space"), "{text}");
    }
}

#[test]
fn show_json_keeps_the_text_escaped() {
    let case = hostile_case();
    let out = case.cli(&[OsStr::new("show"), OsStr::new("esc__case-1"), OsStr::new("--json")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    // JSON escapes every control character, so the raw bytes are clean too...
    assert!(!out.stdout.contains(&0x1b) && !out.stdout.contains(&0x00) && !out.stdout.contains(&0x07));
    let raw = String::from_utf8_lossy(&out.stdout);
    assert!(raw.contains("\\u001b]52;c;ZXZpbCBjbGlwYm9hcmQ=\\u0007"), "{raw}");
    assert!(raw.contains("nul\\u0000end"), "{raw}");
    // ...and the text reads back exactly.
    let v: serde_json::Value = must(serde_json::from_slice(&out.stdout), "show --json output");
    assert_eq!(v["step_list"][0]["observation"].as_str(), Some(HOSTILE));
}

#[test]
fn search_and_runs_text_output_are_clean() {
    let case = hostile_case();
    // The snippet around "plainword" spans the colour codes and the OSC 52 sequence.
    let out = case.cli(&[OsStr::new("search"), OsStr::new("plainword")]);
    assert_clean("search", &out);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("esc__case-1") && text.contains("1 hits"), "{text}");
    assert!(text.contains("⟦OSC 52;c;ZXZpbCBjbGlwYm9hcmQ=⟧"), "{text}");
    let out = case.cli(&[OsStr::new("runs")]);
    assert_clean("runs", &out);
    assert!(String::from_utf8_lossy(&out.stdout).contains("2 runs"));
}

#[test]
fn file_names_with_escapes_are_clean_in_runs_and_ingest_messages() {
    let case = Case::new();
    // The instance id comes from the file name, so it carries the escape sequence.
    case.write("name\u{1b}]0;pwned\u{7}__x-1.traj", good_traj().as_bytes());
    let bad = case.write("bad\u{1b}[2Jname.traj", br#"{"foo": 1}"#);
    case.write("meta\u{1b}[2Jdata.json", br#"{"foo": 1}"#);
    let out = case.cli(&[OsStr::new("ingest"), OsStr::new("--verbose"), case.root.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    assert!(!out.stderr.contains(&0x1b), "ESC in ingest messages");
    assert_eq!(terminal_controls(&out.stderr), Vec::<String>::new());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("error: ") && stderr.contains("name.traj: not a known"), "{stderr}");
    assert!(stderr.contains("skipped: ") && stderr.contains("data.json: not a known format"), "{stderr}");
    assert!(bad.exists());
    let out = case.cli(&[OsStr::new("runs")]);
    assert_clean("runs", &out);
    let out = case.cli(&[OsStr::new("runs"), OsStr::new("--json")]);
    let runs: serde_json::Value = must(serde_json::from_slice(&out.stdout), "runs --json");
    let ids: Vec<&str> =
        runs.as_array().map(|a| a.iter().filter_map(|r| r["instance_id"].as_str()).collect()).unwrap_or_default();
    assert!(ids.contains(&"name\u{1b}]0;pwned\u{7}__x-1"), "{ids:?}");
    let out = case.cli(&[OsStr::new("show"), OsStr::new("name\u{1b}]0;pwned\u{7}__x-1")]);
    assert_clean("show", &out);
}

#[test]
fn show_header_fields_from_the_file_are_clean() {
    let case = Case::new();
    let text = serde_json::json!({
        "trajectory": [{"action": "ls", "observation": "o", "thought": "t", "response": "t"}],
        "history": [],
        "info": {"exit_status": "submitted", "swe_agent_version": "1.0\u{1b}]0;pwned\u{7}\u{1b}[2J"}
    })
    .to_string();
    case.write("ver__esc-1.traj", text.as_bytes());
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = case.cli(&[OsStr::new("show"), OsStr::new("ver__esc-1")]);
    assert_clean("show", &out);
}

#[test]
fn words_right_after_colour_codes_are_searchable() {
    let case = hostile_case();
    // "redword" is only ever preceded by `ESC [31m`.
    let out = case.cli(&[OsStr::new("search"), OsStr::new("redword"), OsStr::new("--json")]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let hits: serde_json::Value = must(serde_json::from_slice(&out.stdout), "search --json");
    let instances: Vec<&str> =
        hits.as_array().map(|a| a.iter().filter_map(|h| h["instance_id"].as_str()).collect()).unwrap_or_default();
    assert_eq!(instances, vec!["esc__case-1"]);
}

/// An instance id (from the file name) with an OSC title sequence, a model with an OSC 52
/// clipboard write, a screen clear and a C1 CSI, a reviewer's note with the same: every CSV and
/// Markdown export and `stats` shows them as visible symbols whatever reads the output (here a
/// pipe, as in `trajan export labels | head`), and a file written with `-o` holds the same text.
#[test]
fn exports_and_stats_show_escape_sequences_as_symbols_not_raw() {
    let case = Case::new();
    let model = "model\u{1b}]52;c;ZXZpbA==\u{7}\u{1b}[2J\u{9b}31m";
    let traj = serde_json::json!({
        "trajectory": [{"action": "ls", "observation": HOSTILE, "thought": "t", "response": "t"}],
        "history": [],
        "info": {"exit_status": "submitted"},
        "replay_config": serde_json::json!({"agent": {"model": {"name": model}}}).to_string()
    });
    let instance = "esc\u{1b}]0;title\u{7}__x-1";
    case.write(&format!("{instance}.traj"), traj.to_string().as_bytes());
    let run = |args: &[&str]| case.cli(&args.iter().map(OsStr::new).collect::<Vec<_>>());
    let out = run(&["ingest", case.root.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(run(&["classify"]).status.code(), Some(0));
    let note = "see \u{1b}]0;pwned\u{7}\u{1b}[1;1H here";
    let out = run(&["label", instance, "--unclassified", "--note", note, "--rater", "ann"]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    let text_outputs: [&[&str]; 8] = [
        &["export", "labels", "--format", "csv"],
        &["export", "labels", "--format", "markdown"],
        &["export", "stats", "--format", "csv", "--by", "model"],
        &["export", "stats", "--format", "markdown", "--by", "model", "--source", "heuristic"],
        &["stats", "--csv", "--by", "model"],
        &["stats", "--markdown", "--by", "model"],
        &["labels"],
        &["labels", "--history"],
    ];
    for args in text_outputs {
        let mut all = vec!["--include-unknown"];
        all.extend_from_slice(args);
        let out = run(&all);
        assert_clean(&format!("{args:?}"), &out);
        let text = String::from_utf8_lossy(&out.stdout);
        // `labels` is sanitized for the terminal: the title payload is shown as a marker, the
        // cursor move is gone.
        if args[0] == "labels" {
            assert!(text.contains("see ⟦OSC 0;pwned⟧ here"), "{args:?}:\n{text}");
            continue;
        }
        assert!(text.contains("model\u{241b}]52;c;ZXZpbA==\u{2407}\u{241b}[2J\u{fffd}31m"), "{args:?}:\n{text}");
        if args[1] == "labels" {
            assert!(text.contains("esc\u{241b}]0;title\u{2407}__x-1"), "{args:?}:\n{text}");
            assert!(text.contains("see \u{241b}]0;pwned\u{2407}\u{241b}[1;1H here"), "{args:?}:\n{text}");
        }
    }
    // The file holds what standard output shows.
    let file = case.root.join("labels.csv");
    let out = run(&["export", "labels", "--format", "csv", "-o", file.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let written = must(std::fs::read(&file), "read the export");
    assert_eq!(terminal_controls(&written), Vec::<String>::new());
    assert_eq!(written, run(&["export", "labels", "--format", "csv"]).stdout);

    // JSON and JSON lines escape every control and read back exactly.
    for format in ["json", "jsonl"] {
        let out = run(&["export", "labels", "--format", format]);
        assert_clean(format, &out);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(text.contains("\\u009b31m"), "C1 escaped in {format}: {text}");
        let labels: Vec<serde_json::Value> = if format == "json" {
            must(serde_json::from_str(&text), format)
        } else {
            text.lines().map(|l| must(serde_json::from_str(l), format)).collect()
        };
        assert!(labels.iter().any(|l| l["instance_id"] == instance && l["note"] == note), "{format}: {text}");
        assert!(labels.iter().any(|l| l["run_model"] == model), "{format}: {text}");
    }
}

/// Text a terminal draws as nothing: Unicode tag characters spelling an instruction, a line
/// separator, an APC string, and an ESC at the end of a line (which once took the newline).
fn hidden_text() -> String {
    let tags: String = "ignore the tests".chars().filter_map(|c| char::from_u32(0xe0000 + c as u32)).collect();
    format!("before{tags}after sep\u{2028}arator \u{1b}_apcpayload\u{1b}\\ lastword\u{1b}\nnextline")
}

#[test]
fn hidden_text_is_shown_by_show_and_found_by_search() {
    let case = Case::new();
    case.write("hid__case-1.traj", swe_agent_traj(&hidden_text()).as_bytes());
    let out = case.cli(&[OsStr::new("ingest"), case.root.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let out = case.cli(&[OsStr::new("show"), OsStr::new("hid__case-1"), OsStr::new("--step"), OsStr::new("0")]);
    assert_clean("show", &out);
    let text = String::from_utf8_lossy(&out.stdout);
    for shown in ["before⟦tags: ignore the tests⟧after", "sep\u{2424}arator", "⟦APC apcpayload⟧", "lastword\u{241b}\n"]
    {
        assert!(text.contains(shown), "{shown:?} missing from:\n{text}");
    }
    assert!(text.lines().any(|l| l.trim() == "nextline"), "{text}");
    assert!(!text.contains('\u{2028}') && !text.chars().any(|c| ('\u{e0000}'..='\u{e007f}').contains(&c)), "{text}");
    // The index holds the text as shown, so what was hidden can be searched for.
    for phrase in ["ignore the tests", "apcpayload", "nextline"] {
        let out = case.cli(&[OsStr::new("search"), OsStr::new(phrase), OsStr::new("--json")]);
        let hits: serde_json::Value = must(serde_json::from_slice(&out.stdout), "search --json");
        assert_eq!(hits.as_array().map(Vec::len), Some(1), "{phrase}: {hits}");
    }
}

/// A run of `instance` whose actions, file names, model and submission carry escape
/// sequences: what the comparison view shows of a run.
fn hostile_run(model: &str, extra: &str) -> String {
    let file = "/testbed/src/ev\u{1b}]52;c;ZXZpbA==\u{7}il.py";
    let patch = format!(
        "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1 @@\n-{HOSTILE}\n+x{extra}\n"
    );
    serde_json::json!({
        "trajectory": [
            {"action": format!("open {file}"), "observation": HOSTILE, "thought": "t", "response": "t"},
            {"action": format!("grep -rn '{HOSTILE}' src"), "observation": HOSTILE, "thought": "t", "response": "t"},
            {"action": format!("echo {extra}{HOSTILE}"), "observation": HOSTILE, "thought": "t", "response": "t"},
            {"action": "submit", "observation": "", "thought": "t", "response": "t"}
        ],
        "history": [],
        "info": {"exit_status": "submitted", "submission": patch},
        "replay_config": serde_json::json!({"agent": {"model": {"name": model}}}).to_string()
    })
    .to_string()
}

#[test]
fn the_comparison_view_and_its_warning_are_clean() {
    let case = Case::new();
    // Two instances (one with an OSC title in its id): the comparison warns of them.
    let instances = ["esc\u{1b}]0;title\u{7}__x-1", "esc__x-2"];
    case.write(&format!("{}.traj", instances[0]), hostile_run("model\u{1b}[2J\u{9b}31m", "\u{1b}[1;1H").as_bytes());
    case.write(&format!("{}.traj", instances[1]), hostile_run("m2\u{1b}]52;c;ZXZpbA==\u{7}", "\u{8}\u{0}").as_bytes());
    let run = |args: &[&str]| case.cli(&args.iter().map(OsStr::new).collect::<Vec<_>>());
    let out = run(&["ingest", case.root.to_str().unwrap_or_default()]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));

    // The CLI: the warning on standard error is sanitized, the JSON escaped.
    let out = run(&["compare", "1", "2", "--json"]);
    assert_clean("compare --json", &out);
    assert_eq!(terminal_controls(&out.stderr), Vec::<String>::new(), "compare's warning");
    assert!(String::from_utf8_lossy(&out.stderr).contains("⟦OSC 0;title⟧"), "{}", String::from_utf8_lossy(&out.stderr));

    // The view: every panel of it, at two sizes.
    for (w, h) in [(80, 24), (200, 50)] {
        let store = must(trajan::store::Store::open(&case.db), "open the store");
        let ctx = trajan::tui::views::ViewCtx::new(
            trajan::tui::theme::Theme::default(),
            trajan::tui::keymap::Keymap::default_map(),
            "esc.db".into(),
        );
        let mut ui = must(trajan::tui::headless::Headless::open(store, ctx, w, h), "headless UI");
        ui.load_all_runs();
        let effects = ui.app.update(trajan::tui::action::Action::Compare(vec![1, 2]));
        ui.apply(effects);
        ui.draw();
        assert!(ui.app.compare.is_some(), "{}", ui.screen());
        if w == 200 {
            // The payloads are on the screen, inert.
            let screen = ui.screen();
            assert!(screen.contains("different instances") && screen.contains("⟦OSC 0;title⟧"), "{screen}");
        }
        for keys in ["", "j", "j", "l", "Tab", "j", "Tab", "?"] {
            if !keys.is_empty() {
                must(ui.press(keys), keys);
            }
            let screen = ui.screen();
            assert_eq!(
                terminal_controls(screen.as_bytes()),
                Vec::<String>::new(),
                "after {keys:?} at {w}x{h}:\n{screen}"
            );
        }
    }
}
