//! `import-labels`: a reviewer's labels exported from another database, merged into this one.
//! Records are read one by one (a bad one is reported by its position), matched to runs here by
//! instance, model, agent and attempt, checked like labels made here ([`Label::check`]), and a
//! rater's history of one run is appended only when it extends the local one: two databases that
//! went different ways are reported as a conflict, never overwritten.
//!
//! A file is untrusted: matching and merging take time linear in its records and the labels
//! here (20,000 labels of one run import in well under a second), everything new is written in
//! one transaction (all or nothing), a note or text of a label over [`MAX_TEXT`] is refused,
//! and adjudications (the reference is settled here) are imported only when asked.

use super::export::ExportedLabel;
use super::onset_reference::OnsetEntry;
use crate::error::StoreError;
use crate::label::taxonomy::Taxonomy;
use crate::label::{Blame, Label};
use crate::store::Store;
use crate::store::labels::{LabelKey, LabelRow, NewLabel};
use crate::store::read::{RunFilter, RunSummary};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// The longest note, summary, rationale or evidence note an imported label may have (a
/// reviewer's note on a step is capped the same: `store::notes::MAX_NOTE`).
pub const MAX_TEXT: usize = crate::store::notes::MAX_NOTE;

/// What an import did.
#[derive(Debug, Default, Serialize)]
pub struct ImportReport {
    pub imported: usize,
    pub already_present: usize,
    /// The local database already has a different label by the same rater for the run.
    pub conflicts: Vec<String>,
    /// No run here matches (instance, model, agent, attempt), or several do.
    pub unmatched: Vec<String>,
    /// Records that are not valid labels here (unreadable, unknown taxonomy or mode, steps out
    /// of range, bad confidence, time or rater).
    pub rejected: Vec<String>,
    /// Classifier labels are not imported (classify here instead).
    pub skipped_classifier: usize,
    /// Adjudications are not imported unless asked (`--adjudications`): the reference is
    /// settled in this database.
    pub skipped_adjudications: usize,
}

impl ImportReport {
    /// Nothing was refused: no conflict, unmatched or rejected record.
    pub fn clean(&self) -> bool {
        self.conflicts.is_empty() && self.unmatched.is_empty() && self.rejected.is_empty()
    }
}

/// The text is not a label export at all (not JSON, not JSON lines), or an onset reference is
/// given where it cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum NotAnExport {
    #[error("not a label export (JSON): {0}")]
    Json(String),
    #[error("{0}")]
    Onset(String),
}

/// A record of an export, by its position (`item 3`, `line 7`), read or with why not.
pub type Record = (String, Result<ExportedLabel, String>);

/// Every record of a label export (a JSON array, or JSON lines), each read on its own; a
/// reference set (`review::reference_set`: one entry per run, every mode judged) is read as labels
/// of the rater `reference`, with the onset and blame of `onsets` (an onset reference's text,
/// `review::onset_reference`) when given ([`reference_records`]).
pub fn read_export(text: &str, onsets: Option<&str>) -> Result<Vec<Record>, NotAnExport> {
    let parse = |v: serde_json::Value| serde_json::from_value::<ExportedLabel>(v).map_err(|e| e.to_string());
    let array = |text: &str| serde_json::from_str::<Vec<serde_json::Value>>(text);
    let onsets = match onsets {
        None => None,
        Some(o) => match array(o) {
            Ok(items) if super::onset_reference::is_onset_reference(&items) => {
                Some(super::onset_reference::read(items))
            }
            _ => return Err(NotAnExport::Onset("--onset: not an onset reference (the shape of onset.json)".into())),
        },
    };
    let not_a_set = || NotAnExport::Onset("--onset goes with a labelled set (the shape of labels.json)".into());
    if text.trim_start().starts_with('[') {
        let items = array(text).map_err(|e| NotAnExport::Json(e.to_string()))?;
        if super::onset_reference::is_onset_reference(&items) {
            return Err(NotAnExport::Onset(
                "an onset reference holds no modes: import it with its labelled set (import-labels labels.json --onset onset.json)"
                    .into(),
            ));
        }
        if super::reference_set::is_reference(&items) {
            return Ok(reference_records(items, onsets.unwrap_or_default()));
        }
        if onsets.is_some() {
            return Err(not_a_set());
        }
        return Ok(items.into_iter().enumerate().map(|(i, v)| (format!("item {}", i + 1), parse(v))).collect());
    }
    if onsets.is_some() {
        return Err(not_a_set());
    }
    Ok(text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, line)| {
            let item = serde_json::from_str::<serde_json::Value>(line).map_err(|e| e.to_string()).and_then(parse);
            (format!("line {}", i + 1), item)
        })
        .collect())
}

