//! The run-list filter and sort: pure, no terminal or database.
//!
//! # Query language (typed after `/` in the run list)
//!
//! A query is a list of terms separated by spaces; a run is shown when it matches every term.
//!
//! - **Free words** are fuzzy-matched against the instance id, model and exit status: each word must
//!   match at least one of them (`djang 16560` finds `django__django-16560`). The list is ranked by
//!   how well the words match while the sort is the default one. A word with an upper-case letter
//!   matches case-sensitively.
//! - **`field:value`** keeps runs whose field contains the value (case-insensitive substring):
//!   `agent:`, `model:`, `exit:` (exit status), `format:`, `instance:`. A run without that field
//!   (no agent, no model, no exit status) never matches.
//! - **`id:`** keeps the runs with these ids: `id:12`, `id:3-9`, `id:3,5,9-12` (`trajan PATH...`
//!   opens the list so, on the runs of the files it read).
//! - **`resolved:yes`**, **`resolved:no`**, **`resolved:unknown`** (also `true`/`false`/`none`,
//!   `y`/`n`); the word **`failed`** is `resolved:no` (the verdict known and unresolved).
//! - **`patch:yes`**, **`patch:no`**: the run submitted a patch with something in it, or not
//!   (`patch:no exit:submitted` finds the runs that said they submitted and handed in nothing).
//! - **Comparisons** `steps>100`, `steps<=5`, `edits>=3`, `rejected>0`, `cost>1.5` with the operators
//!   `>`, `<`, `>=`, `<=`, `=`. A run with no recorded cost never matches a cost comparison.
//! - **`-`** before a term negates it: `-exit:submitted`, `-resolved:yes`. Negation is a plain "not",
//!   so `-agent:x` keeps runs with no agent and `-cost>1.5` keeps runs with no cost. A negated free
//!   word (`-sympy`) drops runs whose instance id, model or exit status contain it (a substring, not
//!   a fuzzy match).
//! - **Quotes** let a value hold spaces: `exit:"submitted (exit_cost)"`, `-"exit cost"`.
//! - **Labels** (the current ones; under blind review a classifier's labels count only on runs
//!   the reviewer has labelled, as on screen): `label:MODE` (a label assigns a mode containing
//!   MODE), `rater:NAME` (a label by a rater whose name contains NAME), `source:heuristic|llm|
//!   human|adjudication`, and the words `disputed` (reviewers disagree, no adjudication after
//!   them) and `unlabelled` (no reviewer has labelled the run; also `unlabeled`).
//! - **Onset and blame** (of the same labels): `blame:agent|task|environment` (a label blames
//!   it), `onset:yes` (a label gives an onset step), `onset:no` (none does).
//!
//! Field names are case-insensitive. A bad term (`foo:bar`, `steps>x`, `resolved:maybe`) is an
//! error naming it; the empty query matches every run.
//!
//! Sorting ([`Sort`]) is separate from the query: any column, either direction, missing values last.

#[cfg(test)]
mod tests;

use crate::label::Blame;
use crate::review::CurrentLabel;
use crate::review::order::{self, Ranks};
use crate::store::read::RunSummary;
use fuzzy_matcher::FuzzyMatcher;
use fuzzy_matcher::skim::SkimMatcherV2;
use strum::IntoEnumIterator;

/// A query that could not be parsed; the message names the bad term.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(pub String);

/// A parsed query. `Filter::default()` matches every run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    terms: Vec<Term>,
    /// Positive free words, fuzzy-matched and scored.
    words: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
struct Term {
    negated: bool,
    test: Test,
}

#[derive(Debug, Clone, PartialEq)]
enum Test {
    /// Lower-cased needle, matched as a case-insensitive substring.
    Text(TextField, String),
    Resolved(Option<bool>),
    Compare(NumField, Op, f64),
    /// A label assigns a mode containing the needle.
    Mode(String),
    /// A label by a rater whose name contains the needle.
    Rater(String),
    /// A label from this source (`heuristic`, `llm`, `human`, `adjudication`).
    Source(String),
    /// A label gives this blame.
    Blame(Blame),
    /// A label gives an onset step (`true`), or none does.
    Onset(bool),
    Disputed,
    Unlabelled,
    /// The run submitted a non-empty patch (`true`) or not.
    Patch(bool),
    /// The run id is in one of these ranges (inclusive).
    Ids(Vec<(i64, i64)>),
}

/// What the filter knows of a run's current labels (those the reviewer may see).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunLabels {
    pub labels: Vec<CurrentLabel>,
    pub disputed: bool,
}

impl RunLabels {
    fn reviewed(&self) -> bool {
        self.labels.iter().any(|l| l.source.is_human())
    }
}

