//! Regular expressions as `sed` (GNU basic and extended syntax) and `perl` read them, with
//! their replacement texts. Oniguruma (the `onig` crate, already built for syntect's syntax
//! highlighting) compiles all three dialects: its `grep` syntax is GNU's basic one (`\+`, `\?`,
//! `\|`, `\{n,m\}`, `\<`), and backreferences work, which the `regex` crate refuses.
//!
//! A backtracking engine can take exponential time on the agent's own pattern (`(a+)+$` over a
//! line of `a`s): every match attempt is bounded ([`RETRY_LIMIT`]), and a search that passes the
//! bound (or fails any other way) is an error, [`RegexLimit`], which makes the edit unknown.

use onig::{MatchParam, Regex, RegexOptions, Region, SearchOptions, Syntax, SyntaxOperator};

/// Backtracking steps one match attempt may take (Oniguruma's `retry_limit_in_match`; its
/// default, 10^7, is a tenth of a second for each place a match is tried).
pub const RETRY_LIMIT: u32 = 100_000;

/// Why a pattern's effect on a line cannot be known here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegexLimit {
    /// A search passed [`RETRY_LIMIT`], or the engine failed otherwise.
    Engine(String),
    /// The line made would pass the cap the caller gave.
    TooLarge,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `sed` without `-E`: GNU basic regular expressions.
    Basic,
    /// `sed -E` / `sed -r`: extended.
    Extended,
    /// `perl -pe`.
    Perl,
}

/// GNU additions both `sed` dialects accept: `\w`, `\s`, `\b`, `\<`, `\>`, `\n`, `\t`, `` \` ``.
fn gnu_extras() -> SyntaxOperator {
    SyntaxOperator::SYNTAX_OPERATOR_ESC_W_WORD
        | SyntaxOperator::SYNTAX_OPERATOR_ESC_B_WORD_BOUND
        | SyntaxOperator::SYNTAX_OPERATOR_ESC_LTGT_WORD_BEGIN_END
        | SyntaxOperator::SYNTAX_OPERATOR_ESC_S_WHITE_SPACE
        | SyntaxOperator::SYNTAX_OPERATOR_ESC_CONTROL_CHARS
        | SyntaxOperator::SYNTAX_OPERATOR_DECIMAL_BACKREF
        | SyntaxOperator::SYNTAX_OPERATOR_ESC_GNU_BUF_ANCHOR
}

fn syntax(dialect: Dialect) -> Syntax {
    let mut s = match dialect {
        Dialect::Basic => *Syntax::grep(),
        Dialect::Extended => *Syntax::posix_extended(),
        Dialect::Perl => return *Syntax::perl(),
    };
    s.enable_operators(gnu_extras());
    // POSIX extended syntax sets single-line options: `$` would match only at the very end.
    s.set_options(RegexOptions::REGEX_OPTION_NONE);
    s
}

/// GNU sed turns `\t`, `\n`, `\r`, `\f`, `\v` into their characters before compiling, inside
/// bracket expressions too (`[ \t]`), where the regex syntax would read a backslash.
fn control_escapes(source: &str) -> String {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('t') => out.push('\t'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('f') => out.push('\u{c}'),
            Some('v') => out.push('\u{b}'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    out
}

/// A compiled pattern.
pub struct Pattern {
    re: Regex,
    /// Text every match contains, when the pattern is plain text: lines without it are passed
    /// over without running the regex.
    literal: Option<String>,
}

/// The pattern as plain text, when it has no operator of its dialect (`foo_bar`, `x = 1`).
fn plain(source: &str, dialect: Dialect) -> Option<String> {
    let special: &[char] = match dialect {
        Dialect::Basic => &['\\', '.', '*', '[', ']', '^', '$'],
        Dialect::Extended | Dialect::Perl => &['\\', '.', '*', '[', ']', '^', '$', '+', '?', '(', ')', '{', '}', '|'],
    };
    (!source.is_empty() && !source.contains(special)).then(|| source.to_string())
}

impl std::fmt::Debug for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Pattern")
    }
}

impl Pattern {
    /// `None` when the pattern does not compile (the command failed, or we read it wrong).
    pub fn new(source: &str, dialect: Dialect, ignore_case: bool) -> Option<Pattern> {
        let options = if ignore_case { RegexOptions::REGEX_OPTION_IGNORECASE } else { RegexOptions::REGEX_OPTION_NONE };
        let source = match dialect {
            Dialect::Perl => std::borrow::Cow::Borrowed(source),
            _ => std::borrow::Cow::Owned(control_escapes(source)),
        };
        let literal = if ignore_case { None } else { plain(&source, dialect) };
        Regex::with_options(&source, options, &syntax(dialect)).ok().map(|re| Pattern { re, literal })
    }

