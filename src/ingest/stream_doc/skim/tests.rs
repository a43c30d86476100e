use super::*;
use serde_json::Value;

fn skim_str(text: &str, lists: &[&str]) -> Result<Skim, SkimError> {
    skim(text.as_bytes(), lists)
}

/// The document skimmed in two parts cut at every byte, and in three at pairs of cuts every
/// `stride` bytes, gives what one pass gives, errors included; the parts that begin inside a string are
/// replayed at some of those cuts, the others lexed again. Returns how many replayed.
fn check_parts(bytes: &[u8], lists: &[&str], stride: usize) -> usize {
    let text = String::from_utf8_lossy(bytes);
    let open = |at: u64| Ok::<_, std::io::Error>(&bytes[(at as usize).min(bytes.len())..]);
    let whole = format!("{:?}", skim(bytes, lists));
    let mut replayed = 0;
    let mut check = |cuts: &[u64]| {
        let split = parts::skim_split(&open, lists, cuts);
        replayed += split.as_ref().map_or(0, |(_, n)| *n);
        assert_eq!(format!("{:?}", split.map(|(s, _)| s)), whole, "cuts at {cuts:?} of {text}");
    };
    for cut in 0..=bytes.len() {
        check(&[cut as u64]);
    }
    for cut in (0..=bytes.len()).step_by(stride) {
        for second in (cut + 1..=bytes.len()).step_by(stride) {
            check(&[cut as u64, second as u64]);
        }
    }
    replayed
}

/// A reader that gives one byte at a time: every state crosses a block's end.
struct Dribble<'a>(&'a [u8]);

impl Read for Dribble<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match (self.0.split_first(), buf.first_mut()) {
            (Some((b, rest)), Some(out)) => {
                *out = *b;
                self.0 = rest;
                Ok(1)
            }
            _ => Ok(0),
        }
    }
}

/// Each element's bytes parse to the element serde_json finds in the whole document; each
/// member's bytes to the member's value.
fn check_against_serde(text: &str, list: &str) {
    let whole: Value = serde_json::from_str(text).expect("valid JSON");
    for found in [skim_str(text, &[list]).expect("skims"), skim(Dribble(text.as_bytes()), &[list]).expect("skims")] {
        let slice = |s: u64, e: u64| &text.as_bytes()[s as usize..e as usize];
        let want = whole[list].as_array().expect("a list");
        assert_eq!(found.elements.len(), want.len(), "{text}");
        for (e, w) in found.elements.iter().zip(want) {
            let got: Value = serde_json::from_slice(slice(e.start, e.end)).expect("an element's bytes are JSON");
            assert_eq!(&got, w);
            assert_eq!(e.object, w.is_object());
            assert_eq!(e.role.as_deref(), w.get("role").and_then(Value::as_str));
        }
        for m in &found.members {
            let got: Value = serde_json::from_slice(slice(m.start, m.end)).expect("a member's bytes are JSON");
            assert_eq!(got, whole[&m.key], "{}", m.key);
        }
        assert_eq!(found.size, text.len() as u64);
    }
}

#[test]
fn strings_with_escaped_quotes_and_brackets_do_not_end_or_open_anything() {
    let text = r#"{"info": {"a": "x\"]}{[", "b": "\\"}, "messages": [
        {"role": "user", "content": "a \" ] } [ { \\\" still inside"},
        {"content": "\\\\", "role": "assistant"},
        3, "s]", null, [1, [2, {"role": "x"}]], {"role": "tool", "content": "}\\"}
    ], "instance_id": "i\"1"}"#;
    check_against_serde(text, "messages");
    assert!(check_parts(text.as_bytes(), &["messages"], 7) > 0);
    let s = skim_str(text, &["messages"]).expect("skims");
    let roles: Vec<_> = s.elements.iter().map(|e| e.role.as_deref()).collect();
    assert_eq!(roles, [Some("user"), Some("assistant"), None, None, None, None, Some("tool")]);
    let keys: Vec<_> = s.members.iter().map(|m| m.key.as_str()).collect();
    assert_eq!(keys, ["info", "messages", "instance_id"]);
}

#[test]
fn nested_lists_and_objects_keep_to_their_depth() {
    let text = r#"{"trajectory": [{"state": "{\"open_file\": \"a\"}", "action": "x", "deep": [[[{"state": 1}]]]},
        {"action": "y", "state": {"open_file": "b", "inner": {"state": "s"}}}, {"state": null}, {"role": ["assistant"]}],
        "history": [{"role": "assistant"}], "messages": []}"#;
    check_against_serde(text, "trajectory");
    assert!(check_parts(text.as_bytes(), &["trajectory", "messages"], 7) > 0);
    let s = skim_str(text, &["trajectory", "messages"]).expect("skims");
    let states: Vec<_> = s.elements.iter().map(|e| e.state).collect();
    assert_eq!(states, [Some(b'"'), Some(b'{'), Some(b'n'), None]);
    assert_eq!(s.list.as_deref(), Some("trajectory"), "the first list named is indexed");
    assert_eq!(s.elements[3].role, None, "a role that is not a string is none");
}