/// The labels of every labelled run, by run id.
pub type LabelIndex = std::collections::HashMap<i64, RunLabels>;

/// What the filter may read of the runs' current labels: every label, except the classifiers'
/// of the runs `hide_classifiers` names (blind review hides them on screen, so from the filter
/// too).
pub fn label_index(
    states: &std::collections::BTreeMap<i64, crate::review::ReviewState>,
    hide_classifiers: impl Fn(i64) -> bool,
) -> LabelIndex {
    states
        .iter()
        .map(|(&run, state)| {
            let labels =
                state.labels.iter().filter(|l| l.source.is_human() || !hide_classifiers(run)).cloned().collect();
            (run, RunLabels { labels, disputed: state.disagreement })
        })
        .collect()
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum TextField {
    Agent,
    Model,
    Exit,
    Format,
    Instance,
    /// Instance id, model or exit status: a negated free word.
    Words,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum NumField {
    Steps,
    Edits,
    Rejected,
    Cost,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Op {
    Gt,
    Lt,
    Ge,
    Le,
    Eq,
}

/// Parses a query (see the module documentation).
pub fn parse(query: &str) -> Result<Filter, FilterError> {
    let mut filter = Filter::default();
    for raw in tokens(query)? {
        let (negated, body) = match raw.strip_prefix('-') {
            Some(body) => (true, body),
            None => (false, raw),
        };
        if body.is_empty() {
            return Err(FilterError(format!("\"{raw}\": nothing to negate")));
        }
        let name_len = body.bytes().take_while(u8::is_ascii_alphabetic).count();
        let rest = &body[name_len..];
        let op = [">=", "<=", ":", ">", "<", "="].into_iter().find(|op| rest.starts_with(op));
        let Some(op) = op.filter(|_| name_len > 0) else {
            let word = unquote(body);
            let keyword = match word.to_ascii_lowercase().as_str() {
                "disputed" => Some(Test::Disputed),
                "failed" => Some(Test::Resolved(Some(false))),
                "unlabelled" | "unlabeled" => Some(Test::Unlabelled),
                _ => None,
            };
            if let Some(test) = keyword {
                filter.terms.push(Term { negated, test });
                continue;
            }
            match (word.is_empty(), negated) {
                (true, _) => {}
                (false, true) => filter.terms.push(Term { negated, test: Test::Text(TextField::Words, lower(&word)) }),
                (false, false) => filter.words.push(word),
            }
            continue;
        };
        let test = field_test(raw, &body[..name_len], op, &unquote(&rest[op.len()..]))?;
        filter.terms.push(Term { negated, test });
    }
    Ok(filter)
}

fn field_test(raw: &str, name: &str, op: &str, value: &str) -> Result<Test, FilterError> {
    let err = |msg: String| Err(FilterError(format!("\"{raw}\": {msg}")));
    let field = name.to_ascii_lowercase();
    let text = match field.as_str() {
        "agent" => Some(TextField::Agent),
        "model" => Some(TextField::Model),
        "exit" => Some(TextField::Exit),
        "format" => Some(TextField::Format),
        "instance" => Some(TextField::Instance),
        _ => None,
    };
    let num = match field.as_str() {
        "steps" => Some(NumField::Steps),
        "edits" => Some(NumField::Edits),
        "rejected" => Some(NumField::Rejected),
        "cost" => Some(NumField::Cost),
        _ => None,
    };
    if field == "id" {
        if op != ":" {
            return err("use id:N, id:N-M or a list such as id:3,5,9-12".into());
        }
        return ids(value)
            .map(Test::Ids)
            .ok_or_else(|| FilterError(format!("\"{raw}\": expected run ids such as id:3,5,9-12")));
    }
    if let "label" | "mode" | "rater" | "source" = field.as_str() {
        if op != ":" || value.is_empty() {
            return err(format!("use {field}:value"));
        }
        let value = lower(value);
        return match field.as_str() {
            "rater" => Ok(Test::Rater(value)),
            "source" if ["heuristic", "llm", "human", "adjudication"].contains(&value.as_str()) => {
                Ok(Test::Source(value))
            }
            "source" => err("expected heuristic, llm, human or adjudication".into()),
            _ => Ok(Test::Mode(value)),
        };
    }
    if field == "blame" {
        return match Blame::from_name(&value.to_ascii_lowercase()) {
            Some(b) if op == ":" => Ok(Test::Blame(b)),
            _ => err("use blame:agent, blame:task or blame:environment".into()),
        };
    }
    if field == "onset" {
        return match (op, value.to_ascii_lowercase().as_str()) {
            (":", "yes" | "y" | "true") => Ok(Test::Onset(true)),
            (":", "no" | "n" | "false" | "none") => Ok(Test::Onset(false)),
            _ => err("use onset:yes or onset:no".into()),
        };
    }
    if field == "patch" {
        return match (op, value.to_ascii_lowercase().as_str()) {
            (":", "yes" | "y" | "true") => Ok(Test::Patch(true)),
            (":", "no" | "n" | "false" | "none" | "empty") => Ok(Test::Patch(false)),
            _ => err("use patch:yes or patch:no".into()),
        };
    }
    if text.is_none() && num.is_none() && field != "resolved" {
        return Err(FilterError(format!("unknown field \"{name}\" in \"{raw}\"")));
    }
    if num.is_none() && op != ":" {
        return err(format!("use {field}:value, not a comparison"));
    }
    if value.is_empty() {
        return err("missing value".into());
    }
    if let Some(f) = text {
        return Ok(Test::Text(f, lower(value)));
    }
    let Some(num) = num else {
        return match value.to_ascii_lowercase().as_str() {
            "yes" | "y" | "true" => Ok(Test::Resolved(Some(true))),
            "no" | "n" | "false" => Ok(Test::Resolved(Some(false))),
            "unknown" | "none" => Ok(Test::Resolved(None)),
            _ => err("expected yes, no or unknown".into()),
        };
    };
    let op = match op {
        ">" => Op::Gt,
        "<" => Op::Lt,
        ">=" => Op::Ge,
        "<=" => Op::Le,
        "=" => Op::Eq,
        _ => {
            let n = if value.parse::<f64>().is_ok() { value } else { "N" };
            return err(format!("use a comparison such as {field}>{n} or {field}={n}"));
        }
    };
    match value.parse::<f64>() {
        Ok(n) if n.is_finite() => Ok(Test::Compare(num, op, n)),
        _ => err("not a number".into()),
    }
}

/// `3,5,9-12` as ranges; `None` when anything else is in it.
fn ids(value: &str) -> Option<Vec<(i64, i64)>> {
    value
        .split(',')
        .map(|part| match part.split_once('-') {
            Some((a, b)) => Some((a.trim().parse().ok()?, b.trim().parse().ok()?)),
            None => part.trim().parse().ok().map(|n| (n, n)),
        })
        .collect::<Option<Vec<_>>>()
        .filter(|r| !r.is_empty())
}

/// The query that keeps exactly these runs: `id:3-5,9` (ranges where ids follow each other).
pub fn ids_query(ids: &[i64]) -> String {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let start = sorted[i];
        let mut end = start;
        while i + 1 < sorted.len() && sorted[i + 1] == end + 1 {
            i += 1;
            end = sorted[i];
        }
        parts.push(if start == end { start.to_string() } else { format!("{start}-{end}") });
        i += 1;
    }
    format!("id:{}", parts.join(","))
}

/// Splits on whitespace outside double quotes; the quotes stay in the tokens.
fn tokens(query: &str) -> Result<Vec<&str>, FilterError> {
    let (mut out, mut start, mut quoted) = (Vec::new(), None, false);
    for (i, c) in query.char_indices() {
        if c.is_whitespace() && !quoted {
            out.extend(start.take().map(|s| &query[s..i]));
            continue;
        }
        start.get_or_insert(i);
        quoted ^= c == '"';
    }
    out.extend(start.map(|s| &query[s..]));
    if quoted {
        let last = out.last().copied().unwrap_or_default();
        return Err(FilterError(format!("unterminated quote in \"{last}\"")));
    }
    Ok(out)
}

fn unquote(s: &str) -> String {
    s.replace('"', "")
}

fn lower(s: &str) -> String {
    s.to_lowercase()
}

/// Case-insensitive substring test; `needle` is already lower-cased. Allocation-free for ASCII needles.
fn contains(hay: &str, needle: &str) -> bool {
    if !needle.is_ascii() {
        return hay.to_lowercase().contains(needle);
    }
    let (h, n) = (hay.as_bytes(), needle.as_bytes());
    n.is_empty() || h.windows(n.len()).any(|w| w.eq_ignore_ascii_case(n))
}

impl Term {
    fn matches(&self, run: &RunSummary, labels: Option<&RunLabels>) -> bool {
        let any = |f: &dyn Fn(&CurrentLabel) -> bool| labels.is_some_and(|l| l.labels.iter().any(f));
        let hit = match &self.test {
            Test::Mode(needle) => any(&|l| l.modes.iter().any(|m| contains(m, needle))),
            Test::Rater(needle) => any(&|l| contains(&l.rater, needle)),
            Test::Source(source) => any(&|l| l.source.name() == source),
            Test::Blame(blame) => any(&|l| l.blame == Some(*blame)),
            Test::Onset(wanted) => any(&|l| l.onset.is_some()) == *wanted,
            Test::Disputed => labels.is_some_and(|l| l.disputed),
            Test::Unlabelled => !labels.is_some_and(RunLabels::reviewed),
            Test::Patch(wanted) => run.has_patch == *wanted,
            Test::Text(field, needle) => {
                let has = |s: Option<&str>| s.is_some_and(|s| contains(s, needle));
                match field {
                    TextField::Agent => has(run.agent.as_deref()),
                    TextField::Model => has(run.model.as_deref()),
                    TextField::Exit => has(run.exit_status.as_deref()),
                    TextField::Format => has(Some(run.format.name())),
                    TextField::Instance => has(Some(run.instance_id.as_str())),
                    TextField::Words => {
                        has(Some(run.instance_id.as_str()))
                            || has(run.model.as_deref())
                            || has(run.exit_status.as_deref())
                    }
                }
            }
            Test::Resolved(want) => run.resolved == *want,
            Test::Ids(ranges) => ranges.iter().any(|(a, b)| (*a..=*b).contains(&run.id)),
            Test::Compare(field, op, n) => {
                let value = match field {
                    NumField::Steps => Some(run.steps as f64),
                    NumField::Edits => Some(run.edits as f64),
                    NumField::Rejected => Some(run.rejected_edits as f64),
                    NumField::Cost => run.cost,
                };
                value.is_some_and(|v| match op {
                    Op::Gt => v > *n,
                    Op::Lt => v < *n,
                    Op::Ge => v >= *n,
                    Op::Le => v <= *n,
                    Op::Eq => v == *n,
                })
            }
        };
        hit != self.negated
    }
}

impl Filter {
    /// `None` when the run is excluded, otherwise the summed fuzzy score of the free words (0 without any).
    pub fn matches(&self, run: &RunSummary, labels: &LabelIndex, m: &SkimMatcherV2) -> Option<i64> {
        self.matches_with(run, labels.get(&run.id), |field, word, _| m.fuzzy_match(field, word))
    }

    /// [`Filter::matches`] with the fuzzy scorer passed in; its flag is false for the instance id, true for the
    /// model and exit status (few distinct values, worth remembering).
    fn matches_with<'a>(
        &'a self,
        run: &'a RunSummary,
        labels: Option<&RunLabels>,
        mut fuzzy: impl FnMut(&'a str, &'a str, bool) -> Option<i64>,
    ) -> Option<i64> {
        if !self.terms.iter().all(|t| t.matches(run, labels)) {
            return None;
        }
        let fields =
            [(Some(run.instance_id.as_str()), false), (run.model.as_deref(), true), (run.exit_status.as_deref(), true)];
        let mut score = 0;
        for word in &self.words {
            score += fields.iter().filter_map(|&(f, memo)| fuzzy(f?, word, memo)).max()?;
        }
        Some(score)
    }

    /// True for the empty query.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty() && self.words.is_empty()
    }

    /// True when the query has free words, so the default sort ranks by fuzzy score.
    pub fn has_words(&self) -> bool {
        !self.words.is_empty()
    }
}

