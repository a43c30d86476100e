//! `trajan export report [RUN...|--filter EXPR] -o report.html`: the page is made by
//! `review::export::report`; here the runs are chosen and the file written.

use super::export::{ExportArgs, bootstrap};
use super::settings;
use anyhow::{Result, bail};
use trajan::config::UserConfig;
use trajan::review::export::{self, report};
use trajan::sanitize::sanitize;
use trajan::store::Store;
use trajan::store::read::{RunFilter, RunSummary};

pub fn run(store: &Store, args: &ExportArgs, include_unknown: bool) -> Result<i32> {
    let format = args.format_or("html");
    if format != "html" {
        bail!("export report: --format {format:?}: html");
    }
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let runs: Vec<RunSummary> = match &args.filter {
        Some(expr) => {
            let all = store.list_runs(RunFilter::default())?;
            super::review::filtered(store, all, expr, args.taxonomy.as_deref(), None, &config)?
        }
        None if args.items.is_empty() => store.list_runs(RunFilter::default())?,
        None => {
            let ids = args.items.iter().map(|r| store.resolve_run(r)).collect::<Result<Vec<_>, _>>()?;
            ids.into_iter().map(|id| store.run_summary(id)).collect::<Result<Vec<_>, _>>()?
        }
    };
    if runs.is_empty() {
        bail!("export report: no run to report (the filter kept none, or the database has none)");
    }
    let ask = settings::ask(&args.by, &args.source, settings::scope(include_unknown, &config))?;
    let page = report::report(store, &taxonomy, &ask, &runs, args.pages, &bootstrap(args), &export::today())?;
    match &args.output {
        None if std::io::IsTerminal::is_terminal(&std::io::stdout()) => {
            bail!("export report writes a page for a browser: give the file with -o report.html")
        }
        None => super::output::emit(&page)?,
        Some(path) => {
            export::write_file(path, &page)?;
            let paged = &runs[..runs.len().min(args.pages)];
            let steps: i64 = paged.iter().map(|r| r.steps).sum();
            let pages = if paged.len() < runs.len() {
                format!("{} runs, the first {} with their {steps} steps (--pages)", runs.len(), paged.len())
            } else {
                format!("{} runs, {steps} steps", runs.len())
            };
            eprintln!("wrote {} ({pages}, {} bytes)", sanitize(&path.display().to_string()), page.len());
        }
    }
    Ok(0)
}
