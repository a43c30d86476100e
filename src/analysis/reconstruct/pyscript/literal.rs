//! Python's literal syntax where a script's text is: string escapes, and `re` replacement
//! templates and flags turned into what the `regex` crate reads.

/// The text of a string literal's body (between its quotes), escapes applied unless `raw`.
/// `None` for an escape whose value is not read here (`\N{name}`).
pub fn unescape(body: &str, raw: bool) -> Option<String> {
    if raw {
        return Some(body.to_string());
    }
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => {}
            '\\' | '\'' | '"' => out.push(e),
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            '0'..='7' => {
                let mut v = e.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v)?);
            }
            'x' | 'u' | 'U' => {
                let len = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let hex: String = (0..len).filter_map(|_| chars.next()).collect();
                out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
            }
            'N' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// A `re.sub` replacement (Python's template: `\1`, `\g<1>`, `\g<name>`, escapes) as the
/// `regex` crate's (`${1}`, `${name}`, `$$`). `None` for an escape Python refuses.
pub fn template(repl: &str) -> Option<String> {
    let mut out = String::with_capacity(repl.len());
    let chars: Vec<char> = repl.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        i += 1;
        match c {
            '$' => out.push_str("$$"),
            '\\' => {
                let e = *chars.get(i)?;
                i += 1;
                match e {
                    '0'..='9' => {
                        let mut n = e.to_string();
                        if let Some(d) = chars.get(i).filter(|d| d.is_ascii_digit()) {
                            n.push(*d);
                            i += 1;
                        }
                        out.push_str(&format!("${{{n}}}"));
                    }
                    'g' => {
                        if chars.get(i) != Some(&'<') {
                            return None;
                        }
                        let close = chars[i..].iter().position(|c| *c == '>')?;
                        let name: String = chars[i + 1..i + close].iter().collect();
                        i += close + 1;
                        out.push_str(&format!("${{{name}}}"));
                    }
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'f' => out.push('\u{c}'),
                    'v' => out.push('\u{b}'),
                    'a' => out.push('\u{7}'),
                    'b' => out.push('\u{8}'),
                    '\\' => out.push('\\'),
                    e if e.is_ascii_alphabetic() => return None,
                    other => {
                        out.push('\\');
                        out.push(other);
                    }
                }
            }
            other => out.push(other),
        }
    }
    Some(out)
}

/// `re` flag values (`re.M | re.S`) as inline flags: `None` for flags not read here
/// (`re.VERBOSE`, `re.ASCII`, `re.LOCALE`).
pub fn flags(bits: i64) -> Option<String> {
    const I: i64 = 2;
    const M: i64 = 8;
    const S: i64 = 16;
    if bits & !(I | M | S) != 0 {
        return None;
    }
    let mut f = String::new();
    for (bit, c) in [(I, 'i'), (M, 'm'), (S, 's')] {
        if bits & bit != 0 {
            f.push(c);
        }
    }
    Some(if f.is_empty() { f } else { format!("(?{f})") })
}

/// The value of `re.NAME`.
pub fn flag_value(name: &str) -> Option<i64> {
    Some(match name {
        "I" | "IGNORECASE" => 2,
        "M" | "MULTILINE" => 8,
        "S" | "DOTALL" => 16,
        "X" | "VERBOSE" => 64,
        "A" | "ASCII" => 256,
        _ => return None,
    })
}

/// A Python pattern compiled as the `regex` crate reads it (linear time, so no pattern of the
/// agent's can make the replay slow); `None` when it does not compile there (backreferences,
/// lookaround: what Python's engine alone knows).
pub fn regex(pattern: &str, bits: i64) -> Option<regex::Regex> {
    let pattern = pattern.replace("\\Z", "\\z");
    regex::RegexBuilder::new(&format!("{}{pattern}", flags(bits)?)).size_limit(1 << 22).build().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_templates_and_flags() {
        assert_eq!(unescape(r"a\n\t\'b\x41\101\\", false).as_deref(), Some("a\n\t'bAA\\"));
        assert_eq!(unescape(r"a\nb", true).as_deref(), Some(r"a\nb"));
        assert_eq!(unescape(r"\d+", false).as_deref(), Some(r"\d+"));
        assert_eq!(template(r"\1 = \g<name>$\n").as_deref(), Some("${1} = ${name}$$\n"));
        assert_eq!(template(r"\q"), None);
        assert_eq!(flags(8 | 16).as_deref(), Some("(?ms)"));
        assert_eq!(flags(64), None);
        let re = regex(r"(\s+)return None\n", 8).expect("compiles");
        let (out, n) = super::super::text::sub_n(&re, "x\n    return None\n", "${1}return 0\n", None);
        assert_eq!((out.as_str(), n), ("x\n    return 0\n", 1));
        assert!(regex(r"(a)\1", 0).is_none(), "backreferences are Python's engine's");
    }
}