/// The records of a reference set, and with `onsets` (an onset reference's entries) a second
/// record of each run an entry names (by file): the same modes with its onset and blame
/// (`reference_set::Entry::record_judged`). An onset entry that names no run of the set, or
/// cannot be read, is a record that says why.
fn reference_records(items: Vec<serde_json::Value>, onsets: Vec<(String, Result<OnsetEntry, String>)>) -> Vec<Record> {
    let entries = super::reference_set::read(items);
    let mut judged: BTreeMap<String, crate::label::Judgement> = BTreeMap::new();
    let mut unplaced = Vec::new();
    for (at, onset) in onsets {
        let at = format!("onset reference, {at}");
        match onset {
            Ok(o) if entries.iter().any(|(_, e)| e.as_ref().is_ok_and(|e| e.file == o.file)) => {
                judged.insert(o.file.clone(), o.judgement());
            }
            Ok(o) => unplaced.push((at, Err(format!("{}: no entry of the labelled set names this file", o.file)))),
            Err(why) => unplaced.push((at, Err(why))),
        }
    }
    let mut records = Vec::new();
    for (i, (at, entry)) in entries.into_iter().enumerate() {
        match entry {
            Ok(entry) => {
                records.push((at.clone(), Ok(entry.record(i))));
                if let Some(j) = judged.remove(&entry.file) {
                    records.push((format!("{at} with its onset"), Ok(entry.record_judged(i, j))));
                }
            }
            Err(why) => records.push((at, Err(why))),
        }
    }
    records.extend(unplaced);
    records
}

/// Why an imported label is not valid here, if it is not: its taxonomy must be the local one (or
/// a preset of the same version), its time RFC 3339, and the label valid as one made here.
fn invalid(e: &ExportedLabel, local: &Taxonomy, steps: i64) -> Option<String> {
    let l = &e.label;
    let taxonomy = if l.taxonomy == local.name && l.taxonomy_version == local.version {
        Some(local.clone())
    } else {
        Taxonomy::preset(&l.taxonomy).filter(|t| t.version == l.taxonomy_version)
    };
    let Some(taxonomy) = taxonomy else {
        return Some(format!("taxonomy {}@{} is not known here (use --taxonomy)", l.taxonomy, l.taxonomy_version));
    };
    if time::OffsetDateTime::parse(&e.created_at, &time::format_description::well_known::Rfc3339).is_err() {
        return Some(format!("created_at {:?} is not an RFC 3339 time", e.created_at));
    }
    if let Some((what, len)) = longest_text(e).filter(|&(_, len)| len > MAX_TEXT) {
        return Some(format!(
            "its {what} is {}; at most {}",
            crate::error::bytes(len as u64),
            crate::error::bytes(MAX_TEXT as u64)
        ));
    }
    l.check(&taxonomy, steps.max(0) as usize).err().map(|e| e.0)
}

