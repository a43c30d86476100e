//! `trajan bench tui`: time to first screen on a database of 100,000 runs, the time of every
//! keypress (handled and drawn) in a 20,000-step run of 100 KB observations, and memory while
//! scrolling it end to end; the alignment of two 20,000-step runs and the keys of the comparison
//! view. The app is driven headless (the real views into ratatui's TestBackend); when tmux is
//! installed, the real binary's first screen is timed too. Last, a never-seen file is opened
//! (`bench_open`).

use super::synth;
use anyhow::{Result, bail};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use trajan::model::Parsed;
use trajan::store::{Location, SourceRecord, Store};
use trajan::tui::headless::Headless;
use trajan::tui::keymap::Keymap;
use trajan::tui::theme::{ColorDepth, Theme};
use trajan::tui::views::ViewCtx;

pub struct Sizes {
    pub runs: usize,
    pub steps: usize,
    pub obs_bytes: usize,
}

pub fn run(db: &Location, sizes: &Sizes, open_only: bool) -> Result<i32> {
    if open_only {
        super::output::emit(&super::bench_open::run()?)?;
        return Ok(0);
    }
    if let Location::File(path) = db {
        super::bench_scratch::cached(path, |p| build(p, sizes))?;
    }
    let mut out = String::new();
    let mut store = Store::open_at(db, false)?;
    // A PostgreSQL store (migrated) is filled here when empty, written as the file is.
    if let Location::Server(_) = db
        && store.is_empty_store()?
    {
        eprintln!("filling {} (once) ...", db.shown());
        fill(&mut store, sizes)?;
        // As `trajan ingest` ends: statistics for the planner (without them a search in the long
        // run took 1.5 to 3.6 s right after the fill, 12 ms after), the keys' pending list merged.
        store.after_ingest()?;
    }
    // Another database (a dataset's runs, `--db`): its run list is timed, nothing is written
    // into it but the search index `trajan` builds anyway, and the run's keys are left out.
    let own = store.resolve_run(LONG_RUN).is_ok();
    // Databases built before the comparison benchmark lack its second long run.
    if own && store.resolve_run(OTHER_LONG_RUN).is_err() {
        write_other_long_run(&mut store, sizes)?;
    }
    // The search index is built after a write: built here, so the keys below time searches only.
    store.build_search_index(&mut |_, _| {})?;
    let total = store.count_runs()?;
    let _ = writeln!(
        out,
        "database          {} ({} runs, {:.0} MB)",
        db.shown(),
        total,
        store.stored_bytes()? as f64 / 1e6
    );
    shown(&mut out)?;

    // First screen: open, first page, draw.
    let started = Instant::now();
    let store = Store::open_at(db, false)?;
    let ctx = ViewCtx::new(Theme::load("dark", ColorDepth::TrueColor)?, Keymap::default_map(), "bench".into());
    let mut ui = Headless::open(store, ctx, 160, 48).map_err(anyhow::Error::msg)?;
    let first = started.elapsed();
    let _ = writeln!(out, "first screen      {:.1} ms (open, first page of runs, draw 160x48)", ms(first));
    let t = Instant::now();
    ui.load_all_runs();
    let _ = writeln!(out, "full run list     {:.0} ms (background in the TUI; filter/sort need it)", ms(t.elapsed()));
    if let Some(t) = tmux_first_screen(db)? {
        let _ = writeln!(out, "first screen tmux {:.0} ms (real binary, until the table is on the pane)", ms(t));
    }
    shown(&mut out)?;
    let _ = writeln!(out, "{}", list_keys(&mut ui)?);
    shown(&mut out)?;
    if !own {
        let _ = writeln!(
            out,
            "long run          not in this database ({LONG_RUN}): its keys are timed on the benchmark's own"
        );
        shown(&mut out)?;
        return Ok(0);
    }

    // The long run.
    let long = ui.store.resolve_run(LONG_RUN)?;
    let t = Instant::now();
    ui.open_run(long);
    let _ = writeln!(out, "open long run     {:.1} ms ({} steps)", ms(t.elapsed()), sizes.steps);
    shown(&mut out)?;
    let rss_open = super::memory::proc_status_kb("VmRSS")?;
    let mut times: Vec<(String, Duration)> = Vec::new();
    let mut press = |ui: &mut Headless, keys: &str| -> Result<()> {
        for k in keys.split_whitespace() {
            let t = Instant::now();
            ui.press(k).map_err(anyhow::Error::msg)?;
            times.push((k.to_string(), t.elapsed()));
        }
        Ok(())
    };
    for _ in 0..200 {
        press(&mut ui, "j")?;
    }
    press(&mut ui, "o Space Space Space $ 0 o")?;
    for _ in 0..30 {
        press(&mut ui, "PageDown")?;
    }
    press(&mut ui, "G g e e e E x x X Tab Tab Tab Tab Tab d e d")?;
    ui.press("/").map_err(anyhow::Error::msg)?;
    ui.type_text("ValueError");
    press(&mut ui, "Enter n n n N")?;
    // The long diffs: step 999 rewrites a 2,000-line module.
    ui.press(":").map_err(anyhow::Error::msg)?;
    ui.type_text("998");
    press(&mut ui, "Enter j k j d d")?;
    let t = Instant::now();
    let mut finished = 0;
    while ui.ctx.idle() {
        finished += 1;
    }
    let idle = t.elapsed();
    press(&mut ui, "J K : ")?;
    ui.press("Esc").map_err(anyhow::Error::msg)?;
    let rss_keys = super::memory::proc_status_kb("VmRSS")?;
    // End to end: every step once, from the first (J/K above may have left the run).
    ui.open_run(long);
    ui.press("g").map_err(anyhow::Error::msg)?;
    let t = Instant::now();
    for _ in 0..sizes.steps {
        ui.press("j").map_err(anyhow::Error::msg)?;
    }
    let sweep = t.elapsed();
    let rss_end = super::memory::proc_status_kb("VmRSS")?;
    let _ = writeln!(out, "keypress          {}", key_times(&times, ""));
    let _ = writeln!(
        out,
        "long diffs        {finished} shown with {} lines coloured, the rest coloured while idle in {:.0} ms",
        trajan::tui::diff::FIRST_BUDGET,
        ms(idle)
    );
    let _ = writeln!(
        out,
        "end to end        {} steps with j in {:.1} s = {:.2} ms per step",
        sizes.steps,
        sweep.as_secs_f64(),
        ms(sweep) / sizes.steps as f64
    );
    let _ = writeln!(
        out,
        "memory            {:.0} MB after opening, {:.0} MB after the keys, {:.0} MB after every step (VmRSS)",
        rss_open as f64 / 1024.0,
        rss_keys as f64 / 1024.0,
        rss_end as f64 / 1024.0
    );
    shown(&mut out)?;
    let _ = writeln!(out, "{}", compare_long_runs(&mut ui, long)?);
    shown(&mut out)?;
    let _ = writeln!(out, "{}", align_hard_pairs());
    shown(&mut out)?;
    let _ = writeln!(out, "{}", keys_while_statistics_load(&mut ui, db)?);
    shown(&mut out)?;
    out.push_str(&super::bench_open::run()?);
    shown(&mut out)?;
    Ok(0)
}

