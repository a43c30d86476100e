//! The terms are SQLite's: every text below is tokenized by FTS5 itself (an index read back
//! through `fts5vocab`, term by term in position order) and by [`super::terms`].

use super::*;

/// FTS5's terms of `text`, in order: an `unicode61` index of the text read back as instances.
fn fts5_terms(conn: &rusqlite::Connection, text: &str) -> Vec<String> {
    let run = || -> rusqlite::Result<Vec<String>> {
        conn.execute("DELETE FROM t", [])?;
        conn.execute("INSERT INTO t (rowid, x) VALUES (1, ?1)", [text])?;
        let mut stmt = conn.prepare("SELECT term FROM v ORDER BY doc, col, offset")?;
        let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
        rows.collect()
    };
    run().unwrap_or_else(|e| panic!("fts5 on {text:?}: {e}"))
}

fn index() -> rusqlite::Connection {
    let conn = rusqlite::Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    conn.execute_batch(
        "CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'unicode61');
         CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    conn
}

/// A small deterministic generator (xorshift), so failures repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Characters from the ranges where tokenizers differ: ASCII punctuation and digits, Latin with
/// diacritics, combining marks, Greek, Cyrillic, Armenian, Georgian, CJK, other digits, symbols,
/// emoji, noncharacters, private use in the BMP and plane 16, unassigned code points.
fn random_char(rng: &mut Rng) -> char {
    const RANGES: [(u32, u32); 20] = [
        (0x20, 0x7E),
        (0x09, 0x0D),
        (0xA0, 0x24F),
        (0x300, 0x36F),
        (0x370, 0x3FF),
        (0x400, 0x52F),
        (0x531, 0x58F),
        (0x10A0, 0x10FF),
        (0x1E00, 0x1FFF),
        (0x2000, 0x2BFF),
        (0x3000, 0x30FF),
        (0x4E00, 0x4E2F),
        (0x660, 0x669),
        (0xFF00, 0xFFFF),
        (0xE000, 0xE00F),
        (0x1F300, 0x1F64F),
        (0x10400, 0x1044F),
        (0x100000, 0x10000F),
        (0x10FFF0, 0x10FFFF),
        (0x2C00, 0x2C7F),
    ];
    loop {
        let (lo, hi) = RANGES[rng.below(RANGES.len() as u64) as usize];
        if let Some(c) = char::from_u32(lo + rng.below(u64::from(hi - lo + 1)) as u32) {
            return c;
        }
    }
}

#[test]
fn terms_are_fts5s_on_the_words_that_differ_elsewhere() {
    let conn = index();
    for text in [
        "pydicom",
        "line 1",
        "__init__.py",
        "2.0",
        "Traceback (most recent call last): File \"/testbed/x.py\", line 12, in <module>",
        "ÉCOLE Straße İstanbul ﬁnal ǅungla Ⅻ ①②",
        "naïve café coöperate résumé",
        "e\u{301}te\u{301} \u{301}x",
        "\u{FFFE}\u{FFFF}a\u{FFFF}b",
        "日本語のテキスト 中文",
        "Ωμέγα ΣΊΣΥΦΟΣ",
        "ПРИВЕТ мир",
        "\u{10FFFF}\u{100000}x",
        "٣٤٥ ١٢",
        "a\u{0}b\tc\nd",
        "\u{10400}\u{10428}",
    ] {
        assert_eq!(terms(text), fts5_terms(&conn, text), "{text:?}");
    }
}

#[test]
fn terms_are_fts5s_on_thousands_of_random_texts() {
    let conn = index();
    let mut rng = Rng(0x5EED_1234_ABCD_0001);
    for _ in 0..3000 {
        let len = rng.below(40) as usize;
        let text: String = (0..len).map(|_| random_char(&mut rng)).collect();
        assert_eq!(
            terms(&text),
            fts5_terms(&conn, &text),
            "{text:?} {:?}",
            text.chars().map(|c| c as u32).collect::<Vec<_>>()
        );
    }
}

#[test]
fn a_term_longer_than_fts5_keeps_is_cut_where_fts5_cuts_it() {
    let conn = index();
    let word = format!("{} tail", "Ab".repeat(20_000));
    assert_eq!(terms(&word), fts5_terms(&conn, &word));
    assert_eq!(terms(&word)[0].len(), MAX_TERM);
}

#[test]
fn a_phrase_is_found_where_fts5_finds_it_and_never_across_fields() {
    let doc = document(&["thought here", "cat __init__.py", "line 12, in <module>"]);
    assert_eq!(doc, " thought here \n cat init py \n line 12 in module ");
    let found = |p: &str| phrase(p).is_some_and(|p| doc.contains(&p));
    assert!(found("__init__"));
    assert!(found("init.py"));
    assert!(found("LINE 1"), "the last term is a prefix");
    assert!(!found("ine 12"), "a phrase starts at a term");
    assert!(!found("here cat"), "fields are apart");
    assert!(!found("py line"));
    assert_eq!(phrase("..."), None);
}
