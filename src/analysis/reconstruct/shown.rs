//! What a step's observation showed of files: SWE-agent's windowed viewer (`[File: p (N lines
//! total)]` then `12:text`), `cat -n` snippets of `str_replace_editor` and OpenHands, `git diff`
//! output, and the output of shell commands that print files (`cat`, `cat -n`, `nl -ba`,
//! `head`, `tail`, `sed -n 'A,Bp'`, `grep -n`, `awk 'NR>=A && NR<=B'`), alone or in a pipeline
//! of such filters. A command's output is read only when it is the step's one printing
//! pipeline, and its lines are placed from the line numbers it carries or from the lines the
//! pipeline selects.

use super::command::{Pipeline, RedirectOp, Simple};
use super::known::split_lines;
use std::rc::Rc;

/// Lines of one file a step showed.
#[derive(Debug, Clone, PartialEq)]
pub enum Shown {
    /// Lines at known numbers; `end`: the file ends after that line.
    Lines { path: String, lines: Vec<(usize, Rc<str>)>, end: Option<usize> },
    /// The file's last lines; `whole`: they are all of it.
    Tail { path: String, lines: Vec<Rc<str>>, whole: bool },
}

/// A command's output, without the wrapping the agent framework adds.
#[derive(Debug, Default, PartialEq)]
pub struct Output<'a> {
    /// The output's first lines (all of it when not clipped).
    pub head: Vec<&'a str>,
    /// When the framework clipped the middle: the last lines.
    pub tail: Vec<&'a str>,
    pub clipped: bool,
}

/// Trailers OpenHands and others add after a command's output.
const TRAILERS: &[&str] = &[
    "[The command completed with exit code",
    "[Current working directory:",
    "[Python interpreter:",
    "[Command finished with exit code",
];

fn between<'a>(text: &'a str, open: &str, close: &str) -> Option<&'a str> {
    let start = text.find(open)? + open.len();
    let end = text[start..].find(close).map_or(text.len(), |e| start + e);
    Some(&text[start..end])
}

fn body_lines(text: &str) -> Vec<&str> {
    let text = text.strip_prefix('\n').unwrap_or(text);
    let text = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l)).collect()
}

/// The output of a shell command as an observation shows it: mini-swe-agent's
/// `<returncode>`/`<output>` (or `<output_head>`, `<elided_chars>`, `<output_tail>` when it
/// clipped it), a `<response clipped>` mark, OpenHands' trailing status lines. The wrapping
/// tags are looked for where the framework puts them (the start and the end), so a long output
/// is scanned once.
pub fn output(observation: &str) -> Output<'_> {
    let head_len = observation.len().min(2048);
    let start = &observation[..observation.floor_char_boundary(head_len)];
    if start.contains("<output_head>") {
        let head = between(observation, "<output_head>", "</output_head>").unwrap_or("");
        let mut head = body_lines(head);
        let mut tail = match observation.rfind("<output_tail>") {
            Some(at) => {
                let rest = &observation[at + "<output_tail>".len()..];
                body_lines(rest.rfind("</output_tail>").map_or(rest, |e| &rest[..e]))
            }
            None => Vec::new(),
        };
        // The cut falls inside lines: the head's last and the tail's first are parts.
        head.pop();
        if !tail.is_empty() {
            tail.remove(0);
        }
        return Output { head, tail, clipped: true };
    }
    let body = match start.find("<output>") {
        Some(at) => {
            let rest = &observation[at + "<output>".len()..];
            rest.rfind("</output>").map_or(rest, |e| &rest[..e])
        }
        None => docker_stdout(observation).unwrap_or(observation),
    };
    let mut clipped = false;
    let body = match body.find("<response clipped>") {
        Some(at) => {
            clipped = true;
            let cut = &body[..at];
            // The clipped text ends inside a line.
            cut.rfind('\n').map_or("", |nl| &cut[..nl])
        }
        None => body,
    };
    let mut head = body_lines(body);
    let mut trailer = false;
    while head.last().is_some_and(|l| TRAILERS.iter().any(|t| l.starts_with(t))) {
        head.pop();
        trailer = true;
    }
    if trailer && head.last().is_some_and(|l| l.trim().is_empty()) {
        head.pop();
    }
    Output { head, tail: Vec::new(), clipped }
}

