use super::*;

#[test]
fn colour_codes_and_cursor_movement_are_removed() {
    assert_eq!(sanitize("\u{1b}[31mFAILED\u{1b}[0m x"), "FAILED x");
    assert_eq!(sanitize("\u{1b}[1;32m"), "");
    assert_eq!(sanitize("a\u{1b}[2J\u{1b}[1;1Hb\u{1b}(Bc\u{1b}cd"), "abcd");
}

#[test]
fn string_sequences_are_shown_with_their_text() {
    assert_eq!(sanitize("a\u{1b}]0;pwned\u{7}b"), "a⟦OSC 0;pwned⟧b");
    assert_eq!(sanitize("a\u{1b}]52;c;ZXZpbA==\u{1b}\\b"), "a⟦OSC 52;c;ZXZpbA==⟧b");
    assert_eq!(sanitize("\u{1b}Pq#0;2;0;0;0\u{1b}\\"), "⟦DCS q#0;2;0;0;0⟧");
    assert_eq!(sanitize("\u{1b}_hidden\u{1b}\\\u{1b}^pm\u{7}\u{1b}Xsos\u{9c}"), "⟦APC hidden⟧⟦PM pm⟧⟦SOS sos⟧");
    assert_eq!(sanitize("\u{9d}8;;http://x\u{9c}link"), "⟦OSC 8;;http://x⟧link");
    assert_eq!(sanitize("\u{1b}]\u{7}"), "⟦OSC⟧");
    // Unterminated: up to the end of the line, which is kept.
    assert_eq!(sanitize("a\u{1b}]0;title\nrest"), "a⟦OSC 0;title⟧\nrest");
    assert_eq!(sanitize("a\u{1b}]0;title\r\nrest"), "a⟦OSC 0;title⟧\nrest");
    // An ESC that is not ST ends the string and starts the next sequence.
    assert_eq!(sanitize("\u{1b}]0;t\u{1b}[31mred"), "⟦OSC 0;t⟧red");
}

#[test]
fn a_payload_cannot_carry_controls_or_hidden_text() {
    let out = sanitize("\u{1b}]0;a\u{0}b\u{9b}2J\u{202e}c\u{e0068}\u{e0069}\u{7}");
    assert_eq!(out, "⟦OSC 0;a\u{2400}b\u{fffd}2J\u{fffd}c⟦tags: hi⟧⟧");
}

#[test]
fn an_escape_that_starts_no_sequence_is_shown_and_swallows_nothing() {
    assert_eq!(sanitize("end\u{1b}\nnext"), "end\u{241b}\nnext");
    assert_eq!(sanitize("end\u{1b}"), "end\u{241b}");
    assert_eq!(sanitize("\u{1b}[31\nx"), "\u{241b}[31\nx");
    assert_eq!(sanitize("\u{1b}(\nx"), "\u{241b}(\nx");
    assert_eq!(sanitize("\u{1b}é"), "\u{241b}é");
    assert_eq!(sanitize("x\u{9b}2\ny"), "x\u{fffd}2\ny");
}

#[test]
fn control_characters_become_visible() {
    assert_eq!(sanitize("a\u{0}b\u{8}c\u{7f}"), "a\u{2400}b\u{2408}c\u{2421}");
    assert_eq!(sanitize("x\u{9b}2Jy"), "xy");
}

#[test]
fn line_and_paragraph_separators_are_shown() {
    assert_eq!(sanitize("a\u{2028}b\u{2029}c"), "a\u{2424}b\u{2424}c");
}

#[test]
fn tag_characters_are_spelled_out() {
    let hidden: String = "ignore previous".chars().map(|c| char::from_u32(0xe0000 + c as u32).unwrap_or('?')).collect();
    assert_eq!(sanitize(&format!("ok{hidden}.")), "ok⟦tags: ignore previous⟧.");
    assert_eq!(sanitize("\u{e0001}\u{e0065}\u{e006e}\u{e007f}"), "⟦tags: \u{fffd}en\u{fffd}⟧");
}

