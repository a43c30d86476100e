//! Perl and sed regular expressions turned into what the `regex` crate reads, for the
//! substitutions that see a whole file at once. The crate's byte-oriented mode without Unicode
//! (`.` a byte, `\w` ASCII, case folded for ASCII alone) is how `perl` reads a file it was not
//! told is UTF-8, and how GNU sed reads in the C locale; it runs in linear time, so no pattern
//! of the agent's makes the replay slow. Whatever is not translated with certainty
//! (backreferences, lookaround, Perl's `$` before a final newline, variables, a brace that is
//! not a count) is an error: the edit is then unknown, never wrong.

/// A translated pattern and what it may do across lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Translated {
    /// The `regex` crate's syntax, flags included.
    pub source: String,
    /// The text it matches, when it is plain text (no operator, case kept).
    pub literal: Option<String>,
    /// A match may reach past a line's end (a newline, `.` under `/s`, `\s`, a negated class)
    /// or depends on where the text starts or ends (`\A`, `^` without `/m`): run on a file
    /// with lines never shown, where it stops is not known.
    pub crosses: bool,
}

/// Flags of a Perl substitution that change how its pattern reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Flags {
    pub single_line: bool,
    pub multi_line: bool,
    pub extended: bool,
    pub ignore_case: bool,
}

/// What the pattern being built knows of itself.
struct Out {
    re: String,
    literal: Option<String>,
    crosses: bool,
}

impl Out {
    fn new(ignore_case: bool) -> Out {
        Out { re: String::new(), literal: (!ignore_case).then(String::new), crosses: false }
    }

    /// A character matched as itself.
    fn char(&mut self, c: char) {
        self.re.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
        if let Some(l) = self.literal.as_mut() {
            l.push(c);
        }
        self.crosses |= c == '\n';
    }

    /// An operator (or a class): the pattern is no longer plain text.
    fn op(&mut self, s: &str, crosses: bool) {
        self.re.push_str(s);
        self.literal = None;
        self.crosses |= crosses;
    }

    fn done(self, flags: &str) -> Translated {
        let source = if flags.is_empty() { self.re } else { format!("(?{flags}){}", self.re) };
        Translated { source, literal: self.literal, crosses: self.crosses }
    }
}

/// A count `{n}`, `{n,}`, `{n,m}` starting at `chars[i]` (the `{`): its length.
fn count_at(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i + 1;
    let digits = |j: &mut usize| {
        let s = *j;
        while chars.get(*j).is_some_and(char::is_ascii_digit) {
            *j += 1;
        }
        *j > s
    };
    if !digits(&mut j) {
        return None;
    }
    if chars.get(j) == Some(&',') {
        j += 1;
        digits(&mut j);
    }
    (chars.get(j) == Some(&'}')).then_some(j + 1 - i)
}

/// A Perl pattern (`s/PATTERN/.../flags` of `perl -0777 -pe`).
pub fn perl(pattern: &str, f: Flags) -> Result<Translated, &'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Out::new(f.ignore_case);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        if f.extended && c.is_whitespace() {
            continue;
        }
        if f.extended && c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        }
        match c {
            '\\' => {
                let Some(&d) = chars.get(i) else { return Err("a pattern ending in a backslash") };
                i += 1;
                match d {
                    'n' => out.char('\n'),
                    't' => out.char('\t'),
                    'r' => out.char('\r'),
                    'f' => out.char('\u{c}'),
                    'e' => out.char('\u{1b}'),
                    'a' => out.char('\u{7}'),
                    'd' | 'w' => out.op(&format!("\\{d}"), false),
                    's' | 'S' | 'D' | 'W' => out.op(&format!("\\{d}"), true),
                    'b' | 'B' => out.op(&format!("\\{d}"), false),
                    'A' | 'z' => out.op(&format!("\\{d}"), true),
                    d if d.is_alphanumeric() => return Err("an escape not read here (a backreference, \\Z, \\K, \\Q)"),
                    d => out.char(d),
                }
            }
            '.' => out.op(".", f.single_line),
            '^' => out.op("^", !f.multi_line),
            '$' => {
                if chars.get(i).is_some_and(|n| !matches!(n, ')' | '|')) {
                    return Err("a variable in a pattern");
                }
                if !f.multi_line {
                    return Err("`$` without /m (it also matches before a final newline)");
                }
                out.op("$", false);
            }
            '@' if chars.get(i).is_some_and(|n| n.is_alphanumeric() || matches!(n, '_' | '{' | '$' | ':')) => {
                return Err("an array in a pattern");
            }
            '|' => out.op("|", false),
            '(' => {
                if chars.get(i) == Some(&'?') {
                    let rest: String = chars[i..].iter().take(3).collect();
                    if rest.starts_with("?:") {
                        i += 2;
                        out.op("(?:", false);
                    } else if rest.starts_with("?<") && rest.chars().nth(2).is_some_and(|n| n.is_alphabetic()) {
                        i += 1;
                        out.op("(?", false);
                    } else {
                        return Err("a group construct not read here (lookaround, inline flags)");
                    }
                } else {
                    out.op("(", false);
                }
            }
            ')' => out.op(")", false),
            '*' | '+' | '?' | '{' => {
                let len = if c == '{' { count_at(&chars, i - 1).ok_or("a brace that is not a count")? } else { 1 };
                if !atom_before(&out) {
                    return Err("a quantifier with nothing before it");
                }
                let q: String = chars[i - 1..i - 1 + len].iter().collect();
                i += len - 1;
                out.op(&q, false);
                match chars.get(i) {
                    Some('?') => {
                        i += 1;
                        out.op("?", false);
                    }
                    Some('+') => return Err("a possessive quantifier"),
                    _ => {}
                }
            }
            '[' => {
                let (class, len, crosses) = class(&chars[i - 1..], Dialect::Perl)?;
                i += len - 1;
                out.op(&class, crosses);
            }
            '}' | ']' => out.char(c),
            c => out.char(c),
        }
    }
    let mut flags = String::new();
    if f.single_line {
        flags.push('s');
    }
    if f.multi_line {
        flags.push('m');
    }
    if f.ignore_case {
        flags.push('i');
    }
    Ok(out.done(&flags))
}