/// Early mini-swe-agent's docker environment: `<args>` (the command run, however long),
/// `<returncode>`, then `<stdout>\n{stdout}\n</stdout>` and `<stderr>`: the output is stdout.
fn docker_stdout(observation: &str) -> Option<&str> {
    let rest = observation.strip_prefix("<args>\n")?;
    let rest = &rest[rest.find("\n</args>\n<returncode>\n")?..];
    let open = "\n<stdout>\n";
    let start = rest.find(open)? + open.len();
    let end = rest.rfind("\n</stdout>\n<stderr>").filter(|e| *e >= start)?;
    // `body_lines` takes away a newline before it and the output's last.
    rest.get(start - 1..end)
}

/// `path` made absolute against `cwd` when relative, `./` and `//` removed.
pub fn resolve(path: &str, cwd: Option<&str>) -> String {
    let joined = match cwd {
        Some(wd) if !path.starts_with('/') => format!("{}/{}", wd.trim_end_matches('/'), path),
        _ => path.to_string(),
    };
    let absolute = joined.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            other => parts.push(other),
        }
    }
    let body = parts.join("/");
    if absolute { format!("/{body}") } else { body }
}

/// File views in the observation of an editor tool (not a shell command). `edited`: the file
/// the step's tool edited, which a snippet of "the edited file" shows.
/// How an editor tool opens a numbered view of a file.
const CAT_N: &str = "Here's the result of running `cat -n` on ";

/// Every line of every tool output is looked at: the phrase is searched with a searcher built
/// once, not one built per line.
static CAT_N_AT: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
    std::sync::LazyLock::new(|| memchr::memmem::Finder::new(CAT_N));

/// What follows the phrase that opens an editor's numbered view, when the line holds it.
fn after_cat_n(line: &str) -> Option<&str> {
    CAT_N_AT.find(line.as_bytes()).map(|at| &line[at + CAT_N.len()..])
}

pub fn tool_views(observation: &str, cwd: Option<&str>, edited: Option<&str>) -> Vec<Shown> {
    let mut out: Vec<Shown> = Vec::new();
    // The file being shown, how its lines are numbered, and its length when stated.
    let mut current: Option<(String, char, Option<usize>)> = None;
    let mut preview = false;
    let mut lines: Vec<(usize, Rc<str>)> = Vec::new();
    let flush =
        |out: &mut Vec<Shown>, current: &Option<(String, char, Option<usize>)>, lines: &mut Vec<(usize, Rc<str>)>| {
            if let Some((path, _, total)) = current
                && (!lines.is_empty() || total.is_some())
            {
                out.push(Shown::Lines { path: path.clone(), lines: std::mem::take(lines), end: *total });
            }
            lines.clear();
        };
    for line in observation.lines() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        // A rejected edit shows how the file "would have looked": not the file.
        if line.starts_with("This is how your edit would have looked if applied")
            || line.starts_with("[This is how your edit would have looked if applied")
        {
            flush(&mut out, &current, &mut lines);
            current = None;
            preview = true;
            continue;
        }
        if line.starts_with("This is the original code before your edit")
            || line.starts_with("[This is the original code before your edit")
        {
            preview = false;
            continue;
        }
        if preview {
            continue;
        }
        if let Some(rest) = line.strip_prefix("[File: ") {
            flush(&mut out, &current, &mut lines);
            let (path, total) = match rest.rsplit_once(" (") {
                Some((p, t)) => (p, t.split_whitespace().next().and_then(|n| n.parse().ok())),
                None => (rest.trim_end_matches(']'), None),
            };
            current = Some((resolve(path.trim(), cwd), ':', total));
            continue;
        }
        if let Some(rest) = after_cat_n(line) {
            flush(&mut out, &current, &mut lines);
            let path = rest.strip_prefix("a snippet of ").unwrap_or(rest).trim_end_matches(':').trim();
            current = match (path, edited) {
                ("the edited file", Some(p)) => Some((resolve(p, cwd), '\t', None)),
                ("the edited file", None) => None,
                (p, _) => Some((resolve(p, cwd), '\t', None)),
            };
            continue;
        }
        let Some((_, separator, _)) = &current else { continue };
        let Some((num, text)) = line.split_once(*separator) else { continue };
        let Ok(n) = num.trim_start().parse::<usize>() else { continue };
        lines.push((n, Rc::from(text)));
    }
    flush(&mut out, &current, &mut lines);
    out
}

/// Lines of a stream a filter passes on, by position in the file.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Stream {
    /// From line `first`, at most `count` lines (to the end when `None`).
    From { first: usize, count: Option<usize> },
    /// The last `count` lines of the file.
    Last(usize),
    /// The last `take` of the lines `first..first + count`.
    LastOf { first: usize, count: usize, take: usize },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Numbers {
    /// Unnumbered: lines in stream order.
    None,
    /// `N<TAB>text` (cat -n, nl -ba) naming file lines.
    Tab,
    /// `N:text` (grep -n) naming file lines.
    Colon,
    /// `N<TAB>text` counting the stream's lines (`sed -n 5,9p f | cat -n`).
    TabOfStream,
    /// nl's default numbers only non-empty lines: strip them, keep the order.
    StripNl,
}

