//! A shell step's commands as effects on files: `sed -i`, `perl -pi`, redirections of
//! `echo`/`printf`/`cat`/`sed` output, `tee`, `cp`/`mv`/`rm`, `git apply`/`patch`, `git
//! checkout`/`restore`/`stash`/`reset --hard`, Python scripts that write files; and the one
//! pipeline whose output is a view of a file.

use super::command::{self, Pipeline, RedirectOp, Simple, Word};
use super::known::Known;
use super::patch;
use super::replay::Replay;
use super::script::python_writes;
use super::sed::Script;
use super::shown::{self, resolve};
use super::slurp::Slurp;
use crate::analysis::edits::unified_diff;
use crate::model::{Certainty, CheckedBy, EditStatus};

/// Commands that run Python.
fn is_python(name: &str) -> bool {
    name == "python" || name == "python3" || name.starts_with("python3.") || name == "python2"
}

/// What a command prints, when known.
type Content = Option<String>;

pub(super) struct Step<'a> {
    pub index: usize,
    pub status: EditStatus,
    pub cwd: Option<String>,
    pub observation: &'a str,
    /// The observation is a terminal screen, not the output of the step's one printing
    /// pipeline: it shows no file.
    pub screen: bool,
}

impl Replay {
    /// Replay a shell step: edits in order, and the output as a view when one pipeline printed.
    pub fn shell_step(&mut self, action: &str, step: Step<'_>) {
        let Some(pipelines) = command::parse(action) else {
            // Too many words to replay: what it did to any file is unknown from here on.
            self.forget();
            return;
        };
        self.blank = false;
        let mut cwd = step.cwd.clone();
        let printing: Vec<usize> = pipelines
            .iter()
            .enumerate()
            .filter(|(_, p)| p.cmds.last().is_some_and(|c| !shown::silent(c)))
            .map(|(i, _)| i)
            .collect();
        let viewer = match printing.as_slice() {
            [one] if !step.screen => Some(*one),
            _ => None,
        };
        for (i, p) in pipelines.iter().enumerate() {
            if Some(i) == viewer {
                self.view_output(p, &cwd, &step);
            }
            let mut content: Content = None;
            for c in &p.cmds {
                content = self.simple(c, content, &mut cwd, &step);
            }
        }
    }

    fn view_output(&mut self, p: &Pipeline, cwd: &Option<String>, step: &Step<'_>) {
        if !self.output_fits(step.observation) {
            return;
        }
        let by = CheckedBy::Step(step.index);
        if let Some(pr) = shown::printer(p, cwd.as_deref()) {
            let out = shown::output(step.observation);
            let f = self.file(&pr.path);
            let len = self.files[f].known.len();
            for s in shown::read(&pr, &out, len) {
                self.view(s, by);
            }
            return;
        }
        let git_diff =
            p.cmds.first().is_some_and(|c| c.name() == Some("git") && c.args().iter().any(|a| a.text == "diff"));
        if !git_diff {
            return;
        }
        let out = shown::output(step.observation);
        if !out.clipped {
            let text: String = out.head.iter().map(|l| format!("{l}\n")).collect();
            for s in shown::diff_views(&text, cwd.as_deref()) {
                self.view(s, by);
            }
        }
    }

