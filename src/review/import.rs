//! `import-labels`: a reviewer's labels exported from another database, merged into this one.
//! Records are read one by one (a bad one is reported by its position), matched to runs here by
//! instance, model, agent and attempt, checked like labels made here ([`Label::check`]), and a
//! rater's history of one run is appended only when it extends the local one: two databases that
//! went different ways are reported as a conflict, never overwritten.

use super::export::ExportedLabel;
use crate::error::StoreError;
use crate::label::Label;
use crate::label::taxonomy::Taxonomy;
use crate::store::Store;
use crate::store::labels::LabelRow;
use crate::store::read::{RunFilter, RunSummary};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

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
}

impl ImportReport {
    /// Nothing was refused: no conflict, unmatched or rejected record.
    pub fn clean(&self) -> bool {
        self.conflicts.is_empty() && self.unmatched.is_empty() && self.rejected.is_empty()
    }
}

/// The text is not a label export at all (not JSON, not JSON lines).
#[derive(Debug, thiserror::Error)]
#[error("not a label export (JSON): {0}")]
pub struct NotAnExport(String);

/// A record of an export, by its position (`item 3`, `line 7`), read or with why not.
pub type Record = (String, Result<ExportedLabel, String>);

/// Every record of a label export (a JSON array, or JSON lines), each read on its own; a
/// reference set (`review::reference`: one entry per run, every mode judged) is read as labels
/// of the rater `reference`.
pub fn read_export(text: &str) -> Result<Vec<Record>, NotAnExport> {
    let parse = |v: serde_json::Value| serde_json::from_value::<ExportedLabel>(v).map_err(|e| e.to_string());
    if text.trim_start().starts_with('[') {
        let items: Vec<serde_json::Value> = serde_json::from_str(text).map_err(|e| NotAnExport(e.to_string()))?;
        if super::reference_set::is_reference(&items) {
            let entries = super::reference_set::read(items).into_iter().enumerate();
            return Ok(entries.map(|(i, (at, e))| (at, e.map(|e| e.record(i)))).collect());
        }
        return Ok(items.into_iter().enumerate().map(|(i, v)| (format!("item {}", i + 1), parse(v))).collect());
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
    l.check(&taxonomy, steps.max(0) as usize).err().map(|e| e.0)
}

/// The run a record names: the one run with its instance id (and model, agent and attempt where
/// the record gives them; a model spelled as a folder name, `org_model`, names `org/model`).
fn matching<'a>(runs: &'a [RunSummary], e: &ExportedLabel) -> Vec<&'a RunSummary> {
    let folded = |m: &str| m.to_ascii_lowercase().replace('/', "_");
    runs.iter()
        .filter(|r| Some(&r.instance_id) == e.instance_id.as_ref())
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

fn show(s: BTreeSet<String>) -> String {
    if s.is_empty() { "unclassified".to_string() } else { s.into_iter().collect::<Vec<_>>().join(", ") }
}

/// Merge `records` into the store; `local` is the taxonomy labels are checked against.
pub fn import(store: &mut Store, records: Vec<Record>, local: &Taxonomy) -> Result<ImportReport, StoreError> {
    let runs = store.list_runs(RunFilter::default())?;
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
    for ((run_id, source, rater, taxonomy), mut imported) in groups {
        imported.sort_by(|a, b| a.created_at.cmp(&b.created_at));
        let local: Vec<LabelRow> = store
            .labels(Some(run_id), false)?
            .into_iter()
            .filter(|r| r.label.source.name() == source && r.label.rater == rater && r.label.taxonomy == taxonomy)
            .collect();
        let same = |a: &ExportedLabel, r: &LabelRow| r.created_at == a.created_at && modes(&r.label) == modes(&a.label);
        let (present, new): (Vec<&ExportedLabel>, Vec<&ExportedLabel>) =
            imported.iter().partition(|e| local.iter().any(|r| same(e, r)));
        report.already_present += present.len();
        if new.is_empty() {
            continue;
        }
        // Safe to append only when the local history is part of the imported one and what is
        // new comes after it; otherwise the two databases went different ways for this rater.
        let local_known = local.iter().all(|r| imported.iter().any(|e| same(e, r)));
        let latest_local = local.iter().map(|r| r.created_at.as_str()).max().unwrap_or("");
        let after = new.iter().all(|e| e.created_at.as_str() > latest_local);
        if !(local_known && after) {
            let here =
                local.last().map(|r| format!("{} ({})", show(modes(&r.label)), r.created_at)).unwrap_or_default();
            let theirs =
                new.last().map(|e| format!("{} ({})", show(modes(&e.label)), e.created_at)).unwrap_or_default();
            let instance = new[0].instance_id.as_deref().unwrap_or("?");
            report.conflicts.push(format!("{instance} by {rater} ({source}): here {here}, imported {theirs}"));
            continue;
        }
        for e in new {
            let mut label = e.label.clone();
            label.run_id = run_id;
            store.add_label_at(&label, e.note.as_deref(), Some(&e.created_at))?;
            report.imported += 1;
        }
    }
    Ok(report)
}
