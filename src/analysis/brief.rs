//! What tells one step from the next in a step list a few columns wide: the command word and
//! its main argument (`grep needle`, `pytest test_x.py`, `open fields.py:1474`), and for a file
//! the line its address names (`sed -i '144d' constraints.py` → `constraints.py:144`), so that
//! 57 `sed -i` edits of one file do not look alike.

/// A step's action in brief.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Brief {
    /// The command word (`sed`, `pytest`, `view`); empty when the action is empty.
    pub command: String,
    /// Its main argument: a file's base name, a search pattern, a subcommand.
    pub target: Option<String>,
    /// The line the action addresses in `target`, when it names one.
    pub line: Option<u64>,
    /// The target as written (a file's whole path, `/testbed/src/a.py`, where `target` is its
    /// base name): the comparison tells files apart by their folder.
    pub path: Option<String>,
}

impl Brief {
    /// `target:line`, or the target, or nothing.
    pub fn place(&self) -> Option<String> {
        let target = self.target.as_deref()?;
        Some(match self.line {
            Some(n) => format!("{target}:{n}"),
            None => target.to_string(),
        })
    }

    /// `command target:line`.
    pub fn text(&self) -> String {
        match self.place() {
            Some(p) if !self.command.is_empty() => format!("{} {p}", self.command),
            Some(p) => p,
            None => self.command.clone(),
        }
    }
}

/// Commands that only set the scene for the one that matters (`cd /testbed && grep ...`).
const SETUP: &[&str] = &["cd", "pushd", "popd", "source", ".", "export", "set", "true", "clear"];
/// Words that run another command (`timeout 60 pytest`).
const WRAPPERS: &[&str] = &["sudo", "time", "nohup", "env", "exec", "command"];
/// Tools and shell commands whose main argument is a file and whose extra number is a line.
const FILE_COMMANDS: &[&str] =
    &["open", "goto", "view", "cat", "nl", "head", "tail", "less", "sed", "perl", "awk", "create", "edit"];

/// The brief of an action's first line (`head`).
pub fn brief(head: &str) -> Brief {
    let commands = commands(head.trim());
    let main = commands.iter().find(|c| c.first().is_some_and(|w| !SETUP.contains(&w.as_str()))).or(commands.first());
    let Some(main) = main else { return Brief::default() };
    let mut words = main.as_slice();
    while let Some((first, rest)) = words.split_first() {
        let assignment = first.split_once('=').is_some_and(|(k, _)| !k.is_empty() && !k.contains('/'));
        if assignment || WRAPPERS.contains(&first.as_str()) {
            words = rest;
        } else if first == "timeout" {
            words = rest.get(1..).unwrap_or_default();
        } else {
            break;
        }
    }
    let Some((command, args)) = words.split_first() else { return Brief::default() };
    let command = base_name(command);
    match command.as_str() {
        "python" | "python3" | "python2" => python(args),
        "str_replace_editor" | "file_editor" => match args.split_first() {
            Some((sub, rest)) => with_target(sub, rest),
            None => Brief { command, ..Brief::default() },
        },
        "git" => Brief { command, target: args.iter().find(|a| !a.starts_with('-')).cloned(), ..Brief::default() },
        "sed" | "perl" => script_and_file(command, args),
        _ => with_target(&command, args),
    }
}

/// `python script.py`, `python -m pytest tests/x.py` (as `pytest x.py`), `python -c`.
fn python(args: &[String]) -> Brief {
    match args.first().map(String::as_str) {
        Some("-m") => match args.get(1) {
            Some(module) => with_target(module, args.get(2..).unwrap_or_default()),
            None => Brief { command: "python".into(), ..Brief::default() },
        },
        Some("-c") => Brief { command: "python".into(), target: Some("-c".into()), ..Brief::default() },
        _ => with_target("python", args),
    }
}

/// Options that take a value, per command: short option letters, then long names. The value is
/// the next word (`grep -C 5`, `-nC 5`, `--context 5`) unless it is joined (`-C5`,
/// `--context=5`). `-e PATTERN` of grep and ripgrep gives the pattern, the main argument.
const VALUE_OPTIONS: &[(&str, &str, &[&str])] = &[
    (
        "grep",
        "ABCDEfmde",
        &[
            "--after-context",
            "--before-context",
            "--context",
            "--max-count",
            "--regexp",
            "--file",
            "--include",
            "--exclude",
            "--exclude-dir",
        ],
    ),
    ("egrep", "ABCmefd", &["--after-context", "--before-context", "--context", "--max-count", "--regexp"]),
    (
        "rg",
        "ABCmegtTj",
        &[
            "--after-context",
            "--before-context",
            "--context",
            "--max-count",
            "--regexp",
            "--glob",
            "--type",
            "--type-not",
        ],
    ),
    ("head", "nc", &["--lines", "--bytes"]),
    ("tail", "nc", &["--lines", "--bytes"]),
    ("pytest", "kmpcrW", &["--tb", "--deselect", "--ignore", "--rootdir", "--maxfail"]),
    ("ls", "Iw", &["--ignore", "--width"]),
    ("cut", "dfc", &["--delimiter", "--fields"]),
    ("sort", "kt", &["--key"]),
    ("xargs", "In", &[]),
];

