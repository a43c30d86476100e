//! Classification storage: signals per run, labels (append-only), the LLM reply cache and
//! classification errors, as both backends give them.

use crate::error::StoreError;
use crate::label::{Blame, Evidence, Judgement, Label, ModeVerdict, Provenance, Source};
use crate::store::cells::{Cells, named, opt_named};
use serde::Serialize;

/// A stored label with where and when.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelRow {
    pub id: i64,
    /// The run's instance, when the run is still in the database.
    pub instance_id: Option<String>,
    pub created_at: String,
    pub note: Option<String>,
    /// Whether it is its rater's current label for the run under its taxonomy's version (the
    /// latest per run, source, rater, taxonomy and version): what statistics and agreement read.
    pub current: bool,
    #[serde(flatten)]
    pub label: Label,
}

/// One run's signals and, when a new one is due, its label; written together.
pub struct Classified {
    pub run_id: i64,
    /// The version of the signals' shape (`classify::signals::VERSION`).
    pub signals_version: u32,
    pub signals_json: String,
    pub signals_hash: String,
    pub label: Option<Label>,
}

/// A validated LLM reply kept for a (model, prompt hash).
#[derive(Debug, Clone, PartialEq)]
pub struct CachedReply {
    pub reply: String,
    pub tokens_in: Option<u64>,
    pub tokens_out: Option<u64>,
    pub latency_ms: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ClassifyErrorRow {
    pub run_id: i64,
    pub source: Source,
    pub model: Option<String>,
    pub error: String,
    pub created_at: String,
}

/// A current label reduced to its modes: what agreement, statistics and review queues read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LabelSet {
    pub run_id: i64,
    pub source: Source,
    pub rater: String,
    /// Assigned modes, sorted; empty: unclassified.
    pub modes: Vec<String>,
    pub created_at: String,
    pub taxonomy_version: String,
    pub exit_category: String,
    /// The LLM's prompt hash (or the heuristic's signals hash).
    pub input_hash: Option<String>,
    /// Whether the rater judged onset or blame at all.
    pub judged: bool,
    /// The decisive error step, when one was given.
    pub onset_step: Option<usize>,
    /// Whose failure it is, when judged.
    pub blame: Option<Blame>,
}

/// What a rater's history of one run is kept under: the writers of one key take turns, so the
/// latest of its labels is the last one written.
#[derive(Debug, Clone, Copy)]
pub struct LabelKey<'a> {
    pub run_id: i64,
    pub source: Source,
    pub rater: &'a str,
    pub taxonomy: &'a str,
}

impl LabelKey<'_> {
    /// The key of a label.
    pub fn of(label: &Label) -> LabelKey<'_> {
        LabelKey { run_id: label.run_id, source: label.source, rater: &label.rater, taxonomy: &label.taxonomy }
    }

    /// Whether a stored label is under this key.
    pub fn holds(&self, row: &LabelRow) -> bool {
        let l = &row.label;
        l.run_id == self.run_id && l.source == self.source && l.rater == self.rater && l.taxonomy == self.taxonomy
    }

    /// The key as one text (for a lock on it).
    pub fn text(&self) -> String {
        format!("{}\u{1f}{}\u{1f}{}\u{1f}{}", self.run_id, self.source.name(), self.rater, self.taxonomy)
    }
}

