//! The simple commands of a shell action, each with the folder it ran in. The text is read by
//! the one shell lexer, [`crate::analysis::reconstruct::command::parse`]; what is added here is
//! where each command ran: `cd`, `pushd`/`popd` followed, a subshell's moves kept to itself.
//! What the commands did to files (writes, scripts, patches, resets by git) is the
//! reconstruction's, stored with the run's edits; only `rm` is read here ([`removed`]).

use super::paths::Roots;
use crate::analysis::reconstruct::command::{Redirect, parse};

/// One simple command: its words (unquoted; redirections apart), its redirections, the folder
/// it ran in (absolute when the step's folder is known), and its here-document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<String>,
    pub redirects: Vec<Redirect>,
    pub dir: Option<String>,
    pub heredoc: Option<String>,
}

impl Command {
    pub fn program(&self) -> &str {
        self.words.first().map(|w| w.rsplit('/').next().unwrap_or(w)).unwrap_or("")
    }
}

/// `path` in folder `dir` (either may be relative).
pub fn join(dir: Option<&str>, path: &str) -> String {
    match dir {
        Some(d) if !path.starts_with('/') && !d.is_empty() => format!("{}/{path}", d.trim_end_matches('/')),
        _ => path.to_string(),
    }
}

/// The simple commands of a shell action, each with the folder it ran in: `cd`, `pushd` and
/// `popd` move the folder for the commands after them; a subshell `( … )` keeps its moves to
/// itself. An action too large for the lexer has no commands.
pub fn commands(action: &str, working_dir: Option<&str>) -> Vec<Command> {
    let mut out: Vec<Command> = Vec::new();
    let mut dir: Option<String> = working_dir.map(str::to_string);
    // Folders to return to when a subshell closes, and `pushd`'s stack.
    let mut subshells: Vec<Option<String>> = Vec::new();
    let mut pushed: Vec<Option<String>> = Vec::new();
    for p in parse(action).unwrap_or_default() {
        subshells.extend(std::iter::repeat_n(dir.clone(), p.opens));
        for c in p.cmds {
            let words: Vec<String> = c.words.into_iter().map(|w| w.text).collect();
            let here = dir.clone();
            match words.first().map(String::as_str) {
                Some("cd") => {
                    let target = words.iter().skip(1).find(|w| !w.starts_with('-'));
                    dir = match target.map(String::as_str) {
                        None | Some("~") => None,
                        Some(t) if t.starts_with('~') || t.starts_with('$') => None,
                        Some(t) => Some(join(dir.as_deref(), t)),
                    };
                }
                Some("pushd") => {
                    pushed.push(dir.clone());
                    if let Some(t) = words.get(1) {
                        dir = Some(join(dir.as_deref(), t));
                    }
                }
                Some("popd") => {
                    if let Some(d) = pushed.pop() {
                        dir = d;
                    }
                }
                _ => {}
            }
            out.push(Command { words, redirects: c.redirects, dir: here, heredoc: c.stdin_text });
        }
        for _ in 0..p.closes {
            if let Some(d) = subshells.pop() {
                dir = d;
            }
        }
    }
    out
}

/// The files a step's `rm` commands removed, repository-relative.
pub fn removed(action: &str, working_dir: Option<&str>, roots: &Roots) -> Vec<String> {
    commands(action, working_dir)
        .iter()
        .filter(|c| c.program() == "rm")
        .flat_map(|c| {
            c.words.iter().skip(1).filter(|a| !a.starts_with('-')).map(|a| roots.rel(&join(c.dir.as_deref(), a), None))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::reconstruct::command::RedirectOp;

    fn dirs(action: &str) -> Vec<(String, Option<String>)> {
        commands(action, Some("/testbed")).into_iter().map(|c| (c.words.join(" "), c.dir)).collect()
    }

    #[test]
    fn folders_follow_cd_pushd_and_subshells() {
        let got = dirs("cd src && cat > f.py <<'EOF'\nx = 1\nEOF\n(cd docs; ls) && pushd lib && ls && popd; ls");
        let want: Vec<(&str, Option<&str>)> = vec![
            ("cd src", Some("/testbed")),
            ("cat", Some("/testbed/src")),
            ("cd docs", Some("/testbed/src")),
            ("ls", Some("/testbed/src/docs")),
            ("pushd lib", Some("/testbed/src")),
            ("ls", Some("/testbed/src/lib")),
            ("popd", Some("/testbed/src/lib")),
            ("ls", Some("/testbed/src")),
        ];
        let want: Vec<(String, Option<String>)> =
            want.into_iter().map(|(a, b)| (a.to_string(), b.map(str::to_string))).collect();
        assert_eq!(got, want);
        let c = commands("cd /repo && python - <<EOF\nopen('a.py', 'w').write(s)\nEOF", None);
        assert_eq!(c[1].heredoc.as_deref(), Some("open('a.py', 'w').write(s)\n"));
        assert_eq!(c[1].dir.as_deref(), Some("/repo"));
        // An empty subshell moves nothing back.
        assert_eq!(dirs("cd a; (); ls").last().map(|(_, d)| d.clone()), Some(Some("/testbed/a".to_string())));
    }

    #[test]
    fn quotes_operators_and_redirections() {
        let c = commands("grep -n 'a && b' x.py | head -5 2>&1; echo \"q;\" >> out.txt # note", None);
        let words: Vec<Vec<String>> = c.iter().map(|c| c.words.clone()).collect();
        assert_eq!(
            words,
            vec![vec!["grep", "-n", "a && b", "x.py"], vec!["head", "-5"], vec!["echo", "q;"]]
                .into_iter()
                .map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
        assert_eq!(c[1].redirects[0].op, RedirectOp::Dup);
        assert_eq!((c[2].redirects[0].op, c[2].redirects[0].target.text.as_str()), (RedirectOp::Append, "out.txt"));
    }
}