/// The arguments that are not options nor an option's value (`grep -nC 5 "if x:" f.py` gives
/// `if x:` and `f.py`); a `-e PATTERN` value comes first.
fn positional<'a>(command: &str, args: &'a [String]) -> Vec<&'a String> {
    let (short, long) =
        VALUE_OPTIONS.iter().find(|(c, _, _)| *c == command).map_or(("", &[][..]), |(_, s, l)| (*s, *l));
    let mut out: Vec<&String> = Vec::new();
    let mut patterns: Vec<&String> = Vec::new();
    let mut i = 0;
    let mut rest_positional = false;
    while let Some(a) = args.get(i) {
        i += 1;
        if rest_positional || !a.starts_with('-') || a == "-" {
            out.push(a);
        } else if a == "--" {
            rest_positional = true;
        } else if let Some(name) = a.strip_prefix("--") {
            let name = format!("--{}", name.split('=').next().unwrap_or_default());
            if long.contains(&name.as_str()) && !a.contains('=') {
                if let Some(v) = args.get(i).filter(|_| name == "--regexp") {
                    patterns.push(v);
                }
                i += 1;
            }
        } else {
            // A cluster of short options: the first that takes a value takes the rest of the
            // word, or the next word when it ends the cluster.
            let letters: Vec<char> = a[1..].chars().collect();
            if let Some(k) = letters.iter().position(|c| short.contains(*c))
                && k + 1 == letters.len()
            {
                if let Some(v) = args.get(i).filter(|_| letters[k] == 'e') {
                    patterns.push(v);
                }
                i += 1;
            }
        }
    }
    patterns.extend(out);
    patterns
}

/// A command and its first argument that is not an option, by base name when it is a path;
/// for file commands a number after the file (`open f.py 1474`, `view f.py [100,110]`) or a
/// line range (`edit 5:6`) is its line.
fn with_target(command: &str, args: &[String]) -> Brief {
    let positional = positional(command, args);
    let mut brief = Brief { command: command.to_string(), ..Brief::default() };
    let Some(first) = positional.first() else { return brief };
    let file_command = FILE_COMMANDS.contains(&command);
    if file_command && let Some(n) = leading_number(first) {
        // `edit 5:6`, `goto 120`: the line of the open file.
        brief.line = Some(n);
        return brief;
    }
    brief.target = Some(if first.contains('/') { base_name(first) } else { first.to_string() });
    brief.path = Some(first.to_string());
    if file_command {
        brief.line = positional.get(1).and_then(|s| leading_number(s.trim_start_matches('[')));
    }
    brief
}

/// `sed`/`perl`: the file is the last argument that is not an option or the script, the line
/// the script's address (`144d`, `315a\`, `'95s/a/b/'`, `-n '70,85p'`).
fn script_and_file(command: String, args: &[String]) -> Brief {
    let mut script: Option<&String> = None;
    let mut files: Vec<&String> = Vec::new();
    let mut take_next = false;
    for a in args {
        if take_next {
            script = script.or(Some(a));
            take_next = false;
        } else if a == "-e" || a == "--expression" {
            take_next = true;
        } else if a.starts_with('-') {
            continue;
        } else if script.is_none() {
            script = Some(a);
        } else {
            files.push(a);
        }
    }
    Brief {
        command,
        target: files.last().map(|f| base_name(f)),
        line: script.and_then(|s| leading_number(s)),
        path: files.last().map(|f| f.to_string()),
    }
}

/// The number a text starts with (`144d` → 144, `70,85p` → 70, `5:6` → 5).
fn leading_number(s: &str) -> Option<u64> {
    let digits: String = s.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().ok()
}

fn base_name(path: &str) -> String {
    let trimmed = path.trim_end_matches('/');
    let name = trimmed.rsplit('/').next().unwrap_or(trimmed);
    if name.is_empty() { path.to_string() } else { name.to_string() }
}

