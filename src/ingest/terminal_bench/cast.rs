//! An asciinema v2 recording (`sessions/agent.cast`) read as timed terminal output: a header
//! line (`{"version": 2, "width", "height", "timestamp", ...}`), then one `[seconds, "o" | "i",
//! "data"]` event per line: what the screen printed and what was typed, full of escape sequences
//! and carriage returns.
//!
//! The output is cleaned (escape sequences removed, a string sequence such as a window title
//! or a clipboard write shown as a marker, `⟦OSC 52;c;aGk=⟧`, as `sanitize` shows them; a line
//! rewritten by `\r` kept as it was last drawn, the markers of what was drawn over kept before
//! it) and cut at each shell prompt (`user@host:dir# `): a step is what was typed after a
//! prompt (the `i` events; without them, the line the shell echoed) and what the screen printed
//! until the next prompt.

use serde_json::Value;

/// One command typed at a prompt and what followed it.
#[derive(Debug, Clone, PartialEq)]
pub struct Turn {
    /// Seconds since the recording began, when the prompt appeared.
    pub at: f64,
    /// Seconds until the next prompt (or the last event).
    pub duration: f64,
    /// What was typed (control keys as `^C`, `^D`), else the echoed command line.
    pub command: String,
    /// What the screen printed after the command.
    pub output: String,
}

/// The recording: its start (Unix seconds, from the header) and its turns. Bad event lines are
/// named in the warnings.
#[derive(Debug, Default)]
pub struct Recording {
    pub started: Option<i64>,
    pub turns: Vec<Turn>,
    pub warnings: Vec<String>,
}

pub fn read(text: &str) -> Recording {
    let mut rec = Recording::default();
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    if let Some((_, header)) = lines.next() {
        rec.started =
            serde_json::from_str::<Value>(header).ok().and_then(|h| h.get("timestamp")?.as_f64()).map(|t| t as i64);
    }
    let mut screen = Screen::default();
    let mut last = 0.0;
    for (i, line) in lines {
        let event = serde_json::from_str::<(f64, String, String)>(line);
        let Ok((t, kind, data)) = event else {
            rec.warnings
                .push(format!("line {}: not an asciinema event (`[seconds, \"o\", \"data\"]`): skipped", i + 1));
            continue;
        };
        last = t;
        match kind.as_str() {
            "o" => screen.output(t, &data, &mut rec.turns),
            "i" => screen.typed(&data),
            _ => {}
        }
    }
    screen.close(last, &mut rec.turns);
    rec
}

/// The turn being read: its start, what was typed, the cleaned output, and an escape sequence
/// cut at the end of the last event. Where the last line of the output begins, and where the
/// piece of it drawn last (after a `\r`) begins and ends, are kept as the output grows, so an
/// event costs its own length, never the line's (a progress bar redraws one line for ever).
#[derive(Default)]
struct Screen {
    open: Option<f64>,
    typed: String,
    output: String,
    carry: String,
    /// The start of the output's last line (after its last `\n`).
    line: usize,
    /// The start of the piece being drawn on it (after its last `\r`).
    piece: usize,
    /// The last piece that is not empty: its start and end.
    drawn: (usize, usize),
}

/// The longest prompt told from output (a `user@host:dir# ` line); longer lines are output.
const MAX_PROMPT: usize = 1024;

impl Screen {
    fn output(&mut self, t: f64, data: &str, turns: &mut Vec<Turn>) {
        let joined = format!("{}{data}", std::mem::take(&mut self.carry));
        let (complete, rest) = split_incomplete_escape(&joined);
        self.carry = rest.to_string();
        let from = self.output.len();
        self.output.push_str(&crate::sanitize::escapes(complete));
        self.follow(from);
        // A prompt at the end of what is on screen: the turn before it ends, the next begins.
        if is_prompt_line(self.output.get(self.drawn.0..self.drawn.1).unwrap_or_default()) {
            // What the prompt's line carried (a window title) ends the turn before it.
            let said = markers(self.output.get(self.line..).unwrap_or_default());
            self.output.truncate(self.line);
            self.output.push_str(&said);
            self.close(t, turns);
            self.open = Some(t);
        }
    }

