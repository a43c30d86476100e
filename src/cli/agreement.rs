//! `trajan agreement`: between the raters of the database (or of a rating table), per mode,
//! and on onset and blame.

use super::output::{emit, print_json};
use super::settings;
use anyhow::{Context, Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use trajan::agreement::{
    AgreementReport, BootstrapOptions, Estimate, PAIR_RATERS, Rating, Reference, Table, agreement_report,
};
use trajan::config::UserConfig;
use trajan::label::taxonomy::Taxonomy;
use trajan::review::onset_agreement::JudgementAgreement;
use trajan::sanitize::sanitize;
use trajan::store::Store;

#[derive(clap::Args)]
pub struct AgreementArgs {
    #[arg(long)]
    pub json: bool,
    #[arg(long)]
    pub taxonomy: Option<String>,
    /// A rating table (CSV: item,rater,modes with modes separated by `;`) instead of the database.
    #[arg(long)]
    pub table: Option<PathBuf>,
    /// With --table: the rater others are scored against (default: the consensus of all).
    #[arg(long)]
    pub reference: Option<String>,
    /// Bootstrap resamples for the 95% intervals (0: none).
    #[arg(long, default_value_t = 1000)]
    pub resamples: usize,
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
}

/// A rating table from CSV (`item,rater,modes`).
fn read_table(path: &Path) -> Result<Table<Rating>> {
    let mut reader = csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut records = Vec::new();
    for (i, row) in reader.records().enumerate() {
        let row = row.with_context(|| format!("{}: line {}", path.display(), i + 2))?;
        let (Some(item), Some(rater)) = (row.get(0), row.get(1)) else {
            bail!("{}: line {}: expected item,rater,modes", path.display(), i + 2);
        };
        let modes: Rating =
            row.get(2).unwrap_or("").split(';').map(str::trim).filter(|m| !m.is_empty()).map(str::to_string).collect();
        records.push((item.to_string(), rater.to_string(), modes));
    }
    Table::from_records(records).with_context(|| path.display().to_string())
}

pub fn agreement(store: Option<&Store>, args: &AgreementArgs) -> Result<i32> {
    let config = UserConfig::load(|k| std::env::var(k).ok())?;
    let taxonomy = settings::taxonomy(args.taxonomy.as_deref(), &config)?;
    let modes: Vec<String> = taxonomy.mode_ids();
    let bootstrap = BootstrapOptions { resamples: args.resamples, seed: args.seed, ..BootstrapOptions::default() };
    let report = match (&args.table, store) {
        (Some(path), _) => {
            let table = read_table(path)?;
            let raters: Vec<String> = table.raters().to_vec();
            let reference = match &args.reference {
                Some(r) => Reference::Rater(r.clone()),
                None => Reference::Consensus(raters.clone()),
            };
            (agreement_report(&table, &modes, &raters, &reference, &bootstrap)?, None)
        }
        (None, Some(store)) => match trajan::review::summary::agreement(store, &taxonomy, &bootstrap)? {
            Some(a) => (a.report, Some(a.onset_and_blame)),
            None => bail!("no labels under {} yet (trajan classify, trajan label)", taxonomy.stamp()),
        },
        (None, None) => bail!("no database and no --table"),
    };
    let (report, judged) = report;
    if args.json {
        let mut out = serde_json::json!({"taxonomy": taxonomy.stamp(), "report": report});
        if let Some(judged) = &judged {
            out["onset_and_blame"] = serde_json::to_value(judged)?;
        }
        print_json(&out)?;
    } else {
        let mut text = agreement_text(&report, &taxonomy);
        if let Some(judged) = &judged {
            text.push_str(&judgement_text(judged));
        }
        emit(&text)?;
    }
    Ok(0)
}

fn est(e: &Estimate) -> String {
    match (e.value, &e.ci) {
        (None, _) => "—".into(),
        (Some(v), Some(ci)) => format!("{v:.3} [{:.3}, {:.3}]", ci.low, ci.high),
        (Some(v), None) => format!("{v:.3}"),
    }
}

fn agreement_text(r: &AgreementReport, taxonomy: &Taxonomy) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "agreement under {} on {} runs; 95% bootstrap intervals in brackets",
        sanitize(&taxonomy.stamp()),
        r.items
    );
    let _ = writeln!(o, "coverage (share of rated runs with any mode):");
    for c in &r.coverage {
        let share = c.share.map(|s| format!("{:.1}%", s * 100.0)).unwrap_or_else(|| "—".into());
        let _ = writeln!(o, "  {:<28} {share} of {}", sanitize(&c.rater), c.rated);
    }
    if r.pairs_left_out > 0 {
        let _ = writeln!(
            o,
            "kappa between raters: the pairs of the {} raters who rated the most runs; {} more pairs a mode are not listed (at most {PAIR_RATERS} raters' pairs are); alpha and the scores against the reference cover all {} raters",
            r.pair_raters.len(),
            r.pairs_left_out,
            r.raters.len()
        );
    }
    for m in &r.modes {
        let _ = writeln!(o, "\n{}", m.mode);
        let _ = writeln!(o, "  Krippendorff's alpha {} over {} runs", est(&m.alpha.alpha), m.alpha.units);
        for p in &m.pairs {
            let raw = p.raw_agreement.map(|a| format!("{:.1}%", a * 100.0)).unwrap_or_else(|| "—".into());
            let _ = writeln!(
                o,
                "  kappa {:<22} ~ {:<22} {} (n {}, raw agreement {raw})",
                sanitize(&p.a),
                sanitize(&p.b),
                est(&p.kappa),
                p.n
            );
        }
        for c in &m.against_reference {
            let f = &c.confusion;
            let _ = writeln!(
                o,
                "  vs reference: {:<20} P {} R {} F1 {} (n {}; tp {} fp {} fn {} tn {})",
                sanitize(&c.rater),
                est(&c.precision),
                est(&c.recall),
                est(&c.f1),
                c.n,
                f.tp,
                f.fp,
                f.fn_,
                f.tn
            );
        }
    }
    o
}

