//! Shell commands as an agent writes them, split into pipelines of simple commands with their
//! words (quotes removed), redirections and here-documents, subshells marked where they open
//! and close. The one reader of shell text in trajan: the reconstruction replays what it reads,
//! the classifier follows its folders (`classify::signals::commands`). Tolerant where a shell is not: an
//! unclosed quote ends at the end of the text, unknown syntax becomes words, and one bad
//! command does not lose the others. Words that a shell would expand (`$VAR`, `$(...)`,
//! backquotes) are kept as written and marked `dynamic`: their value cannot be known.
//!
//! A full parser (brush-parser) refuses a whole program at its first syntax error and gives
//! words still quoted; agents' commands are often cut or odd, and only simple commands,
//! redirections and here-documents matter here.

/// A word, unquoted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Holds an expansion whose value the text does not show.
    pub dynamic: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirectOp {
    /// `>`, `>|`, `&>`
    Write,
    /// `>>`, `&>>`
    Append,
    /// `<`
    Read,
    /// `>&N`, `<&N`, `2>&1`: a descriptor, not a file.
    Dup,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    /// The descriptor before the operator (`2>`), when written.
    pub fd: Option<u32>,
    pub op: RedirectOp,
    pub target: Word,
}

/// A command of a pipeline.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Simple {
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
    /// The here-document (or `<<<` here-string, with its newline) on its standard input.
    pub stdin_text: Option<String>,
    /// The command as written (without here-document bodies).
    pub raw: String,
}

impl Simple {
    /// The command's name, without a path (`/usr/bin/sed` is `sed`).
    pub fn name(&self) -> Option<&str> {
        let w = self.words.first()?;
        Some(w.text.rsplit('/').next().unwrap_or(&w.text))
    }

    pub fn args(&self) -> &[Word] {
        self.words.get(1..).unwrap_or_default()
    }
}

/// Commands joined by `|`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pipeline {
    pub cmds: Vec<Simple>,
    /// Subshells `(` opened right before it.
    pub opens: usize,
    /// Subshells `)` closed right after it.
    pub closes: usize,
}

/// Words that open or close shell constructs: dropped from the front of a command, so the
/// `sed` of `then sed -i ...` is seen.
const KEYWORDS: &[&str] = &["if", "then", "else", "elif", "fi", "do", "done", "while", "until", "{", "}", "!", "time"];

struct Lexer<'a> {
    text: &'a str,
    bytes: &'a [u8],
    i: usize,
    pipelines: Vec<Pipeline>,
    current: Pipeline,
    cmd: Simple,
    cmd_start: Option<usize>,
    cmd_end: usize,
    /// Here-documents waiting for the end of their line: (delimiter, strip tabs, pipeline
    /// index, command index).
    pending: Vec<(String, bool, usize, usize)>,
    /// Words read so far; past [`MAX_WORDS`] the reading stops.
    words: usize,
    /// `(` read since the last pipeline: the next one opens them.
    opens: usize,
}

/// The most words one action may have: each costs a few dozen bytes beside its text, so a
/// `sed` with three million `-e` would cost over ten times its size in words alone.
pub const MAX_WORDS: usize = 1 << 16;

/// Split a shell text into pipelines; `None` when it has more than [`MAX_WORDS`] words.
pub fn parse(text: &str) -> Option<Vec<Pipeline>> {
    let mut lx = Lexer {
        text,
        bytes: text.as_bytes(),
        i: 0,
        pipelines: Vec::new(),
        current: Pipeline::default(),
        cmd: Simple::default(),
        cmd_start: None,
        cmd_end: 0,
        pending: Vec::new(),
        words: 0,
        opens: 0,
    };
    lx.run();
    (lx.words <= MAX_WORDS).then_some(lx.pipelines)
}