/// The run whose labels hold every history of `keys` (they are all of one run), or `None`: all
/// labels are read.
pub fn run_of_keys(keys: &[LabelKey<'_>]) -> Option<i64> {
    let first = keys.first()?.run_id;
    keys.iter().all(|k| k.run_id == first).then_some(first)
}

/// The history (oldest first, as `rows` are) of each of `keys` among `rows`, in the keys' order.
pub fn histories(rows: Vec<LabelRow>, keys: &[LabelKey<'_>]) -> Vec<Vec<LabelRow>> {
    let place: std::collections::HashMap<String, usize> = keys.iter().enumerate().map(|(i, k)| (k.text(), i)).collect();
    let mut out = vec![Vec::new(); keys.len()];
    for row in rows {
        let l = &row.label;
        let key = LabelKey { run_id: l.run_id, source: l.source, rater: &l.rater, taxonomy: &l.taxonomy };
        if let Some(&i) = place.get(&key.text()) {
            out[i].push(row);
        }
    }
    out
}

/// A label to append, with its note and the time it was made (an imported label keeps its own;
/// `None`: now).
#[derive(Debug, Clone)]
pub struct NewLabel {
    pub label: Label,
    pub note: Option<String>,
    pub created_at: Option<String>,
}

/// The columns of a [`LabelRow`] (labels `l` left joined to their runs `r`), in the order
/// [`LabelRow::from_row`] reads them.
pub const LABEL_COLUMNS: &str = "l.id, r.instance_id, l.created_at, l.note, l.run_id, l.source, l.rater, l.taxonomy,
    l.taxonomy_version, l.exit_category, l.summary, l.model, l.input_hash, l.tokens_in, l.tokens_out, l.cost,
    l.latency_ms,
    l.id = (SELECT max(c.id) FROM labels c WHERE c.run_id = l.run_id AND c.source = l.source
            AND c.rater = l.rater AND c.taxonomy = l.taxonomy AND c.taxonomy_version = l.taxonomy_version),
    l.judgement";

impl LabelRow {
    /// A row of the [`LABEL_COLUMNS`], without its modes ([`LabelRow::add_mode`] adds them).
    pub fn from_row(r: &dyn Cells) -> Result<LabelRow, StoreError> {
        let count = |i| -> Result<Option<u64>, StoreError> { Ok(r.opt_int(i)?.map(|t| t as u64)) };
        Ok(LabelRow {
            id: r.int(0)?,
            instance_id: r.opt_text(1)?,
            created_at: r.text(2)?,
            note: r.opt_text(3)?,
            current: r.flag(17)?,
            label: Label {
                run_id: r.int(4)?,
                source: named(r, 5, "label source")?,
                rater: r.text(6)?,
                taxonomy: r.text(7)?,
                taxonomy_version: r.text(8)?,
                modes: Vec::new(),
                considered: Vec::new(),
                exit_category: r.opt_text(9)?.unwrap_or_default(),
                summary: r.opt_text(10)?.unwrap_or_default(),
                provenance: Provenance {
                    model: r.opt_text(11)?,
                    input_hash: r.opt_text(12)?,
                    tokens_in: count(13)?,
                    tokens_out: count(14)?,
                    cost: r.opt_real(15)?,
                    latency_ms: count(16)?,
                },
                judgement: Judgement::from_json(r.opt_text(18)?.as_deref()),
            },
        })
    }
}

/// The columns of a label's mode verdict: `label_id, mode, assigned, confidence, evidence,
/// rationale`.
pub fn mode_verdict(r: &dyn Cells) -> Result<(i64, bool, ModeVerdict), StoreError> {
    let evidence = r.text(4)?;
    let verdict = ModeVerdict {
        mode: r.text(1)?,
        confidence: r.real(3)?,
        evidence: serde_json::from_str::<Vec<Evidence>>(&evidence).unwrap_or_default(),
        rationale: r.text(5)?,
    };
    Ok((r.int(0)?, r.flag(2)?, verdict))
}

/// Labels with their mode verdicts put in place (verdicts of other labels ignored).
pub fn with_modes(mut rows: Vec<LabelRow>, verdicts: Vec<(i64, bool, ModeVerdict)>) -> Vec<LabelRow> {
    let at: std::collections::HashMap<i64, usize> = rows.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    for (label_id, assigned, verdict) in verdicts {
        let Some(row) = at.get(&label_id).and_then(|&i| rows.get_mut(i)) else { continue };
        if assigned { row.label.modes.push(verdict) } else { row.label.considered.push(verdict) }
    }
    rows
}

/// The columns of a [`LabelSet`] (labels `l`), in the order [`LabelSet::from_row`] reads them;
/// `MODES` is the backend's aggregate of the label's assigned modes, in order, joined by U+001F.
pub fn label_set_columns(modes: &str) -> String {
    format!(
        "l.run_id, l.source, l.rater, l.created_at, l.taxonomy_version, ({modes}), coalesce(l.exit_category, ''),
         l.input_hash, l.judgement IS NOT NULL, l.onset_step, l.blame"
    )
}

/// The judgement columns of a label's row as written: its JSON, the onset step and the blame value.
pub fn judgement_cells(label: &Label) -> (Option<String>, Option<i64>, Option<&'static str>) {
    let j = &label.judgement;
    let step = j.onset.as_ref().and_then(|o| o.step).map(|s| s as i64);
    (j.to_json(), step, j.blame.as_ref().and_then(|b| b.value).map(Blame::name))
}

impl LabelSet {
    /// A row of `run_id, source, rater, created_at, taxonomy_version, the assigned modes joined
    /// by U+001F in order, exit_category, input_hash, judgement IS NOT NULL, onset_step, blame`
    /// (see [`label_set_columns`]).
    pub fn from_row(r: &dyn Cells) -> Result<LabelSet, StoreError> {
        let modes = r.opt_text(5)?;
        Ok(LabelSet {
            run_id: r.int(0)?,
            source: named(r, 1, "label source")?,
            rater: r.text(2)?,
            created_at: r.text(3)?,
            taxonomy_version: r.text(4)?,
            modes: modes.map(|m| m.split('\u{1f}').map(str::to_string).collect()).unwrap_or_default(),
            exit_category: r.text(6)?,
            input_hash: r.opt_text(7)?,
            judged: r.flag(8)?,
            onset_step: r.opt_int(9)?.and_then(|s| usize::try_from(s).ok()),
            blame: opt_named(r, 10, "blame")?,
        })
    }
}

impl CachedReply {
    /// A row of `reply, tokens_in, tokens_out, latency_ms`.
    pub fn from_row(r: &dyn Cells) -> Result<CachedReply, StoreError> {
        let count = |i| -> Result<Option<u64>, StoreError> { Ok(r.opt_int(i)?.map(|t| t as u64)) };
        Ok(CachedReply { reply: r.text(0)?, tokens_in: count(1)?, tokens_out: count(2)?, latency_ms: count(3)? })
    }
}

impl ClassifyErrorRow {
    /// A row of `run_id, source, model, error, created_at` (a source this trajan does not know
    /// is an error).
    pub fn from_row(r: &dyn Cells) -> Result<ClassifyErrorRow, StoreError> {
        Ok(ClassifyErrorRow {
            run_id: r.int(0)?,
            source: named(r, 1, "label source")?,
            model: r.opt_text(2)?,
            error: r.text(3)?,
            created_at: r.text(4)?,
        })
    }
}

/// A label of `rater` on run `run_id` under taxonomy `refactoring` 1.0 that names nothing (tests).
#[cfg(test)]
pub fn blank_label(run_id: i64, source: Source, rater: &str) -> Label {
    Label {
        run_id,
        source,
        rater: rater.into(),
        taxonomy: "refactoring".into(),
        taxonomy_version: "1.0".into(),
        modes: Vec::new(),
        considered: Vec::new(),
        exit_category: String::new(),
        summary: String::new(),
        provenance: Provenance::default(),
        judgement: Judgement::default(),
    }
}