/// Whether the pattern so far ends in something a quantifier applies to.
fn atom_before(out: &Out) -> bool {
    !(out.re.is_empty() || out.re.ends_with('|') || out.re.ends_with('(') || out.re.ends_with("(?:"))
}

/// A sed pattern of `sed -z` (basic, or extended with `-E`): `.` and negated classes match a
/// newline, `^`/`$` the text's ends.
pub fn sed(pattern: &str, extended: bool, ignore_case: bool) -> Result<Translated, &'static str> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut out = Out::new(ignore_case);
    let mut i = 0;
    // At the start of the pattern or of a group or branch: `*` is literal there, `^` an anchor.
    let mut start = true;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        let was_start = std::mem::replace(&mut start, false);
        // The operator a character (or its escaped form) is in this dialect, if any.
        let (op, escaped) = match c {
            '\\' => {
                let Some(&d) = chars.get(i) else { return Err("a pattern ending in a backslash") };
                i += 1;
                (d, true)
            }
            c => (c, false),
        };
        let operators = |x: char| matches!(x, '(' | ')' | '{' | '}' | '|' | '+' | '?');
        // In basic syntax these are operators escaped; in extended, plain.
        let is_op = operators(op) && (escaped != extended);
        if is_op {
            match op {
                '(' => {
                    out.op("(", false);
                    start = true;
                }
                ')' => out.op(")", false),
                '|' => {
                    out.op("|", false);
                    start = true;
                }
                '{' => {
                    let rest: String = chars[i..].iter().collect();
                    let close = if extended { "}" } else { "\\}" };
                    let end = rest.find(close).ok_or("an unterminated interval")?;
                    let body = &rest[..end];
                    if body.is_empty() || !body.chars().all(|x| x.is_ascii_digit() || x == ',') || was_start {
                        return Err("an interval not read here");
                    }
                    if body.starts_with(',') {
                        return Err("an interval without a minimum");
                    }
                    out.op(&format!("{{{body}}}"), false);
                    i += body.chars().count() + close.len();
                }
                '}' => return Err("a closing brace alone"),
                q => {
                    if was_start {
                        return Err("a quantifier with nothing before it");
                    }
                    out.op(&q.to_string(), false);
                }
            }
            continue;
        }
        if escaped {
            match op {
                'n' => out.char('\n'),
                't' => out.char('\t'),
                'r' => out.char('\r'),
                'f' => out.char('\u{c}'),
                'v' => out.char('\u{b}'),
                'w' => out.op("\\w", false),
                's' | 'S' | 'W' => out.op(&format!("\\{op}"), true),
                'b' | 'B' => out.op(&format!("\\{op}"), false),
                '<' => out.op("\\b{start}", false),
                '>' => out.op("\\b{end}", false),
                '`' => out.op("\\A", true),
                '\'' => out.op("\\z", true),
                d if d.is_alphanumeric() => return Err("an escape not read here (a backreference)"),
                d => out.char(d),
            }
            continue;
        }
        match c {
            '.' => out.op(".", true),
            '*' if was_start && !extended => out.char('*'),
            '*' if was_start => return Err("a quantifier with nothing before it"),
            '*' => out.op("*", false),
            '^' if was_start || extended => {
                out.op("^", true);
                start = true;
            }
            '$' if extended
                || i == chars.len()
                || chars[i..].starts_with(&['\\', ')'])
                || chars[i..].starts_with(&['\\', '|']) =>
            {
                out.op("$", true)
            }
            '[' => {
                let (class, len, crosses) = class(&chars[i - 1..], Dialect::Sed)?;
                i += len - 1;
                out.op(&class, crosses);
            }
            c => out.char(c),
        }
    }
    // `.` matches a newline in sed's pattern space.
    let flags = if ignore_case { "si" } else { "s" };
    Ok(out.done(flags))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Perl,
    Sed,
}