/// Indices into `runs` of the runs matching `filter`, in `sort` order. With free words and the default sort, the
/// best fuzzy matches come first (ties by instance id).
pub fn apply(runs: &[RunSummary], labels: &LabelIndex, filter: &Filter, sort: Sort) -> Vec<usize> {
    apply_ranked(runs, &Ranks::of(runs), labels, filter, sort)
}

/// [`apply`] with the runs' ranks in their text columns already known (the TUI's list keeps them): the sort
/// compares integers. Ranks that are not those of `runs` are computed again.
pub fn apply_ranked(
    runs: &[RunSummary],
    ranks: &Ranks,
    labels: &LabelIndex,
    filter: &Filter,
    sort: Sort,
) -> Vec<usize> {
    let computed;
    let ranks = if ranks.fit(runs.len()) {
        ranks
    } else {
        computed = Ranks::of(runs);
        &computed
    };
    let m = SkimMatcherV2::default();
    let by_score = filter.has_words() && sort == Sort::default();
    // Only a filter's terms read a run's labels: without terms no run's are looked up.
    let needs_labels = !filter.terms.is_empty();
    // Each hit's whole sort key in one integer, its lowest 31 bits the run's id rank (so the run
    // itself): best score first, or missing values last both ways then the column's value; ties
    // by instance, then id. Sorting 16-byte integers is several times faster than tuples at
    // 350,000 runs (docs/BENCHMARKS.md).
    let mut hits: Vec<u128> = Vec::with_capacity(runs.len());
    let mut memo = std::collections::HashMap::new();
    for (index, run) in runs.iter().enumerate() {
        let fuzzy = |field, word, repeated| match repeated {
            true => *memo.entry((field, word)).or_insert_with(|| m.fuzzy_match(field, word)),
            false => m.fuzzy_match(field, word),
        };
        let labels = if needs_labels { labels.get(&run.id) } else { None };
        let Some(score) = filter.matches_with(run, labels, fuzzy) else { continue };
        let tail = u128::from(ranks.instance[index]) << 31 | u128::from(ranks.id[index] & ID_BITS);
        if by_score {
            // Higher scores first: the score's order, reversed.
            hits.push(u128::from(!ordered(score as f64)) << 64 | tail);
            continue;
        }
        let text = |rank: u32| (rank != order::NULL).then_some(u64::from(rank));
        let key = match sort.key {
            SortKey::Id => Some(ordered(run.id as f64)),
            SortKey::Instance => text(ranks.instance[index]),
            SortKey::Agent => text(ranks.agent[index]),
            SortKey::Model => text(ranks.model[index]),
            SortKey::Exit => text(ranks.exit[index]),
            SortKey::Resolved => run.resolved.map(u64::from),
            SortKey::Steps => Some(ordered(run.steps as f64)),
            SortKey::Edits => Some(ordered(run.edits as f64)),
            SortKey::Cost => run.cost.map(ordered),
        };
        let (missing, key) = match key {
            Some(k) if sort.descending => (0, !k),
            Some(k) => (0, k),
            None => (1, 0),
        };
        hits.push(missing << 127 | u128::from(key) << 63 | tail);
    }
    hits.sort_unstable();
    hits.into_iter().map(|h| ranks.by_id[(h as u32 & ID_BITS) as usize] as usize).collect()
}

