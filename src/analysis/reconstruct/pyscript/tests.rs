//! Each idiom on scripts shaped as real runs' scripts (mini-swe-agent, Gemini 3 Pro and
//! others): what the file holds after, and through the whole reconstruction, the edit drawn.

use super::*;
use crate::analysis::reconstruct::tests::{edit_at, replay};
use crate::model::{Certainty, CheckedBy};

/// What [`simulate`] reads of `code`.
fn sim(code: &str, read: &dyn Fn(&str) -> Known) -> Option<Vec<(String, Written)>> {
    simulate(code, &Trees::default().tree(code)?, read)
}

/// What a script left in `path`, the run knowing `files` whole.
fn after(code: &str, files: &[(&str, &str)], path: &str) -> Option<String> {
    let read = |p: &str| files.iter().find(|(n, _)| *n == p).map(|(_, t)| Known::whole(t, None)).unwrap_or_default();
    let out = sim(code, &read).expect("read as edits");
    out.into_iter().find(|(p, _)| p == path).and_then(|(_, w)| match w {
        Written::Text(d) => d.known.text(),
        _ => None,
    })
}

const BASE: &str = "import pytz\n\ndef _sqlite_datetime_parse(dt, tzname=None):\n    if dt is None:\n        return None\n    try:\n        dt = backend_utils.typecast_timestamp(dt)\n    except (TypeError, ValueError):\n        return None\n    if tzname is not None:\n        dt = timezone.localtime(dt, pytz.timezone(tzname))\n    return dt\n";

#[test]
fn literal_replace_with_count_read_and_written_by_open() {
    let code = "import sys\n\nwith open('django/db/backends/sqlite3/base.py', 'r') as f:\n    content = f.read()\n\n# 1. Update signature\ncontent = content.replace(\n    'def _sqlite_datetime_parse(dt, tzname=None):',\n    'def _sqlite_datetime_parse(dt, tzname=None, db_timezone=None):'\n)\ncontent = content.replace('return None', 'return', 1)\n\nwith open('django/db/backends/sqlite3/base.py', 'w') as f:\n    f.write(content)\n";
    let got = after(code, &[("django/db/backends/sqlite3/base.py", BASE)], "django/db/backends/sqlite3/base.py");
    let want = BASE.replace("tzname=None):", "tzname=None, db_timezone=None):").replacen("return None", "return", 1);
    assert_eq!(got.as_deref(), Some(want.as_str()));
}

#[test]
fn re_sub_loops_over_literals_fstrings_and_dict_items() {
    let code = r#"import re
from pathlib import Path
p = Path("base.py")
content = p.read_text()
pattern = re.compile(r'(    except \(TypeError, ValueError\):\n\s+return None\n)(\s+if tzname is not None:)', re.MULTILINE)
replacement = r'\1    if db_timezone:\n        dt = make_aware(dt)\n\2'
content = pattern.sub(replacement, content)
funcs = ['_sqlite_datetime_parse']
for func in funcs:
    content = content.replace(f'def {func}(dt, tzname=None):', f'def {func}(dt, tzname=None, db_timezone=None):')
lines_to_replace = {'import pytz': 'import functools\nimport pytz'}
for old, new in lines_to_replace.items():
    if old in content:
        content = content.replace(old, new)
    else:
        print("not found")
p.write_text(content)
"#;
    let got = after(code, &[("base.py", BASE)], "base.py").expect("simulated");
    assert!(got.starts_with("import functools\nimport pytz\n"), "{got}");
    assert!(got.contains("def _sqlite_datetime_parse(dt, tzname=None, db_timezone=None):"));
    assert!(
        got.contains(
            "        return None\n    if db_timezone:\n        dt = make_aware(dt)\n    if tzname is not None:"
        )
    );
}