    /// One command: its effect on files; returns what it prints, when known.
    fn simple(&mut self, c: &Simple, input: Content, cwd: &mut Option<String>, step: &Step<'_>) -> Content {
        // A cap passed by a command before (a view too large) is no part of this one's edit.
        self.budget.take_trip();
        let name = c.name()?.to_string();
        let args = c.args();
        let dynamic = args.iter().any(|a| a.dynamic);
        let output: Content = match name.as_str() {
            "cd" | "pushd" => {
                if let Some(dir) = args.first().filter(|a| !a.dynamic && a.text != "-") {
                    // A folder deeper than any system allows: where the step is, is lost.
                    if dir.text.len() + cwd.as_ref().map_or(0, String::len) >= self.budget.limits.cwd_bytes {
                        self.lost_cwd = true;
                        return None;
                    }
                    let to = resolve(&dir.text, cwd.as_deref());
                    self.add_root(&to);
                    *cwd = Some(to);
                }
                return None;
            }
            "echo" if !dynamic => Some(echo(args)),
            "printf" if !dynamic => printf(args),
            "cat" if !dynamic => {
                let files: Vec<&Word> = args.iter().filter(|a| !a.text.starts_with('-') || a.text == "-").collect();
                if args.iter().any(|a| a.text.starts_with('-') && a.text != "-") {
                    None
                } else if files.is_empty() || files.iter().all(|f| f.text == "-") {
                    c.stdin_text.clone().or(input)
                } else {
                    let mut all = String::new();
                    let mut known = true;
                    for f in files {
                        match self.text_of(&resolve(&f.text, cwd.as_deref())) {
                            // `cat f f f f > g` ten times over: no larger than a file may be.
                            Some(t) if self.budget.fits(all.len() + t.len(), 0) => all.push_str(&t),
                            Some(_) => return None,
                            None => known = false,
                        }
                    }
                    known.then_some(all)
                }
            }
            "tee" => {
                let content = c.stdin_text.clone().or(input);
                let append = args.iter().any(|a| a.text == "-a" || a.text == "--append");
                for f in args.iter().filter(|a| !a.text.starts_with('-')) {
                    self.write(f, content.clone(), append, c, cwd, step);
                }
                content
            }
            "sed" => self.sed(c, input, cwd, step),
            "perl" => {
                self.perl(c, cwd, step);
                None
            }
            "cp" | "mv" => {
                self.copy(c, name == "mv", cwd, step);
                None
            }
            "rm" => {
                for f in args.iter().filter(|a| !a.text.starts_with('-') && !a.dynamic) {
                    let i = self.file(&resolve(&f.text, cwd.as_deref()));
                    self.files[i].known = Known::empty();
                }
                None
            }
            "git" => {
                self.git(c, cwd, step);
                None
            }
            "patch" => {
                self.patch(c, cwd, step, false);
                None
            }
            n if is_python(n) => {
                self.python(c, cwd, step);
                None
            }
            _ => None,
        };
        // `> file` / `>> file`: the command's output is the file's new text (or more of it).
        let redirect = c
            .redirects
            .iter()
            .rev()
            .find(|r| matches!(r.op, RedirectOp::Write | RedirectOp::Append) && r.fd.is_none_or(|f| f == 1));
        if let Some(r) = redirect
            && matches!(name.as_str(), "echo" | "printf" | "cat" | "sed" | "tee")
        {
            self.write(&r.target, output.clone(), r.op == RedirectOp::Append, c, cwd, step);
            return None;
        }
        if redirect.is_some() {
            return None;
        }
        output
    }

    /// A whole-file write (or an append) whose text is known, or not.
    fn write(
        &mut self,
        target: &Word,
        content: Content,
        append: bool,
        c: &Simple,
        cwd: &Option<String>,
        step: &Step<'_>,
    ) {
        if target.text.starts_with("/dev/") || target.text.is_empty() {
            return;
        }
        let path = resolve(&target.text, cwd.as_deref());
        let f = self.file(&path);
        let before = self.files[f].known.clone();
        // A text larger than a file may be (a here-document of 10^7 lines) is not split into
        // lines: the edit is too large to replay.
        let content = content.filter(|t| {
            let (held, lines) = if append { before.weight() } else { (0, 0) };
            !self.lost_cwd && self.budget.fits(held + t.len(), lines + t.matches('\n').count())
        });
        let Some(text) = content.filter(|_| !target.dynamic) else {
            self.shell_edit(step.index, &path, f, &c.raw, step.status, before, None, None);
            return;
        };
        let lines = shown::lines_of(&text);
        let mut after = before.clone();
        let text_diff = if append {
            let end = after.segs.len();
            after.splice(end..end, lines, Some(self.next_id()));
            None
        } else {
            let diff = match before.is_whole().then(|| before.text()).flatten() {
                Some(old) => unified_diff(&path, &old, &text),
                None if !before.has_text() => unified_diff(&path, "", &text),
                None => None,
            };
            let all = 0..after.segs.len();
            after.splice(all, lines, Some(self.next_id()));
            diff
        };
        // A text diff is nicer than the identity diff for whole rewrites.
        let unchanged =
            !append && text_diff.is_none() && before.is_whole() && before.text().as_deref() == Some(text.as_str());
        let text_diff = if unchanged { None } else { text_diff };
        if unchanged {
            after = before.clone();
        }
        self.shell_edit(step.index, &path, f, &c.raw, step.status, before, Some(after), text_diff);
        // The text written, as a tool's `create` carries it; none for a write that changed
        // nothing (a text alone would be drawn as every line added).
        if let Some(r) = self.recs.last_mut().filter(|r| r.certainty != Some(Certainty::Unchanged)) {
            r.edit.new_text = Some(text);
        }
    }