/// A pipeline that prints lines of one file.
#[derive(Debug, Clone, PartialEq)]
pub struct Printer {
    pub path: String,
    stream: Option<Stream>,
    numbers: Numbers,
    /// `sed -n '1,3p;8,9p'`: several ranges, in order.
    ranges: Vec<(usize, Option<usize>)>,
}

fn number_arg(s: &str) -> Option<usize> {
    s.parse().ok()
}

/// A command's operands, and its options with their values.
type Operands<'a> = (Vec<&'a str>, Vec<(&'a str, Option<&'a str>)>);

/// Operands of a command after options; `valued`: options that take a value.
fn operands<'a>(cmd: &'a Simple, valued: &[&str]) -> Option<Operands<'a>> {
    let mut files = Vec::new();
    let mut opts = Vec::new();
    let args = cmd.args();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.dynamic {
            return None;
        }
        let t = a.text.as_str();
        if t.starts_with('-') && t.len() > 1 {
            if valued.contains(&t) {
                opts.push((t, args.get(i + 1).map(|w| w.text.as_str())));
                i += 2;
                continue;
            }
            opts.push((t, None));
        } else {
            files.push(t);
        }
        i += 1;
    }
    Some((files, opts))
}

/// `head -n 20`, `head -20`, `head --lines=20`, `tail -n +5`: (count, from-start `+`).
fn count_of(opts: &[(&str, Option<&str>)], default: usize) -> Option<(usize, bool)> {
    let mut n = (default, false);
    for (o, v) in opts {
        let value = match (*o, v) {
            ("-n" | "--lines", Some(v)) => *v,
            (o, _) if o.starts_with("--lines=") => &o[8..],
            (o, _) if o.starts_with("-n") && o.len() > 2 => &o[2..],
            (o, _) if o[1..].chars().all(|c| c.is_ascii_digit()) => &o[1..],
            ("-c" | "--bytes", _) => return None,
            _ => continue,
        };
        let plus = value.starts_with('+');
        n = (number_arg(value.trim_start_matches(['+', '-']))?, plus);
    }
    Some(n)
}

/// Print ranges (first, last; `None`: to the end), and the files.
type Ranges<'a> = (Vec<(usize, Option<usize>)>, Vec<&'a str>);

/// `sed -n` print ranges: `5p`, `5,9p`, `5,$p`, several joined by `;` or `-e`.
fn sed_ranges(cmd: &Simple) -> Option<Ranges<'_>> {
    let mut scripts = Vec::new();
    let mut files = Vec::new();
    let mut quiet = false;
    let args = cmd.args();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.dynamic {
            return None;
        }
        match a.text.as_str() {
            "-n" | "--quiet" | "--silent" => quiet = true,
            "-e" | "--expression" => {
                scripts.push(args.get(i + 1)?.text.as_str());
                i += 1;
            }
            t if t.starts_with("-i") || t == "--in-place" => return None,
            t if t.starts_with('-') && t.len() > 1 => {
                if t.contains('n') && !t.starts_with("--") {
                    quiet = true;
                }
            }
            t => {
                if scripts.is_empty() {
                    scripts.push(t);
                } else {
                    files.push(t);
                }
            }
        }
        i += 1;
    }
    if !quiet {
        return None;
    }
    let mut ranges = Vec::new();
    for part in scripts.iter().flat_map(|s| s.split([';', '\n'])) {
        let part = part.trim();
        if part.is_empty() {
            continue;
        }
        let body = part.strip_suffix('p')?.trim();
        let (a, b) = match body.split_once(',') {
            Some((a, "$")) => (number_arg(a.trim())?, None),
            Some((a, b)) => (number_arg(a.trim())?, Some(number_arg(b.trim())?)),
            None => (number_arg(body)?, Some(number_arg(body)?)),
        };
        ranges.push((a, b));
    }
    let increasing = ranges.windows(2).all(|w| w[0].1.is_some_and(|e| e < w[1].0));
    (!ranges.is_empty() && increasing).then_some((ranges, files))
}