#[test]
fn whole_writes_inserts_after_a_found_line_and_several_files() {
    let code = "def main():\n    with open('a.py') as f:\n        lines = f.readlines()\n    for i, line in enumerate(lines):\n        if 'def f():' in line:\n            lines.insert(i + 1, '    \"\"\"Doc.\"\"\"\\n')\n            break\n    with open('a.py', 'w') as f:\n        f.writelines(lines)\n    open('b.txt', 'w').write('new\\n')\n\nif __name__ == '__main__':\n    main()\n";
    let files = [("a.py", "x = 1\ndef f():\n    pass\n")];
    assert_eq!(after(code, &files, "a.py").as_deref(), Some("x = 1\ndef f():\n    \"\"\"Doc.\"\"\"\n    pass\n"));
    assert_eq!(after(code, &files, "b.txt").as_deref(), Some("new\n"));
}

#[test]
fn what_is_not_read_stays_unknown_or_gives_the_script_up() {
    let files = [("a.py", "x = 1\n")];
    // The text is not known: the file's edit waits for a view.
    let read = |p: &str| files.iter().find(|(n, _)| *n == p).map(|(_, t)| Known::whole(t, None)).unwrap_or_default();
    let out = sim("s = open('a.py').read()\nopen('a.py', 'w').write(s.upper())\n", &read).expect("read");
    assert!(matches!(out.as_slice(), [(p, Written::Unknown)] if p == "a.py"));
    // A file name that is not known, a shell run from Python: not read as edits at all.
    assert!(sim("import sys\nopen(sys.argv[1], 'w').write('x')\n", &read).is_none());
    assert!(sim("import os\nos.system(\"sed -i 's/a/b/' a.py\")\n", &read).is_none());
    // The old text absent from a file known whole: written back unchanged.
    assert_eq!(
        after("s = open('a.py').read()\ns = s.replace('y = 2', 'y = 3')\nopen('a.py', 'w').write(s)\n", &files, "a.py")
            .as_deref(),
        Some("x = 1\n")
    );
}

#[test]
fn a_heredoc_script_run_later_is_simulated_and_verified_by_a_view() {
    let write = "cat <<'EOF' > apply_fix.py\nwith open('m.py') as f:\n    s = f.read()\ns = s.replace('    return a/b\\n', '    if b == 0:\\n        raise ValueError(\"zero\")\\n    return a/b\\n')\nwith open('m.py', 'w') as f:\n    f.write(s)\nEOF";
    let r = replay(
        &[
            ("nl -ba m.py", "     1\tdef division(a, b):\n     2\t    return a/b\n"),
            (write, ""),
            ("python3 apply_fix.py", ""),
            (
                "sed -n '1,4p' m.py",
                "def division(a, b):\n    if b == 0:\n        raise ValueError(\"zero\")\n    return a/b\n",
            ),
        ],
        None,
    );
    let e = edit_at(&r, 2);
    assert_eq!(e.path, "m.py");
    assert_eq!(e.trace.certainty, Some(Certainty::Verified), "{:#?}", e);
    assert_eq!(e.trace.checked_by, Some(CheckedBy::Step(3)));
    let diff = e.diff.as_deref().unwrap_or("");
    assert!(diff.contains("@@ -1,2 +1,4 @@\n def division(a, b):\n+    if b == 0:\n+        raise ValueError(\"zero\")\n     return a/b\n"), "{diff}");
}