    /// Follow the lines and pieces of the output from byte `from` on: the last newline, the
    /// last carriage return and the last piece that is not empty among the bytes added.
    fn follow(&mut self, from: usize) {
        let bytes = self.output.as_bytes();
        let mut at = from;
        if let Some(k) = memchr::memrchr(b'\n', bytes.get(from..).unwrap_or_default()) {
            at = from + k + 1;
            (self.line, self.piece, self.drawn) = (at, at, (at, at));
        }
        let tail = bytes.get(at..).unwrap_or_default();
        let kept = tail.len() - tail.iter().rev().take_while(|b| **b == b'\r').count();
        if kept > 0 {
            let start = memchr::memrchr(b'\r', &tail[..kept]).map_or(self.piece, |k| at + k + 1);
            self.drawn = (start, at + kept);
        }
        if let Some(k) = memchr::memrchr(b'\r', tail) {
            self.piece = at + k + 1;
        }
    }

    fn typed(&mut self, data: &str) {
        for c in data.chars() {
            match c {
                '\r' | '\n' => self.typed.push('\n'),
                '\u{3}' => self.typed.push_str("^C"),
                '\u{4}' => self.typed.push_str("^D"),
                '\u{1b}' => self.typed.push_str("^["),
                c if c.is_control() => {}
                c => self.typed.push(c),
            }
        }
    }

    /// End the open turn at `t` (the output before the first prompt is no turn).
    fn close(&mut self, t: f64, turns: &mut Vec<Turn>) {
        let output = clean_lines(&std::mem::take(&mut self.output));
        (self.line, self.piece, self.drawn) = (0, 0, (0, 0));
        let typed = std::mem::take(&mut self.typed);
        let Some(at) = self.open.take() else { return };
        // The shell echoes what was typed: the first line of the output.
        let (echo, rest) = output.split_once('\n').unwrap_or((output.as_str(), ""));
        let command = if typed.trim().is_empty() { echo.trim().to_string() } else { typed.trim_end().to_string() };
        let output =
            if typed.trim().is_empty() || typed.lines().next().is_some_and(|l| echo.trim_end().ends_with(l.trim())) {
                rest.to_string()
            } else {
                output.clone()
            };
        if command.is_empty() && output.trim().is_empty() {
            return;
        }
        turns.push(Turn {
            at,
            duration: (t - at).max(0.0),
            command,
            output: output.trim_start_matches('\n').trim_end().to_string(),
        });
    }
}

/// A piece of a line that is a shell prompt, after the markers of what the shell sent before it
/// (a window title): at most [`MAX_PROMPT`] bytes are looked at.
fn is_prompt_line(piece: &str) -> bool {
    if !(piece.ends_with("# ") || piece.ends_with("$ ")) {
        return false;
    }
    let mut from = piece.len().saturating_sub(MAX_PROMPT);
    while !piece.is_char_boundary(from) {
        from += 1;
    }
    let start = match piece[from..].rfind('⟧') {
        Some(i) => from + i + '⟧'.len_utf8(),
        None if from == 0 => 0,
        None => return false,
    };
    (start == 0 || piece.starts_with('⟦')) && is_prompt(&piece[start..])
}

/// A shell prompt: `user@host:dir# ` or `$ ` (an optional `(venv) ` before it).
fn is_prompt(line: &str) -> bool {
    let line = line.strip_prefix('(').and_then(|l| l.split_once(") ")).map_or(line, |(_, rest)| rest);
    let Some((who, rest)) = line.split_once(':') else { return false };
    let Some((user, host)) = who.split_once('@') else { return false };
    let word = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c));
    word(user) && word(host) && (rest.ends_with("# ") || rest.ends_with("$ ")) && !rest.contains('\n')
}

