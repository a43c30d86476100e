//! The classifier's own reading of shell actions: each simple command with the folder it ran in
//! (`cd`, `pushd`/`popd` and subshells followed within a command line), and what the commands
//! did to files: writes (with the shell's own forms read by `analysis::shell`), files written by
//! scripts (`python fix.py`, `python - <<EOF`) and patches (`patch -p0`, `git apply`), their
//! reverts, resets by git, removals.
//!
//! [`read`] is the one entry point. It stands in for the reconstruction of shell edits stored at
//! ingest (issue "Every edit has a diff"): once that is stored, the writes and resets come from
//! the stored edits and only the folder tracking stays here.

use super::commands::{Command, commands, join};
use super::paths::Roots;
use crate::analysis::edits::split_patch;
use crate::analysis::markers::looks_like_error;
use crate::analysis::shell::shell_writes;
use crate::model::EditKind;
use crate::store::read::{EditRow, StepRow};
use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// An edit tool's edit (str_replace, windowed edit, create), as stored.
    Tool,
    /// A shell write: redirection, `sed -i`, `tee`, a heredoc.
    Shell,
    /// A script the run wrote or passed inline (`python fix.py`, `python - <<EOF`).
    Script,
    /// `patch` or `git apply`; `reverse`: `-R`, undoing the patch.
    Patch { reverse: bool },
}

/// A file a step's commands changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Write {
    /// Repository path.
    pub path: String,
    /// The path as the command named it, resolved against the step's own folder only (what an
    /// adapter that does not follow `cd` stored).
    pub naive: String,
    pub append: bool,
    pub via: Via,
}

/// Files returned to an earlier state: `git checkout`/`restore`/`stash`/`reset --hard`, a
/// reversed patch. `files` empty: every file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reset {
    pub step: usize,
    pub files: Vec<String>,
}

/// What one step's action did.
#[derive(Debug, Clone, Default)]
pub struct StepReading {
    pub commands: Vec<Command>,
    pub writes: Vec<Write>,
    pub resets: Vec<Reset>,
    /// `git stash pop`/`apply`: what a stash reset is back.
    pub restores: bool,
    /// Files `rm` removed.
    pub removed: Vec<String>,
    /// The observation reads as an error (a write may not have happened).
    pub failed: bool,
}

/// Read every step of a run, in order. `edits`: the stored edits, whose created files' text is
/// the source of scripts and patch files run later.
pub fn read(steps: &[StepRow], edits: &[EditRow], roots: &Roots) -> Vec<StepReading> {
    let mut book: HashMap<String, String> = HashMap::new();
    let mut out = Vec::with_capacity(steps.len());
    for s in steps {
        let wd = s.working_dir.as_deref();
        let commands = commands(&s.action, wd);
        let mut r = StepReading { failed: looks_like_error(&s.observation), ..StepReading::default() };
        let step = s.index as usize;
        // Shell writes as analysis::shell reads them, each placed in the folder of the command
        // that names it.
        let mut used = vec![false; commands.len()];
        for w in shell_writes(&s.action) {
            let at = commands.iter().enumerate().position(|(i, c)| !used[i] && names(c, &w.path));
            let dir = at.and_then(|i| {
                used[i] = true;
                commands[i].dir.clone()
            });
            if let Some(content) = &w.content {
                book.insert(roots.rel(&join(dir.as_deref(), &w.path), None), content.clone());
            }
            r.writes.push(Write {
                path: roots.rel(&join(dir.as_deref(), &w.path), None),
                naive: roots.rel(&w.path, wd),
                append: w.append,
                via: Via::Shell,
            });
        }
        for c in &commands {
            read_command(c, step, &s.observation, roots, &book, &mut r);
        }
        r.commands = commands;
        out.push(r);
        // Files created through a tool become readable scripts and patches from the next step.
        for e in edits.iter().filter(|e| e.step == Some(s.index) && e.kind == EditKind::Create) {
            if let Some(text) = e.diff.as_deref().map(added_text) {
                book.insert(roots.rel(&e.path, wd), text);
            }
        }
    }
    out
}

/// The added lines of a creation diff: the file's text.
fn added_text(diff: &str) -> String {
    let mut t = String::new();
    for l in diff.lines().filter(|l| !l.starts_with("+++")) {
        if let Some(rest) = l.strip_prefix('+') {
            t.push_str(rest);
            t.push('\n');
        }
    }
    t
}

/// Whether command `c` names `path` (as an argument or a redirection target).
fn names(c: &Command, path: &str) -> bool {
    c.words.iter().any(|w| w == path || w.trim_start_matches(['>', '<']) == path)
}