    /// `sed -i` edits each file; `sed SCRIPT FILE` (not in place) prints the result.
    fn sed(&mut self, c: &Simple, input: Content, cwd: &Option<String>, step: &Step<'_>) -> Content {
        let args = c.args();
        let mut in_place = false;
        let (mut extended, mut quiet, mut nul) = (false, false, false);
        let mut scripts: Vec<String> = Vec::new();
        let mut files: Vec<&Word> = Vec::new();
        let mut dynamic_script = false;
        let mut i = 0;
        while i < args.len() {
            let a = &args[i];
            let t = a.text.as_str();
            match t {
                "-e" | "--expression" => {
                    if let Some(s) = args.get(i + 1) {
                        dynamic_script |= s.dynamic;
                        scripts.push(s.text.clone());
                    }
                    i += 1;
                }
                "-f" | "--file" => return None,
                "-E" | "-r" | "--regexp-extended" => extended = true,
                "-n" | "--quiet" | "--silent" => quiet = true,
                "-s" | "--separate" | "-u" | "--posix" | "--debug" => {}
                "-z" | "--null-data" | "--zero-terminated" => nul = true,
                t if t.starts_with("--expression=") => scripts.push(t["--expression=".len()..].to_string()),
                t if t.starts_with("--in-place") => in_place = true,
                t if t.starts_with('-') && t.len() > 1 && !t.starts_with("--") => {
                    // Clustered short options: `-i`, `-i.bak`, `-ni`, `-Ei`, `-ie` (suffix "e").
                    let body = &t[1..];
                    for (k, ch) in body.char_indices() {
                        match ch {
                            'i' => {
                                in_place = true;
                                break;
                            }
                            'E' | 'r' => extended = true,
                            'n' => quiet = true,
                            // Lines split at NUL: the whole text at once.
                            'z' => nul = true,
                            's' | 'u' => {}
                            'e' => {
                                // `-e` ends the cluster: the script follows.
                                if k + 1 == body.len()
                                    && let Some(s) = args.get(i + 1)
                                {
                                    scripts.push(s.text.clone());
                                    dynamic_script |= s.dynamic;
                                    i += 1;
                                }
                                break;
                            }
                            _ => {}
                        }
                    }
                }
                _ => {
                    if scripts.is_empty() {
                        dynamic_script |= a.dynamic;
                        scripts.push(t.to_string());
                    } else {
                        files.push(a);
                    }
                }
            }
            i += 1;
        }
        let source = scripts.join("\n");
        if nul {
            // `sed -z`: in place, simulated on the whole text; its output is not read.
            if in_place {
                let script = match dynamic_script || quiet {
                    true => None,
                    false => Slurp::sed(&source, extended).map_err(|e| self.note(&e)).ok(),
                };
                self.whole_text(script.as_ref(), &files, cwd, c, step);
            }
            return None;
        }
        if !in_place {
            // `sed 's/a/b/' f > g`: the output, when the input is known.
            if quiet || dynamic_script {
                return None;
            }
            let script = Script::sed(&source, extended, false).ok()?;
            let mut known = match files.as_slice() {
                [] => Known::whole(&input?, None),
                [f] => {
                    let text = self.text_of(&resolve(&f.text, cwd.as_deref()))?;
                    Known::whole(&text, None)
                }
                _ => return None,
            };
            let mut budget = self.budget;
            let run = script.run(&mut known, usize::MAX, &|_| None, &mut budget);
            self.budget = budget;
            return run.ok()?.after.text();
        }
        let script = match dynamic_script {
            true => None,
            false => Script::sed(&source, extended, quiet).map_err(|e| self.note(&e)).ok(),
        };
        self.in_place(script.as_ref(), &files, cwd, c, step);
        None
    }

