//! Whole-text substitutions on commands shaped as mini-swe-agent's (`perl -0777 -i -pe`,
//! `sed -z -i`): what they make of a file, what they refuse, and the edit drawn.

use super::*;
use crate::analysis::reconstruct::{Exec, reconstruct};
use crate::model::{Certainty, CheckedBy, Edit, EditStatus, Run, Step};
use std::rc::Rc;

const FUNC: &str = "import os\n\n\ndef parse(value):\n    if value is None:\n        return None\n    return int(value)\n\n\ndef other():\n    pass\n";

fn perl(script: &str, text: &str) -> Option<String> {
    let s = Slurp::perl(script).expect("read");
    s.run(&Known::whole(text, None)).and_then(|d| d.known.text())
}

fn sed(script: &str, extended: bool, text: &str) -> Option<String> {
    let s = Slurp::sed(script, extended).expect("read");
    s.run(&Known::whole(text, None)).and_then(|d| d.known.text())
}

#[test]
fn perl_slurp_substitutions_across_lines_with_their_flags() {
    // A function's body replaced across lines: `\n` and `\s+` in the pattern.
    let got = perl(r"s/    if value is None:\n\s+return None\n/    if value is None:\n        return 0\n/", FUNC);
    assert_eq!(got.as_deref(), Some(FUNC.replace("return None", "return 0").as_str()));
    // `/s`: `.` takes newlines; greedy to the last `pass`.
    let got =
        perl(r"s/def parse\(value\):.*?return int\(value\)/def parse(value):\n    return int(value or 0)/s", FUNC);
    assert_eq!(
        got.as_deref(),
        Some("import os\n\n\ndef parse(value):\n    return int(value or 0)\n\n\ndef other():\n    pass\n")
    );
    // Without `/s`, `.` stops at a line's end: nothing matches, the file is unchanged.
    assert_eq!(perl(r"s/def parse.*int/X/", FUNC).as_deref(), Some(FUNC));
    // `/m`: `^` at every line; `/g` every match; `/i` case; `/x` spaces and comments.
    assert_eq!(perl(r"s/^def /async def /mg", FUNC).map(|t| t.matches("async def").count()), Some(2));
    assert_eq!(
        perl(r"s/IMPORT OS/import sys/i", FUNC).as_deref(),
        Some(FUNC.replace("import os", "import sys").as_str())
    );
    assert_eq!(
        perl("s/ return \\s+ int\\(value\\)  # the cast\n /return float(value)/x", FUNC).as_deref(),
        Some(FUNC.replace("return int(value)", "return float(value)").as_str())
    );
    // Other delimiters, groups in the replacement, several statements.
    assert_eq!(
        perl(r"s{def (\w+)\(value\):}{def ${1}_v2(value):}; s|pass|return 1|", FUNC).as_deref(),
        Some(FUNC.replace("def parse(value)", "def parse_v2(value)").replace("pass", "return 1").as_str())
    );
    // `\A` anchors the whole text.
    assert_eq!(
        perl(r"s/\Aimport os\n/import os\nimport re\n/", FUNC).map(|t| t.starts_with("import os\nimport re\n")),
        Some(true)
    );
}

#[test]
fn sed_z_substitutions_see_newlines() {
    let got = sed(r"s/if value is None:\n        return None/if not value:\n        return 0/", false, FUNC);
    assert_eq!(
        got.as_deref(),
        Some(FUNC.replace("if value is None:\n        return None", "if not value:\n        return 0").as_str())
    );
    // Basic syntax: `\(` groups, `*` after a group's start literal; `.` takes a newline.
    let got = sed(r"s/def \(parse\)(value):.*return int/def \1(v):\n    return int/", false, FUNC);
    assert_eq!(
        got.as_deref(),
        Some("import os\n\n\ndef parse(v):\n    return int(value)\n\n\ndef other():\n    pass\n")
    );
    // Extended syntax and the second match.
    assert_eq!(
        sed(r"s/(\n){3}/\n\n/2", true, FUNC).as_deref(),
        Some(FUNC.replacen("\n\n\ndef other", "\n\ndef other", 1).as_str())
    );
    // `$` is the end of the text.
    assert_eq!(
        sed(r"s/pass\n$/return None\n/", false, FUNC).as_deref(),
        Some(FUNC.replace("pass", "return None").as_str())
    );
}