/// `awk 'NR>=A && NR<=B'`, `awk 'NR==A,NR==B'`, `awk 'NR==A'`.
fn awk_range(cmd: &Simple) -> Option<(usize, Option<usize>, &str)> {
    let (files, _) = operands(cmd, &["-F", "-v"])?;
    let (script, file) = match files.as_slice() {
        [s, f] => (s.replace(' ', ""), *f),
        _ => return None,
    };
    let script = script.trim_matches(|c| c == '{' || c == '}').replace("{print}", "").replace("{print$0}", "");
    let num = |s: &str| number_arg(s);
    if let Some((a, b)) = script.split_once("&&") {
        let a = a.strip_prefix("NR>=")?;
        let b = b.strip_prefix("NR<=")?;
        return Some((num(a)?, Some(num(b)?), file));
    }
    if let Some((a, b)) = script.split_once(",") {
        return Some((num(a.strip_prefix("NR==")?)?, Some(num(b.strip_prefix("NR==")?)?), file));
    }
    let n = num(script.strip_prefix("NR==")?)?;
    Some((n, Some(n), file))
}

/// The file a pipeline prints and which of its lines, when it is a printer.
pub fn printer(p: &Pipeline, cwd: Option<&str>) -> Option<Printer> {
    let (source, filters) = p.cmds.split_first()?;
    if source.redirects.iter().any(|r| r.op != RedirectOp::Dup) || source.stdin_text.is_some() {
        return None;
    }
    let mut pr = source_printer(source, cwd)?;
    for f in filters {
        filtered(&mut pr, f)?;
    }
    Some(pr)
}

/// What the first command of a pipeline prints of a file (`cat`, `head`, `sed -n`, `nl`...).
fn source_printer(source: &Simple, cwd: Option<&str>) -> Option<Printer> {
    let name = source.name()?;
    let one = |files: Vec<&str>| -> Option<String> {
        match files.as_slice() {
            [f] if *f != "-" => Some(resolve(f, cwd)),
            _ => None,
        }
    };
    Some(match name {
        "cat" | "less" | "more" => {
            let (files, opts) = operands(source, &[])?;
            let numbered = opts.iter().any(|(o, _)| *o == "-n" || *o == "--number");
            if opts.iter().any(|(o, _)| *o != "-n" && *o != "--number") {
                return None;
            }
            Printer {
                path: one(files)?,
                stream: Some(Stream::From { first: 1, count: None }),
                numbers: if numbered { Numbers::Tab } else { Numbers::None },
                ranges: Vec::new(),
            }
        }
        "nl" => {
            let (files, opts) = operands(source, &["-b", "-w", "-s", "-v", "-i", "-n"])?;
            let all = opts.iter().any(|(o, v)| *o == "-ba" || (*o == "-b" && *v == Some("a")));
            if opts.iter().any(|(o, v)| (*o == "-s" && *v != Some("\t")) || *o == "-v" || *o == "-i") {
                return None;
            }
            Printer {
                path: one(files)?,
                stream: Some(Stream::From { first: 1, count: None }),
                numbers: if all { Numbers::Tab } else { Numbers::StripNl },
                ranges: Vec::new(),
            }
        }
        "head" => {
            let (files, opts) = operands(source, &["-n", "-c", "--lines", "--bytes"])?;
            let (n, _) = count_of(&opts, 10)?;
            Printer {
                path: one(files)?,
                stream: Some(Stream::From { first: 1, count: Some(n) }),
                numbers: Numbers::None,
                ranges: Vec::new(),
            }
        }
        "tail" => {
            let (files, opts) = operands(source, &["-n", "-c", "--lines", "--bytes"])?;
            if opts.iter().any(|(o, _)| *o == "-f" || *o == "-F") {
                return None;
            }
            let (n, plus) = count_of(&opts, 10)?;
            let stream = if plus { Stream::From { first: n.max(1), count: None } } else { Stream::Last(n) };
            Printer { path: one(files)?, stream: Some(stream), numbers: Numbers::None, ranges: Vec::new() }
        }
        "sed" => {
            let (ranges, files) = sed_ranges(source)?;
            match ranges.as_slice() {
                [(a, b)] => Printer {
                    path: one(files)?,
                    stream: Some(Stream::From { first: *a, count: b.map(|b| b.saturating_sub(*a) + 1) }),
                    numbers: Numbers::None,
                    ranges: Vec::new(),
                },
                _ => Printer { path: one(files)?, stream: None, numbers: Numbers::None, ranges },
            }
        }
        "awk" | "gawk" => {
            let (a, b, file) = awk_range(source)?;
            Printer {
                path: resolve(file, cwd),
                stream: Some(Stream::From { first: a, count: b.map(|b| b.saturating_sub(a) + 1) }),
                numbers: Numbers::None,
                ranges: Vec::new(),
            }
        }
        "grep" | "egrep" | "fgrep" => {
            let (files, opts) = operands(source, &["-e", "-f", "-A", "-B", "-C", "-m", "--max-count"])?;
            let numbered = opts.iter().any(|(o, _)| o.starts_with('-') && !o.starts_with("--") && o.contains('n'))
                || opts.iter().any(|(o, _)| *o == "--line-number");
            let recursive = opts.iter().any(|(o, _)| !o.starts_with("--") && (o.contains('r') || o.contains('R')));
            let pattern_in_opt = opts.iter().any(|(o, _)| *o == "-e" || *o == "-f");
            let files = if pattern_in_opt { files } else { files.get(1..)?.to_vec() };
            if !numbered || recursive || opts.iter().any(|(o, _)| o.contains('v') && !o.starts_with("--")) {
                return None;
            }
            Printer { path: one(files)?, stream: None, numbers: Numbers::Colon, ranges: Vec::new() }
        }
        _ => return None,
    })
}