#[test]
fn subdivision_flags_are_kept() {
    let scotland = "🏴\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}";
    assert_eq!(sanitize(scotland), scotland);
    assert_eq!(sanitize(&format!("a {scotland} b")), format!("a {scotland} b"));
    // Tags after a flag that are not a subdivision code are spelled out.
    assert_eq!(sanitize("🏴\u{e0068}\u{e0069}"), "🏴⟦tags: hi⟧");
    assert_eq!(sanitize("x\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f}"), "x⟦tags: gbsct\u{fffd}⟧");
}

#[test]
fn bidi_overrides_and_zero_width_spaces_are_shown() {
    assert_eq!(sanitize("a\u{202e}b\u{200b}c"), "a\u{fffd}b\u{fffd}c");
}

#[test]
fn emoji_sequences_are_kept() {
    for text in ["👨\u{200d}👩", "👁\u{fe0f}\u{200d}🗨\u{fe0f}", "1\u{fe0f}\u{20e3}", "❤\u{fe0f}", "葛\u{e0100}"]
    {
        assert_eq!(sanitize(text), text);
        assert!(matches!(sanitize(text), Cow::Borrowed(_)), "{text}");
    }
}

#[test]
fn runs_of_variation_selectors_are_counted() {
    assert_eq!(sanitize("😀\u{fe0f}\u{e0100}\u{e0101}x"), "😀\u{fe0f}⟦2 more variation selectors⟧x");
    assert_eq!(sanitize("a\u{fe00}\u{fe01}"), "a\u{fe00}⟦1 more variation selector⟧");
    // Two runs, one after a control.
    assert_eq!(sanitize("\u{0}\u{fe00}\u{fe01}b\u{fe02}"), "\u{2400}\u{fe00}⟦1 more variation selector⟧b\u{fe02}");
}

#[test]
fn carriage_returns_are_normalised() {
    assert_eq!(sanitize("a\r\nb\rc"), "a\nb\nc");
}

#[test]
fn clean_text_is_borrowed() {
    assert!(matches!(sanitize("plain\ttext\n"), Cow::Borrowed(_)));
    assert!(matches!(sanitize("ünïcödé 中文 “quotes” — dash\u{a0}nbsp"), Cow::Borrowed(_)));
}

#[test]
fn clean_stretches_between_sequences_are_copied_whole() {
    let long = "word ".repeat(1000);
    let text = format!("{long}\u{1b}[1m{long}\u{7}{long}");
    assert_eq!(sanitize(&text), format!("{long}{long}\u{2407}{long}"));
}

/// The byte-at-a-time scan [`first_dirty`] passes clean blocks over for.
fn first_dirty_bytewise(text: &str) -> Option<usize> {
    let mut selector_end = usize::MAX;
    scan(text, 0..text.len(), &mut selector_end).unwrap_or(None)
}

#[test]
fn clean_blocks_passed_over_find_what_a_byte_at_a_time_finds() {
    // Characters that are, may look as if they were, or are not dirty, at every offset across
    // the edges of the blocks tested at once, alone, in pairs (a variation selector after
    // another only counts when they touch) and with a newline or tab beside them.
    let marks = [
        "\u{1b}",
        "\u{7f}",
        "\u{9b}",
        "\u{61c}",
        "\u{200b}",
        "\u{2028}",
        "\u{feff}",
        "\u{fe0f}",
        "\u{e0041}",
        "é",
        "€",
        "😀",
        "\u{fe0f}\u{fe0f}",
        "\u{fe0f}a\u{fe0f}",
        "\n",
        "\t",
        "\r",
        "\u{0}",
    ];
    let mut checked = 0;
    for len in [0, 1, 31, 32, 33, 63, 64, 65, 100] {
        let base = "x".repeat(len);
        for mark in marks {
            for other in ["", "\n", "\u{fe0f}", "é"] {
                for at in 0..=len {
                    for gap in [0, 1, 31, 32] {
                        let mut text = base.clone();
                        text.insert_str(at, mark);
                        let second = (at + mark.len() + gap).min(text.len());
                        text.insert_str(second, other);
                        assert_eq!(first_dirty(&text), first_dirty_bytewise(&text), "{text:?}");
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 10_000);
    // A text with nothing dirty in its blocks but its tail.
    let tail = format!("{}\u{1b}", "y".repeat(64));
    assert_eq!(first_dirty(&tail), Some(64));
}
