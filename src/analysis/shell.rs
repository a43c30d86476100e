//! File writes made through the shell rather than an edit tool: `sed -i`, `cat > f <<EOF`,
//! `echo ... > f`, `tee f`, `python - <<EOF` with `open(..., "w")`.

/// One write to a file found in a shell command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellWrite {
    pub path: String,
    /// The written text when the command carries it literally (heredoc, echo).
    pub content: Option<String>,
    /// `>>`, `tee -a`, `open(.., "a")`: the content is added, not the whole file.
    pub append: bool,
}

/// Find the file writes in a shell command. Best effort: commands it cannot tokenize are
/// skipped, never guessed at.
pub fn shell_writes(command: &str) -> Vec<ShellWrite> {
    let mut writes = Vec::new();
    let lines: Vec<&str> = command.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        i += 1;
        let heredoc = heredoc_delimiter(line).map(|delim| {
            let mut body = String::new();
            while i < lines.len() && lines[i].trim() != delim {
                body.push_str(lines[i]);
                body.push('\n');
                i += 1;
            }
            i += 1; // the delimiter line
            body
        });
        let head = match line.find("<<") {
            Some(p) => &line[..p],
            None => line,
        };
        let redirect_tail = line.find("<<").map(|p| &line[p..]).unwrap_or("");
        for simple in split_simple_commands(head, redirect_tail) {
            writes_of(&simple, heredoc.as_deref(), &mut writes);
        }
        if let Some(body) = heredoc.as_deref()
            && line.contains("python")
        {
            writes.extend(python_open_writes(body));
        }
    }
    if writes.is_empty() && (command.contains("python -c") || command.contains("python3 -c")) {
        writes.extend(python_open_writes(command));
    }
    writes
}

fn heredoc_delimiter(line: &str) -> Option<String> {
    let p = line.find("<<")?;
    let rest = line[p + 2..].trim_start_matches('-').trim_start();
    let word: String =
        rest.chars().take_while(|c| !c.is_whitespace() && *c != ';' && *c != '>' && *c != '&' && *c != '|').collect();
    let word = word.trim_matches(|c| c == '\'' || c == '"').to_string();
    (!word.is_empty()).then_some(word)
}

/// Tokenize and split on `&&`, `||`, `;` and `|`. The text after a heredoc marker on the same
/// line (`<<EOF > file`) is appended so its redirect is seen.
fn split_simple_commands(head: &str, redirect_tail: &str) -> Vec<Vec<String>> {
    let tail_redirect = redirect_tail.split_once('>').map(|(_, rest)| format!(">{rest}")).unwrap_or_default();
    let text = format!("{head} {tail_redirect}");
    let Some(tokens) = shlex::split(&text) else {
        return Vec::new();
    };
    let mut out = vec![Vec::new()];
    for t in tokens {
        let t = t.trim_end_matches(';').to_string();
        if matches!(t.as_str(), "&&" | "||" | "|" | ";") {
            out.push(Vec::new());
        } else if !t.is_empty()
            && let Some(last) = out.last_mut()
        {
            last.push(t);
        }
    }
    out.retain(|c| !c.is_empty());
    out
}

fn writes_of(cmd: &[String], heredoc: Option<&str>, out: &mut Vec<ShellWrite>) {
    let Some(program) = cmd.first().map(|p| p.rsplit('/').next().unwrap_or(p)) else {
        return;
    };
    match program {
        "sed" => {
            let in_place = cmd.iter().any(|t| t == "-i" || t.starts_with("-i") || t.starts_with("--in-place"));
            if !in_place {
                return;
            }
            let has_e = cmd.iter().any(|t| t == "-e" || t == "--expression");
            let mut positional = Vec::new();
            let mut skip_next = false;
            for t in &cmd[1..] {
                if skip_next {
                    skip_next = false;
                    continue;
                }
                if t == "-e" || t == "--expression" || t == "-f" {
                    skip_next = true;
                    continue;
                }
                if t.starts_with('-') {
                    continue;
                }
                positional.push(t.clone());
            }
            let files = if has_e { &positional[..] } else { positional.get(1..).unwrap_or(&[]) };
            for f in files {
                out.push(ShellWrite { path: f.clone(), content: None, append: false });
            }
        }
        "cat" | "echo" | "printf" => {
            if let Some((path, append)) = redirect_target(cmd) {
                let content = match program {
                    "cat" => heredoc.map(str::to_string),
                    "echo" => Some(format!("{}\n", literal_args(cmd).join(" "))),
                    _ => None,
                };
                out.push(ShellWrite { path, content, append });
            }
        }
        "tee" => {
            let append = cmd.iter().any(|t| t == "-a" || t == "--append");
            for f in cmd[1..].iter().filter(|t| !t.starts_with('-')) {
                if is_real_file(f) {
                    out.push(ShellWrite { path: f.clone(), content: heredoc.map(str::to_string), append });
                }
            }
        }
        _ => {}
    }
}