/// What a filter after the first command leaves of what it printed; `None` when that is not known.
fn filtered(pr: &mut Printer, f: &Simple) -> Option<()> {
    if f.redirects.iter().any(|r| r.op != RedirectOp::Dup) {
        return None;
    }
    let name = f.name()?;
    let (files, opts) = operands(f, &["-n", "-c", "--lines", "--bytes"])?;
    if !files.is_empty() && !matches!(name, "sed" | "grep" | "awk") {
        return None;
    }
    let file_numbered = matches!(pr.numbers, Numbers::Tab | Numbers::Colon);
    match name {
        // Numbered lines keep their numbers through any line filter (which may have left
        // out the file's last lines: no end can be read from them).
        "head" | "tail" | "grep" | "egrep" if file_numbered => pr.stream = None,
        "sed" if file_numbered && sed_ranges(f).is_some() => pr.stream = None,
        "less" | "more" if file_numbered => {}
        "cat" if opts.is_empty() => {}
        "head" | "tail" | "sed" if pr.ranges.is_empty() => {
            let stream = pr.stream?;
            pr.stream = Some(match (name, stream) {
                ("head", Stream::From { first, count }) => {
                    let (n, _) = count_of(&opts, 10)?;
                    Stream::From { first, count: Some(count.map_or(n, |c| c.min(n))) }
                }
                ("tail", Stream::From { first, count }) => {
                    let (n, plus) = count_of(&opts, 10)?;
                    match (plus, count) {
                        (true, c) => Stream::From {
                            first: first + n.saturating_sub(1),
                            count: c.map(|c| c.saturating_sub(n.saturating_sub(1))),
                        },
                        (false, None) => Stream::Last(n),
                        (false, Some(c)) => Stream::LastOf { first, count: c, take: n },
                    }
                }
                ("sed", Stream::From { first, count }) => {
                    let (ranges, _) = sed_ranges(f)?;
                    let [(a, b)] = ranges.as_slice() else { return None };
                    let skip = a.saturating_sub(1);
                    let len = b.map(|b| b.saturating_sub(*a) + 1);
                    let left = count.map(|c| c.saturating_sub(skip));
                    Stream::From {
                        first: first + skip,
                        count: match (len, left) {
                            (Some(l), Some(r)) => Some(l.min(r)),
                            (l, r) => l.or(r),
                        },
                    }
                }
                _ => return None,
            });
        }
        "cat" | "nl" if pr.numbers == Numbers::None && pr.ranges.is_empty() => {
            let ba = name == "cat" && opts.iter().any(|(o, _)| *o == "-n")
                || name == "nl" && opts.iter().any(|(o, _)| *o == "-ba");
            if !ba {
                return None;
            }
            pr.numbers = Numbers::TabOfStream;
        }
        _ => return None,
    }
    Some(())
}

fn numbered(line: &str, numbers: Numbers) -> Option<(usize, &str)> {
    match numbers {
        Numbers::Tab | Numbers::TabOfStream => {
            let (n, text) = line.split_once('\t')?;
            Some((n.trim_start().parse().ok()?, text))
        }
        Numbers::Colon => {
            let (n, text) = line.split_once(':')?;
            Some((n.parse().ok()?, text))
        }
        _ => None,
    }
}

