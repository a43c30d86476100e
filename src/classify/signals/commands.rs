//! The simple commands of a shell action, each with the folder it ran in: a small lexer that
//! honours quotes, heredocs (their bodies attached to their command), comments, command
//! substitution and redirections, and follows `cd`, `pushd`/`popd` and subshells. A full shell
//! parser would be a large dependency for this; what is read here is only where commands split
//! and where they ran.

/// One simple command: its words (redirections kept as words: `>`, `f`), the folder it ran in
/// (absolute when the step's folder is known), and the body of its heredoc.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    pub words: Vec<String>,
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
/// itself. Quotes are honoured, heredoc bodies are attached to their command, comments dropped.
pub fn commands(action: &str, working_dir: Option<&str>) -> Vec<Command> {
    let mut out: Vec<Command> = Vec::new();
    let mut dir: Option<String> = working_dir.map(str::to_string);
    // Folders to return to when a subshell closes, and `pushd`'s stack.
    let mut subshells: Vec<Option<String>> = Vec::new();
    let mut pushed: Vec<Option<String>> = Vec::new();
    let mut current: Vec<String> = Vec::new();
    // Commands (by index in `out`) whose heredoc bodies are still to come, in order.
    let mut pending: Vec<usize> = Vec::new();
    let tokens = lex(action);
    let mut finish = |current: &mut Vec<String>, dir: &mut Option<String>, out: &mut Vec<Command>| {
        if current.is_empty() {
            return;
        }
        let words = std::mem::take(current);
        let here = dir.clone();
        match words.first().map(String::as_str) {
            Some("cd") => {
                let target = words.iter().skip(1).find(|w| !w.starts_with('-'));
                *dir = match target.map(String::as_str) {
                    None | Some("~") => None,
                    Some(t) if t.starts_with('~') || t.starts_with('$') => None,
                    Some(t) => Some(join(dir.as_deref(), t)),
                };
            }
            Some("pushd") => {
                pushed.push(dir.clone());
                if let Some(t) = words.get(1) {
                    *dir = Some(join(dir.as_deref(), t));
                }
            }
            Some("popd") => {
                if let Some(d) = pushed.pop() {
                    *dir = d;
                }
            }
            _ => {}
        }
        out.push(Command { words, dir: here, heredoc: None });
    };
    for t in tokens {
        match t {
            Token::Word(w) => current.push(w),
            // The `<<` word is in `current`: the command gets index `out.len()` when finished.
            Token::Heredoc(_) => pending.push(out.len()),
            Token::Body(body) => {
                if !pending.is_empty() {
                    let at = pending.remove(0);
                    if let Some(c) = out.get_mut(at) {
                        c.heredoc = Some(body);
                    }
                }
            }
            Token::Op => finish(&mut current, &mut dir, &mut out),
            Token::Open => {
                finish(&mut current, &mut dir, &mut out);
                subshells.push(dir.clone());
            }
            Token::Close => {
                finish(&mut current, &mut dir, &mut out);
                if let Some(d) = subshells.pop() {
                    dir = d;
                }
            }
        }
    }
    finish(&mut current, &mut dir, &mut out);
    out
}

#[derive(Debug, PartialEq, Eq)]
enum Token {
    Word(String),
    /// `&&`, `||`, `;`, `|`, `&`, a newline.
    Op,
    Open,
    Close,
    /// A heredoc starts (`<<EOF`, `<<-'EOF'`): its body follows the end of the line.
    Heredoc(String),
    Body(String),
}

