//! What a step showed the agent of which files: a file opened (`open`, `str_replace_editor
//! view`, `cat`, `head`, `sed -n`...), the open file's window moved (`goto`, `scroll_down`), or
//! lines of files in search output (`grep -n` style `path:line:text`).

use super::commands::{Command, commands, join};
use super::paths::Roots;
use crate::classify::input::Step;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewKind {
    /// The agent asked for the file: counts as opening it.
    Open,
    /// The window of the already open file moved: it saw more of it, without re-opening.
    Navigate,
}

/// One file a step showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct View {
    pub path: String,
    pub kind: ViewKind,
}

/// Commands whose file arguments are printed whole or in part.
/// with the options of each that take a value (`head -n 40 f`; `cat -n f` numbers lines).
const PRINTERS: &[(&str, &[&str])] = &[
    ("cat", &[]),
    ("head", &["-n", "-c", "--lines", "--bytes"]),
    ("tail", &["-n", "-c", "--lines", "--bytes"]),
    ("nl", &["-w", "-s", "-v", "-i", "-b", "-n"]),
    ("less", &[]),
    ("more", &[]),
    ("bat", &["-r", "--line-range", "-l", "--language"]),
    ("view", &[]),
];

/// The files step `s` showed. Paths are repository-relative.
pub fn views(s: &Step, roots: &Roots) -> Vec<View> {
    let wd = s.working_dir.as_deref();
    let open = |p: &str| View { path: roots.rel(p, wd), kind: ViewKind::Open };
    let mut out = Vec::new();
    if let Some(args) = &s.args
        && args.get("command").and_then(|c| c.as_str()) == Some("view")
        && let Some(p) = args.get("path").and_then(|p| p.as_str())
    {
        out.push(open(p));
        return out;
    }
    let first = s.action.lines().next().unwrap_or("").trim();
    let words: Vec<String> = commands(first, None).into_iter().next().map(|c| c.words).unwrap_or_default();
    match words.first().map(String::as_str) {
        Some("open") | Some("open_file") => {
            if let Some(p) = words.get(1) {
                out.push(open(p));
            }
            return out;
        }
        // Rovo Dev's file tools: `open_files` takes several, `inspect_code` one.
        Some("open_files") => {
            out.extend(words[1..].iter().map(|p| open(p)));
            return out;
        }
        Some("inspect_code") => {
            out.extend(words.get(1).map(|p| open(p)));
            return out;
        }
        Some("str_replace_editor") if words.get(1).map(String::as_str) == Some("view") => {
            if let Some(p) = words.get(2) {
                out.push(open(p));
            }
            return out;
        }
        Some("goto") | Some("scroll_down") | Some("scroll_up") | Some("search_file") => {
            if let Some(f) = &s.open_file {
                out.push(View { path: roots.rel(f, wd), kind: ViewKind::Navigate });
            }
            return out;
        }
        _ => {}
    }
    for c in commands(&s.action, wd) {
        let at = |p: &str| View { path: roots.rel(&join(c.dir.as_deref(), p), None), kind: ViewKind::Open };
        out.extend(printed_files(&c.words).into_iter().map(|p| at(&p)));
    }
    out
}

/// What one step showed the agent: the files it opened or moved in, and the file lines of its
/// search output. Read once per run; every signal that needs it takes it from here.
pub struct Shown<'a> {
    pub step: usize,
    pub views: Vec<View>,
    pub hits: Vec<(String, &'a str)>,
    pub observation: &'a str,
}

pub fn shown<'a>(steps: &'a [Step], roots: &Roots) -> Vec<Shown<'a>> {
    steps
        .iter()
        .map(|s| {
            let search = commands(&s.action, s.working_dir.as_deref()).into_iter().find(is_search_command);
            Shown {
                step: s.index as usize,
                views: views(s, roots),
                hits: match search {
                    Some(c) => search_hits(&s.observation, c.dir.as_deref(), roots),
                    None => Vec::new(),
                },
                observation: &s.observation,
            }
        })
        .collect()
}

fn is_search_command(c: &Command) -> bool {
    matches!(c.program(), "grep" | "rg" | "ag" | "ack" | "search_dir" | "search_file" | "egrep")
        || (c.program() == "git" && c.words.get(1).map(String::as_str) == Some("grep"))
}