    /// A script that could not be read or run because it is too large: the edit it makes is.
    fn note(&mut self, e: &super::sed::Unsupported) {
        if e.is_too_large() {
            self.budget.trip();
        }
    }

    /// A script run in place (`sed -i`, `perl -pi`) on each file named: simulated on the file's
    /// known lines when the script and the name are literal, and recorded as the step's edit of
    /// the file; a plain substitution on lines never shown waits for a view of them.
    fn in_place(
        &mut self,
        script: Option<&Script>,
        files: &[&Word],
        cwd: &Option<String>,
        c: &Simple,
        step: &Step<'_>,
    ) {
        // A script too large to read makes every file's edit too large.
        let unread = self.budget.take_trip();
        for f in files {
            let path = resolve(&f.text, cwd.as_deref());
            let fi = self.file(&path);
            // Taken out while the script runs (splitting gaps for its addresses changes no
            // line); the edit puts back what it made.
            let mut before = std::mem::take(&mut self.files[fi].known);
            let after = match script {
                Some(s) if !f.dynamic && !self.lost_cwd && !self.budget.exhausted() => {
                    let id = self.next_id();
                    let mut budget = self.budget;
                    let this: &Replay = self;
                    // sed's `r FILE` reads another file's known text.
                    let read = |name: &str| this.known_text(&resolve(name, cwd.as_deref()));
                    let run = s.run(&mut before, id, &read, &mut budget);
                    self.budget = budget;
                    run.map_err(|e| self.note(&e)).ok()
                }
                _ => None,
            };
            if unread {
                self.budget.trip();
            }
            let partial = after.as_ref().is_some_and(|r| r.assumed && !before.is_whole());
            let after = after.map(|r| r.after);
            let subst = script.filter(|_| !f.dynamic).and_then(|s| waiting_subst(s, &before));
            self.shell_edit_partial(step.index, &path, fi, &c.raw, step.status, before, after, None, partial);
            if let Some(subst) = subst {
                self.await_view(subst);
            }
        }
    }