/// The markers of string sequences (`⟦OSC 0;title⟧`) in `text`, in order.
fn markers(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(at) = rest.find('⟦') {
        let inside = &rest[at + '⟦'.len_utf8()..];
        let named = crate::sanitize::STRING_SEQUENCES
            .iter()
            .any(|n| inside.strip_prefix(n).is_some_and(|r| r.starts_with([' ', '⟧'])));
        match inside.find('⟧').filter(|_| named) {
            Some(end) => {
                let marker_end = at + '⟦'.len_utf8() + end + '⟧'.len_utf8();
                out.push_str(&rest[at..marker_end]);
                rest = &rest[marker_end..];
            }
            None => rest = inside,
        }
    }
    out
}

/// Lines with `\r\n` ends, each as last drawn after its carriage returns; the markers of what
/// was drawn over (a clipboard write under a progress bar) kept before it.
fn clean_lines(text: &str) -> String {
    text.split('\n')
        .map(|l| {
            let l = l.strip_suffix('\r').unwrap_or(l);
            let pieces: Vec<&str> = l.split('\r').collect();
            let last = pieces.iter().rposition(|p| !p.is_empty());
            let kept = last.map_or("", |i| pieces[i]);
            let over: String = pieces[..last.unwrap_or(0)].iter().map(|p| markers(p)).collect();
            over + kept
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` without an escape sequence cut at its end (returned second, to join the next event).
fn split_incomplete_escape(text: &str) -> (&str, &str) {
    let Some(esc) = text.rfind('\u{1b}') else { return (text, "") };
    let seq = &text[esc + 1..];
    let complete = match seq.chars().next() {
        None => false,
        Some('[') => seq[1..].chars().any(|c| ('\u{40}'..='\u{7e}').contains(&c)),
        Some(']') | Some('P') => seq.contains('\u{7}') || seq.contains("\u{1b}\\"),
        Some(_) => true,
    };
    if complete || text.len() - esc > 256 { (text, "") } else { text.split_at(esc) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of a real Terminal-Bench recording (bracketed-paste marks around each prompt,
    /// `\r\n` line ends, a `clear`, the agent's command, `^D` to leave).
    const CAST: &str = r#"{"version": 2, "width": 160, "height": 40, "timestamp": 1757115251, "env": {"SHELL": "/bin/bash", "TERM": "tmux-256color"}}
[0.01633, "o", "\u001b[?2004hroot@c2f546cde8f8:/app# "]
[0.816791, "i", "clear\r"]
[0.820157, "o", "clear\r\n\u001b[?2004l\r"]
[0.824187, "o", "\u001b[H\u001b[J\u001b[3J"]
[0.844574, "o", "\u001b[?2004hroot@c2f546cde8f8:/app# "]
[2.146718, "i", "ls -la; tmux wait -S done\r"]
[2.17002, "o", "ls -la; tmux wait -S done\r\n\u001b[?2004l\rtotal 8\r\n-rw-r--r-- 1 root root 12 main.cpp\r\n"]
[2.342475, "o", "\u001b[?2004hroot@c2f546cde8f8:/app# "]
[11.404459, "i", "\u0004"]
[11.409565, "o", "\u001b[?2004l\r\r\nexit\r\n"]
"#;

    #[test]
    fn turns_are_cut_at_prompts_with_what_was_typed() {
        let rec = read(CAST);
        assert_eq!(rec.started, Some(1757115251));
        assert!(rec.warnings.is_empty(), "{:?}", rec.warnings);
        let commands: Vec<&str> = rec.turns.iter().map(|t| t.command.as_str()).collect();
        assert_eq!(commands, vec!["clear", "ls -la; tmux wait -S done", "^D"]);
        assert_eq!(rec.turns[1].output, "total 8\n-rw-r--r-- 1 root root 12 main.cpp");
        assert!((rec.turns[1].at - 0.844574).abs() < 1e-9);
        assert!((rec.turns[1].duration - (2.342475 - 0.844574)).abs() < 1e-9);
        assert_eq!(rec.turns[2].output, "exit");
    }

    #[test]
    fn escape_sequences_cut_between_events_are_joined() {
        let cast = "{\"version\": 2, \"width\": 80, \"height\": 24, \"timestamp\": 1}\n[0.1, \"o\", \"u@h:/x$ \"]\n[0.2, \"o\", \"echo hi\\r\\n\\u001b[3\"]\n[0.3, \"o\", \"1mhi\\u001b[0m\\r\\n\"]\n[0.4, \"o\", \"u@h:/x$ \"]\nnot json\n";
        let rec = read(cast);
        assert_eq!(rec.turns.len(), 1);
        assert_eq!((rec.turns[0].command.as_str(), rec.turns[0].output.as_str()), ("echo hi", "hi"));
        assert_eq!(rec.warnings.len(), 1, "{:?}", rec.warnings);
    }

    /// Issue 42: a progress bar redrawn 300,000 times with `\r` and never a newline (a 9 MB
    /// recording). Each event looked back over the whole line for its start (4.5 x 10^11 bytes
    /// gone through); now an event costs its own length. The line reads as last drawn.
    #[test]
    fn a_progress_bar_redrawn_without_newlines_costs_each_event_its_own_length() {
        const N: usize = 300_000;
        let mut cast = String::from("{\"version\": 2, \"width\": 80, \"height\": 24}\n[0.1, \"o\", \"u@h:/x$ \"]\n");
        cast.push_str("[0.2, \"i\", \"fetch\\r\"]\n[0.3, \"o\", \"fetch\\r\\n\"]\n");
        for i in 0..N {
            cast.push_str(&format!("[1.0, \"o\", \"\\r{i} of {N}\"]\n"));
        }
        cast.push_str("[2.0, \"o\", \"\\r\\ndone\\r\\nu@h:/x$ \"]\n");
        let rec = read(&cast);
        let turns: Vec<(&str, &str)> = rec.turns.iter().map(|t| (t.command.as_str(), t.output.as_str())).collect();
        assert_eq!(turns, [("fetch", &*format!("{} of {N}\ndone", N - 1))]);
    }

    /// Issue 42: a window title, a clipboard write and a DCS string were taken out without a
    /// word. Each is a marker with its text where it was (a title before the prompt ends the
    /// turn before it; a clipboard write drawn over by `\r` stays before what was drawn last);
    /// colours and cursor movement are still removed.
    #[test]
    fn string_sequences_are_markers_with_their_text() {
        let cast = concat!(
            "{\"version\": 2, \"width\": 80, \"height\": 24}\n",
            "[0.1, \"o\", \"\\u001b]0;u@h: /x\\u0007u@h:/x$ \"]\n",
            "[0.2, \"i\", \"make\\r\"]\n",
            "[0.3, \"o\", \"make\\r\\n\\u001b[1;31mok\\u001b[0m \\u001b]52;c;cm0gLXJm\\u0007\\r\\n\"]\n",
            "[0.4, \"o\", \"\\u001bPq#0;2;0;0;0\\u001b\\\\50%\\r100%\\r\\n\"]\n",
            "[0.5, \"o\", \"\\u001b]0;u@h: /x\\u0007u@h:/x$ \"]\n",
        );
        let rec = read(cast);
        assert_eq!(rec.turns.len(), 1, "{:?}", rec.turns);
        assert_eq!(rec.turns[0].command, "make");
        assert_eq!(rec.turns[0].output, "ok ⟦OSC 52;c;cm0gLXJm⟧\n⟦DCS q#0;2;0;0;0⟧100%\n⟦OSC 0;u@h: /x⟧");
    }

    #[test]
    fn prompts_are_told_from_output() {
        assert!(is_prompt("root@c2f546cde8f8:/app# "));
        assert!(is_prompt("(venv) dev@box:~/src$ "));
        for other in ["total 8", "a@b: c", "user@host:/x# ls", "# comment "] {
            assert!(!is_prompt(other), "{other}");
        }
    }
}