fn read_command(
    c: &Command,
    step: usize,
    observation: &str,
    roots: &Roots,
    book: &HashMap<String, String>,
    r: &mut StepReading,
) {
    let at = |p: &str| roots.rel(&join(c.dir.as_deref(), p), None);
    let args: Vec<&str> = c.words.iter().skip(1).map(String::as_str).collect();
    match c.program() {
        "git" => git(c, &args, step, &at, book, observation, r),
        "patch" => {
            let reverse = args.iter().any(|a| *a == "-R" || *a == "--reverse");
            if args.contains(&"--dry-run") {
                return;
            }
            let mut input: Option<&str> = None;
            let mut target: Option<&str> = None;
            let mut it = args.iter().peekable();
            while let Some(a) = it.next() {
                if *a == "-i" || *a == "--input" {
                    input = it.next().copied();
                } else if let Some(f) = a.strip_prefix("--input=") {
                    input = Some(f);
                } else if *a == "<" {
                    input = it.next().copied();
                } else if let Some(f) = a.strip_prefix('<').filter(|f| !f.is_empty() && !f.starts_with('<')) {
                    input = Some(f);
                } else if matches!(*a, "-p" | "-d" | "-o" | "-r" | "-F" | "-D" | "-B" | "-V" | "-z" | "-Y") {
                    it.next();
                } else if !a.starts_with('-') && !a.starts_with('>') && !a.starts_with('<') && target.is_none() {
                    target = Some(a);
                }
            }
            let mut files: Vec<String> = observation
                .lines()
                .filter_map(|l| l.strip_prefix("patching file "))
                .map(|f| at(f.trim().trim_matches(['\'', '"', '`'])))
                .collect();
            if files.is_empty() {
                if let Some(t) = target {
                    files.push(at(t));
                } else {
                    let text = input.and_then(|i| book.get(&at(i))).map(String::as_str).or(c.heredoc.as_deref());
                    files.extend(text.map(split_patch).unwrap_or_default().into_iter().map(|f| at(&f.path)));
                }
            }
            patched(files, reverse, step, r);
        }
        "rm" => {
            for a in args.iter().filter(|a| !a.starts_with('-')) {
                r.removed.push(at(a));
            }
        }
        p if p.starts_with("python") => {
            let code = if let Some(i) = args.iter().position(|a| *a == "-c") {
                args.get(i + 1).map(|s| s.to_string())
            } else if args.first().is_none_or(|a| *a == "-" || a.starts_with('<')) {
                c.heredoc.clone()
            } else if args.first().is_some_and(|a| *a == "-m") {
                None
            } else {
                args.iter().find(|a| !a.starts_with('-')).and_then(|s| book.get(&at(s))).cloned()
            };
            if let Some(code) = code {
                for (path, append) in script_targets(&code) {
                    r.writes.push(Write { path: at(&path), naive: roots.rel(&path, None), append, via: Via::Script });
                }
            }
        }
        "bash" | "sh" => {
            let script = args.iter().find(|a| !a.starts_with('-')).and_then(|s| book.get(&at(s)));
            for w in script.map(|t| shell_writes(t)).unwrap_or_default() {
                r.writes.push(Write {
                    path: at(&w.path),
                    naive: roots.rel(&w.path, None),
                    append: w.append,
                    via: Via::Script,
                });
            }
        }
        _ => {}
    }
}

fn patched(files: Vec<String>, reverse: bool, step: usize, r: &mut StepReading) {
    if reverse && !files.is_empty() {
        r.resets.push(Reset { step, files: files.clone() });
    }
    for path in files {
        r.writes.push(Write { naive: path.clone(), path, append: false, via: Via::Patch { reverse } });
    }
}

fn git(
    c: &Command,
    args: &[&str],
    step: usize,
    at: &dyn Fn(&str) -> String,
    book: &HashMap<String, String>,
    observation: &str,
    r: &mut StepReading,
) {
    // Options before the subcommand (`git -C dir`, `git --no-pager`).
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if matches!(args[i], "-C" | "-c") { 2 } else { 1 };
    }
    let sub = args.get(i).copied().unwrap_or("");
    let rest: Vec<&str> = args.iter().skip(i + 1).copied().collect();
    let files = || -> Vec<String> {
        rest.iter()
            .filter(|a| !a.starts_with('-') && **a != "." && **a != "--" && (a.contains('.') || a.contains('/')))
            .map(|a| at(a))
            .collect()
    };
    match sub {
        "checkout" | "restore" if !rest.is_empty() && !rest.iter().any(|a| *a == "-b" || *a == "-B") => {
            let all = rest.contains(&".");
            let f = files();
            if all || !f.is_empty() {
                r.resets.push(Reset { step, files: if all { Vec::new() } else { f } });
            }
        }
        "stash" => match rest.first().copied() {
            None | Some("push" | "save" | "-u" | "--include-untracked" | "-k" | "--keep-index") => {
                r.resets.push(Reset { step, files: Vec::new() })
            }
            Some("pop" | "apply") => r.restores = true,
            _ => {}
        },
        "reset" if rest.contains(&"--hard") => r.resets.push(Reset { step, files: Vec::new() }),
        "apply" if !rest.iter().any(|a| matches!(*a, "--check" | "--stat" | "--numstat" | "--summary")) => {
            let reverse = rest.iter().any(|a| *a == "-R" || *a == "--reverse");
            let named: Vec<&str> =
                rest.iter().copied().filter(|a| !a.starts_with('-') && !a.starts_with('<')).collect();
            let redirected = rest.iter().position(|a| *a == "<").and_then(|p| rest.get(p + 1).copied());
            let mut texts: Vec<&str> =
                named.iter().chain(redirected.iter()).filter_map(|f| book.get(&at(f))).map(String::as_str).collect();
            if let Some(h) = c.heredoc.as_deref() {
                texts.push(h);
            }
            let mut files: Vec<String> =
                texts.into_iter().flat_map(split_patch).map(|f| at(&f.path)).collect::<Vec<_>>();
            // `git apply -v` names what it patched.
            files.extend(
                observation
                    .lines()
                    .filter_map(|l| l.strip_prefix("Applied patch "))
                    .filter_map(|l| l.split_whitespace().next().map(|f| at(f.trim_matches(['\'', '"'])))),
            );
            files.sort();
            files.dedup();
            patched(files, reverse, step, r);
        }
        _ => {}
    }
}

