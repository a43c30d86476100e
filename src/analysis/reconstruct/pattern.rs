//! Regular expressions as `sed` (GNU basic and extended syntax) and `perl` read them, with
//! their replacement texts. Oniguruma (the `onig` crate, already built for syntect's syntax
//! highlighting) compiles all three dialects: its `grep` syntax is GNU's basic one (`\+`, `\?`,
//! `\|`, `\{n,m\}`, `\<`), and backreferences work, which the `regex` crate refuses.

use onig::{Regex, RegexOptions, SearchOptions, Syntax, SyntaxOperator};

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

    pub fn is_match(&self, text: &str) -> bool {
        if self.literal.as_deref().is_some_and(|l| !text.contains(l)) {
            return false;
        }
        self.re.search_with_options(text, 0, text.len(), SearchOptions::SEARCH_OPTION_NONE, None).is_some()
    }

    /// Replace the `nth` match (1-based), or every match from the `nth` on when `global`.
    /// `None` when nothing matched.
    pub fn substitute(&self, text: &str, with: &Replacement, nth: usize, global: bool) -> Option<String> {
        if self.literal.as_deref().is_some_and(|l| !text.contains(l)) {
            return None;
        }
        let mut out = String::with_capacity(text.len() + 16);
        let mut last = 0;
        let mut count = 0;
        let mut replaced = false;
        for caps in self.re.captures_iter(text) {
            let Some((start, end)) = caps.pos(0) else { continue };
            count += 1;
            if count < nth {
                continue;
            }
            out.push_str(&text[last..start]);
            with.expand(&caps, &mut out);
            last = end;
            replaced = true;
            if !global {
                break;
            }
        }
        if !replaced {
            return None;
        }
        out.push_str(&text[last..]);
        Some(out)
    }
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

    fn expand(&self, caps: &onig::Captures<'_>, out: &mut String) {
        let mut case: Option<Case> = None;
        let mut next: Option<Case> = None;
        let put = |s: &str, case: Option<Case>, next: &mut Option<Case>, out: &mut String| {
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
                Piece::Group(g) => put(caps.at(*g).unwrap_or(""), case, &mut next, out),
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
        p.substitute(text, &Replacement::sed(repl), 1, global)
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
        let out = p.zip(r).and_then(|(p, r)| p.substitute("x = 42", &r, 1, false));
        assert_eq!(out.as_deref(), Some("42 -> x\n"));
        assert_eq!(Replacement::perl("$name"), None);
    }

    #[test]
    fn flags_nth_case_and_ignore_case() {
        let p = Pattern::new("a", Dialect::Basic, false);
        assert_eq!(p.and_then(|p| p.substitute("aaaa", &Replacement::sed("b"), 2, true)).as_deref(), Some("abbb"));
        let p = Pattern::new("hello", Dialect::Basic, true);
        assert_eq!(
            p.and_then(|p| p.substitute("HeLLo", &Replacement::sed(r"\U&"), 1, false)).as_deref(),
            Some("HELLO")
        );
        let p = Pattern::new(r"\(\w\)\(\w*\)", Dialect::Basic, false);
        assert_eq!(
            p.and_then(|p| p.substitute("word", &Replacement::sed(r"\u\1\2"), 1, false)).as_deref(),
            Some("Word")
        );
        assert!(Pattern::new(r"\(", Dialect::Basic, false).is_none());
    }
}