    /// The text it matches, when it is plain text (no operator, case kept).
    pub fn literal(&self) -> Option<&str> {
        self.literal.as_deref()
    }

    pub fn is_match(&self, text: &str) -> Result<bool, RegexLimit> {
        if self.literal.as_deref().is_some_and(|l| !text.contains(l)) {
            return Ok(false);
        }
        Ok(self.search(text, 0, None)?.is_some())
    }

    /// The first match at or after byte `from`, bounded (see the module).
    fn search(&self, text: &str, from: usize, region: Option<&mut Region>) -> Result<Option<usize>, RegexLimit> {
        let mut param = MatchParam::default();
        param.set_retry_limit_in_match(RETRY_LIMIT);
        self.re
            .search_with_param(text, from, text.len(), SearchOptions::SEARCH_OPTION_NONE, region, param)
            .map_err(|e| RegexLimit::Engine(e.description().to_string()))
    }

    /// Replace the `nth` match (1-based), or every match from the `nth` on when `global`.
    /// `None` when nothing matched; an error when the line made would be longer than `cap`
    /// bytes (a replacement of ten `&` run on a line of a million characters).
    pub fn substitute(
        &self,
        text: &str,
        with: &Replacement,
        nth: usize,
        global: bool,
        cap: usize,
    ) -> Result<Option<String>, RegexLimit> {
        if self.literal.as_deref().is_some_and(|l| !text.contains(l)) {
            return Ok(None);
        }
        let mut out = String::with_capacity(text.len() + 16);
        let mut last = 0;
        let mut count = 0;
        let mut replaced = false;
        // Successive matches, as `captures_iter` finds them (an empty match right after the
        // last one is passed over), each search bounded.
        let (mut from, mut last_end) = (0usize, None::<usize>);
        let mut region = Region::new();
        while from <= text.len() && self.search(text, from, Some(&mut region))?.is_some() {
            let Some((start, end)) = region.pos(0) else { break };
            if start == end && last_end == Some(end) {
                from += text[from..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            from = end;
            last_end = Some(end);
            count += 1;
            if count < nth {
                continue;
            }
            out.push_str(&text[last..start]);
            with.expand(text, &region, &mut out);
            if out.len() > cap {
                return Err(RegexLimit::TooLarge);
            }
            last = end;
            replaced = true;
            if !global {
                break;
            }
        }
        if !replaced {
            return Ok(None);
        }
        out.push_str(&text[last..]);
        if out.len() > cap {
            return Err(RegexLimit::TooLarge);
        }
        Ok(Some(out))
    }
}

/// One `s/re/repl/flags` statement of a Perl one-liner as written: the delimiters taken away,
/// an escaped delimiter that means nothing to a regex (`\/`) made the character.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PerlSubst {
    pub re: String,
    pub with: String,
    pub flags: String,
}

/// The `s///` statements of a `perl -pe` script, separated by `;` (`s{a}{b}`, `s|a|b|g`, any
/// delimiter). An error names what is not a list of them (another statement, an unterminated
/// part, an escaped delimiter a regex would read as an operator: `s|a\|b|c|`).
pub fn perl_statements(source: &str) -> Result<Vec<PerlSubst>, &'static str> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    loop {
        while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ';') {
            i += 1;
        }
        if i >= chars.len() {
            return Ok(out);
        }
        if chars[i] != 's' {
            return Err("a perl statement other than s///");
        }
        i += 1;
        let Some(&open) = chars.get(i) else { return Err("perl s without a delimiter") };
        if open.is_alphanumeric() || open.is_whitespace() || open == '\\' {
            return Err("perl s with an unusual delimiter");
        }
        i += 1;
        let re = perl_part(&chars, &mut i, open)?;
        let open2 = match closing(open) {
            Some(_) => {
                while chars.get(i).is_some_and(|c| c.is_whitespace()) {
                    i += 1;
                }
                let Some(&o) = chars.get(i).filter(|c| closing(**c).is_some()) else {
                    return Err("perl s with bracketed parts");
                };
                i += 1;
                o
            }
            None => open,
        };
        let with = perl_part(&chars, &mut i, open2)?;
        let mut flags = String::new();
        while i < chars.len() && chars[i].is_ascii_alphabetic() {
            flags.push(chars[i]);
            i += 1;
        }
        out.push(PerlSubst { re, with, flags });
    }
}