/// The run list's keys over every run: moving, sorting by each column and back, a filter typed
/// a key at a time and applied, then cleared. Each key is handled and drawn.
fn list_keys(ui: &mut Headless) -> Result<String> {
    let mut keys = vec!["j"; 50];
    keys.extend(["PageDown"; 10]);
    keys.extend(["G", "g", "s", "s", "s", "s", "s", "s", "S", "S", "/"]);
    let filter = "model:70b failed steps>20";
    let typed: Vec<String> = filter.chars().map(|c| if c == ' ' { "Space".into() } else { c.to_string() }).collect();
    keys.extend(typed.iter().map(String::as_str));
    keys.extend(["Enter", "j", "G", "s", "/"]);
    keys.extend(std::iter::repeat_n("Backspace", filter.len()));
    keys.push("Enter");
    let mut times: Vec<(String, Duration)> = Vec::with_capacity(keys.len());
    for k in keys {
        let t = Instant::now();
        ui.press(k).map_err(anyhow::Error::msg)?;
        times.push((k.to_string(), t.elapsed()));
    }
    let what = format!(" (move, sort by each column, filter `{filter}` typed and cleared)");
    Ok(format!("list keys         {}", key_times(&times, &what)))
}

/// "N keys WHAT: median, p99 and max (the slowest key)" of timed keys.
fn key_times(times: &[(String, Duration)], what: &str) -> String {
    let mut all: Vec<Duration> = times.iter().map(|(_, d)| *d).collect();
    all.sort();
    let pct = |p: f64| all.get(((all.len().max(1) - 1) as f64 * p) as usize).copied().unwrap_or_default();
    let worst = times.iter().max_by_key(|(_, d)| *d).cloned().unwrap_or_default();
    format!(
        "{} keys{what}: median {:.2} ms, p99 {:.2} ms, max {:.2} ms ({})",
        all.len(),
        ms(pct(0.5)),
        ms(pct(0.99)),
        ms(worst.1),
        worst.0
    )
}