#[test]
fn a_replace_on_lines_shown_is_partial_and_an_absent_one_changed_nothing() {
    let code = "python3 - <<'PY'\nfrom pathlib import Path\np = Path('pkg/mod.py')\ns = p.read_text()\nold = 'timeout = 10'\nif old in s:\n    s = s.replace(old, 'timeout = 30')\np.write_text(s)\nPY";
    // Only line 5 was shown: the replacement is there, and assumed nowhere else.
    let r = replay(&[("grep -n timeout pkg/mod.py", "5:timeout = 10\n"), (code, "")], None);
    let e = edit_at(&r, 1);
    assert_eq!(e.trace.certainty, Some(Certainty::Simulated));
    assert!(e.trace.partial);
    assert!(
        e.diff.as_deref().is_some_and(|d| d.contains("@@ -5 +5 @@\n-timeout = 10\n+timeout = 30\n")),
        "{:?}",
        e.diff
    );
    // The whole file shown, and the old text not in it: the script changed nothing.
    let r = replay(&[("cat pkg/mod.py", "import os\ntimeout = 5\n"), (code, "")], None);
    assert_eq!(edit_at(&r, 1).trace.certainty, Some(Certainty::Unchanged));
    // Never shown at all: unknown, until the submitted patch attributes it.
    let patch = "diff --git a/pkg/mod.py b/pkg/mod.py\n--- a/pkg/mod.py\n+++ b/pkg/mod.py\n@@ -1,2 +1,2 @@\n import os\n-timeout = 10\n+timeout = 30\n";
    let r = replay(&[("ls", "pkg\n"), (code, "")], Some(patch));
    let e = edit_at(&r, 1);
    // The patch's old side seeds the known lines: the replacement is found there.
    assert_eq!(e.trace.certainty, Some(Certainty::Verified), "{e:#?}");
}

#[test]
fn lines_by_number_on_a_file_partly_shown() {
    // `requests/utils.py`-shaped: lines replaced by index after a check of the first one.
    let code = "import sys\nwith open('u.py', 'r') as f:\n    lines = f.readlines()\nstart_line = 2 # 0-indexed\nend_line = 4\nexpected_start = \"    parsed = urlparse(url)\\n\"\nif lines[start_line] != expected_start:\n    print('Error')\n    sys.exit(1)\nnew_content = [\n    \"    parsed = parse_url(url)\\n\",\n    \"    auth = parsed.auth\\n\",\n]\nlines[start_line:end_line] = new_content\nlines.insert(1, '# moved\\n')\nwith open('u.py', 'w') as f:\n    f.writelines(lines)\n";
    let mut k = Known::default();
    k.show(2, &["def get_auth(url):".into(), "    parsed = urlparse(url)".into(), "    return parsed".into()]);
    let read = |p: &str| if p == "u.py" { k.clone() } else { Known::default() };
    let out = sim(code, &read).expect("read as edits");
    let [(path, Written::Text(d))] = out.as_slice() else { panic!("{out:?}") };
    assert_eq!(path, "u.py");
    let lines: Vec<String> = d.known.segs.iter().map(|s| s.text().map_or("?".to_string(), |t| t.to_string())).collect();
    assert_eq!(
        lines,
        ["?", "# moved", "def get_auth(url):", "    parsed = parse_url(url)", "    auth = parsed.auth", "?"]
    );
    // The check fails: the script stops before writing.
    let mut other = Known::default();
    other.show(3, &["    parsed = something_else".into()]);
    let read = |_: &str| other.clone();
    assert!(sim(code, &read).is_some_and(|w| w.is_empty()));
}

#[test]
fn a_script_run_again_is_read_from_the_tree_kept_and_another_is_parsed() {
    let mut trees = Trees::default();
    let scripts: Vec<String> =
        (0..=TREES).map(|i| format!("open('f{i}.py', 'w').write('{}')\n", "x".repeat(i))).collect();
    for round in 0..2 {
        for code in &scripts {
            let tree = trees.tree(code).expect("parsed");
            // The tree is the script's own: its text spans the whole script.
            assert_eq!(tree.root_node().end_byte(), code.len(), "round {round}: {code}");
            assert_eq!(tree.root_node().utf8_text(code.as_bytes()).ok(), Some(code.as_str()));
        }
    }
    // The last ones run are kept, the oldest let go.
    let kept: Vec<&str> = trees.0.iter().map(|(c, _)| &**c).collect();
    assert_eq!(kept, scripts[1..].iter().map(String::as_str).collect::<Vec<_>>());
    let tree = trees.tree(&scripts[2]).expect("kept");
    assert_eq!(tree.root_node().end_byte(), scripts[2].len());
    assert_eq!(trees.0.last().map(|(c, _)| &**c), Some(scripts[2].as_str()), "the one run last is kept longest");
}