/// The words of each simple command of a line, read by the one shell lexer
/// ([`crate::analysis::reconstruct::command::parse`]): quotes removed, redirections apart. A
/// head cut mid-quote (the stored first line is at most 200 characters) ends its last word
/// there.
fn commands(line: &str) -> Vec<Vec<String>> {
    let pipelines = crate::analysis::reconstruct::command::parse(line).unwrap_or_default();
    pipelines.into_iter().flat_map(|p| p.cmds).map(|c| c.words.into_iter().map(|w| w.text).collect()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(head: &str) -> String {
        brief(head).text()
    }

    #[test]
    fn sed_edits_of_one_file_differ_by_their_address() {
        assert_eq!(text("sed -i '144d' django/db/models/constraints.py"), "sed constraints.py:144");
        assert_eq!(
            text("sed -i '315a\\            (\"\" if x' django/db/models/constraints.py"),
            "sed constraints.py:315"
        );
        assert_eq!(text("sed -i '32d;34d;35d' django/db/models/constraints.py"), "sed constraints.py:32");
        assert_eq!(text("sed -n '70,85p' django/db/models/constraints.py"), "sed constraints.py:70");
        assert_eq!(text("sed -i -e 's/a/b/' x.py"), "sed x.py");
        // Cut mid-quote (the stored head is at most 200 characters): still the file's command.
        let cut = brief("sed -i '95s/super().__init__(name=name, violation");
        assert_eq!((cut.text().as_str(), cut.line), ("sed", Some(95)));
    }

    #[test]
    fn commands_show_their_word_and_main_argument() {
        assert_eq!(
            text("cd /testbed && grep -n \"class TimeSeries\" astropy/timeseries/core.py"),
            "grep class TimeSeries"
        );
        assert_eq!(text("python reproduce_issue_v2.py"), "python reproduce_issue_v2.py");
        assert_eq!(text("cd /w && python -m pytest tests/test_sum.py -q"), "pytest test_sum.py");
        assert_eq!(text("python -c \"import x\""), "python -c");
        assert_eq!(text("timeout 60 FOO=1 pytest -x tests/a/test_b.py"), "pytest test_b.py");
        assert_eq!(text("git diff"), "git diff");
        assert_eq!(text("nl -ba django/forms/models.py | sed -n '1,20p'"), "nl models.py");
        assert_eq!(text("ls -l /workspace/ponylang__ponyc__0.1/src/libponyc/ast"), "ls ast");
        assert_eq!(text("cd /workspace/ponyc && make"), "make");
        assert_eq!(text("submit"), "submit");
        assert_eq!(text(""), "");
    }

    #[test]
    fn an_options_value_is_not_the_main_argument() {
        assert_eq!(
            text(r#"grep -nC 5 "if self.config.recursive:" pylint/lint/pylinter.py"#),
            "grep if self.config.recursive:"
        );
        assert_eq!(text("grep -C 3 -rn needle src/"), "grep needle");
        assert_eq!(text("grep --context 3 needle src/"), "grep needle");
        assert_eq!(text("grep --context=3 -A2 needle"), "grep needle");
        assert_eq!(text("grep -rn -e needle -e other src/"), "grep needle");
        assert_eq!(text("head -n 40 setup.py"), "head setup.py");
        assert_eq!(text("tail -n50 setup.py"), "tail setup.py");
        assert_eq!(text("pytest -k test_empty -x tests/test_a.py"), "pytest test_a.py");
        assert_eq!(text("grep -- -n file"), "grep -n");
    }

    #[test]
    fn agent_tools_name_the_file_and_line() {
        assert_eq!(text("open src/marshmallow/fields.py 1474"), "open fields.py:1474");
        assert_eq!(text("edit 5:6"), "edit");
        assert_eq!(brief("edit 5:6").line, Some(5));
        assert_eq!(text("str_replace_editor view /w/p/src/match.c [100,110]"), "view match.c:100");
        assert_eq!(text("str_replace_editor str_replace /w/p/src/match.c --old_str 'a'"), "str_replace match.c");
        assert_eq!(text("view /workspace/ponylang__ponyc__0.1/src/libponyc/expr/match.c"), "view match.c");
        assert_eq!(text("find_file ops.py"), "find_file ops.py");
        assert_eq!(text("search_dir \"def foo\" src"), "search_dir def foo");
    }

    #[test]
    fn words_are_split_like_the_shell_does() {
        let words = |l: &str| commands(l).into_iter().next().unwrap_or_default();
        assert_eq!(words(r#"grep -n "a b" 'c d' e\ f"#), vec!["grep", "-n", "a b", "c d", "e f"]);
        assert_eq!(words("echo ''"), vec!["echo", ""]);
        assert_eq!(words("sed 'unclosed"), vec!["sed", "unclosed"]);
    }

    #[test]
    fn separators_inside_quotes_do_not_split() {
        let firsts = |l: &str| commands(l).into_iter().map(|c| c.join(" ")).collect::<Vec<_>>();
        assert_eq!(firsts("echo 'a && b' && ls"), vec!["echo a && b", "ls"]);
        assert_eq!(firsts("a | b || c; d & e"), vec!["a", "b", "c", "d", "e"]);
    }
}
