//! `export report`: one self-contained HTML page a colleague can open without trajan: the
//! statistics and their charts, the run list, and a page per run (`run`, `steps`).
//!
//! Nothing is fetched: the style sheet, the one script (search within the page) and the charts
//! (SVG) are inline. The page's Content-Security-Policy allows only that style sheet and that
//! script, by their SHA-256 hashes, and nothing else (no other script, style, image, font,
//! frame, form or connection): text from a trajectory is escaped (`html`), and even if some
//! escaped nothing, a script it carried could not run. Long runs stay usable: long observations
//! start collapsed, each run has a step index, and steps outside the window are not laid out
//! (`content-visibility`).

mod diff;
mod html;
mod run;
mod steps;

use super::super::chart::{self, DrawError, Kind};
use super::super::summary::{Ask, StatsReport, SummaryError, stats_report};
use crate::agreement::BootstrapOptions;
use crate::error::StoreError;
use crate::label::taxonomy::Taxonomy;
use crate::store::Store;
use crate::store::read::RunSummary;
use base64::Engine;
use html::esc;
use sha2::Digest;
use std::fmt::Write as _;
use strum::IntoEnumIterator;

const SCRIPT: &str = include_str!("page.js");

/// How many runs get their page of steps unless asked otherwise (`export report --pages`): a
/// dataset's 100,000 runs' steps would make a page of gigabytes.
pub const PAGES: usize = 500;
const STYLE: &str = include_str!("page.css");

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Draw(#[from] DrawError),
    #[error(transparent)]
    Summary(#[from] SummaryError),
}

/// What the page is about: its runs (the first `pages` of them with their steps), the
/// statistics over them, the taxonomy's modes, the date.
pub struct Contents<'a> {
    pub runs: &'a [RunSummary],
    pub pages: usize,
    pub stats: &'a StatsReport,
    pub modes: &'a [String],
    pub date: &'a str,
}

fn sha256(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(text.as_bytes()))
}

/// The policy: the page's own style sheet and script, nothing else.
fn policy(style: &str) -> String {
    format!(
        "default-src 'none'; style-src 'sha256-{}'; script-src 'sha256-{}'; img-src 'none'; base-uri 'none'; form-action 'none'",
        sha256(style),
        sha256(SCRIPT)
    )
}

/// The page of `runs`, the first `pages` with their steps, with the statistics `ask` asks for
/// computed over them all (the agreement's intervals as `bootstrap` says), stamped with `date`.
pub fn report(
    store: &Store,
    taxonomy: &Taxonomy,
    ask: &Ask,
    runs: &[RunSummary],
    pages: usize,
    bootstrap: &BootstrapOptions,
    date: &str,
) -> Result<String, ReportError> {
    // A report of every run is the database's statistics, evaluations without a trajectory
    // counted in the resolve rates as everywhere; a report of some runs, of those runs alone.
    let every = i64::try_from(runs.len()).is_ok_and(|n| store.count_runs().is_ok_and(|all| all == n));
    let only = (!every).then(|| runs.iter().map(|r| r.id).collect());
    let ask = Ask { only, ..ask.clone() };
    let stats = stats_report(store, taxonomy, &ask, Some(bootstrap))?;
    page(store, &Contents { runs, pages, stats: &stats, modes: &taxonomy.mode_ids(), date })
}

/// The whole page. Each run is read from `store` when its page is written.
pub fn page(store: &Store, c: &Contents) -> Result<String, ReportError> {
    let style = format!("{STYLE}{}", diff::SYNTAX_CSS);
    let mut out = String::with_capacity(1 << 20);
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>trajan report · {} runs · {}</title>\n<style>{style}</style></head>\n<body>\n",
        policy(&style),
        c.runs.len(),
        esc(c.date)
    );
    let _ = write!(
        out,
        "<header class=\"top\"><h1>trajan report</h1><span class=\"stamp\">{} runs · {} · {}</span><nav><a href=\"#stats\">statistics</a><a href=\"#runs\">runs</a></nav><span class=\"find\"><input id=\"search\" type=\"search\" placeholder=\"search the steps\" aria-label=\"search the steps\"><button id=\"search-prev\" type=\"button\">↑</button><button id=\"search-next\" type=\"button\">↓</button><span id=\"search-count\" class=\"muted\"></span><button id=\"unfold\" type=\"button\">open all observations</button></span></header>\n<main>\n",
        c.runs.len(),
        esc(&c.stats.stats.taxonomy),
        esc(c.date)
    );
    statistics(&mut out, c)?;
    let paged = &c.runs[..c.runs.len().min(c.pages)];
    run_list(&mut out, paged, c.runs.len());
    for r in paged {
        let detail = store.run_detail(r.id, None)?;
        let labels = store.labels(Some(r.id), true)?;
        run::push_run(&mut out, &detail, &labels);
    }
    let _ = write!(out, "</main>\n<script>{SCRIPT}</script>\n</body></html>\n");
    Ok(out)
}