/// What a printer's output shows. `len`: the file's length, when known (for `tail`).
pub fn read(pr: &Printer, out: &Output<'_>, len: Option<usize>) -> Vec<Shown> {
    let path = pr.path.clone();
    let rc = |l: &str| -> Rc<str> { Rc::from(l) };
    let mut shown = Vec::new();
    match pr.numbers {
        Numbers::Tab | Numbers::Colon => {
            let lines: Vec<(usize, Rc<str>)> = out
                .head
                .iter()
                .chain(&out.tail)
                .filter_map(|l| numbered(l, pr.numbers))
                .map(|(n, t)| (n, rc(t)))
                .collect();
            if !lines.is_empty() {
                // `cat -n` of the whole file, unclipped, reaches its end.
                let whole = pr.stream == Some(Stream::From { first: 1, count: None }) && !out.clipped;
                let end = if whole { lines.last().map(|l| l.0) } else { None };
                shown.push(Shown::Lines { path, lines, end });
            }
            return shown;
        }
        Numbers::TabOfStream => {
            let Some(Stream::From { first, .. }) = pr.stream else { return shown };
            let lines: Vec<(usize, Rc<str>)> = out
                .head
                .iter()
                .chain(&out.tail)
                .filter_map(|l| numbered(l, pr.numbers))
                .map(|(n, t)| (first + n.saturating_sub(1), rc(t)))
                .collect();
            if !lines.is_empty() {
                shown.push(Shown::Lines { path, lines, end: None });
            }
            return shown;
        }
        Numbers::None | Numbers::StripNl => {}
    }
    let strip = |l: &str| -> Rc<str> {
        if pr.numbers == Numbers::StripNl {
            match l.split_once('\t') {
                Some((n, t)) if n.trim().chars().all(|c| c.is_ascii_digit()) && !n.trim().is_empty() => rc(t),
                _ => rc(""),
            }
        } else {
            rc(l)
        }
    };
    if !pr.ranges.is_empty() {
        // Several ranges: placed in order while each is full.
        let mut lines = Vec::new();
        let mut it = out.head.iter();
        for &(a, b) in &pr.ranges {
            let count = b.map(|b| b.saturating_sub(a) + 1);
            let mut taken = 0;
            while count.is_none_or(|c| taken < c) {
                let Some(l) = it.next() else { break };
                lines.push((a + taken, strip(l)));
                taken += 1;
            }
            if count.is_some_and(|c| taken < c) {
                break;
            }
        }
        if !out.clipped && !lines.is_empty() {
            shown.push(Shown::Lines { path, lines, end: None });
        }
        return shown;
    }
    let Some(stream) = pr.stream else { return shown };
    let head: Vec<Rc<str>> = out.head.iter().map(|l| strip(l)).collect();
    let tail: Vec<Rc<str>> = out.tail.iter().map(|l| strip(l)).collect();
    match stream {
        Stream::From { first, count } => {
            let ends = !out.clipped && count.is_none_or(|c| head.len() < c);
            let end = ends.then(|| first + head.len() - 1).filter(|_| !head.is_empty() || first == 1);
            let lines: Vec<(usize, Rc<str>)> = head.into_iter().enumerate().map(|(k, t)| (first + k, t)).collect();
            if !lines.is_empty() || end.is_some() {
                let end = if lines.is_empty() { Some(first.saturating_sub(1)) } else { end };
                shown.push(Shown::Lines { path: path.clone(), lines, end });
            }
            if out.clipped && !tail.is_empty() {
                match count {
                    None => shown.push(Shown::Tail { path, lines: tail, whole: false }),
                    Some(c) => {
                        // The tail ends where the range does (assumed: the file is that long).
                        let Some(start) = (first + c).checked_sub(tail.len()) else { return shown };
                        let lines = tail.into_iter().enumerate().map(|(k, t)| (start + k, t));
                        shown.push(Shown::Lines { path, lines: lines.collect(), end: None });
                    }
                }
            }
        }
        Stream::Last(n) => {
            if out.clipped {
                return shown;
            }
            shown.push(Shown::Tail { path, whole: head.len() < n, lines: head });
        }
        Stream::LastOf { first, count, take } => {
            if out.clipped || head.is_empty() {
                return shown;
            }
            // The stream holds `count` lines unless the file ends sooner.
            let held = len.map_or(count, |l| count.min(l.saturating_sub(first - 1)));
            if held < head.len() {
                return shown;
            }
            let start = first + held - head.len();
            let _ = take;
            let lines = head.into_iter().enumerate().map(|(k, t)| (start + k, t)).collect();
            shown.push(Shown::Lines { path, lines, end: None });
        }
    }
    shown
}

