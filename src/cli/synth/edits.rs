//! Synthetic shell-only runs whose files' true states are known, for `bench edits`: a
//! mini-swe-agent v1 trajectory that views files (`sed -n`, `nl -ba | sed -n`, `grep -n`,
//! `head`, `tail`, `cat`) and edits them with `sed -i` in its forms (line and global `s`, `a`,
//! `i`, `c`, `d`, `/re/d`, an address that misses), `perl -pi`, `echo >>`, here-documents,
//! Python scripts and `git checkout`. Every observation is printed from the true file, and every
//! edit's true diff is kept, to grade the reconstruction against.

use super::random::Rng;
use serde_json::{Value, json};

/// What an edit step truly did.
#[derive(Debug, Clone)]
pub struct TrueEdit {
    pub step: usize,
    pub path: String,
    /// The changed lines: (`'-'` or `'+'`, text), in order, and the first changed line number.
    pub removed: Vec<String>,
    pub added: Vec<String>,
    pub first: Option<usize>,
    /// The file's whole text before and after.
    pub before: String,
    pub after: String,
}

const NAMES: &[&str] = &[
    "value", "config", "parser", "result", "handler", "request", "session", "index", "buffer", "token", "module",
    "field", "schema", "record", "stream", "cache", "option", "context", "error", "path",
];

fn file_lines(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            let (a, b) = (rng.pick(NAMES), rng.pick(NAMES));
            match rng.below(6) {
                0 => format!("def {a}_{b}_{i}(self, {a}=None):"),
                1 => format!("    {a}_{i} = self.{b}.get(\"{a}\")"),
                2 => format!("    if {a}_{i} is not None and {b}:"),
                3 => format!("        return {a}_{b}({i})"),
                4 => String::new(),
                _ => format!("    # keep {a} in sync with {b} ({i})"),
            }
        })
        .collect()
}

/// The changed lines of `before` → `after` (a line diff) and where the first change is.
fn truth(step: usize, path: &str, before: &[String], after: &[String]) -> TrueEdit {
    let (a, b) = (before.join("\n") + "\n", after.join("\n") + "\n");
    let diff = similar::TextDiff::from_lines(&a, &b);
    let mut t = TrueEdit {
        step,
        path: path.to_string(),
        removed: Vec::new(),
        added: Vec::new(),
        first: None,
        before: a.clone(),
        after: b.clone(),
    };
    for op in diff.ops() {
        for change in diff.iter_changes(op) {
            let text = change.value().trim_end_matches('\n').to_string();
            match change.tag() {
                similar::ChangeTag::Delete => {
                    t.first = t.first.or(change.old_index().map(|i| i + 1));
                    t.removed.push(text);
                }
                similar::ChangeTag::Insert => {
                    t.first = t.first.or(change.new_index().map(|i| i + 1));
                    t.added.push(text);
                }
                similar::ChangeTag::Equal => {}
            }
        }
    }
    t
}

fn output(lines: &[String]) -> String {
    let body: String = lines.iter().map(|l| format!("{l}\n")).collect();
    if body.len() > 10_000 {
        let head = &body[..4_000];
        let tail = &body[body.len() - 4_000..];
        return format!(
            "<returncode>0</returncode>\n<warning>\nThe output of your last command was too long.\n</warning><output_head>\n{head}\n</output_head>\n<elided_chars>\n{} characters elided\n</elided_chars>\n<output_tail>\n{tail}\n</output_tail>",
            body.len() - 8_000
        );
    }
    format!("<returncode>0</returncode>\n<output>\n{body}</output>")
}

/// A word of line `n` that occurs in it once (and whether it occurs elsewhere).
fn token(line: &str) -> Option<String> {
    line.split(|c: char| !c.is_alphanumeric() && c != '_')
        .find(|w| w.len() > 3 && line.matches(w).count() == 1)
        .map(str::to_string)
}

/// One run: the trajectory and every edit's truth.
pub fn run(seed: u64, steps: usize) -> (Value, Vec<TrueEdit>) {
    let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let paths = ["src/pkg/core.py", "src/pkg/util.py"];
    let mut files: Vec<Vec<String>> = paths
        .iter()
        .map(|_| {
            let n = 60 + rng.below(200) as usize;
            file_lines(&mut rng, n)
        })
        .collect();
    let base = files.clone();
    let mut messages = vec![
        json!({"role": "system", "content": "You are a helpful assistant that can interact multiple times with a computer shell."}),
        json!({"role": "user", "content": "<pr_description>\nFix the handler.\n</pr_description>"}),
    ];
    let mut edits = Vec::new();
    // The lines each file last showed: agents mostly edit what they just read.
    let mut seen: Vec<Option<(usize, usize)>> = vec![None; paths.len()];
    for step in 0..steps {
        let f = rng.below(paths.len() as u64) as usize;
        let path = paths[f];
        let before = files[f].clone();
        let (command, observation) = step_on(&mut rng, step, path, &before, &mut files[f], &base[f], &mut seen[f]);
        if files[f] != before {
            edits.push(truth(step, path, &before, &files[f]));
        }
        messages
            .push(json!({"role": "assistant", "content": format!("THOUGHT: step {step}.\n\n```bash\n{command}\n```")}));
        messages.push(json!({"role": "user", "content": observation}));
    }
    let submission = submission(&paths, &base, &files);
    let doc = json!({
        "info": {"exit_status": "Submitted", "submission": submission, "config": {"model": {"model_name": "synthetic/edits"}}},
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1",
        "instance_id": format!("synth__edits-{seed:05}"),
    });
    (doc, edits)
}