/// A part's figures printed as soon as it is measured (a failure in a later part keeps them).
fn shown(out: &mut String) -> Result<()> {
    super::output::emit(&std::mem::take(out))?;
    Ok(())
}

/// As the TUI does it, with a worker performing the effects: `%` asks for the statistics of
/// every run (and the labels of every run), and keys pressed while they load are timed.
fn keys_while_statistics_load(ui: &mut Headless, db: &Location) -> Result<String> {
    ui.start_worker(db);
    // Not blind: the statistics then read every run, not only the ones this reviewer labelled.
    ui.app.review.blind = false;
    ui.press("g").map_err(anyhow::Error::msg)?;
    ui.settle();
    let started = Instant::now();
    ui.press("%").map_err(anyhow::Error::msg)?;
    let mut keys: Vec<Duration> = Vec::new();
    // Steps move while the statistics are computed (the screen changes when they arrive).
    while ui.app.screen != trajan::tui::app::Screen::Stats && keys.len() < 10_000 {
        let t = Instant::now();
        ui.press("j").map_err(anyhow::Error::msg)?;
        keys.push(t.elapsed());
        ui.poll();
    }
    let loaded = started.elapsed();
    ui.settle();
    keys.sort();
    let median = keys.get(keys.len() / 2).copied().unwrap_or_default();
    let max = keys.last().copied().unwrap_or_default();
    Ok(format!(
        "statistics        loaded in {:.0} ms by the worker; {} keys meanwhile: median {:.2} ms, max {:.2} ms",
        ms(loaded),
        keys.len(),
        ms(median),
        ms(max)
    ))
}

/// The instance of the second long run: the first one's steps, with other files viewed every 40th
/// step, a search added every 97th and a step left out every 131st.
const OTHER_LONG_RUN: &str = "synth__long-run-b";
/// The instance id of the long run (`synth::long_run`).
pub const LONG_RUN: &str = "synth__long-run";