/// The longest free text of a record: its note, summary, a rationale (of a mode or the onset),
/// the blame's reason or an evidence note.
fn longest_text(e: &ExportedLabel) -> Option<(&'static str, usize)> {
    let l = &e.label;
    let (onset, blame) = (l.judgement.onset.as_ref(), l.judgement.blame.as_ref());
    let verdicts = l.modes.iter().chain(&l.considered);
    let rationales = verdicts.clone().map(|m| ("rationale", m.rationale.len()));
    let evidence = verdicts
        .flat_map(|m| &m.evidence)
        .chain(onset.into_iter().flat_map(|o| &o.evidence))
        .chain(blame.into_iter().flat_map(|b| &b.evidence));
    let judged = [
        ("onset rationale", onset.map_or(0, |o| o.rationale.len())),
        ("onset's missing evidence", onset.map_or(0, |o| o.missing.iter().map(String::len).sum())),
        ("blame reason", blame.map_or(0, |b| b.reason.len())),
    ];
    [("note", e.note.as_deref().map_or(0, str::len)), ("summary", l.summary.len())]
        .into_iter()
        .chain(rationales)
        .chain(judged)
        .chain(evidence.map(|ev| ("evidence note", ev.note.len())))
        .max_by_key(|&(_, len)| len)
}

/// The run a record names: the one run with its instance id (and model, agent and attempt where
/// the record gives them; a model spelled as a folder name, `org_model`, names `org/model`).
/// `runs` are the runs here by instance.
fn matching<'a>(runs: &HashMap<&str, Vec<&'a RunSummary>>, e: &ExportedLabel) -> Vec<&'a RunSummary> {
    let folded = |m: &str| m.to_ascii_lowercase().replace('/', "_");
    let same_instance = e.instance_id.as_deref().and_then(|i| runs.get(i)).map_or(&[][..], Vec::as_slice);
    same_instance
        .iter()
        .copied()
        .filter(|r| match (&e.run_model, &r.model) {
            (None, _) => true,
            (Some(want), Some(have)) => folded(want) == folded(have),
            (Some(_), None) => false,
        })
        .filter(|r| e.run_agent.is_none() || r.agent == e.run_agent)
        .filter(|r| e.run_attempt.is_none() || r.attempt == e.run_attempt)
        .collect()
}

fn modes(l: &Label) -> BTreeSet<String> {
    l.modes.iter().map(|m| m.mode.clone()).collect()
}

/// A label's modes, and its onset and blame when it judged them: `x, y (onset 4, blame agent)`.
fn show(l: &Label) -> String {
    let s = modes(l);
    let modes = if s.is_empty() { "unclassified".to_string() } else { s.into_iter().collect::<Vec<_>>().join(", ") };
    let j = &l.judgement;
    let onset = j.onset.as_ref().map(|o| o.step.map_or("onset none".to_string(), |s| format!("onset {s}")));
    let blame = j.blame.as_ref().map(|b| format!("blame {}", b.value.map_or("none", Blame::name)));
    let judged: Vec<String> = onset.into_iter().chain(blame).collect();
    if judged.is_empty() { modes } else { format!("{modes} ({})", judged.join(", ")) }
}

/// A label as told apart from another by the same rater on the same run: its time, modes, and
/// its onset and blame whole (a different judgement is a different label).
fn sameness(created_at: &str, label: &Label) -> (String, BTreeSet<String>, Option<String>) {
    (created_at.to_string(), modes(label), label.judgement.to_json())
}

/// What of a rater's imported history of one run (`imported`, oldest first) extends the local
/// one (`local`, oldest first): the labels to append, and how many were already here. When the
/// two went different ways, a conflict is reported and nothing appended.
fn extension<'a>(
    local: &[LabelRow],
    imported: &'a [ExportedLabel],
    source: &str,
    rater: &str,
    conflicts: &mut Vec<String>,
) -> (Vec<&'a ExportedLabel>, usize) {
    let local_set: HashSet<_> = local.iter().map(|r| sameness(&r.created_at, &r.label)).collect();
    let imported_set: HashSet<_> = imported.iter().map(|e| sameness(&e.created_at, &e.label)).collect();
    let (present, new): (Vec<&ExportedLabel>, Vec<&ExportedLabel>) =
        imported.iter().partition(|e| local_set.contains(&sameness(&e.created_at, &e.label)));
    if new.is_empty() {
        return (new, present.len());
    }
    // Safe to append only when the local history is part of the imported one and what is new
    // comes after it; otherwise the two databases went different ways for this rater.
    let local_known = local.iter().all(|r| imported_set.contains(&sameness(&r.created_at, &r.label)));
    let latest_local = local.iter().map(|r| r.created_at.as_str()).max().unwrap_or("");
    let after = new.iter().all(|e| e.created_at.as_str() > latest_local);
    if !(local_known && after) {
        let here = local.last().map(|r| format!("{} ({})", show(&r.label), r.created_at)).unwrap_or_default();
        let theirs = new.last().map(|e| format!("{} ({})", show(&e.label), e.created_at)).unwrap_or_default();
        let instance = new[0].instance_id.as_deref().unwrap_or("?");
        conflicts.push(format!("{instance} by {rater} ({source}): here {here}, imported {theirs}"));
        return (Vec::new(), present.len());
    }
    (new, present.len())
}