/// Files a Python script writes: the literal path of an `open(…, "w")`, `Path(…).write_text`;
/// when a write goes through a variable (`open(path, "w")`), every file-like string literal of
/// the script (the files it names).
pub fn script_targets(code: &str) -> Vec<(String, bool)> {
    let literals = string_literals(code);
    // The mode of an `open(` call: its second argument or `mode=`.
    let writes_through = |after: &str| {
        let args = call_arguments(after);
        let mode = args
            .iter()
            .find_map(|a| a.strip_prefix("mode").map(|m| m.trim_start().trim_start_matches('=').trim()))
            .or_else(|| args.get(1).map(String::as_str).filter(|a| !a.contains('=')))
            .and_then(leading_literal)
            .unwrap_or_default();
        (mode.contains(['w', 'a', '+']), mode.contains('a'))
    };
    let mut out: Vec<(String, bool)> = Vec::new();
    let mut by_variable = false;
    for (i, _) in code.match_indices("open(") {
        let after = &code[i + 5..];
        let (writes, append) = writes_through(after);
        if !writes {
            continue;
        }
        match leading_literal(after) {
            Some(p) => out.push((p, append)),
            None => by_variable = true,
        }
    }
    for marker in [".write_text(", ".write_bytes("] {
        for (i, _) in code.match_indices(marker) {
            // `Path("x").write_text(` names its file just before; `p.write_text(` does not.
            let before = code[..i].trim_end();
            match before.strip_suffix(')').and_then(|b| b.rfind('(').map(|p| &b[p + 1..])).and_then(leading_literal) {
                Some(p) => out.push((p, false)),
                None => by_variable = true,
            }
        }
    }
    if code.contains("inplace=True") || code.contains("inplace = True") {
        by_variable = true;
    }
    if by_variable {
        out.extend(literals.into_iter().filter(|l| file_like(l)).map(|l| (l, false)));
    }
    let mut seen = Vec::new();
    out.retain(|(p, _)| {
        file_like(p) && !seen.contains(p) && {
            seen.push(p.clone());
            true
        }
    });
    out
}

/// The top-level arguments of a call whose text starts after its `(`.
fn call_arguments(after: &str) -> Vec<String> {
    let mut args = vec![String::new()];
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    for c in after.chars().take(400) {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') if depth == 0 => break,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => {
                args.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = args.last_mut() {
            last.push(c);
        }
    }
    args.into_iter().map(|a| a.trim().to_string()).collect()
}

fn leading_literal(s: &str) -> Option<String> {
    let s = s.trim_start();
    let s = s.strip_prefix(['r', 'f', 'b']).filter(|x| x.starts_with(['"', '\''])).unwrap_or(s);
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &s[1..];
    let end = body.find(q)?;
    Some(body[..end].to_string())
}

/// Single-line string literals of a script.
fn string_literals(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code.lines() {
        let mut rest = line;
        while let Some(p) = rest.find(['"', '\'']) {
            let q = rest.as_bytes()[p] as char;
            let body = &rest[p + 1..];
            match body.find(q) {
                Some(end) => {
                    out.push(body[..end].to_string());
                    rest = &body[end + 1..];
                }
                None => break,
            }
        }
    }
    out
}

/// A string that names a source, doc or config file.
fn file_like(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 200
        && !s.contains(char::is_whitespace)
        && !s.contains("://")
        && s.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (crate::analysis::symbols::Lang::of_path(s).is_some()
                    || matches!(ext, "rst" | "md" | "txt" | "toml" | "cfg" | "ini" | "yaml" | "yml" | "json"))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_name_the_files_they_write() {
        let direct = "with open('src/pkg/mod.py', 'w') as f:\n    f.write(s)\nopen(\"README.md\").read()\n";
        assert_eq!(script_targets(direct), vec![("src/pkg/mod.py".to_string(), false)]);
        let via_var = "p = 'src/pkg/mod.py'\ns = open(p).read().replace('a', 'b')\nopen(p, 'w').write(s)\n";
        assert_eq!(script_targets(via_var), vec![("src/pkg/mod.py".to_string(), false)]);
        let path = "from pathlib import Path\nPath('lib/x.py').write_text('y')\n";
        assert_eq!(script_targets(path), vec![("lib/x.py".to_string(), false)]);
        assert!(script_targets("print(open('a.py').read())").is_empty(), "reading is not writing");
    }
}