fn write_other_long_run(store: &mut Store, sizes: &Sizes) -> Result<()> {
    // Observations do not take part in the alignment: small ones keep the database small.
    let base = synth::long_run(sizes.steps, 200);
    let mut run =
        trajan::model::Run { instance_id: OTHER_LONG_RUN.into(), steps: Vec::new(), edits: Vec::new(), ..base.clone() };
    let mut moved = std::collections::HashMap::new();
    for (i, mut step) in base.steps.into_iter().enumerate() {
        if i % 131 == 130 {
            continue;
        }
        if i % 97 == 96 {
            let search = trajan::model::Step {
                action: format!("grep -rn needle_{i} /repo/src"),
                observation: "no match".into(),
                tool: Some("bash".into()),
                ..trajan::model::Step::default()
            };
            run.steps.push(search);
        }
        if i % 40 == 39 && !step.flags.edit {
            step.action = format!("cat /repo/src/other_{}.py", i % 17);
        }
        moved.insert(i, run.steps.len());
        run.steps.push(step);
    }
    for mut edit in base.edits {
        if let Some(to) = edit.step.and_then(|s| moved.get(&s)) {
            edit.step = Some(*to);
            run.edits.push(edit);
        }
    }
    let hash = [1u8; 32];
    let record =
        SourceRecord { path: "/synthetic/long-run-b.traj", kind: "file", format: "swe-agent", size: 0, hash: &hash };
    store.write_source(&record, &Parsed { runs: vec![run], ..Parsed::default() })?;
    store.checkpoint()?;
    Ok(())
}

/// The two long runs compared: reading them, aligning them (the comparison built), opening the
/// comparison view, and the time of its keys.
fn compare_long_runs(ui: &mut Headless, long: i64) -> Result<String> {
    let other = ui.store.resolve_run(OTHER_LONG_RUN)?;
    let t = Instant::now();
    let runs = vec![ui.store.run_data(long)?, ui.store.run_data(other)?];
    let read = t.elapsed();
    let steps: Vec<usize> = runs.iter().map(|r| r.steps.len()).collect();
    let t = Instant::now();
    let compared = trajan::review::compare::Comparison::build(runs);
    let align = t.elapsed();
    let (rows, divergences) = (compared.rows.len(), compared.divergences.len());
    drop(compared);
    let t = Instant::now();
    let effects = ui.app.update(trajan::tui::action::Action::Compare(vec![long, other]));
    ui.apply(effects);
    ui.draw();
    let open = t.elapsed();
    let mut times: Vec<(String, Duration)> = Vec::new();
    let mut press = |ui: &mut Headless, keys: &str| -> Result<()> {
        for k in keys.split_whitespace() {
            let t = Instant::now();
            ui.press(k).map_err(anyhow::Error::msg)?;
            times.push((k.to_string(), t.elapsed()));
        }
        Ok(())
    };
    for _ in 0..200 {
        press(ui, "j")?;
    }
    for _ in 0..30 {
        press(ui, "n")?;
    }
    press(ui, "N N N G g l h")?;
    for _ in 0..30 {
        press(ui, "PageDown")?;
    }
    press(ui, "Tab j j } { d d Tab")?;
    ui.press("/").map_err(anyhow::Error::msg)?;
    ui.type_text("ValueError");
    press(ui, "Enter n n n N Esc q")?;
    let mut all: Vec<Duration> = times.iter().map(|(_, d)| *d).collect();
    all.sort();
    let pct = |p: f64| all.get(((all.len().saturating_sub(1)) as f64 * p) as usize).copied().unwrap_or_default();
    let worst = times.iter().max_by_key(|(_, d)| *d).cloned().unwrap_or_default();
    Ok(format!(
        "compare           {} and {} steps: read {:.0} ms, aligned in {:.0} ms ({rows} rows, {divergences} divergences), view opened in {:.0} ms\n\
         compare keys      {} keys: median {:.2} ms, p99 {:.2} ms, max {:.2} ms ({})",
        steps[0],
        steps.get(1).copied().unwrap_or(0),
        ms(read),
        ms(align),
        ms(open),
        all.len(),
        ms(pct(0.5)),
        ms(pct(0.99)),
        ms(worst.1),
        worst.0
    ))
}

