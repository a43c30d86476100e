//! The run list's filter language (`tui::filter`, the TUI's `/`) on the command line: the runs
//! an expression keeps, with every current label of the taxonomy visible to it.

use anyhow::{Result, anyhow};
use trajan::label::taxonomy::Taxonomy;
use trajan::store::Store;
use trajan::store::read::{RunFilter, RunSummary};
use trajan::tui::filter;

/// The runs `expr` keeps, in the run list's default order.
pub fn runs(store: &Store, expr: &str, taxonomy: &Taxonomy) -> Result<Vec<RunSummary>> {
    let parsed = filter::parse(expr).map_err(|e| anyhow!("--filter {expr:?}: {e}"))?;
    let mut runs = store.list_runs(RunFilter::default())?;
    let sets = store.current_label_sets(&taxonomy.name, &taxonomy.version)?;
    let labels = filter::label_index(&trajan::review::states(&sets, ""), |_, _| false);
    let keep = filter::apply(&runs, &labels, &parsed, filter::Sort::default());
    let mut kept: Vec<Option<RunSummary>> = runs.drain(..).map(Some).collect();
    Ok(keep.into_iter().filter_map(|i| kept.get_mut(i).and_then(Option::take)).collect())
}