/// Merge `records` into the store; `local` is the taxonomy labels are checked against;
/// adjudications are imported only with `adjudications`.
pub fn import(
    store: &mut Store,
    records: Vec<Record>,
    local: &Taxonomy,
    adjudications: bool,
) -> Result<ImportReport, StoreError> {
    let all_runs = store.list_runs(RunFilter::default())?;
    let mut runs: HashMap<&str, Vec<&RunSummary>> = HashMap::new();
    for r in &all_runs {
        runs.entry(r.instance_id.as_str()).or_default().push(r);
    }
    let mut report = ImportReport::default();
    // A rater's labels of one run are imported together, oldest first: their history.
    type Key = (i64, &'static str, String, String);
    let mut groups: BTreeMap<Key, Vec<ExportedLabel>> = BTreeMap::new();
    for (at, record) in records {
        let e = match record {
            Ok(e) => e,
            Err(why) => {
                report.rejected.push(format!("{at}: {why}"));
                continue;
            }
        };
        let l = &e.label;
        if !l.source.is_human() {
            report.skipped_classifier += 1;
            continue;
        }
        if l.source == crate::label::Source::Adjudication && !adjudications {
            report.skipped_adjudications += 1;
            continue;
        }
        let who = format!("{at}: {} by {} ({})", e.instance_id.as_deref().unwrap_or("?"), l.rater, l.source.name());
        match matching(&runs, &e)[..] {
            [run] => {
                if let Some(why) = invalid(&e, local, run.steps) {
                    report.rejected.push(format!("{who}: {why}"));
                    continue;
                }
                let key = (run.id, l.source.name(), l.rater.clone(), l.taxonomy.clone());
                groups.entry(key).or_default().push(e);
            }
            [] => report.unmatched.push(format!("{who}: no such run here")),
            _ => report.unmatched.push(format!("{who}: several runs match")),
        }
    }
    // Every key's history here and what is appended to it are read and written in one
    // transaction (an import goes in whole or not at all), the keys' other writers waiting:
    // importing one export twice at once appends it once.
    let groups: Vec<(Key, Vec<ExportedLabel>)> = groups
        .into_iter()
        .filter(|(_, imported)| !imported.is_empty())
        .map(|(key, mut imported)| {
            imported.sort_by(|a, b| a.created_at.cmp(&b.created_at));
            (key, imported)
        })
        .collect();
    let keys: Vec<LabelKey<'_>> = groups
        .iter()
        .filter_map(|((run_id, _, rater, taxonomy), imported)| {
            let first = imported.first()?;
            Some(LabelKey { run_id: *run_id, source: first.label.source, rater, taxonomy })
        })
        .collect();
    report.imported = store.append_histories(&keys, &mut |i, local| {
        let ((run_id, source, rater, _), imported) = &groups[i];
        let (new, present) = extension(local, imported, source, rater, &mut report.conflicts);
        report.already_present += present;
        new.into_iter()
            .map(|e| {
                let mut label = e.label.clone();
                label.run_id = *run_id;
                NewLabel { label, note: e.note.clone(), created_at: Some(e.created_at.clone()) }
            })
            .collect()
    })?;
    Ok(report)
}