/// `path:line:text` (or `path:text`) lines of search output, as (repository path, text).
pub fn search_hits<'a>(observation: &'a str, working_dir: Option<&str>, roots: &Roots) -> Vec<(String, &'a str)> {
    let mut hits = Vec::new();
    for line in observation.lines() {
        let Some((path, rest)) = line.split_once(':') else { continue };
        let plausible = !path.is_empty()
            && !path.contains(char::is_whitespace)
            && path.contains('.')
            && path.chars().all(|c| c.is_alphanumeric() || "_-./".contains(c));
        if plausible {
            let text =
                rest.split_once(':').filter(|(n, _)| n.chars().all(|c| c.is_ascii_digit())).map_or(rest, |(_, t)| t);
            hits.push((roots.rel(&join(working_dir, path), None), text));
        }
    }
    hits
}

fn printed_files(words: &[String]) -> Vec<String> {
    let Some(cmd) = words.first() else { return Vec::new() };
    let args = &words[1..];
    // `value_options`: options that take a value (`head -n 40`), whose value is not a file.
    let operands = |skip_script: bool, value_options: &[&str]| {
        let mut files = Vec::new();
        let mut skip_next = false;
        let mut script_seen = !skip_script;
        for a in args {
            if skip_next {
                skip_next = false;
            } else if a.starts_with('-') {
                skip_next = value_options.contains(&a.as_str());
            } else if a.starts_with('>') || a.starts_with('<') {
                break;
            } else if !script_seen {
                script_seen = true;
            } else {
                files.push(a.clone());
            }
        }
        files
    };
    // With `-e SCRIPT` the script is an option's value; otherwise it is the first operand.
    let script_in_option = args.iter().any(|a| a == "-e");
    match cmd.as_str() {
        "sed" if args.iter().any(|a| a == "-n") && !args.iter().any(|a| a.starts_with("-i")) => {
            operands(!script_in_option, &["-e"])
        }
        "awk" => operands(true, &["-F", "-v"]),
        c => PRINTERS.iter().find(|(p, _)| *p == c).map(|(_, opts)| operands(false, opts)).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(action: &str, args: Option<serde_json::Value>, open_file: Option<&str>) -> Step {
        Step { args, open_file: open_file.map(str::to_string), ..Step::sample(0, action, "") }
    }

    fn paths(s: &Step) -> Vec<(String, ViewKind)> {
        views(s, &Roots::default()).into_iter().map(|v| (v.path, v.kind)).collect()
    }

    #[test]
    fn opening_commands_of_each_tool_set() {
        use ViewKind::*;
        let v = serde_json::json!({"command": "view", "path": "/testbed/src/a.py"});
        assert_eq!(
            paths(&step("str_replace_editor view /testbed/src/a.py", Some(v), None)),
            [("src/a.py".into(), Open)]
        );
        assert_eq!(paths(&step("open src/b.py 40", None, None)), [("src/b.py".into(), Open)]);
        // Rovo Dev's file tools.
        assert_eq!(
            paths(&step("open_files src/a.ts 'src/b c.ts'", None, None)),
            [("src/a.ts".into(), Open), ("src/b c.ts".into(), Open)]
        );
        assert_eq!(paths(&step("inspect_code src/a.ts", None, None)), [("src/a.ts".into(), Open)]);
        assert_eq!(paths(&step("scroll_down", None, Some("/testbed/src/b.py"))), [("src/b.py".into(), Navigate)]);
        assert_eq!(
            paths(&step("cd src && head -n 40 c.py | nl && sed -n '1,20p' d.py", None, None)),
            [("src/c.py".into(), Open), ("src/d.py".into(), Open)]
        );
        assert!(paths(&step("sed -i 's/a/b/' e.py", None, None)).is_empty());
        assert_eq!(paths(&step("cat -n src/pkg/util.py", None, None)), [("src/pkg/util.py".into(), Open)]);
        assert_eq!(paths(&step("sed -n -e '1,5p' a.py", None, None)), [("a.py".into(), Open)]);
        assert_eq!(paths(&step("tail -n 20 b.py", None, None)), [("b.py".into(), Open)]);
        assert!(paths(&step("cat > f.py <<'EOF'\ncat g.py\nEOF", None, None)).is_empty());
        assert!(paths(&step("python reproduce.py", None, None)).is_empty());
    }

    #[test]
    fn search_output_lines_name_files() {
        let search = |a: &str| commands(a, None).iter().any(is_search_command);
        assert!(search("grep -rn super_len src tests | head"));
        assert!(!search("python x.py"));
        let out = "src/requests/models.py:48:from .utils import super_len\ntests/test_utils.py:super_len(x)\nBinary file matches\n";
        assert_eq!(
            search_hits(out, Some("/testbed"), &Roots::default()),
            [
                ("src/requests/models.py".to_string(), "from .utils import super_len"),
                ("tests/test_utils.py".to_string(), "super_len(x)")
            ]
        );
    }
}