#[test]
fn unicode_in_keys_roles_and_texts_and_escaped_roles_are_decoded() {
    let text = "\u{feff}{\"é漢\": \"🎉\", \"messages\": [{\"role\": \"\\u0061ssistant\", \"c\": \"日本語 \\ud83c\\udf89 ü\"}, {\"role\": \"usér\"}]}";
    let s = skim_str(text, &["messages"]).expect("skims");
    assert_eq!(s.members[0].key, "é漢");
    let roles: Vec<_> = s.elements.iter().map(|e| e.role.as_deref()).collect();
    assert_eq!(roles, [Some("assistant"), Some("usér")]);
    // Offsets count the byte-order mark: they are the file's.
    let body = &text.as_bytes()[s.elements[0].start as usize..s.elements[0].end as usize];
    assert!(body.starts_with(b"{\"role\""));
    check_against_serde(text.trim_start_matches('\u{feff}'), "messages");
    let dribbled = skim(Dribble(text.as_bytes()), &["messages"]).expect("skims a byte at a time");
    assert_eq!(dribbled, s, "the mark read a byte at a time is passed over too");
    assert!(check_parts(text.as_bytes(), &["messages"], 7) > 0);
}

#[test]
fn generated_documents_agree_with_serde_json() {
    // Texts made of the characters that matter to a scanner, in many orders.
    let pieces = ["\\\"", "\\\\", "]", "[", "{", "}", ",", ":", "é", "🎉", "\\n", "\\u00e9", " ", "a", "\\/"];
    let mut seed = 0x2545_f491_u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for round in 0..300 {
        let mut elements = Vec::new();
        for _ in 0..(next() % 6) {
            let mut s = String::new();
            for _ in 0..(next() % 12) {
                s.push_str(pieces[(next() % pieces.len() as u64) as usize]);
            }
            let role = ["assistant", "user", "tool", "exit"][(next() % 4) as usize];
            elements.push(match next() % 3 {
                0 => format!(r#"{{"role": "{role}", "content": "{s}", "n": [{{"x": "{s}"}}]}}"#),
                1 => format!(r#"["{s}", {{"role": "{s}"}}]"#),
                _ => format!(r#""{s}""#),
            });
        }
        let text = format!(r#"{{"pre": "{}", "messages": [{}], "post": {{"k": "]"}}}}"#, "\\\"]", elements.join(", "));
        check_against_serde(&text, "messages");
        if round % 10 == 0 {
            check_parts(text.as_bytes(), &["messages"], 29);
        }
    }
}

#[test]
fn a_cut_file_is_an_error_at_every_cut_never_a_panic() {
    let text =
        r#"{"info": {"a": "x\"]"}, "messages": [{"role": "user", "content": "a \\ \" ] é"}, {"role": "assistant"}]}"#;
    for cut in 0..text.len() {
        let bytes = &text.as_bytes()[..cut];
        match skim(bytes, &["messages"]) {
            Err(SkimError::Truncated { at }) => assert_eq!(at, cut as u64),
            other => panic!("cut at {cut}: {other:?}"),
        }
        if cut % 4 == 0 {
            check_parts(bytes, &["messages"], 13);
        }
    }
    assert!(skim_str(text, &["messages"]).is_ok());
}

#[test]
fn what_is_not_one_object_is_refused_with_its_byte() {
    let cases: [(&str, u64); 5] = [
        (r#"[{"role": "user"}]"#, 0),
        (r#"  "text""#, 2),
        (r#"{"messages": [1, 2}]}"#, 18),
        (r#"{"a": 1} {"b": 2}"#, 9),
        (r#"{"a": 1}}"#, 8),
    ];
    for (text, want) in cases {
        match skim_str(text, &["messages"]) {
            Err(SkimError::Shape { at, .. }) => assert_eq!(at, want, "{text}"),
            other => panic!("{text}: {other:?}"),
        }
        check_parts(text.as_bytes(), &["messages"], 3);
    }
}

#[test]
fn bytes_no_token_can_say_make_a_part_lexed_again() {
    // Raw bytes 0 and 1 outside strings (not JSON, but a skim must not take them for a string's
    // end): the parts holding them are lexed again, and the skim is the one pass's.
    let text = "{\"messages\": [{\"role\": \"user\", \"content\": \"aaaaaaaaaaaaaaaaaaaa\"} \u{0}, {\"role\": \"tool\"} \u{1}], \"info\": \"bbbbbbbbbbbbbbbbbbbb\"}";
    assert!(check_parts(text.as_bytes(), &["messages"], 5) > 0);
}