/// `text` escaped, with a place a line may break after each `_` and `/` (`<wbr>`): the mode
/// names and models that head the statistics' columns wrap instead of widening the table past
/// the page (it was cut at 1280 pixels).
fn breakable(text: &str) -> String {
    esc(text).replace('_', "_<wbr>").replace('/', "/<wbr>")
}

fn pct(x: Option<f64>) -> String {
    x.map(|v| format!("{:.1}%", v * 100.0)).unwrap_or_else(|| "—".into())
}

/// The numbers `stats` prints, then every chart of them.
fn statistics(out: &mut String, c: &Contents) -> Result<(), ReportError> {
    let s = &c.stats.stats;
    let _ = write!(
        out,
        "<section id=\"stats\"><h2>statistics</h2><p class=\"muted\">{} · labels: {}, current · {} · over the {} runs of this report</p>",
        esc(&s.taxonomy),
        esc(&s.source),
        if s.scope == "failed" { "failed runs" } else { "failed and outcome-unknown runs" },
        c.runs.len()
    );
    out.push_str("<div class=\"wide\"><table><tr><th>group</th><th>failed runs</th><th>labelled</th><th>coverage</th><th>agreement</th><th>blamed on the task</th><th>blamed on the environment</th>");
    for m in c.modes {
        let _ = write!(out, "<th>{}</th>", breakable(m));
    }
    out.push_str("</tr>");
    for r in s.rows.iter().chain(std::iter::once(&s.total)) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>",
            breakable(&r.group),
            r.runs,
            r.labelled,
            pct(r.coverage),
            pct(r.agreement),
            r.blamed_task,
            r.blamed_environment
        );
        for m in c.modes {
            let _ = write!(out, "<td class=\"n\">{}</td>", r.modes.get(m).copied().unwrap_or(0));
        }
        out.push_str("</tr>");
    }
    // Runs set apart by their blame, and whose blame it is: said under the table, never silent.
    let _ = write!(out, "</table></div><p class=\"muted\" id=\"blame-note\">{}</p>", esc(&s.blame_note));
    out.push_str(
        "<table><tr><th>group</th><th>runs</th><th>resolved</th><th>failed</th><th>unknown</th><th>without a trajectory (resolved, failed)</th><th>resolve rate</th></tr>",
    );
    for o in s.outcomes.iter().chain(std::iter::once(&s.outcomes_total)) {
        let _ = write!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{} ({}, {})</td><td class=\"n\">{}</td></tr>",
            esc(&o.group),
            o.runs,
            o.resolved,
            o.failed,
            o.unknown,
            o.no_trajectory,
            o.no_trajectory_resolved,
            o.no_trajectory_failed,
            esc(&o.rate_text())
        );
    }
    out.push_str("</table>\n");
    for kind in Kind::iter() {
        let figure = chart::figure(kind, c.stats, c.modes, c.date);
        let _ =
            writeln!(out, "<figure class=\"chart\" data-chart=\"{}\">{}</figure>", kind.name(), chart::svg(&figure)?);
    }
    out.push_str("</section>\n");
    Ok(())
}

/// The runs that have their page here, of `total` the statistics count.
fn run_list(out: &mut String, runs: &[RunSummary], total: usize) {
    let _ = write!(out, "<section id=\"runs\"><h2>runs ({total})</h2>");
    if runs.len() < total {
        let _ = write!(
            out,
            "<p class=\"muted\">The statistics count all {total} runs; the first {} have their pages here. Choose others with <code>--filter</code>, or more with <code>--pages</code>.</p>",
            runs.len()
        );
    }
    let _ = write!(
        out,
        "<table><tr><th>run</th><th>instance</th><th>agent</th><th>model</th><th>resolved</th><th>steps</th><th>edits</th><th>cost</th><th>exit status</th></tr>"
    );
    for r in runs {
        let _ = write!(
            out,
            "<tr><td><a href=\"#r{}\">{}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            r.id,
            r.id,
            esc(&r.instance_id),
            esc(r.agent.as_deref().unwrap_or("")),
            esc(r.model.as_deref().unwrap_or("")),
            match r.resolved {
                Some(true) => "yes",
                Some(false) => "no",
                None => "unknown",
            },
            r.steps,
            r.edits,
            r.cost.map(|c| format!("{c:.4}")).unwrap_or_default(),
            esc(r.exit_status.as_deref().unwrap_or(""))
        );
    }
    out.push_str("</table></section>\n");
}