fn lex(s: &str) -> Vec<Token> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut delims: Vec<String> = Vec::new();
    let mut i = 0;
    let flush = |word: &mut String, in_word: &mut bool, out: &mut Vec<Token>| {
        if *in_word {
            out.push(Token::Word(std::mem::take(word)));
            *in_word = false;
        }
    };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '\'' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '\'' {
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '"' => {
                in_word = true;
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() && matches!(chars[i + 1], '"' | '\\' | '$' | '`') {
                        i += 1;
                    }
                    word.push(chars[i]);
                    i += 1;
                }
            }
            '\\' if i + 1 < chars.len() => {
                if chars[i + 1] != '\n' {
                    word.push(chars[i + 1]);
                    in_word = true;
                }
                i += 1;
            }
            '$' if chars.get(i + 1) == Some(&'(') => {
                // Command substitution: kept inside the word.
                let mut depth = 0;
                while i < chars.len() {
                    word.push(chars[i]);
                    match chars[i] {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    i += 1;
                }
                in_word = true;
            }
            '#' if !in_word => {
                while i + 1 < chars.len() && chars[i + 1] != '\n' {
                    i += 1;
                }
            }
            ' ' | '\t' | '\r' => flush(&mut word, &mut in_word, &mut out),
            '\n' => {
                flush(&mut word, &mut in_word, &mut out);
                out.push(Token::Op);
                // Heredoc bodies follow the line that opened them.
                for delim in std::mem::take(&mut delims) {
                    let mut body = String::new();
                    let mut line = String::new();
                    i += 1;
                    while i < chars.len() {
                        if chars[i] == '\n' {
                            if line.trim() == delim {
                                break;
                            }
                            body.push_str(&line);
                            body.push('\n');
                            line.clear();
                        } else {
                            line.push(chars[i]);
                        }
                        i += 1;
                    }
                    if i >= chars.len() && line.trim() != delim {
                        body.push_str(&line);
                    }
                    out.push(Token::Body(body));
                }
            }
            ';' | '&' | '|' => {
                flush(&mut word, &mut in_word, &mut out);
                if chars.get(i + 1) == Some(&c) {
                    i += 1;
                }
                out.push(Token::Op);
            }
            '(' if !in_word => out.push(Token::Open),
            ')' => {
                flush(&mut word, &mut in_word, &mut out);
                out.push(Token::Close);
            }
            '<' if chars.get(i + 1) == Some(&'<') && chars.get(i + 2) != Some(&'<') => {
                flush(&mut word, &mut in_word, &mut out);
                i += 2;
                if chars.get(i) == Some(&'-') {
                    i += 1;
                }
                while chars.get(i).is_some_and(|c| *c == ' ') {
                    i += 1;
                }
                let mut delim = String::new();
                while let Some(&d) = chars.get(i) {
                    if d.is_whitespace() || matches!(d, ';' | '&' | '|' | '>' | ')') {
                        break;
                    }
                    if d != '\'' && d != '"' {
                        delim.push(d);
                    }
                    i += 1;
                }
                i -= 1;
                if !delim.is_empty() {
                    out.push(Token::Word("<<".into()));
                    out.push(Token::Heredoc(delim.clone()));
                    delims.push(delim);
                }
            }
            '>' | '<' => {
                // A redirection is a word of its own (`>`, `>>`, `2>&1`), its target the next.
                let digits: String = {
                    let w = if in_word && word.chars().all(|c| c.is_ascii_digit()) {
                        std::mem::take(&mut word)
                    } else {
                        String::new()
                    };
                    if w.is_empty() {
                        flush(&mut word, &mut in_word, &mut out);
                    }
                    in_word = false;
                    w
                };
                let mut op = digits;
                op.push(c);
                while matches!(chars.get(i + 1), Some('>' | '&' | '<'))
                    || (op.ends_with('&') && chars.get(i + 1).is_some_and(|c| c.is_ascii_digit() || *c == '-'))
                {
                    i += 1;
                    op.push(chars[i]);
                }
                out.push(Token::Word(op));
            }
            _ => {
                word.push(c);
                in_word = true;
            }
        }
        i += 1;
    }
    flush(&mut word, &mut in_word, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(action: &str) -> Vec<(String, Option<String>)> {
        commands(action, Some("/testbed")).into_iter().map(|c| (c.words.join(" "), c.dir)).collect()
    }

    #[test]
    fn folders_follow_cd_pushd_and_subshells() {
        let got = dirs("cd src && cat > f.py <<'EOF'\nx = 1\nEOF\n(cd docs; ls) && pushd lib && ls && popd; ls");
        let want: Vec<(&str, Option<&str>)> = vec![
            ("cd src", Some("/testbed")),
            ("cat > f.py <<", Some("/testbed/src")),
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
    }

    #[test]
    fn quotes_operators_and_redirections() {
        let c = commands("grep -n 'a && b' x.py | head -5 2>&1; echo \"q;\" >> out.txt # note", None);
        let words: Vec<Vec<String>> = c.into_iter().map(|c| c.words).collect();
        assert_eq!(
            words,
            vec![vec!["grep", "-n", "a && b", "x.py"], vec!["head", "-5", "2>&1"], vec!["echo", "q;", ">>", "out.txt"]]
                .into_iter()
                .map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
                .collect::<Vec<_>>()
        );
    }
}