    /// `perl -pi -e 's/a/b/g' FILES` (`-i.bak`, `-pi`, `-i -pe`); with `-0777` (or `-0`) the
    /// whole text at once.
    fn perl(&mut self, c: &Simple, cwd: &Option<String>, step: &Step<'_>) {
        let args = c.args();
        let (mut in_place, mut print, mut code, mut files) = (false, false, None::<&Word>, Vec::new());
        let (mut other, mut slurp) = (false, false);
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            if let Some(flags) = t.strip_prefix('-').filter(|_| code.is_none() || t.len() > 1 && files.is_empty()) {
                if flags.is_empty() {
                    i += 1;
                    continue;
                }
                let mut skip = 0;
                for (k, ch) in flags.char_indices() {
                    if skip > 0 {
                        skip -= 1;
                        continue;
                    }
                    match ch {
                        '0' => {
                            // `-0777`: no record separator; `-0`: NUL, which a text file
                            // holds none of. Other separators (`-00` paragraphs) are not read.
                            let digits: String = flags[k + 1..].chars().take_while(|d| d.is_digit(8)).collect();
                            skip = digits.len();
                            match u32::from_str_radix(&digits, 8) {
                                Ok(v) if v >= 0o400 => slurp = true,
                                _ if digits.is_empty() => slurp = true,
                                _ => other = true,
                            }
                        }
                        'i' => {
                            in_place = true;
                            break;
                        }
                        'p' => print = true,
                        'e' | 'E' => {
                            if k + 1 == flags.len() {
                                code = args.get(i + 1);
                                i += 1;
                            }
                            break;
                        }
                        'w' | 'l' => {}
                        _ => other = true,
                    }
                }
            } else if code.is_none() {
                code = Some(&args[i]);
            } else {
                files.push(&args[i]);
            }
            i += 1;
        }
        if !in_place {
            return;
        }
        let literal = code.filter(|w| print && !other && !w.dynamic);
        if slurp {
            let script = literal.and_then(|w| Slurp::perl(&w.text).map_err(|e| self.note(&e)).ok());
            self.whole_text(script.as_ref(), &files, cwd, c, step);
            return;
        }
        let script = literal.and_then(|w| Script::perl(&w.text).map_err(|e| self.note(&e)).ok());
        self.in_place(script.as_ref(), &files, cwd, c, step);
    }

    /// `cp SRC DST`, `mv SRC DST`: the destination takes what is known of the source. An edit
    /// when the destination is a file the run knew (a copy onto a repository file).
    fn copy(&mut self, c: &Simple, moving: bool, cwd: &Option<String>, step: &Step<'_>) {
        let operands: Vec<&Word> = c.args().iter().filter(|a| !a.text.starts_with('-')).collect();
        let [src, dst] = operands.as_slice() else { return };
        if src.dynamic || dst.dynamic {
            return;
        }
        let src_path = resolve(&src.text, cwd.as_deref());
        let mut dst_path = resolve(&dst.text, cwd.as_deref());
        if dst.text.ends_with('/') || dst.text == "." {
            let name = src_path.rsplit('/').next().unwrap_or(&src_path);
            dst_path = format!("{}/{name}", dst_path.trim_end_matches('/'));
        }
        let s = self.file(&src_path);
        let d = self.file(&dst_path);
        if s == d {
            return;
        }
        let source = self.files[s].known.clone();
        let before = self.files[d].known.clone();
        let mut after = before.clone();
        let record = before.has_text() || self.files[d].base.is_some();
        let id = record.then(|| self.next_id());
        after.segs.clear();
        for seg in &source.segs {
            let new = match seg.text() {
                Some(t) => super::known::Seg::Line(after.line(Some(t.clone()), id)),
                None => after.gap(seg.len()),
            };
            after.segs.push(new);
        }
        if moving {
            self.files[s].known = Known::empty();
        }
        if record {
            let text_diff = match (before.text(), after.text()) {
                (Some(a), Some(b)) => unified_diff(&dst_path, &a, &b),
                _ => None,
            };
            let after = if text_diff.is_none() && before.text().is_some() && before.text() == after.text() {
                before.clone()
            } else {
                after
            };
            self.shell_edit(step.index, &dst_path, d, &c.raw, step.status, before, Some(after), text_diff);
        } else {
            self.files[d].known = after;
        }
    }

    fn git(&mut self, c: &Simple, cwd: &Option<String>, step: &Step<'_>) {
        let args: Vec<&str> = c.args().iter().map(|a| a.text.as_str()).collect();
        let Some(&sub) = args.first() else { return };
        let rest = &args[1..];
        let files = |rest: &[&str], all_after_dashdash: bool| -> Vec<String> {
            let after = rest.iter().position(|a| *a == "--");
            let list: Vec<&str> = match after {
                Some(p) => rest[p + 1..].to_vec(),
                None if all_after_dashdash => Vec::new(),
                None => rest
                    .iter()
                    .copied()
                    .filter(|a| !a.starts_with('-') && (a.contains('/') || a.contains('.')))
                    .collect(),
            };
            list.into_iter().map(|p| resolve(p, cwd.as_deref())).collect()
        };
        match sub {
            "apply" => self.patch(c, cwd, step, true),
            "checkout" | "restore" => {
                if rest.iter().any(|a| *a == "-b" || *a == "-B")
                    || (sub == "restore" && rest.contains(&"--staged") && !rest.contains(&"--worktree"))
                {
                    return;
                }
                let all = rest.iter().any(|a| *a == "." || *a == ":/");
                let targets = if all { Vec::new() } else { files(rest, false) };
                if all {
                    for f in self.tracked_edited() {
                        self.reset(f, step.index);
                    }
                } else {
                    for p in targets {
                        let f = self.file(&p);
                        self.reset(f, step.index);
                    }
                }
            }
            "reset" if rest.contains(&"--hard") => {
                for f in self.tracked_edited() {
                    self.reset(f, step.index);
                }
            }
            "stash" => match rest.first().copied() {
                None | Some("push" | "save" | "-u" | "--include-untracked" | "-k" | "--keep-index") => {
                    let only = files(rest, true);
                    let mut entry = Vec::new();
                    for f in self.tracked_edited() {
                        if !only.is_empty() && !only.iter().any(|p| self.file(p) == f) {
                            continue;
                        }
                        let state = self.files[f].known.clone();
                        let undone = self.reset(f, step.index);
                        entry.push((f, state, undone));
                    }
                    self.stash.push(entry);
                }
                Some("pop" | "apply") => {
                    let entry = if rest[0] == "pop" { self.stash.pop() } else { self.stash.last().cloned() };
                    for (f, state, undone) in entry.unwrap_or_default() {
                        self.files[f].known = state;
                        for id in undone {
                            if let Some(r) = self.recs.get_mut(id) {
                                r.edit.trace.undone_at = None;
                            }
                        }
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    /// `git apply` / `patch` with the diff in the action (a here-document, `< file`, a file
    /// whose text is known).
    fn patch(&mut self, c: &Simple, cwd: &Option<String>, step: &Step<'_>, git: bool) {
        let args: Vec<&Word> = c.args().iter().skip(usize::from(git)).collect();
        let mut reverse = false;
        let mut strip: Option<usize> = None;
        let mut source: Option<String> = c.stdin_text.clone();
        let mut dir = cwd.clone();
        let mut i = 0;
        while i < args.len() {
            let t = args[i].text.as_str();
            match t {
                "-R" | "--reverse" => reverse = true,
                "--check" | "--dry-run" | "--cached" | "--stat" | "--numstat" | "--summary" => return,
                "-i" | "--input" => {
                    if let Some(f) = args.get(i + 1) {
                        source = self.text_of(&resolve(&f.text, cwd.as_deref()));
                    }
                    i += 1;
                }
                "-d" | "--directory" => {
                    if let Some(d) = args.get(i + 1) {
                        dir = Some(resolve(&d.text, cwd.as_deref()));
                    }
                    i += 1;
                }
                t if t.starts_with("-p") => {
                    strip = t[2..].parse().ok().or_else(|| args.get(i + 1).and_then(|w| w.text.parse().ok()))
                }
                t if t.starts_with('-') => {}
                t => {
                    if source.is_none() {
                        source = self.text_of(&resolve(t, cwd.as_deref()));
                    }
                }
            }
            i += 1;
        }
        for r in &c.redirects {
            if r.op == RedirectOp::Read && source.is_none() {
                source = self.text_of(&resolve(&r.target.text, cwd.as_deref()));
            }
        }
        let Some(text) = source else {
            // The patch's text was never shown: the files it names in its output (`patching
            // file F`, `git apply -v`'s `Applied patch F cleanly.`) were written, how is unknown.
            for path in patched_files(step.observation) {
                let path = resolve(&path, dir.as_deref());
                let f = self.file(&path);
                let before = self.files[f].known.clone();
                self.shell_edit(step.index, &path, f, &c.raw, step.status, before, None, None);
            }
            return;
        };
        for file in patch::parse(&text) {
            let raw = if file.raw_path.is_empty() { file.path.clone() } else { file.raw_path.clone() };
            let rel = match strip {
                Some(n) => patch::strip_components(&raw, n),
                None if git => patch::strip_components(&raw, 1),
                None => raw.strip_prefix("a/").or_else(|| raw.strip_prefix("b/")).unwrap_or(&raw).to_string(),
            };
            let path = resolve(&rel, dir.as_deref());
            let f = self.file(&path);
            let mut before = self.files[f].known.clone();
            let mut after = before.clone();
            let applied = patch::apply(&mut after, &file, self.next_id(), reverse).is_ok();
            // Placing hunks splits gaps: not a change.
            let mut probe = before.clone();
            for h in &file.hunks {
                let start = if reverse { h.new_start } else { h.old_start };
                probe.materialize(start.max(1), false);
            }
            before = if applied { before } else { probe };
            self.files[f].known = before.clone();
            self.shell_edit(step.index, &path, f, &c.raw, step.status, before, applied.then_some(after), None);
        }
    }

    /// A Python script (`python -c`, `python - <<EOF`, `python script.py` whose text is known)
    /// that writes files: edits whose diffs later views or the submitted patch attribute.
    fn python(&mut self, c: &Simple, cwd: &Option<String>, step: &Step<'_>) {
        let args = c.args();
        let code = match args.first().map(|a| a.text.as_str()) {
            Some("-c") => args.get(1).map(|a| a.text.clone()),
            Some("-m") => None,
            Some("-") | None => c.stdin_text.clone(),
            Some(t) if t.starts_with('-') => args
                .iter()
                .find(|a| a.text.ends_with(".py"))
                .and_then(|a| self.text_of(&resolve(&a.text, cwd.as_deref()))),
            Some(script) => self.text_of(&resolve(script, cwd.as_deref())),
        };
        let Some(code) = code else { return };
        self.python_code(&code, &c.raw, cwd, step);
    }

    pub fn python_code(&mut self, code: &str, command: &str, cwd: &Option<String>, step: &Step<'_>) {
        self.blank = false;
        if self.simulate_python(code, command, cwd, step) {
            return;
        }
        for p in python_writes(code) {
            let path = resolve(&p, cwd.as_deref());
            let f = self.file(&path);
            let before = self.files[f].known.clone();
            let first = command.lines().next().unwrap_or(command);
            self.shell_edit(step.index, &path, f, first, step.status, before, None, None);
        }
    }
}

/// The files `patch` (`patching file F`) or `git apply -v` (`Applied patch F cleanly.`) says it
/// patched.
fn patched_files(observation: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in observation.lines() {
        let named = l
            .strip_prefix("patching file ")
            .map(str::trim)
            .or_else(|| l.strip_prefix("Applied patch ").and_then(|r| r.split_whitespace().next()));
        if let Some(f) = named.map(|f| f.trim_matches(['\'', '"', '`'])).filter(|f| !f.is_empty())
            && !out.iter().any(|o| o == f)
        {
            out.push(f.to_string());
        }
    }
    out
}

/// `echo [-n] [-e] ARGS`.
/// The plain substitution a script is (see [`Script::line_subst`]), linked to the substitution
/// that wrote its line before when that line was never shown (`before`: the file as the
/// script found it, its addressed lines split out).
fn waiting_subst(script: &Script, before: &Known) -> Option<super::invert::LineSubst> {
    let mut subst = script.line_subst()?;
    subst.prev = subst.line.and_then(|n| super::invert::unseen_origin(before, n));
    Some(subst)
}

fn echo(args: &[Word]) -> String {
    let mut newline = true;
    let mut escapes = false;
    let mut words = Vec::new();
    for a in args {
        match a.text.as_str() {
            "-n" if words.is_empty() => newline = false,
            "-e" if words.is_empty() => escapes = true,
            "-E" if words.is_empty() => escapes = false,
            "-ne" | "-en" if words.is_empty() => {
                newline = false;
                escapes = true;
            }
            t => words.push(t.to_string()),
        }
    }
    let mut text = words.join(" ");
    if escapes {
        text = text.replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\");
    }
    if newline {
        text.push('\n');
    }
    text
}

/// `printf FORMAT ARGS`: `%s`, `%d`, `%%` and backslash escapes; the format repeats while
/// arguments remain. `None` for other conversions.
fn printf(args: &[Word]) -> Option<String> {
    let (format, rest) = args.split_first()?;
    let mut out = String::new();
    let mut values = rest.iter().map(|w| w.text.as_str());
    loop {
        let mut used = false;
        let chars: Vec<char> = format.text.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            match chars[i] {
                '\\' => {
                    i += 1;
                    match chars.get(i) {
                        Some('n') => out.push('\n'),
                        Some('t') => out.push('\t'),
                        Some('\\') => out.push('\\'),
                        Some(other) => {
                            out.push('\\');
                            out.push(*other);
                        }
                        None => out.push('\\'),
                    }
                }
                '%' => {
                    i += 1;
                    match chars.get(i) {
                        Some('%') => out.push('%'),
                        Some('s' | 'd') => {
                            used = true;
                            out.push_str(values.next().unwrap_or(""));
                        }
                        _ => return None,
                    }
                }
                c => out.push(c),
            }
            i += 1;
        }
        if !used || values.len() == 0 {
            break;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Word {
        Word { text: s.to_string(), dynamic: false }
    }

    #[test]
    fn echo_and_printf_texts() {
        assert_eq!(echo(&[w("x"), w("= 1")]), "x = 1\n");
        assert_eq!(echo(&[w("-n"), w("x")]), "x");
        assert_eq!(echo(&[w("-e"), w("a\\nb")]), "a\nb\n");
        assert_eq!(printf(&[w("%s\\n"), w("a"), w("b")]).as_deref(), Some("a\nb\n"));
        assert_eq!(printf(&[w("x=%d%%\\n"), w("5")]).as_deref(), Some("x=5%\n"));
        assert_eq!(printf(&[w("%5.2f")]), None);
    }
}
