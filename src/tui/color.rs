//! How many colours the terminal shows, from the environment, and a colour as a terminal of that
//! depth can show it (the nearest of 256 or 16). The theme and the syntax colours both go
//! through here.

use ratatui::style::Color;

/// How many colours the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorDepth {
    /// 24-bit colour: `#rrggbb` is used as it is.
    TrueColor,
    /// `#rrggbb` becomes the nearest xterm-256 colour.
    Ansi256,
    /// The 16 ANSI colours (`TERM=screen`, `xterm`, `linux`, `vt100`...): every colour becomes
    /// the nearest of them.
    Ansi16,
    /// No colours at all (`NO_COLOR`).
    NoColor,
}

impl ColorDepth {
    /// `NO_COLOR` set and non-empty: `NoColor`; `COLORTERM` `truecolor` or `24bit`: `TrueColor`;
    /// else `Ansi256`. `env` looks up environment variables (`|k| std::env::var(k).ok()`).
    pub fn detect(env: impl Fn(&str) -> Option<String>) -> ColorDepth {
        if env("NO_COLOR").is_some_and(|v| !v.is_empty()) {
            return ColorDepth::NoColor;
        }
        if let Some("truecolor" | "24bit") = env("COLORTERM").map(|v| v.trim().to_ascii_lowercase()).as_deref() {
            return ColorDepth::TrueColor;
        }
        // Then what the terminal's name says of it (its terminfo entry's `colors`): `*-256color`
        // has 256, `*-direct` 24-bit, `dumb` none, the plain names (`screen`, `xterm`, `linux`,
        // `vt100`, `tmux`, `rxvt`) 8 or 16. Without TERM, 256 colours (most terminals today).
        let Some(term) = env("TERM").map(|t| t.trim().to_ascii_lowercase()).filter(|t| !t.is_empty()) else {
            return ColorDepth::Ansi256;
        };
        if term == "dumb" {
            ColorDepth::NoColor
        } else if term.ends_with("-direct") || term.contains("truecolor") || term.contains("24bit") {
            ColorDepth::TrueColor
        } else if term.contains("256col") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }
}

impl std::str::FromStr for ColorDepth {
    type Err = String;

    /// For a `--color` option: `truecolor` (`24bit`), `256` (`ansi256`), `16` (`ansi`),
    /// `none` (`never`).
    fn from_str(s: &str) -> Result<ColorDepth, String> {
        match s.to_ascii_lowercase().as_str() {
            "truecolor" | "24bit" => Ok(ColorDepth::TrueColor),
            "256" | "ansi256" => Ok(ColorDepth::Ansi256),
            "16" | "ansi" | "ansi16" => Ok(ColorDepth::Ansi16),
            "none" | "never" | "no" => Ok(ColorDepth::NoColor),
            _ => Err(format!("unknown colour depth `{s}` (expected truecolor, 256, 16 or none)")),
        }
    }
}

/// A colour as a terminal of `depth` can show it.
pub fn for_depth(color: Color, depth: ColorDepth) -> Color {
    match (color, depth) {
        (Color::Rgb(r, g, b), ColorDepth::Ansi256) => Color::Indexed(nearest_ansi256(r, g, b)),
        (Color::Rgb(r, g, b), ColorDepth::Ansi16) => nearest_ansi16(r, g, b),
        (Color::Indexed(i), ColorDepth::Ansi16) if i > 15 => {
            let (r, g, b) = xterm_rgb(i);
            nearest_ansi16(r, g, b)
        }
        (color, _) => color,
    }
}

type Rgb = (u8, u8, u8);

/// The 16 ANSI colours as xterm draws them by default.
const ANSI16: [(Color, Rgb); 16] = [
    (Color::Black, (0, 0, 0)),
    (Color::Red, (205, 0, 0)),
    (Color::Green, (0, 205, 0)),
    (Color::Yellow, (205, 205, 0)),
    (Color::Blue, (0, 0, 238)),
    (Color::Magenta, (205, 0, 205)),
    (Color::Cyan, (0, 205, 205)),
    (Color::Gray, (229, 229, 229)),
    (Color::DarkGray, (127, 127, 127)),
    (Color::LightRed, (255, 0, 0)),
    (Color::LightGreen, (0, 255, 0)),
    (Color::LightYellow, (255, 255, 0)),
    (Color::LightBlue, (92, 92, 255)),
    (Color::LightMagenta, (255, 0, 255)),
    (Color::LightCyan, (0, 255, 255)),
    (Color::White, (255, 255, 255)),
];

/// The ANSI colour closest to an RGB colour. A colour with a clear hue keeps it (a dark green
/// diff background becomes green, not black; a pale red one red, not white): its hue alone (the
/// grey part taken out, at full strength) is matched against the six hues.
pub fn nearest_ansi16(r: u8, g: u8, b: u8) -> Color {
    let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
    let (max, min) = (r.max(g).max(b), r.min(g).min(b));
    let (rgb, candidates): (Rgb, &[(Color, Rgb)]) = if max - min >= 32 {
        let full = |v: u8| (u32::from(v - min) * 205 / u32::from(max - min)) as u8;
        ((full(r), full(g), full(b)), &ANSI16[1..7])
    } else {
        ((r, g, b), &ANSI16[..])
    };
    let (r, g, b) = rgb;
    candidates
        .iter()
        .min_by_key(|(_, (r2, g2, b2))| d(r, *r2) + d(g, *g2) + d(b, *b2))
        .map_or(Color::Reset, |(c, _)| *c)
}

/// The RGB value of an xterm-256 colour index.
fn xterm_rgb(i: u8) -> Rgb {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    match i {
        0..=15 => ANSI16[usize::from(i)].1,
        16..=231 => {
            let n = usize::from(i - 16);
            (LEVELS[n / 36], LEVELS[n / 6 % 6], LEVELS[n % 6])
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

/// The xterm-256 index closest to an RGB colour: the 6x6x6 cube (16-231) or the grey ramp
/// (232-255). The first 16 are left out: terminals redefine them.
pub fn nearest_ansi256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let dist = |(r2, g2, b2): (u8, u8, u8)| {
        let d = |a: u8, b: u8| (i32::from(a) - i32::from(b)).pow(2);
        d(r, r2) + d(g, g2) + d(b, b2)
    };
    let level = |v: u8| (0..6).min_by_key(|&i| (i32::from(LEVELS[i]) - i32::from(v)).abs()).unwrap_or(0);
    let (ri, gi, bi) = (level(r), level(g), level(b));
    let cube = (16 + 36 * ri + 6 * gi + bi) as u8;
    let cube_dist = dist((LEVELS[ri], LEVELS[gi], LEVELS[bi]));
    let grey = (0..24u8).min_by_key(|&i| dist((8 + 10 * i, 8 + 10 * i, 8 + 10 * i))).unwrap_or(0);
    let grey_value = 8 + 10 * grey;
    if dist((grey_value, grey_value, grey_value)) < cube_dist { 232 + grey } else { cube }
}