/// Whether a Perl pattern may match a newline (`\s`, `\D`, `\W`, `\n`, a negated class, a
/// POSIX `[:space:]`, an escape not read here): `perl -p` keeps each line's newline in `$_`,
/// so `s/\s+$//` joins lines, which a line without its newline would not show.
pub fn perl_may_take_newline(source: &str) -> bool {
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        // `\0`, `\012`: octal; a `\1` backreference repeats what its group took.
        let takes = match c {
            '\\' => matches!(
                chars.next(),
                Some(
                    's' | 'D' | 'W' | 'n' | 'v' | 'R' | 'x' | 'o' | '0' | 'c' | 'p' | 'P' | 'X' | 'C' | 'N' | 'Z' | 'z'
                )
            ),
            '[' => chars.peek() == Some(&'^'),
            _ => false,
        };
        if takes {
            return true;
        }
    }
    source.contains("[:space:]") || source.contains("[:cntrl:]") || source.contains('\n')
}

/// The closing bracket of a bracketing delimiter.
fn closing(open: char) -> Option<char> {
    match open {
        '{' => Some('}'),
        '(' => Some(')'),
        '[' => Some(']'),
        '<' => Some('>'),
        _ => None,
    }
}

/// One part of `s///` after its opening delimiter, up to the closing one (bracketing
/// delimiters nest: `s{a{2}}{b}`).
fn perl_part(chars: &[char], i: &mut usize, open: char) -> Result<String, &'static str> {
    let close = closing(open).unwrap_or(open);
    let meta = "{}()[]|.*+?^$".contains(open);
    let mut depth = 0usize;
    let mut out = String::new();
    while let Some(&c) = chars.get(*i) {
        *i += 1;
        if c == '\\' {
            let Some(&d) = chars.get(*i) else { break };
            *i += 1;
            if (d == open || d == close) && d != '\\' {
                if meta {
                    return Err("an escaped delimiter a regex reads as an operator");
                }
                out.push(d);
            } else {
                out.push('\\');
                out.push(d);
            }
            continue;
        }
        if c == close && depth == 0 {
            return Ok(out);
        }
        if close != open {
            if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
            }
        }
        out.push(c);
    }
    Err("unterminated s")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Case {
    Upper,
    Lower,
    UpperNext,
    LowerNext,
    End,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Group(usize),
    Case(Case),
}

/// A replacement text: literal pieces, groups (`&`, `\1`; `$&`, `$1` in Perl) and GNU case
/// conversion (`\U`, `\L`, `\u`, `\l`, `\E`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Replacement(Vec<Piece>);

impl Replacement {
    fn text(&mut self, c: char) {
        match self.0.last_mut() {
            Some(Piece::Text(t)) => t.push(c),
            _ => self.0.push(Piece::Text(c.to_string())),
        }
    }