impl Lexer<'_> {
    fn peek(&self, k: usize) -> Option<u8> {
        self.bytes.get(self.i + k).copied()
    }

    fn end_command(&mut self) {
        let mut cmd = std::mem::take(&mut self.cmd);
        if let Some(start) = self.cmd_start.take() {
            cmd.raw = self.text.get(start..self.cmd_end).unwrap_or("").trim().to_string();
        }
        let keywords = cmd.words.iter().take_while(|w| !w.dynamic && KEYWORDS.contains(&w.text.as_str())).count();
        cmd.words.drain(..keywords);
        if !cmd.words.is_empty() || !cmd.redirects.is_empty() {
            self.current.cmds.push(cmd);
        }
    }

    fn end_pipeline(&mut self) {
        self.end_command();
        let mut p = std::mem::take(&mut self.current);
        if !p.cmds.is_empty() {
            p.opens = std::mem::take(&mut self.opens);
            self.pipelines.push(p);
        }
    }

    fn mark(&mut self, start: usize) {
        self.cmd_start.get_or_insert(start);
        self.cmd_end = self.i;
    }

    fn run(&mut self) {
        while self.i < self.bytes.len() && self.words <= MAX_WORDS {
            let b = self.bytes[self.i];
            match b {
                b' ' | b'\t' | b'\r' => self.i += 1,
                b'\\' if self.peek(1) == Some(b'\n') => self.i += 2,
                b'\n' => {
                    self.i += 1;
                    self.end_pipeline();
                    self.heredoc_bodies();
                }
                b'#' => {
                    while self.i < self.bytes.len() && self.bytes[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b';' | b'&' | b'|' | b'(' | b')' => self.operator(b),
                b'<' | b'>' => self.redirect(None),
                _ => {
                    let start = self.i;
                    let word = self.word();
                    // `2>file`: digits right before a redirection are its descriptor.
                    if matches!(self.peek(0), Some(b'<' | b'>'))
                        && !word.text.is_empty()
                        && word.text.bytes().all(|c| c.is_ascii_digit())
                        && self.text[start..self.i].bytes().all(|c| c.is_ascii_digit())
                    {
                        self.mark(start);
                        self.redirect(word.text.parse().ok());
                        continue;
                    }
                    self.mark(start);
                    self.words += 1;
                    self.cmd.words.push(word);
                }
            }
        }
        self.end_pipeline();
    }

    fn operator(&mut self, b: u8) {
        let double = self.peek(1) == Some(b);
        match b {
            b'|' if !double => {
                self.i += 1;
                if self.peek(0) == Some(b'&') {
                    self.i += 1;
                }
                self.end_command();
            }
            b'&' if self.peek(1) == Some(b'>') => self.redirect(None),
            _ => {
                let n = if double { 2 } else { 1 };
                self.i += n;
                self.end_pipeline();
                match b {
                    b'(' => self.opens += n,
                    // `()` opened nothing that ran.
                    b')' if self.opens >= n => self.opens -= n,
                    b')' => {
                        if let Some(p) = self.pipelines.last_mut() {
                            p.closes += n;
                        }
                    }
                    _ => {}
                }
            }
        }
    }

    fn redirect(&mut self, fd: Option<u32>) {
        let start = self.i;
        let rest = &self.text[self.i..];
        let (op, len) = if rest.starts_with("&>>") {
            (RedirectOp::Append, 3)
        } else if rest.starts_with("&>") {
            (RedirectOp::Write, 2)
        } else if rest.starts_with("<<<") {
            self.i += 3;
            self.skip_blank();
            let w = self.word();
            self.cmd.stdin_text = Some(format!("{}\n", w.text));
            self.mark(start);
            return;
        } else if rest.starts_with("<<") {
            let strip = rest.starts_with("<<-");
            self.i += if strip { 3 } else { 2 };
            self.skip_blank();
            let w = self.word();
            self.mark(start);
            let at = (self.pipelines.len(), self.current.cmds.len());
            self.pending.push((w.text, strip, at.0, at.1));
            return;
        } else if rest.starts_with(">>") {
            (RedirectOp::Append, 2)
        } else if rest.starts_with(">&") || rest.starts_with("<&") {
            (RedirectOp::Dup, 2)
        } else if rest.starts_with(">|") {
            (RedirectOp::Write, 2)
        } else if rest.starts_with('>') {
            (RedirectOp::Write, 1)
        } else {
            (RedirectOp::Read, 1)
        };
        self.i += len;
        self.skip_blank();
        let target = self.word();
        self.mark(start);
        let op = if op == RedirectOp::Write && target.text.starts_with('&') { RedirectOp::Dup } else { op };
        self.cmd.redirects.push(Redirect { fd, op, target });
    }

    fn skip_blank(&mut self) {
        while matches!(self.peek(0), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    /// Read the bodies of the here-documents opened on the line just ended.
    fn heredoc_bodies(&mut self) {
        for (delim, strip, p, c) in std::mem::take(&mut self.pending) {
            let mut body = String::new();
            while self.i < self.bytes.len() {
                let end = self.text[self.i..].find('\n').map_or(self.bytes.len(), |e| self.i + e);
                let line = &self.text[self.i..end];
                self.i = (end + 1).min(self.bytes.len().max(end));
                if end >= self.bytes.len() {
                    self.i = self.bytes.len();
                }
                let line = line.strip_suffix('\r').unwrap_or(line);
                let line = if strip { line.trim_start_matches('\t') } else { line };
                if line == delim {
                    break;
                }
                body.push_str(line);
                body.push('\n');
            }
            let target = if p < self.pipelines.len() {
                self.pipelines.get_mut(p).and_then(|pl| pl.cmds.get_mut(c))
            } else {
                None
            };
            if let Some(cmd) = target {
                cmd.stdin_text = Some(body);
            }
        }
    }

    /// One word: quotes removed, escapes applied, expansions kept as written.
    fn word(&mut self) -> Word {
        let mut text = String::new();
        let mut dynamic = false;
        while self.i < self.bytes.len() {
            let b = self.bytes[self.i];
            match b {
                b' ' | b'\t' | b'\n' | b'\r' | b';' | b'&' | b'|' | b'<' | b'>' | b'(' | b')' => break,
                b'\'' => {
                    let end = self.text[self.i + 1..].find('\'').map_or(self.bytes.len(), |e| self.i + 1 + e);
                    text.push_str(&self.text[self.i + 1..end]);
                    self.i = (end + 1).min(self.bytes.len());
                }
                b'"' => {
                    self.i += 1;
                    while self.i < self.bytes.len() && self.bytes[self.i] != b'"' {
                        let c = self.bytes[self.i];
                        if c == b'\\' && matches!(self.peek(1), Some(b'"' | b'\\' | b'$' | b'`' | b'\n')) {
                            if self.peek(1) != Some(b'\n') {
                                text.push(self.bytes[self.i + 1] as char);
                            }
                            self.i += 2;
                        } else if c == b'$' || c == b'`' {
                            dynamic |= self.expansion(&mut text);
                        } else {
                            let ch = self.char_at();
                            text.push(ch);
                            self.i += ch.len_utf8();
                        }
                    }
                    self.i = (self.i + 1).min(self.bytes.len());
                }
                b'\\' => {
                    self.i += 1;
                    if self.i < self.bytes.len() {
                        let ch = self.char_at();
                        if ch != '\n' {
                            text.push(ch);
                        }
                        self.i += ch.len_utf8();
                    }
                }
                b'$' if self.peek(1) == Some(b'\'') => {
                    self.i += 2;
                    self.ansi_c(&mut text);
                }
                b'$' | b'`' => dynamic |= self.expansion(&mut text),
                _ => {
                    let ch = self.char_at();
                    text.push(ch);
                    self.i += ch.len_utf8();
                }
            }
        }
        Word { text, dynamic }
    }

    fn char_at(&self) -> char {
        self.text[self.i..].chars().next().unwrap_or('\0')
    }

    /// `$name`, `${...}`, `$(...)`, `` `...` ``: copied as written; true when it expands.
    fn expansion(&mut self, text: &mut String) -> bool {
        let start = self.i;
        let b = self.bytes[self.i];
        if b == b'`' {
            let end = self.text[self.i + 1..].find('`').map_or(self.bytes.len(), |e| self.i + 2 + e);
            self.i = end.min(self.bytes.len());
            text.push_str(&self.text[start..self.i]);
            return true;
        }
        match self.peek(1) {
            Some(open @ (b'(' | b'{')) => {
                let close = if open == b'(' { b')' } else { b'}' };
                let mut depth = 0usize;
                self.i += 1;
                while self.i < self.bytes.len() {
                    let c = self.bytes[self.i];
                    self.i += 1;
                    if c == open {
                        depth += 1;
                    } else if c == close {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    } else if c == b'\''
                        && let Some(e) = self.text[self.i..].find('\'')
                    {
                        self.i += e + 1;
                    }
                }
                text.push_str(&self.text[start..self.i]);
                true
            }
            Some(c) if c.is_ascii_alphanumeric() || b"_@*#?$!-".contains(&c) => {
                self.i += 1;
                if c.is_ascii_alphabetic() || c == b'_' {
                    while self.peek(0).is_some_and(|c| c.is_ascii_alphanumeric() || c == b'_') {
                        self.i += 1;
                    }
                } else {
                    self.i += 1;
                }
                text.push_str(&self.text[start..self.i]);
                true
            }
            _ => {
                text.push('$');
                self.i += 1;
                false
            }
        }
    }

    /// `$'...'`: backslash escapes as C writes them.
    fn ansi_c(&mut self, text: &mut String) {
        while self.i < self.bytes.len() {
            let ch = self.char_at();
            self.i += ch.len_utf8();
            match ch {
                '\'' => return,
                '\\' => {
                    let Some(e) = self.text[self.i..].chars().next() else { return };
                    self.i += e.len_utf8();
                    text.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        '0' => '\0',
                        'a' => '\u{7}',
                        'e' | 'E' => '\u{1b}',
                        other => other,
                    });
                }
                other => text.push(other),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(p: &Pipeline) -> Vec<Vec<String>> {
        p.cmds.iter().map(|c| c.words.iter().map(|w| w.text.clone()).collect()).collect()
    }

    #[test]
    fn lists_pipelines_and_quotes() {
        let ps =
            parse(r#"cd /testbed && sed -i '21a\    x = "y"' a.py; nl -ba a.py | sed -n "10,20p""#).unwrap_or_default();
        assert_eq!(ps.len(), 3);
        assert_eq!(words(&ps[0]), [["cd", "/testbed"]]);
        assert_eq!(words(&ps[1]), [["sed", "-i", r#"21a\    x = "y""#, "a.py"]]);
        assert_eq!(words(&ps[2]), [vec!["nl", "-ba", "a.py"], vec!["sed", "-n", "10,20p"]]);
        assert_eq!(ps[1].cmds[0].raw, r#"sed -i '21a\    x = "y"' a.py"#);
        let ps = parse(r#"echo a\ b "c\"d" $'e\tf' 'g'"h""#).unwrap_or_default();
        assert_eq!(words(&ps[0]), [["echo", "a b", "c\"d", "e\tf", "gh"]]);
    }

    #[test]
    fn redirections_and_here_documents() {
        let ps = parse("cat <<'EOF' > out.py\nx = 1\n  y\nEOF\necho done 2>&1 >> log.txt").unwrap_or_default();
        assert_eq!(ps.len(), 2);
        let c = &ps[0].cmds[0];
        assert_eq!(c.stdin_text.as_deref(), Some("x = 1\n  y\n"));
        assert_eq!(c.redirects[0].op, RedirectOp::Write);
        assert_eq!(c.redirects[0].target.text, "out.py");
        assert_eq!(c.raw, "cat <<'EOF' > out.py");
        let e = &ps[1].cmds[0];
        assert_eq!(
            e.redirects[0],
            Redirect { fd: Some(2), op: RedirectOp::Dup, target: Word { text: "1".into(), dynamic: false } }
        );
        assert_eq!(e.redirects[1].op, RedirectOp::Append);
        let ps = parse("python - <<-PY\n\tprint(1)\n\tPY\ntee -a f <<< 'line'").unwrap_or_default();
        assert_eq!(ps[0].cmds[0].stdin_text.as_deref(), Some("print(1)\n"));
        assert_eq!(ps[1].cmds[0].stdin_text.as_deref(), Some("line\n"));
    }

    #[test]
    fn expansions_are_marked_and_keywords_dropped() {
        let ps = parse(r#"for f in *.py; do sed -i "s/a/b/" "$f"; done"#).unwrap_or_default();
        let sed = ps.iter().flat_map(|p| &p.cmds).find(|c| c.name() == Some("sed")).expect("sed");
        assert!(sed.words[3].dynamic && !sed.words[2].dynamic);
        let ps = parse("echo $(date +%s) `id` ${HOME}/x \"cost: 5$\"").unwrap_or_default();
        let w = &ps[0].cmds[0].words;
        assert!(w[1].dynamic && w[2].dynamic && w[3].dynamic && !w[4].dynamic);
        assert_eq!(w[4].text, "cost: 5$");
    }

    #[test]
    fn cut_text_ends_its_word() {
        let ps = parse("sed -i 's/a/b x.py").unwrap_or_default();
        assert_eq!(words(&ps[0]), [["sed", "-i", "s/a/b x.py"]]);
        let ps = parse("cat > f <<EOF\nno end").unwrap_or_default();
        assert_eq!(ps[0].cmds[0].stdin_text.as_deref(), Some("no end\n"));
    }
}