#[test]
fn what_is_not_translated_is_refused_never_guessed() {
    for bad in [
        r"s/a(?=b)/c/",     // lookahead
        r"s/(a)\1/c/",      // a backreference
        r"s/x$/y/",         // `$` without /m: also before a final newline
        r"s/$name/y/",      // a variable
        r"s/a/b/e",         // code in the replacement
        r"s/a/b/r",         // an unknown flag here
        r"s/a/$x/",         // a variable in the replacement
        r"s/a\Z/b/",        // \Z
        r"s/a{/b/",         // a brace that is not a count
        r"s/a++/b/",        // possessive
        r"s/unterminated/", // unterminated
        r"s/a/b",           // unterminated replacement
        r"print if /x/",    // not a substitution
        r"s|a\|b|c|",       // an escaped delimiter a regex reads as an operator
        r"s/\Qa.b\E/c/",    // quoting
    ] {
        assert!(Slurp::perl(bad).is_err(), "{bad}");
    }
    for bad in [r"s/\(a\)\1/b/", "1s/a/b/", "s/a/b/w out", "/x/d", "s/a/b/p", "s//b/", r"s/[[.a.]]/b/"] {
        assert!(Slurp::sed(bad, false).is_err(), "{bad}");
    }
    // A `.` that would split a character (perl reads bytes): unknown, not a broken text.
    assert_eq!(perl("s/caf./cafe/", "café\n"), None);
    assert_eq!(perl("s/caf../cafe/", "café\n").as_deref(), Some("cafe\n"));
    // An empty match: places perl and sed count apart.
    assert_eq!(perl("s/x*/-/g", "abc\n"), None);
    // Binary text: NUL bytes and control characters are text like any other.
    assert!(Slurp::perl(r"s/a\x00/b/").is_err(), "\\x is not read");
    assert_eq!(perl("s/\u{1}b/c/", "a\u{1}b\n").as_deref(), Some("ac\n"));
    // A pattern past the regex crate's size bound.
    assert!(Slurp::perl("s/a{1000}{1000}{1000}/b/").is_err());
}

#[test]
fn a_file_seen_in_part_takes_only_what_stays_within_the_lines_shown() {
    let mut k = Known::default();
    k.show(4, &[Rc::from("def parse(value):"), Rc::from("    if value is None:"), Rc::from("        return None")]);
    // Plain text across two lines shown: replaced there, the rest assumed not to hold it.
    let s = Slurp::perl(r"s/if value is None:\n        return None/if not value:\n        return 0/").expect("read");
    let d = s.run(&k).expect("placed");
    assert!(d.assumed);
    let texts: Vec<_> = d.known.segs.iter().filter_map(|s| s.text().map(|t| t.to_string())).collect();
    assert_eq!(texts, ["def parse(value):", "    if not value:", "        return 0"]);
    // A pattern that may run past the lines shown (`.` under /s, `\s+`): unknown.
    assert!(Slurp::perl(r"s/if value.*None/x/s").expect("read").run(&k).is_none());
    assert!(Slurp::perl(r"s/None:\s+return/x/").expect("read").run(&k).is_none());
    // Within a line: run on the lines shown.
    let d = Slurp::perl(r"s/return \w+/return 0/").expect("read").run(&k).expect("placed");
    assert!(d.known.text().is_none() && d.assumed);
    // Absent from the lines shown of a file with others: unknown.
    assert!(Slurp::perl(r"s/absent\n/x/").expect("read").run(&k).is_none());
    // Its literals are still what it says it changed.
    assert_eq!(
        Slurp::perl(r"s/absent\n/x/; s{a\.b}{c}").expect("read").literals(),
        Some(vec![("absent\n".to_string(), "x".to_string()), ("a.b".to_string(), "c".to_string())])
    );
    assert_eq!(Slurp::perl(r"s/a+/b/").expect("read").literals(), None);
}

fn replay(steps: &[(&str, &str)]) -> Run {
    replay_submitted(steps, None)
}

fn replay_submitted(steps: &[(&str, &str)], submission: Option<&str>) -> Run {
    let mut run = Run {
        steps: steps
            .iter()
            .map(|(a, o)| Step { action: a.to_string(), observation: o.to_string(), ..Step::default() })
            .collect(),
        submission: submission.map(str::to_string),
        edits: submission.map(crate::analysis::edits::final_patch_edits).unwrap_or_default(),
        ..Run::default()
    };
    reconstruct(&mut run, &vec![Exec::Shell(EditStatus::Applied); steps.len()]);
    run
}

fn edit(run: &Run, step: usize) -> &Edit {
    run.edits.iter().find(|e| e.step == Some(step)).unwrap_or_else(|| panic!("no edit at {step}: {:#?}", run.edits))
}