/// A bracket expression at `chars[0]` (`[`): the `regex` crate's class, its length, whether it
/// may match a newline. Inside, Perl reads escapes; POSIX (sed) reads a backslash as itself,
/// GNU sed turns `\n` and `\t` into their characters first.
fn class(chars: &[char], dialect: Dialect) -> Result<(String, usize, bool), &'static str> {
    let mut out = String::from("[");
    let mut i = 1;
    let mut crosses = false;
    if chars.get(i) == Some(&'^') {
        out.push('^');
        crosses = true;
        i += 1;
    }
    let mut first = true;
    // The last character put in, for a range after it (`[\t-\r]` holds a newline).
    let mut last: Option<char> = None;
    loop {
        let Some(&c) = chars.get(i) else { return Err("an unterminated bracket expression") };
        i += 1;
        match c {
            ']' if !first => {
                out.push(']');
                return Ok((out, i, crosses));
            }
            '[' if chars.get(i) == Some(&':') => {
                let rest: String = chars[i..].iter().collect();
                let end = rest.find(":]").ok_or("an unterminated character class name")?;
                let name = &rest[1..end];
                if !name.chars().all(|x| x.is_ascii_lowercase()) {
                    return Err("a character class name not read here");
                }
                crosses |= matches!(name, "space" | "cntrl");
                out.push_str(&format!("[:{name}:]"));
                i += end + 2;
            }
            '[' if matches!(chars.get(i), Some('.' | '=')) => return Err("a collating element"),
            '\\' => {
                let Some(&d) = chars.get(i) else { return Err("an unterminated bracket expression") };
                i += 1;
                let esc = match (dialect, d) {
                    (_, 'n') => "\\n".to_string(),
                    (_, 't') => "\\t".to_string(),
                    (Dialect::Perl, 'r') => "\\r".to_string(),
                    (Dialect::Perl, 'f') => "\\x0C".to_string(),
                    (Dialect::Perl, 'd' | 'w') => format!("\\{d}"),
                    (Dialect::Perl, 's' | 'S' | 'D' | 'W') => format!("\\{d}"),
                    (Dialect::Perl, d) if !d.is_alphanumeric() => regex::escape(d.encode_utf8(&mut [0; 4])),
                    _ => return Err("an escape in a bracket expression not read here"),
                };
                crosses |= matches!(d, 'n' | 's' | 'S' | 'D' | 'W');
                out.push_str(&esc);
                last = match d {
                    'n' => Some('\n'),
                    't' => Some('\t'),
                    _ => None,
                };
                first = false;
                continue;
            }
            '-' => {
                // A range between two characters; first or last, the character itself.
                if first || chars.get(i) == Some(&']') {
                    out.push_str("\\-");
                } else if chars.get(i) == Some(&'-') || chars.get(i).is_none() {
                    return Err("a range not read here");
                } else {
                    // A range from below a newline may hold it.
                    crosses |= last.is_none_or(|l| l <= '\n');
                    out.push('-');
                }
            }
            '\n' => {
                crosses = true;
                out.push_str("\\n");
            }
            c => {
                out.push_str(&regex::escape(c.encode_utf8(&mut [0; 4])));
                last = Some(c);
                first = false;
                continue;
            }
        }
        last = None;
        first = false;
    }
}

/// The pattern compiled: bytes, no Unicode (see the module), bounded in size.
pub fn compile(t: &Translated) -> Result<regex::bytes::Regex, &'static str> {
    regex::bytes::RegexBuilder::new(&t.source)
        .unicode(false)
        .size_limit(1 << 22)
        .build()
        .map_err(|_| "a pattern the regex crate does not compile")
}