/// Commands that print nothing when they succeed (so a step's one printer is found).
pub fn silent(cmd: &Simple) -> bool {
    let writes_elsewhere = cmd
        .redirects
        .iter()
        .any(|r| matches!(r.op, RedirectOp::Write | RedirectOp::Append) && r.fd.is_none_or(|f| f == 1));
    if writes_elsewhere {
        return true;
    }
    let Some(name) = cmd.name() else { return true };
    let arg = |i: usize| cmd.args().get(i).map(|w| w.text.as_str());
    match name {
        "cd" | "export" | "set" | "unset" | "source" | "." | "true" | ":" | "cp" | "mv" | "rm" | "mkdir" | "touch"
        | "chmod" | "chown" | "ln" | "popd" | "sleep" | "wait" => true,
        "sed" => cmd.args().iter().any(|a| a.text.starts_with("-i") || a.text == "--in-place"),
        "perl" => {
            cmd.args().iter().any(|a| a.text.starts_with("-i") || (a.text.starts_with("-p") && a.text.contains('i')))
        }
        "git" => matches!(arg(0), Some("add" | "checkout" | "restore" | "reset" | "config" | "apply")),
        "tee" => false,
        _ => false,
    }
}

/// A `git diff` output: the new side of each hunk, by file, as lines at their numbers.
pub fn diff_views(text: &str, cwd: Option<&str>) -> Vec<Shown> {
    let mut out = Vec::new();
    for file in super::patch::parse(text) {
        if file.deleted {
            continue;
        }
        let mut lines = Vec::new();
        for h in &file.hunks {
            let mut n = h.new_start;
            for (mark, text) in &h.lines {
                if *mark != '-' {
                    lines.push((n, Rc::from(text.as_str())));
                    n += 1;
                }
            }
        }
        if !lines.is_empty() {
            out.push(Shown::Lines { path: resolve(&file.path, cwd), lines, end: None });
        }
    }
    out
}

/// The lines of a text, for writes whose content is known.
pub fn lines_of(text: &str) -> Vec<Rc<str>> {
    split_lines(text)
}

#[cfg(test)]
mod tests {
    use super::super::command::parse;
    use super::*;

    fn show(cmd: &str, obs: &str) -> Vec<Shown> {
        let ps = parse(cmd).unwrap_or_default();
        let pr = printer(&ps[0], None).expect("a printer");
        read(&pr, &output(obs), None)
    }

    fn lines(s: &Shown) -> Vec<(usize, String)> {
        match s {
            Shown::Lines { lines, .. } => lines.iter().map(|(n, t)| (*n, t.to_string())).collect(),
            Shown::Tail { lines, .. } => lines.iter().enumerate().map(|(n, t)| (n, t.to_string())).collect(),
        }
    }

    #[test]
    fn mini_swe_agent_output_is_unwrapped_and_clipped_parts_trimmed() {
        let o = output("<returncode>0</returncode>\n<output>\na\nb\n</output>");
        assert_eq!(o.head, ["a", "b"]);
        let o = output(
            "<returncode>0</returncode>\n<warning>\nlong\n</warning><output_head>\nx\ny\npart\n</output_head>\n<elided_chars>\n9 characters elided\n</elided_chars>\n<output_tail>\nial\nz\n</output_tail>",
        );
        assert_eq!((o.head, o.tail, o.clipped), (vec!["x", "y"], vec!["z"], true));
        let o = output("a\nb\n[The command completed with exit code 0.]\n[Current working directory: /w]");
        assert_eq!(o.head, ["a", "b"]);
        assert!(output("<returncode>0</returncode>\n<output>\n</output>").head.is_empty());
    }

    #[test]
    fn early_mini_swe_agent_docker_output_is_its_stdout() {
        // As mini-swe-agent's docker environment wrote observations in July 2025: the command
        // run, its status, stdout and stderr, each wrapped.
        let wrap = |cmd: &str, out: &str, err: &str| {
            format!(
                "<args>\n['docker', 'exec', '-w', '/testbed', '0f9b', 'bash', '-c', '{cmd}']\n</args>\n<returncode>\n0\n</returncode>\n<stdout>\n{out}\n</stdout>\n<stderr>\n{err}\n</stderr>"
            )
        };
        let cat = wrap("cat tests/missing_colon.py", "#!/usr/bin/env python3\n\ndef f():\n    pass\n\n", "");
        let o = output(&cat);
        assert_eq!(o.head, ["#!/usr/bin/env python3", "", "def f():", "    pass", ""]);
        assert_eq!(output(&wrap("python3 t.py", "8.2\n", "")).head, ["8.2"]);
        assert!(output(&wrap("sed -i 's/a/b/' f.py", "", "")).head.is_empty());
        // A command longer than the head looked at, stderr after stdout.
        let long = "x".repeat(5000);
        assert_eq!(output(&wrap(&long, "a\n", "warn: </stdout>")).head, ["a"]);
    }