fn share(x: Option<f64>) -> String {
    x.map(|a| format!("{:.1}%", a * 100.0)).unwrap_or_else(|| "—".into())
}

/// Onset and blame, every pair of raters over the runs both judged.
fn judgement_text(j: &JudgementAgreement) -> String {
    let mut o =
        String::from("\nonset and blame, between raters over the runs both judged (an onset or a blame given)\n");
    if j.pair_raters.len() < j.raters.len() {
        let _ = writeln!(
            o,
            "  the pairs of the {} raters who judged the most runs (and the reference); the other {} raters' pairs are not listed (at most {PAIR_RATERS} raters' pairs are)",
            j.pair_raters.len(),
            j.raters.len() - j.pair_raters.len()
        );
    }
    if j.pairs.is_empty() {
        o.push_str(
            "  no two raters judged onset or blame on the same run yet (trajan label RUN --onset N --blame B)\n",
        );
        return o;
    }
    for p in &j.pairs {
        let (on, bl) = (&p.onset, &p.blame);
        let runs = if p.runs == 1 { "run" } else { "runs" };
        let _ = writeln!(o, "  {} ~ {}: {} {runs}", sanitize(&p.a), sanitize(&p.b), p.runs);
        let _ = writeln!(
            o,
            "    onset (n {}, one-sided {}): exact {}, within 1 {}, within 3 {}, mean distance {} steps",
            on.n,
            on.one_sided,
            est(&on.exact),
            est(&on.within_1),
            est(&on.within_3),
            est(&on.mean_distance)
        );
        let values: Vec<String> = bl
            .values
            .iter()
            .map(|v| format!("{} {} ({} / {} / both {})", v.value, est(&v.kappa), v.first, v.second, v.both))
            .collect();
        let _ = writeln!(
            o,
            "    blame (n {}): kappa {} (raw agreement {}); per value, kappa (given by each / both): {}",
            bl.n,
            est(&bl.kappa),
            share(bl.raw),
            values.join(", ")
        );
    }
    o
}