/// The bits of a sort key that hold the run's id rank: 2^31 runs, far beyond what memory holds.
const ID_BITS: u32 = (1 << 31) - 1;

/// `x` as an integer of the same order (`f64::total_cmp`'s).
fn ordered(x: f64) -> u64 {
    let bits = x.to_bits();
    if bits >> 63 == 1 { !bits } else { bits | 1 << 63 }
}

/// A run-list column to sort by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, strum::EnumIter, strum::IntoStaticStr, strum::EnumString)]
#[strum(serialize_all = "snake_case")]
pub enum SortKey {
    Id,
    Instance,
    Agent,
    Model,
    Exit,
    Resolved,
    Steps,
    Edits,
    Cost,
}

impl SortKey {
    /// The key that picks this column after `o` (the column's initial where it is free).
    pub fn pick_char(self) -> char {
        match self {
            SortKey::Id => '#',
            SortKey::Instance => 'i',
            SortKey::Agent => 'a',
            SortKey::Model => 'm',
            SortKey::Exit => 'x',
            SortKey::Resolved => 'r',
            SortKey::Steps => 's',
            SortKey::Edits => 'e',
            SortKey::Cost => 'c',
        }
    }

    pub fn from_pick_char(c: char) -> Option<SortKey> {
        SortKey::iter().find(|k| k.pick_char() == c)
    }

