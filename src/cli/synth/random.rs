//! What every generator shares: a small deterministic random source, words, lines of code and
//! prose made of them, and the tally of what was generated.

/// What a generator wrote.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Generated {
    pub files: usize,
    pub bytes: u64,
    pub steps: usize,
}

/// A small deterministic generator (xorshift64*), enough for varied synthetic text.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    pub(super) fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

pub(super) const WORDS: &[&str] = &[
    "value", "config", "parser", "result", "handler", "request", "session", "index", "buffer", "token", "module",
    "field", "schema", "record", "stream", "cache", "option", "context", "error", "path",
];

pub(super) fn code_lines(rng: &mut Rng, n: usize, start: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let indent = "    ".repeat(rng.below(3) as usize);
        let (a, b, c) = (rng.pick(WORDS), rng.pick(WORDS), rng.pick(WORDS));
        let line = match rng.below(5) {
            0 => format!("{indent}def {a}_{b}(self, {c}=None):"),
            1 => format!("{indent}{a} = self.{b}.get(\"{c}\")"),
            2 => format!("{indent}if {a} is not None and {b}:"),
            3 => format!("{indent}return {a}_{b}({c})"),
            _ => format!("{indent}# {a} {b} {c}: keep the {a} in sync with the {c}"),
        };
        out.push_str(&format!("{:6}\t{line}\n", start + i));
    }
    out
}

pub(super) fn prose(rng: &mut Rng, words: usize) -> String {
    let mut s = String::new();
    for i in 0..words {
        if i > 0 {
            s.push(' ');
        }
        s.push_str(rng.pick(WORDS));
    }
    s.push('.');
    s
}
