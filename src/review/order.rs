//! The natural order of the run list's text columns (instance, agent, model, exit status),
//! computed once for a list of runs: each run's rank in each column. Sorting the list by a key
//! press is then sorting integers, not comparing strings (101,400 dataset runs: a sort key took
//! up to 86 ms comparing natural keys, docs/BENCHMARKS.md).

use crate::store::read::RunSummary;

/// The rank of a run with no value in the column: after every value.
pub const NULL: u32 = u32::MAX;

/// Each run's rank (equal values, equal ranks) in each text column, indexed as the runs are,
/// and its id's rank with the runs in id order: a sort's whole key fits one `u128`.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Ranks {
    pub instance: Vec<u32>,
    pub agent: Vec<u32>,
    pub model: Vec<u32>,
    pub exit: Vec<u32>,
    /// The rank of each run's id (ids are unique: no two runs share one).
    pub id: Vec<u32>,
    /// The runs' indices in id order: `by_id[id[i]] == i`.
    pub by_id: Vec<u32>,
}

impl Ranks {
    pub fn of(runs: &[RunSummary]) -> Ranks {
        let mut by_id: Vec<u32> = (0..runs.len() as u32).collect();
        by_id.sort_unstable_by_key(|&i| runs[i as usize].id);
        let mut id = vec![0; runs.len()];
        for (rank, &i) in by_id.iter().enumerate() {
            id[i as usize] = rank as u32;
        }
        Ranks {
            instance: ranks(runs.iter().map(|r| Some(r.instance_id.as_str()))),
            agent: ranks(runs.iter().map(|r| r.agent.as_deref())),
            model: ranks(runs.iter().map(|r| r.model.as_deref())),
            exit: ranks(runs.iter().map(|r| r.exit_status.as_deref())),
            id,
            by_id,
        }
    }

    /// True when these are the ranks of a list of `len` runs.
    pub fn fit(&self, len: usize) -> bool {
        self.instance.len() == len
    }
}

fn ranks<'a>(values: impl ExactSizeIterator<Item = Option<&'a str>>) -> Vec<u32> {
    let mut out = vec![NULL; values.len()];
    let mut buf = Vec::new();
    let mut keyed: Vec<((usize, usize), usize)> = Vec::new();
    for (i, v) in values.enumerate() {
        if let Some(s) = v {
            keyed.push((natural_key(&mut buf, s), i));
        }
    }
    let key = |(start, end): (usize, usize)| &buf[start..end];
    keyed.sort_unstable_by(|a, b| key(a.0).cmp(key(b.0)));
    let mut rank = 0u32;
    for (n, &(span, i)) in keyed.iter().enumerate() {
        if n > 0 && key(keyed[n - 1].0) != key(span) {
            rank += 1;
        }
        out[i] = rank;
    }
    out
}

/// Appends to `buf` the bytes whose order is the natural order of `s`: ASCII case folded, and
/// each run of digits written as `0`, its length without leading zeros and those digits, so that
/// `django-9999` sorts before `django-10000`. Returns where in `buf` they are.
pub fn natural_key(buf: &mut Vec<u8>, s: &str) -> (usize, usize) {
    let (start, bytes) = (buf.len(), s.as_bytes());
    let mut i = 0;
    while i < bytes.len() {
        let run = bytes[i..].iter().take_while(|c| c.is_ascii_digit()).count();
        if run == 0 {
            buf.push(bytes[i].to_ascii_lowercase());
            i += 1;
            continue;
        }
        let digits = &bytes[i..i + run];
        let digits = &digits[digits.iter().position(|&c| c != b'0').unwrap_or(run)..];
        buf.extend([b'0', digits.len().min(255) as u8]);
        buf.extend_from_slice(digits);
        i += run;
    }
    (start, buf.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_a_rank_and_missing_ones_come_last() {
        let got = ranks([Some("b10"), None, Some("B9"), Some("a"), Some("b010")].into_iter());
        assert_eq!(got, [2, NULL, 1, 0, 2]);
    }
}