/// One step on one file: the command and its output, applied to `file` (which was `before`).
fn step_on(
    rng: &mut Rng,
    step: usize,
    path: &str,
    before: &[String],
    file: &mut Vec<String>,
    base: &[String],
    seen: &mut Option<(usize, usize)>,
) -> (String, String) {
    let len = before.len().max(1);
    let n = match *seen {
        Some((a, b)) if rng.below(5) != 0 && a <= b => (a + rng.below((b - a + 1) as u64) as usize).clamp(1, len),
        _ => 1 + rng.below(len as u64) as usize,
    };
    let line = before.get(n - 1).cloned().unwrap_or_default();
    let new_text = format!("    {}_{step} = {}()", rng.pick(NAMES), rng.pick(NAMES));
    match rng.below(20) {
        0..=3 => {
            let a = n;
            let b = (n + 5 + rng.below(30) as usize).min(len);
            *seen = Some((a, b));
            let shown: Vec<String> = before[a - 1..b].to_vec();
            match rng.below(3) {
                0 => (format!("sed -n '{a},{b}p' {path}"), output(&shown)),
                1 => {
                    let numbered: Vec<String> =
                        shown.iter().enumerate().map(|(k, l)| format!("{:6}\t{l}", a + k)).collect();
                    (format!("nl -ba {path} | sed -n '{a},{b}p'"), output(&numbered))
                }
                _ => {
                    let k = 10 + rng.below(40) as usize;
                    *seen = Some((1, k.min(len)));
                    (format!("head -n {k} {path}"), output(&before[..k.min(len)]))
                }
            }
        }
        4 => match token(&line) {
            Some(t) => {
                let hits: Vec<String> = before
                    .iter()
                    .enumerate()
                    .filter(|(_, l)| l.contains(&t))
                    .map(|(i, l)| format!("{}:{l}", i + 1))
                    .collect();
                (format!("grep -n '{t}' {path}"), output(&hits))
            }
            None => (format!("tail -n 15 {path}"), output(&before[len.saturating_sub(15)..])),
        },
        5 if len < 150 => {
            *seen = Some((1, len));
            (format!("cat {path}"), output(before))
        }
        5..=8 => match token(&line) {
            // Now and then the agent names the line next to the one it means: no match.
            Some(t) => {
                let at = if rng.below(8) == 0 { n % len + 1 } else { n };
                let new = format!("{t}_v{step}");
                if let Some(l) = file.get_mut(at - 1)
                    && l.contains(&t)
                {
                    *l = l.replacen(&t, &new, 1);
                }
                (format!("sed -i '{at}s/{t}/{new}/' {path}"), output(&[]))
            }
            None => (format!("sed -i '{n}a\\{new_text}' {path}"), {
                file.insert(n, new_text.clone());
                output(&[])
            }),
        },
        9 => {
            file.insert(n, new_text.clone());
            (format!("sed -i '{n}a\\{new_text}' {path}"), output(&[]))
        }
        10 => {
            file.insert(n - 1, new_text.clone());
            (format!("sed -i '{n}i\\{new_text}' {path}"), output(&[]))
        }
        11 => {
            let m = (n + rng.below(3) as usize).min(len);
            file.drain(n - 1..m);
            (if m == n { format!("sed -i '{n}d' {path}") } else { format!("sed -i '{n},{m}d' {path}") }, output(&[]))
        }
        12 => {
            let m = (n + 1).min(len);
            file.splice(n - 1..m, [new_text.clone()]);
            (format!("sed -i '{n},{m}c\\{new_text}' {path}"), output(&[]))
        }
        13 => match token(&line) {
            Some(t) => {
                let new = format!("{t}_g{step}");
                for l in file.iter_mut() {
                    *l = l.replace(&t, &new);
                }
                if rng.below(2) == 0 {
                    (format!("sed -i 's/{t}/{new}/g' {path}"), output(&[]))
                } else {
                    (format!("perl -pi -e 's/{t}/{new}/g' {path}"), output(&[]))
                }
            }
            None => ("python -m pytest tests -q".into(), output(&["1 failed, 3 passed".into()])),
        },
        14 => {
            file.push(format!("# note {step}"));
            (format!("echo '# note {step}' >> {path}"), output(&[]))
        }
        15 => match token(&line) {
            Some(t) => {
                let new = format!("{t}_py{step}");
                for l in file.iter_mut() {
                    *l = l.replace(&t, &new);
                }
                (
                    format!(
                        "python - <<'PY'\np = '{path}'\ns = open(p).read()\nopen(p, 'w').write(s.replace('{t}', '{new}'))\nPY"
                    ),
                    output(&[]),
                )
            }
            None => ("ls src/pkg".into(), output(&["core.py".into(), "util.py".into()])),
        },
        16 if step.is_multiple_of(7) => {
            *file = base.to_vec();
            (format!("git checkout -- {path}"), output(&[]))
        }
        17 => (format!("cat <<'EOF' > reproduce_{step}.py\nfrom pkg import core\nprint(core)\nEOF"), output(&[])),
        _ => ("python -m pytest tests -q".into(), output(&["1 failed, 3 passed".into()])),
    }
}

/// The submission: the diff of every file changed from its base.
fn submission(paths: &[&str], base: &[Vec<String>], files: &[Vec<String>]) -> String {
    let mut submission = String::new();
    for (k, p) in paths.iter().enumerate() {
        let (a, b) = (base[k].join("\n") + "\n", files[k].join("\n") + "\n");
        if a != b {
            let diff = similar::TextDiff::from_lines(&a, &b);
            submission.push_str(&format!("diff --git a/{p} b/{p}\n"));
            submission.push_str(
                &diff.unified_diff().context_radius(3).header(&format!("a/{p}"), &format!("b/{p}")).to_string(),
            );
        }
    }
    submission
}