fn literal_args(cmd: &[String]) -> Vec<&str> {
    let mut args = Vec::new();
    for t in &cmd[1..] {
        if t.starts_with('>') {
            break;
        }
        if args.is_empty() && (t == "-e" || t == "-n") {
            continue;
        }
        args.push(t.as_str());
    }
    args
}

fn redirect_target(cmd: &[String]) -> Option<(String, bool)> {
    let mut it = cmd.iter().peekable();
    while let Some(t) = it.next() {
        let (append, rest) = if let Some(r) = t.strip_prefix(">>") {
            (true, r)
        } else if let Some(r) = t.strip_prefix('>') {
            (false, r)
        } else {
            continue;
        };
        let path = if rest.is_empty() { it.next()?.clone() } else { rest.to_string() };
        if is_real_file(&path) {
            return Some((path, append));
        }
    }
    None
}

fn is_real_file(p: &str) -> bool {
    !p.is_empty() && !p.starts_with("/dev/") && !p.starts_with('&')
}

/// `open("path", "w")` / `open('path', 'a')` / `Path("x").write_text(` inside Python source.
fn python_open_writes(src: &str) -> Vec<ShellWrite> {
    let mut out = Vec::new();
    let mut rest = src;
    while let Some(p) = rest.find("open(") {
        rest = &rest[p + 5..];
        let Some((path, after)) = quoted(rest) else {
            continue;
        };
        let after = after.trim_start().trim_start_matches(',').trim_start();
        let mode = quoted(after).map(|(m, _)| m).unwrap_or_default();
        if mode.contains('w') || mode.contains('a') {
            out.push(ShellWrite { path, content: None, append: mode.contains('a') });
        }
    }
    out
}

fn quoted(s: &str) -> Option<(String, &str)> {
    let s = s.trim_start();
    let q = s.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let body = &s[1..];
    let end = body.find(q)?;
    Some((body[..end].to_string(), &body[end + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn paths(cmd: &str) -> Vec<String> {
        shell_writes(cmd).into_iter().map(|w| w.path).collect()
    }

    #[test]
    fn sed_in_place_names_its_files() {
        assert_eq!(paths("sed -i 's/a/b/' src/x.py"), vec!["src/x.py"]);
        assert_eq!(paths("cd /repo && sed -i.bak -e 's/a/b/' -e 's/c/d/' x.py y.py"), vec!["x.py", "y.py"]);
        assert!(paths("sed -n '1,10p' x.py").is_empty());
    }

    #[test]
    fn heredoc_writes_carry_their_content() {
        let w = shell_writes("cat > /repo/a.py << 'EOF'\nprint(1)\nEOF\necho done");
        assert_eq!(w.len(), 1);
        assert_eq!(w[0].path, "/repo/a.py");
        assert_eq!(w[0].content.as_deref(), Some("print(1)\n"));
        let w = shell_writes("cat <<EOF > b.py\nx = 1\nEOF");
        assert_eq!(w[0].path, "b.py");
        assert_eq!(w[0].content.as_deref(), Some("x = 1\n"));
    }

    #[test]
    fn echo_and_tee_redirects() {
        let w = shell_writes("echo 'x = 1' >> conf.py");
        assert_eq!(w[0].path, "conf.py");
        assert!(w[0].append);
        assert_eq!(w[0].content.as_deref(), Some("x = 1\n"));
        assert!(paths("python run.py > /dev/null 2>&1").is_empty());
        assert_eq!(paths("printf 'a' | tee -a notes.txt"), vec!["notes.txt"]);
    }

    #[test]
    fn python_heredoc_open_for_write() {
        let cmd = "python - <<'PY'\nwith open('pkg/mod.py', 'w') as f:\n    f.write(s)\nopen(\"r.txt\").read()\nPY";
        assert_eq!(paths(cmd), vec!["pkg/mod.py"]);
    }

    #[test]
    fn unbalanced_quotes_are_skipped() {
        assert!(paths("sed -i 's/a/b x.py").is_empty());
    }
}
