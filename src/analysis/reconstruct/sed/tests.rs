//! Scripts run on known lines: what they make of shown lines and of gaps.

use super::*;
use crate::analysis::reconstruct::budget::Budget;
use crate::analysis::reconstruct::known::Seg;

fn text_of(k: &Known) -> String {
    k.segs
        .iter()
        .map(|s| match s {
            Seg::Line(l) => l.text.as_deref().unwrap_or("?").to_string(),
            Seg::Gap { len: Some(n), .. } => format!("[{n}]"),
            Seg::Gap { len: None, .. } => "[…]".to_string(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

fn run(script: &str, file: &str) -> String {
    let mut k = Known::whole(file, None);
    let s = Script::sed(script, false, false).expect("parses");
    text_of(&s.run(&mut k, 0, &|_| None, &mut Budget::default()).expect("runs").after)
}

#[test]
fn substitutions_with_flags_addresses_and_delimiters() {
    assert_eq!(run("s/a/b/", "a a\na\n"), "b a|b");
    assert_eq!(run("s/a/b/g", "a a\n"), "b b");
    assert_eq!(run("s/a/b/2", "a a a\n"), "a b a");
    assert_eq!(run("s/A/b/I", "a\n"), "b");
    assert_eq!(run("2s|/x|/y|", "/x\n/x\n"), "/x|/y");
    assert_eq!(run("s#a\\#b#c#", "a#b\n"), "c");
    assert_eq!(run("/keep/!s/x/y/", "keep x\nx\n"), "keep x|y");
    assert_eq!(run("2,3s/x/y/", "x\nx\nx\nx\n"), "x|y|y|x");
    assert_eq!(run("$s/x/y/", "x\nx\n"), "x|y");
    assert_eq!(run("/start/,/end/s/x/y/", "x\nstart x\nx\nend x\nx\n"), "x|start y|y|end y|x");
    assert_eq!(run("s/x/a\\nb/", "x\n"), "a|b");
    assert_eq!(run("s/x/y/;s/y/z/", "x\n"), "z");
    assert_eq!(run("1~2s/x/y/", "x\nx\nx\n"), "y|x|y");
    assert_eq!(run("2,+1s/x/y/", "x\nx\nx\nx\n"), "x|y|y|x");
    assert_eq!(run("0,/x/s/x/y/", "x\nx\n"), "y|x");
}

#[test]
fn appends_inserts_changes_and_deletes() {
    assert_eq!(run("1a\\    indented", "a\nb\n"), "a|    indented|b");
    assert_eq!(run("1a hello", "a\n"), "a|hello");
    assert_eq!(run("1a\\\nline one\\\nline two", "a\n"), "a|line one|line two");
    assert_eq!(run("2i\\x", "a\nb\n"), "a|x|b");
    assert_eq!(run("1a\\  one\\n  two", "a\n"), "a|  one|  two");
    assert_eq!(run("2,3c\\new", "a\nb\nc\nd\n"), "a|new|d");
    assert_eq!(run("2c\\new", "a\nb\nc\n"), "a|new|c");
    assert_eq!(run("2d", "a\nb\nc\n"), "a|c");
    assert_eq!(run("32d;34d;35d", &(1..=36).map(|n| format!("{n}\n")).collect::<String>()).split('|').count(), 33);
    assert_eq!(run("/DEBUG/d", "a\nDEBUG x\nb\n"), "a|b");
    assert_eq!(run("2,$d", "a\nb\nc\n"), "a");
    assert_eq!(run("$a\\end", "a\nb\n"), "a|b|end");
    assert_eq!(run("2q", "a\nb\nc\n"), "a|b");
    assert_eq!(run("y/ab/AB/", "abc\n"), "ABc");
    assert_eq!(run("/x/{s/x/y/;s/y/z/}", "x\nw\n"), "z|w");
    assert_eq!(run("2p", "a\nb\n"), "a|b|b");
}

#[test]
fn lines_never_shown_are_gaps_that_numbers_split() {
    let mut k = Known::default();
    k.show(10, &[Rc::from("ten"), Rc::from("eleven")]);
    // `21a\ x`: line 21 was never shown, but the new line's place is known.
    let s = Script::sed("21a\\    x", false, false).expect("parses");
    let r = s.run(&mut k, 3, &|_| None, &mut Budget::default()).expect("runs");
    assert_eq!(text_of(&r.after), "[9]|ten|eleven|[9]|?|    x|[…]");
    // A pattern over lines never shown: assumed not to match them.
    let s = Script::sed("s/ten/TEN/", false, false).expect("parses");
    let r = s.run(&mut k, 4, &|_| None, &mut Budget::default()).expect("runs");
    assert!(r.assumed);
    assert_eq!(text_of(&r.after), "[9]|TEN|eleven|[9]|?|[…]");
    // Deleting to the end drops the open gap.
    let s = Script::sed("11,$d", false, false).expect("parses");
    let r = s.run(&mut k, 5, &|_| None, &mut Budget::default()).expect("runs");
    assert_eq!(text_of(&r.after), "[9]|ten");
    // Appending at the open end.
    let s = Script::sed("$a\\last", false, false).expect("parses");
    let r = s.run(&mut k, 6, &|_| None, &mut Budget::default()).expect("runs");
    assert_eq!(text_of(&r.after), "[9]|ten|eleven|[9]|?|[…]|last");
}

#[test]
fn what_cannot_be_known_is_an_error() {
    assert!(Script::sed("N;s/\\n//", false, false).is_err());
    assert!(Script::sed("s/a/b", false, false).is_err());
    let mut k = Known::default();
    let s = Script::sed("a\\x", false, false).expect("parses");
    assert!(s.run(&mut k, 0, &|_| None, &mut Budget::default()).is_err(), "a line after every unknown line");
    let s = Script::sed("1r other.txt", false, false).expect("parses");
    let mut w = Known::whole("a\n", None);
    assert!(s.run(&mut w, 0, &|_| None, &mut Budget::default()).is_err());
    let r = s.run(&mut w, 0, &|_| Some("from file\n".into()), &mut Budget::default()).expect("runs");
    assert_eq!(text_of(&r.after), "a|from file");
}

#[test]
fn perl_substitutions() {
    let s = Script::perl("s/(\\w+)_old/$1_new/g; s{a}{b}").expect("parses");
    let mut k = Known::whole("x_old y_old a\n", None);
    assert_eq!(text_of(&s.run(&mut k, 0, &|_| None, &mut Budget::default()).expect("runs").after), "x_new y_new b");
    assert!(Script::perl("print if /x/").is_err());
    // `$_` holds the line's newline: `\s+$` takes it and joins the lines, which is not read
    // here; a `\s` that stops before the newline's place cannot be told apart, so none is.
    for joins in [r"s/\s+$//", r"s/[^a]+$//", r"s/x\n/y/", r"s/\s*=\s*/=/g", r"s/x\012/y/"] {
        assert!(Script::perl(joins).is_err(), "{joins}");
    }
    assert!(Script::perl(r"s/\\s/x/").is_ok(), "an escaped backslash and an s");
    assert!(Script::perl(r"s/[abc]\d+ *$/x/").is_ok());
    assert!(Script::perl(r"s/(a)\1/b/").is_ok());
}
