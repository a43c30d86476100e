use super::*;

#[test]
fn placeholders_become_dollars_outside_quotes_only() {
    assert_eq!(dollars("SELECT a FROM t WHERE b = ?1 AND c = ?12"), "SELECT a FROM t WHERE b = $1 AND c = $12");
    assert_eq!(
        dollars("SELECT '?1', \"?2\" || ?3 WHERE x = 'it''s ?4'"),
        "SELECT '?1', \"?2\" || $3 WHERE x = 'it''s ?4'"
    );
    assert_eq!(dollars("SELECT $1 WHERE ? IS NULL"), "SELECT $1 WHERE ? IS NULL");
}

#[test]
fn id_lists_are_json_arrays() {
    assert_eq!(id_list(&[]), "[]");
    assert_eq!(id_list(&[3, -1, 40]), "[3,-1,40]");
}

/// The string literals of Rust source (comments skipped): where a module's SQL is.
fn literals(source: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        break;
                    }
                }
            }
            '\'' => {
                // A char literal ('"', '\'') or a lifetime: never the start of a string.
                let mut seen = String::new();
                while let Some(&n) = chars.peek() {
                    if !(n.is_alphanumeric() || n == '_' || n == '\\' || n == '"' || n == '\'') || seen.len() > 3 {
                        break;
                    }
                    seen.push(n);
                    chars.next();
                    if n == '\'' && !seen.ends_with("\\'") {
                        break;
                    }
                }
            }
            '"' => {
                let mut text = String::new();
                while let Some(c) = chars.next() {
                    match c {
                        '\\' => {
                            chars.next();
                        }
                        '"' => break,
                        c => text.push(c),
                    }
                }
                out.push(text);
            }
            _ => {}
        }
    }
    out
}

#[test]
fn no_shared_query_holds_one_backends_placeholder_or_syntax() {
    let files = [
        ("mod.rs", include_str!("mod.rs")),
        ("browse.rs", include_str!("browse.rs")),
        ("export.rs", include_str!("export.rs")),
        ("identity.rs", include_str!("identity.rs")),
        ("labels.rs", include_str!("labels.rs")),
        ("link.rs", include_str!("link.rs")),
        ("live.rs", include_str!("live.rs")),
        ("notes.rs", include_str!("notes.rs")),
        ("read.rs", include_str!("read.rs")),
        ("sources.rs", include_str!("sources.rs")),
        ("tables.rs", include_str!("tables.rs")),
        ("write.rs", include_str!("write.rs")),
        ("write_path.rs", include_str!("write_path.rs")),
    ];
    // PostgreSQL's: `$1`, `::` casts, arrays; SQLite's: `INSERT OR`, its functions, `rowid`,
    // `IS` between values. Either's goes through a fragment of `Sql`.
    let one_backends = [
        "::bigint",
        "::int",
        "::text",
        "ANY(",
        "unnest(",
        "clock_timestamp",
        "to_char(",
        "INSERT OR",
        "UPDATE OR",
        "strftime(",
        "group_concat(",
        "rowid",
        "json_each(",
        "char(31)",
        " IS ?",
        "last_insert",
    ];
    let mut wrong = Vec::new();
    for (file, source) in files {
        for text in literals(source) {
            let upper = text.to_uppercase();
            let dollar = text.as_bytes().windows(2).any(|w| w[0] == b'$' && w[1].is_ascii_digit());
            let found: Vec<&str> = one_backends.iter().copied().filter(|s| upper.contains(&s.to_uppercase())).collect();
            if dollar || !found.is_empty() {
                wrong.push(format!("{file}: {found:?} in {text:?}"));
            }
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
    // The scan sees what it looks for.
    let planted = literals("let s = \"SELECT x FROM t WHERE id = $1\"; // \"rowid\"\nlet c = '\"';");
    assert_eq!(planted, ["SELECT x FROM t WHERE id = $1"]);
}