/// Two 20,000-step runs that share almost nothing (one step in 97), and two whose every step
/// is similar but none the same (one block for the band): the alignment's hard cases.
fn align_hard_pairs() -> String {
    use trajan::analysis::compare::{Kind, Signature, align};
    const N: usize = 20_000;
    let sig = |kind: Kind, file: Option<String>, command: &str, target: Option<String>| Signature {
        kind,
        file,
        command: command.to_string(),
        target,
    };
    let disjoint = |side: &str| -> Vec<Signature> {
        (0..N)
            .map(|i| match i % 97 {
                0 => sig(Kind::Edit, Some(format!("src/f{i}.py")), "", None),
                _ => sig(Kind::Run, None, "python", Some(format!("{side}{}.py", (i * 7919) % 1013))),
            })
            .collect()
    };
    let similar = |side: &str| -> Vec<Signature> {
        (0..N).map(|i| sig(Kind::Search, None, "grep", Some(format!("{side}{i}")))).collect()
    };
    let time = |runs: [Vec<Signature>; 2]| {
        let t = Instant::now();
        let rows = align(&runs).len();
        (ms(t.elapsed()), rows)
    };
    let (d_ms, d_rows) = time([disjoint("a"), disjoint("b")]);
    let (s_ms, s_rows) = time([similar("foo"), similar("bar")]);
    format!(
        "compare hard      {N} and {N} steps sharing 1 in 97: aligned in {d_ms:.0} ms ({d_rows} rows); \
         all similar, none the same: {s_ms:.0} ms ({s_rows} rows)"
    )
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// 100,000 small runs in sources of 1,000, and the long run.
pub fn build(db: &Path, sizes: &Sizes) -> Result<()> {
    eprintln!("building {} (once) ...", db.display());
    let mut store = Store::open(db)?;
    fill(&mut store, sizes)?;
    store.checkpoint()?;
    Ok(())
}

/// The benchmark's runs written into an empty store.
fn fill(store: &mut Store, sizes: &Sizes) -> Result<()> {
    let hash = [0u8; 32];
    for chunk in 0..sizes.runs.div_ceil(1000) {
        let from = chunk * 1000;
        let runs: Vec<_> = (from..(from + 1000).min(sizes.runs)).map(|i| synth::small_run(i as u64)).collect();
        let path = format!("/synthetic/runs-{chunk:04}.jsonl");
        let record = SourceRecord { path: &path, kind: "file", format: "swe-agent", size: 0, hash: &hash };
        store.write_source(&record, &Parsed { runs, ..Parsed::default() })?;
    }
    let record =
        SourceRecord { path: "/synthetic/long-run.traj", kind: "file", format: "swe-agent", size: 0, hash: &hash };
    let long = synth::long_run(sizes.steps, sizes.obs_bytes);
    store.write_source(&record, &Parsed { runs: vec![long], ..Parsed::default() })?;
    Ok(())
}

/// Start the real binary in a detached tmux pane and wait for the run table.
fn tmux_first_screen(db: &Location) -> Result<Option<Duration>> {
    let has_tmux = std::process::Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !has_tmux {
        return Ok(None);
    }
    let exe: PathBuf = std::env::current_exe()?;
    let socket = format!("trajan-bench-{}", std::process::id());
    let tmux = |args: &[&str]| std::process::Command::new("tmux").arg("-L").arg(&socket).args(args).output();
    let cmd = format!("TERM=xterm-256color {} --db '{}' tui", exe.display(), db.shown());
    let started = Instant::now();
    tmux(&["new", "-d", "-x", "160", "-y", "48", "-s", "b", &cmd])?;
    let mut found = None;
    while started.elapsed() < Duration::from_secs(10) {
        let screen = tmux(&["capture-pane", "-p", "-t", "b"])?;
        if String::from_utf8_lossy(&screen.stdout).contains("instance") {
            found = Some(started.elapsed());
            break;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = tmux(&["kill-server"]);
    match found {
        Some(t) => Ok(Some(t)),
        None => bail!("the TUI did not show its run table in tmux within 10 s"),
    }
}