    /// The text it puts in, when it is plain text (no group, no case conversion).
    pub fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for p in &self.0 {
            match p {
                Piece::Text(t) => out.push_str(t),
                _ => return None,
            }
        }
        Some(out)
    }

    /// As `sed` reads it (the delimiter already unescaped).
    pub fn sed(source: &str) -> Replacement {
        let mut r = Replacement::default();
        let mut chars = source.chars();
        while let Some(c) = chars.next() {
            match c {
                '&' => r.0.push(Piece::Group(0)),
                '\\' => match chars.next() {
                    Some(d @ '0'..='9') => r.0.push(Piece::Group(d as usize - '0' as usize)),
                    Some('n') => r.text('\n'),
                    Some('t') => r.text('\t'),
                    Some('r') => r.text('\r'),
                    Some('U') => r.0.push(Piece::Case(Case::Upper)),
                    Some('L') => r.0.push(Piece::Case(Case::Lower)),
                    Some('u') => r.0.push(Piece::Case(Case::UpperNext)),
                    Some('l') => r.0.push(Piece::Case(Case::LowerNext)),
                    Some('E') => r.0.push(Piece::Case(Case::End)),
                    Some(other) => r.text(other),
                    None => r.text('\\'),
                },
                other => r.text(other),
            }
        }
        r
    }

    /// As Perl reads a replacement (a double-quoted string). `None` for what it would take a
    /// Perl interpreter to know (variables other than groups, `@` arrays).
    pub fn perl(source: &str) -> Option<Replacement> {
        let mut r = Replacement::default();
        let chars: Vec<char> = source.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            i += 1;
            match c {
                '\\' => {
                    let Some(&d) = chars.get(i) else {
                        r.text('\\');
                        break;
                    };
                    i += 1;
                    match d {
                        '1'..='9' => r.0.push(Piece::Group(d as usize - '0' as usize)),
                        'n' => r.text('\n'),
                        't' => r.text('\t'),
                        'r' => r.text('\r'),
                        'U' => r.0.push(Piece::Case(Case::Upper)),
                        'L' => r.0.push(Piece::Case(Case::Lower)),
                        'u' => r.0.push(Piece::Case(Case::UpperNext)),
                        'l' => r.0.push(Piece::Case(Case::LowerNext)),
                        'E' => r.0.push(Piece::Case(Case::End)),
                        'f' => r.text('\u{c}'),
                        'e' => r.text('\u{1b}'),
                        'a' => r.text('\u{7}'),
                        // `\x41`, `\0`, `\Q`, `\N{...}`: escapes not read here.
                        other if other.is_alphanumeric() => return None,
                        other => r.text(other),
                    }
                }
                '$' => match chars.get(i) {
                    Some('&') => {
                        i += 1;
                        r.0.push(Piece::Group(0));
                    }
                    Some(d) if d.is_ascii_digit() => {
                        let digits: String = chars[i..].iter().take_while(|c| c.is_ascii_digit()).collect();
                        i += digits.len();
                        r.0.push(Piece::Group(digits.parse().ok()?));
                    }
                    Some('{') => {
                        let close = chars[i..].iter().position(|c| *c == '}')?;
                        let inner: String = chars[i + 1..i + close].iter().collect();
                        i += close + 1;
                        r.0.push(Piece::Group(inner.parse().ok()?));
                    }
                    None => r.text('$'),
                    Some(_) => return None,
                },
                '@' if chars.get(i).is_some_and(|c| c.is_alphabetic() || *c == '_' || *c == '{') => return None,
                other => r.text(other),
            }
        }
        Some(r)
    }

    /// The replacement for the match `region` holds in `text`.
    fn expand(&self, text: &str, region: &Region, out: &mut String) {
        self.expand_with(&|g| region.pos(g).and_then(|(a, b)| text.get(a..b)).unwrap_or(""), out);
    }

    /// The replacement, each group's text given by `group` (empty for a group that did not
    /// take part in the match).
    pub fn expand_with<'t>(&self, group: &dyn Fn(usize) -> &'t str, out: &mut String) {
        let mut case: Option<Case> = None;
        let mut next: Option<Case> = None;
        let put = |s: &str, case: Option<Case>, next: &mut Option<Case>, out: &mut String| {
            if case.is_none() && next.is_none() {
                out.push_str(s);
                return;
            }
            for ch in s.chars() {
                let once = next.take();
                let mapped: String = match (once, case) {
                    (Some(Case::UpperNext), _) => ch.to_uppercase().collect(),
                    (Some(Case::LowerNext), _) => ch.to_lowercase().collect(),
                    (_, Some(Case::Upper)) => ch.to_uppercase().collect(),
                    (_, Some(Case::Lower)) => ch.to_lowercase().collect(),
                    _ => ch.to_string(),
                };
                out.push_str(&mapped);
            }
        };
        for p in &self.0 {
            match p {
                Piece::Text(t) => put(t, case, &mut next, out),
                Piece::Group(g) => put(group(*g), case, &mut next, out),
                Piece::Case(Case::End) => {
                    case = None;
                    next = None;
                }
                Piece::Case(c @ (Case::UpperNext | Case::LowerNext)) => next = Some(*c),
                Piece::Case(c) => case = Some(*c),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sub(re: &str, d: Dialect, repl: &str, text: &str, global: bool) -> Option<String> {
        let p = Pattern::new(re, d, false)?;
        p.substitute(text, &Replacement::sed(repl), 1, global, usize::MAX).ok().flatten()
    }

    #[test]
    fn basic_syntax_is_gnu_sed_s() {
        use Dialect::Basic;
        // `(`, `+`, `{`, `|` are literal; their escaped forms are operators.
        assert_eq!(sub("f(x)", Basic, "g(y)", "a = f(x)", false).as_deref(), Some("a = g(y)"));
        assert_eq!(sub(r"a\+", Basic, "A", "caaat", false).as_deref(), Some("cAt"));
        assert_eq!(sub(r"\(foo\)bar", Basic, r"\1-&", "foobar!", false).as_deref(), Some("foo-foobar!"));
        assert_eq!(sub(r"x\{2\}", Basic, "y", "xxx", false).as_deref(), Some("yx"));
        assert_eq!(sub(r"cat\|dog", Basic, "pet", "a dog", false).as_deref(), Some("a pet"));
        assert_eq!(sub(r"\*args", Basic, "*a", "f(*args)", false).as_deref(), Some("f(*a)"));
        assert_eq!(sub(r"[ \t]*$", Basic, "", "x = 1 \t ", false).as_deref(), Some("x = 1"));
        assert_eq!(sub(r"\r$", Basic, "", "line\r", false).as_deref(), Some("line"));
        assert_eq!(sub(r"\<is\>", Basic, "IS", "this is", true).as_deref(), Some("this IS"));
        assert_eq!(sub(r"^", Basic, "\t      ", "x", false).as_deref(), Some("\t      x"));
        assert_eq!(sub("o", Basic, "0", "foo", true).as_deref(), Some("f00"));
        assert_eq!(sub("z", Basic, "0", "foo", true), None);
        assert_eq!(sub(r"\s\+", Basic, " ", "a   b", false).as_deref(), Some("a b"));
    }

    #[test]
    fn extended_and_perl_syntax() {
        assert_eq!(sub(r"(a+)b", Dialect::Extended, r"[\1]", "xaab", false).as_deref(), Some("x[aa]"));
        assert_eq!(sub(r"x$", Dialect::Extended, "y", "axbx", false).as_deref(), Some("axby"));
        let p = Pattern::new(r"(\w+)\s*=\s*(\d+)", Dialect::Perl, false);
        let r = Replacement::perl("$2 -> ${1}\\n");
        let out = p.zip(r).and_then(|(p, r)| p.substitute("x = 42", &r, 1, false, usize::MAX).ok().flatten());
        assert_eq!(out.as_deref(), Some("42 -> x\n"));
        assert_eq!(Replacement::perl("$name"), None);
    }

    #[test]
    fn flags_nth_case_and_ignore_case() {
        let p = Pattern::new("a", Dialect::Basic, false);
        let sub = |p: Option<Pattern>, with: &str, text: &str, nth, global| {
            p.and_then(|p| p.substitute(text, &Replacement::sed(with), nth, global, usize::MAX).ok().flatten())
        };
        assert_eq!(sub(p, "b", "aaaa", 2, true).as_deref(), Some("abbb"));
        let p = Pattern::new("hello", Dialect::Basic, true);
        assert_eq!(sub(p, r"\U&", "HeLLo", 1, false).as_deref(), Some("HELLO"));
        let p = Pattern::new(r"\(\w\)\(\w*\)", Dialect::Basic, false);
        assert_eq!(sub(p, r"\u\1\2", "word", 1, false).as_deref(), Some("Word"));
        assert!(Pattern::new(r"\(", Dialect::Basic, false).is_none());
    }

    #[test]
    fn a_pattern_that_backtracks_without_end_is_an_error_not_a_panic() {
        // Nested quantifiers over 40 `a`s and a `b`: 2^40 ways to fail.
        let line = format!("{}b", "a".repeat(40));
        let Some(p) = Pattern::new("(a+)+$", Dialect::Extended, false) else { panic!("compiles") };
        let x = Replacement::sed("x");
        assert!(matches!(p.substitute(&line, &x, 1, false, usize::MAX), Err(RegexLimit::Engine(_))));
        assert!(p.is_match(&line).is_err());
        // The same pattern on a line it matches quickly.
        assert_eq!(p.substitute("aaa", &x, 1, false, usize::MAX), Ok(Some("x".to_string())));
        // Empty matches between characters, as sed makes them.
        let Some(p) = Pattern::new("x*", Dialect::Basic, false) else { panic!("compiles") };
        assert_eq!(p.substitute("abc", &Replacement::sed("-"), 1, true, usize::MAX), Ok(Some("-a-b-c-".to_string())));
        // A line made longer than the cap stops being made.
        let Some(p) = Pattern::new("a", Dialect::Basic, false) else { panic!("compiles") };
        let ten = Replacement::sed("&&&&&&&&&&");
        assert_eq!(p.substitute(&"a".repeat(100), &ten, 1, true, 999), Err(RegexLimit::TooLarge));
        assert_eq!(p.substitute(&"a".repeat(100), &ten, 1, true, 1000).map(|s| s.map(|s| s.len())), Ok(Some(1000)));
    }
}