    /// What the sort prompt shows: `i instance  a agent ...`.
    pub fn pick_menu() -> String {
        SortKey::iter().map(|k| format!("{} {}", k.pick_char(), k.name())).collect::<Vec<_>>().join("  ")
    }

    pub fn name(self) -> &'static str {
        self.into()
    }
}

/// The run-list order; the default is by instance id, ascending. Text sorts naturally (case-insensitive, digit runs
/// by value: `django-9999` before `django-10000`), `resolved` puts no before yes, and missing values come last in
/// both directions. Ties go by instance id, then run id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sort {
    pub key: SortKey,
    pub descending: bool,
}

impl Default for Sort {
    fn default() -> Self {
        Sort { key: SortKey::Instance, descending: false }
    }
}

impl Sort {
    /// The next column (in the enum's order, wrapping), keeping the direction.
    pub fn next_key(self) -> Sort {
        let next = SortKey::iter().skip_while(|k| *k != self.key).nth(1);
        Sort { key: next.unwrap_or(SortKey::Id), ..self }
    }

    pub fn reversed(self) -> Sort {
        Sort { descending: !self.descending, ..self }
    }

    /// For the status line: `"steps ↓"`.
    pub fn label(self) -> String {
        format!("{} {}", self.key.name(), if self.descending { '↓' } else { '↑' })
    }
}
