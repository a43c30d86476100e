//! Settings several commands share, each from its flag, else `config.toml`, else a default: the
//! taxonomy, the reviewer's name, and which runs count as failed runs.

use anyhow::{Context, Result};
use trajan::config::UserConfig;
use trajan::label::taxonomy::{self, Taxonomy};
use trajan::model::FailedScope;

/// The reviewer's name: the flag, the config file, `$USER`, `$LOGNAME`, else the database user
/// a PostgreSQL store logs in as (`login`: `postgres://ann@db/trajan` labels as `ann` where no
/// other name is given).
pub fn rater(flag: Option<&str>, config: &UserConfig, login: Option<String>) -> Result<String> {
    // The first name given is the name; a blank one is refused, not passed over.
    let name = flag
        .map(str::to_string)
        .or_else(|| config.labels.rater.clone())
        .or_else(|| std::env::var("USER").ok())
        .or_else(|| std::env::var("LOGNAME").ok())
        .or(login)
        .filter(|n| !n.trim().is_empty());
    name.context("who is labelling? give --rater NAME, or `rater` under [labels] in config.toml")
}

/// Which runs are failed runs: `--include-unknown`, else `[labels] include_unknown`.
pub fn scope(include_unknown: bool, config: &UserConfig) -> FailedScope {
    FailedScope::new(include_unknown || config.labels.include_unknown.unwrap_or(false))
}

/// The taxonomy: the flag, else `[classify] taxonomy`, else the default preset.
pub fn taxonomy(flag: Option<&str>, config: &UserConfig) -> Result<Taxonomy> {
    load_taxonomy(flag.or(config.classify.taxonomy.as_deref()))
}

/// A preset's name or a taxonomy file; `None`: the default preset.
pub fn load_taxonomy(name: Option<&str>) -> Result<Taxonomy> {
    Ok(Taxonomy::load(name.unwrap_or(taxonomy::DEFAULT))?)
}

/// What `--by` and `--source` ask for.
pub fn ask(by: &str, source: &str, scope: FailedScope) -> Result<trajan::review::summary::Ask> {
    let by = trajan::review::stats::By::parse(by)
        .with_context(|| format!("--by {by:?}: one of all, model, agent, benchmark, exit"))?;
    Ok(trajan::review::summary::Ask { by, pick: pick(source)?, scope, blind_rater: None, only: None })
}

/// Whose labels `--source` names.
pub fn pick(source: &str) -> Result<trajan::review::stats::Pick> {
    trajan::review::stats::Pick::parse(source)
        .with_context(|| format!("--source {source:?}: one of best, heuristic, llm, human, reference"))
}

/// The statistics `--by` and `--source` ask for; with `bootstrap`, the agreement report too.
pub fn stats_report(
    store: &trajan::store::Store,
    taxonomy: &Taxonomy,
    by: &str,
    source: &str,
    scope: FailedScope,
    bootstrap: Option<&trajan::agreement::BootstrapOptions>,
) -> Result<trajan::review::summary::StatsReport> {
    let ask = ask(by, source, scope)?;
    Ok(trajan::review::summary::stats_report(store, taxonomy, &ask, bootstrap)?)
}