    #[test]
    fn printers_place_their_lines() {
        let s = show("sed -n '18,20p' f.py", "<output>\n\nclass A:\n    x = 1\n</output>");
        assert_eq!(lines(&s[0]), [(18, "".into()), (19, "class A:".into()), (20, "    x = 1".into())]);
        let s = show("sed -n '18,30p' f.py", "a\nb\n");
        assert!(matches!(&s[0], Shown::Lines { end: Some(19), .. }), "{s:?}");
        let s = show("nl -ba f.py | sed -n '5,6p'", "     5\tfive\n     6\tsix\n");
        assert_eq!(lines(&s[0]), [(5, "five".into()), (6, "six".into())]);
        assert!(matches!(&s[0], Shown::Lines { end: None, .. }), "a filtered view does not reach the end");
        let s = show("cat -n f.py", "     1\tone\n     2\ttwo\n");
        assert!(matches!(&s[0], Shown::Lines { end: Some(2), .. }), "the whole file does");
        let s = show("grep -n 'def ' f.py", "3:def a():\n9:    def b():\n");
        assert_eq!(lines(&s[0]), [(3, "def a():".into()), (9, "    def b():".into())]);
        let s = show("cat f.py | head -n 2", "a\nb\n");
        assert_eq!(lines(&s[0]), [(1, "a".into()), (2, "b".into())]);
        let s = show("head -n 40 f.py | tail -n 2", "y\nz\n");
        assert_eq!(lines(&s[0]), [(39, "y".into()), (40, "z".into())]);
        let s = show("tail -n 5 f.py", "a\nb\n");
        assert!(matches!(&s[0], Shown::Tail { whole: true, .. }));
        let s = show("sed -n '5,9p' f.py | cat -n", "     1\tfive\n     2\tsix\n");
        assert_eq!(lines(&s[0]), [(5, "five".into()), (6, "six".into())]);
        let s = show("awk 'NR>=3 && NR<=4' f.py", "c\nd\n");
        assert_eq!(lines(&s[0]), [(3, "c".into()), (4, "d".into())]);
        let s = show("sed -n '1,2p;8,9p' f.py", "a\nb\nh\ni\n");
        assert_eq!(lines(&s[0]).last(), Some(&(9, "i".into())));
        let s = show(
            "cat f.py",
            "<output_head>\nl1\nl2\npa\n</output_head><elided_chars>\n</elided_chars><output_tail>\nrt\nz1\nz2\n</output_tail>",
        );
        assert_eq!(lines(&s[0]), [(1, "l1".into()), (2, "l2".into())]);
        assert!(matches!(&s[1], Shown::Tail { whole: false, .. }));
    }

    #[test]
    fn what_is_not_a_printer() {
        for cmd in [
            "grep -rn x src",
            "cat a b",
            "sed -i 's/a/b/' f",
            "grep x f.py",
            "cat -A f",
            "wc -l f",
            "python x.py",
            "cat f | sort",
        ] {
            let ps = parse(cmd).unwrap_or_default();
            assert!(printer(&ps[0], None).is_none(), "{cmd}");
        }
    }

    #[test]
    fn editor_views_and_previews() {
        let v = tool_views("[File: /r/a.py (3 lines total)]\n1:x\n2:y\n", None, None);
        assert_eq!(
            v,
            [Shown::Lines { path: "/r/a.py".into(), lines: vec![(1, "x".into()), (2, "y".into())], end: Some(3) }]
        );
        let v = tool_views(
            "Your proposed edit has introduced new syntax error(s).\nThis is how your edit would have looked if applied\n[File: /r/a.py (2 lines total)]\n1:BROKEN\nThis is the original code before your edit\n[File: /r/a.py (2 lines total)]\n1:x\n",
            None,
            None,
        );
        assert_eq!(v.len(), 1);
        assert_eq!(lines(&v[0]), [(1, "x".into())]);
        let v = tool_views(
            "Here's the result of running `cat -n` on a snippet of a.py:\n    11\t\n    12\tdef f():\n",
            Some("/calc"),
            None,
        );
        assert_eq!(
            v,
            [Shown::Lines {
                path: "/calc/a.py".into(),
                lines: vec![(11, "".into()), (12, "def f():".into())],
                end: None
            }]
        );
        assert_eq!(resolve("./x/../y.py", Some("/r/")), "/r/y.py");
        let v = tool_views(
            "The file /w/m.c has been edited. Here's the result of running `cat -n` on a snippet of the edited file:\n   317\tx;\n",
            None,
            Some("/w/m.c"),
        );
        assert_eq!(v, [Shown::Lines { path: "/w/m.c".into(), lines: vec![(317, "x;".into())], end: None }]);
    }
}