#[test]
fn perl_slurp_in_place_is_drawn_placed_and_verified() {
    let cat = "     1\timport os\n     2\t\n     3\t\n     4\tdef parse(value):\n     5\t    if value is None:\n     6\t        return None\n     7\t    return int(value)\n";
    let cmd = r"cd /testbed && perl -0777 -i -pe 's/    if value is None:\n        return None\n/    if not value:\n        return 0\n/' src/conv.py";
    let r = replay(&[
        ("cat -n src/conv.py", cat),
        (cmd, ""),
        ("sed -n '5,6p' src/conv.py", "    if not value:\n        return 0\n"),
    ]);
    let e = edit(&r, 1);
    assert_eq!(e.path, "/testbed/src/conv.py");
    assert_eq!(e.trace.certainty, Some(Certainty::Verified), "{e:#?}");
    assert_eq!(e.trace.checked_by, Some(CheckedBy::Step(2)));
    let diff = e.diff.as_deref().unwrap_or("");
    assert!(
        diff.contains("@@ -2,6 +2,6 @@\n \n \n def parse(value):\n-    if value is None:\n-        return None\n+    if not value:\n+        return 0\n     return int(value)\n"),
        "{diff}"
    );
    // `-0` and clustered flags read alike; `sed -z -i` too.
    for cmd in [
        r"perl -0 -pi -e 's/return None/return 0/' src/conv.py",
        r"perl -0777pi -e 's/return None/return 0/' src/conv.py",
        r"sed -z -i 's/return None/return 0/' src/conv.py",
        r"sed -zi 's/if value is None:\n        return None/if value is None:\n        return 0/' src/conv.py",
    ] {
        let r = replay(&[("cat -n src/conv.py", cat), (cmd, "")]);
        let e = edit(&r, 1);
        assert_eq!(e.trace.certainty, Some(Certainty::Simulated), "{cmd}: {e:#?}");
        assert!(e.diff.as_deref().is_some_and(|d| d.contains("-        return None\n+        return 0\n")), "{cmd}");
    }
    // Its old text absent from a file known whole: changed nothing.
    let r = replay(&[("cat -n src/conv.py", cat), (r"perl -0777 -i -pe 's/absent\n/x/' src/conv.py", "")]);
    assert_eq!(edit(&r, 1).trace.certainty, Some(Certainty::Unchanged));
    // A script not read here: unknown, no diff.
    let r = replay(&[("cat -n src/conv.py", cat), (r"perl -0777 -i -pe 's/(None)\n\1/x/' src/conv.py", "")]);
    assert_eq!(edit(&r, 1).trace.certainty, Some(Certainty::Unknown));
    assert_eq!(edit(&r, 1).diff, None);
}

#[test]
fn plain_replacements_on_a_file_never_shown_carry_their_own_text_unplaced() {
    let cmd = r"perl -0777 -i -pe 's/    if value is None:\n        return None/    if not value:\n        return 0/' src/conv.py";
    let r = replay(&[("ls src", "conv.py\n"), (cmd, "")]);
    let e = edit(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed), "{e:#?}");
    assert_eq!(e.trace.checked_by, None);
    let diff = e.diff.as_deref().unwrap_or("");
    assert!(
        diff.contains(&format!(
            "@@ -?,2 +?,2 @@ {}\n-    if value is None:\n-        return None\n+    if not value:\n+        return 0\n",
            super::super::unplaced::NOTE
        )),
        "{diff}"
    );
    // The submitted patch shows the lines it changed: simulated there, placed, verified.
    let patch = "diff --git a/src/conv.py b/src/conv.py\n--- a/src/conv.py\n+++ b/src/conv.py\n@@ -5,2 +5,2 @@\n-    if value is None:\n-        return None\n+    if not value:\n+        return 0\n";
    let r = replay_submitted(&[("ls src", "conv.py\n"), (cmd, "")], Some(patch));
    let e = edit(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Verified), "{e:#?}");
    assert!(e.diff.as_deref().is_some_and(|d| d.contains("@@ -5,2 +5,2 @@")), "{e:#?}");
    // A script that is not plain text both sides stays unknown.
    let r = replay(&[("ls src", "conv.py\n"), (r"perl -0777 -i -pe 's/return \w+/return 0/' src/conv.py", "")]);
    assert_eq!(edit(&r, 1).trace.certainty, Some(Certainty::Unknown));
    assert_eq!(edit(&r, 1).diff, None);
    // A Python script's literal replace on a file never shown: the same.
    let py = "python3 - <<'PY'\nfrom pathlib import Path\np = Path('src/conv.py')\ns = p.read_text()\ns = s.replace('return None', 'return 0')\ns = s.replace('import os\\n', 'import os\\nimport re\\n')\np.write_text(s)\nPY";
    let r = replay(&[("ls src", "conv.py\n"), (py, "")]);
    let e = edit(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Attributed), "{e:#?}");
    let diff = e.diff.as_deref().unwrap_or("");
    assert!(diff.contains("@@ -? +? @@") && diff.contains("-return None\n+return 0\n"), "{diff}");
    assert!(diff.contains(" import os\n+import re\n"), "{diff}");
}
