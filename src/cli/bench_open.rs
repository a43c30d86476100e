//! `trajan bench tui`, opening a file never seen: `trajan FILE` on a 200 MB trajectory of 20,000
//! steps, mini-swe-agent's and SWE-agent's (generated once). The real binary in tmux (200x50):
//! time to the first step on the pane, to the next step after `l` pressed while the file is
//! read, to the last step after `G` pressed then (and from the launch), until the whole file is
//! read, and peak memory (VmHWM). Then in this process, headless
//! with the worker as the driver runs it: the first screen, and every key pressed while the
//! file is read, from the key until its step's body is drawn (wall and CPU time of the UI
//! thread), and the news of the reading applied between keys.

use super::open::{done, feed};
use super::synth;
use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};
use trajan::ingest::open::{self as reading, Options};
use trajan::ingest::stream_doc::{index, skim};
use trajan::store::Store;
use trajan::tui::action::Action;
use trajan::tui::headless::Headless;
use trajan::tui::keymap::Keymap;
use trajan::tui::theme::{ColorDepth, Theme};
use trajan::tui::views::ViewCtx;

/// The files: 20,000 steps of about 10 KB.
const STEPS: usize = 20_000;
const STEP_BYTES: usize = 8_600;
/// On the first screen: the first step's thought; after `l`, the second's.
const FIRST: &str = "Step 0: ";
const NEXT: &str = "Step 1: ";

pub type Generate = fn(&Path, usize, usize) -> std::io::Result<u64>;

/// The two files, by the name of their format: mini-swe-agent's (200 MB) and SWE-agent's
/// (220 MB), both of [`STEPS`] steps.
pub const FILES: [(&str, &str, Generate); 2] = [
    ("mini-swe-agent", "/tmp/trajan-bench-open.traj.json", synth::long_mini_file),
    ("SWE-agent", "/tmp/trajan-bench-open-swe.traj", synth::long_swe_file),
];

/// One of [`FILES`], generated on first use and kept for later runs (the TUI's benchmark and
/// `bench ingest --big` share it).
pub fn big_file(file: &str, generate: Generate) -> Result<PathBuf> {
    let file = PathBuf::from(file);
    super::bench_scratch::cached(&file, |p| {
        eprintln!("writing {} (once) ...", file.display());
        generate(p, STEPS, STEP_BYTES)?;
        Ok(())
    })?;
    Ok(file)
}

pub fn run() -> Result<String> {
    let mut out = String::new();
    for (name, file, generate) in FILES {
        let file = big_file(file, generate)?;
        let mb = std::fs::metadata(&file)?.len() as f64 / 1e6;
        out.push_str(&format!(
            "open a new file   {} ({name}, {mb:.0} MB, {STEPS} steps), never seen by the database\n",
            file.display()
        ));
        out.push_str(&skims(&file)?);
        match in_tmux(&file)? {
            Some(t) => out.push_str(&format!(
                "  in tmux         first screen {:.0} ms; next step (l) while it is read {:.0} ms; last step (G) {:.0} ms after the key, {:.2} s after the launch; read whole in {:.2} s; peak memory {:.0} MiB (VmHWM of trajan)\n",
                ms(t.first),
                ms(t.next),
                ms(t.last),
                t.last_at.as_secs_f64(),
                t.complete.as_secs_f64(),
                t.peak_kb as f64 / 1024.0
            )),
            None => out.push_str("  in tmux         (tmux is not installed)\n"),
        }
        out.push_str(&headless(&file)?);
        out.push_str(&last_at_once(&file)?);
    }
    Ok(out)
}

/// The skim that finds every step of the file (what `G` waits for), on as many cores as
/// `trajan FILE` gives it and on one: the best of 5 each, the file in the page cache.
fn skims(file: &Path) -> Result<String> {
    let best = |skim: &dyn Fn() -> Result<usize>| -> Result<(Duration, usize)> {
        let mut times = Vec::new();
        let mut steps = 0;
        for _ in 0..5 {
            let t = Instant::now();
            steps = skim()?;
            times.push(t.elapsed());
        }
        Ok((times.into_iter().min().unwrap_or_default(), steps))
    };
    let (parts, elements) = best(&|| Ok(index::skim_file(file)?.elements.len()))?;
    let (one, _) = best(&|| Ok(skim::skim(std::fs::File::open(file)?, &index::LISTS)?.elements.len()))?;
    Ok(format!(
        "  skim            {elements} elements: {:.0} ms in parts on {} cores, {:.0} ms on one (best of 5)\n",
        ms(parts),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        ms(one)
    ))
}

struct Timed {
    first: Duration,
    next: Duration,
    /// From `G` to the last step, and from the launch.
    last: Duration,
    last_at: Duration,
    complete: Duration,
    peak_kb: u64,
}

/// `trajan --db NEW FILE` in a detached 200x50 tmux pane.
fn in_tmux(file: &Path) -> Result<Option<Timed>> {
    let has_tmux = std::process::Command::new("tmux").arg("-V").output().is_ok_and(|o| o.status.success());
    if !has_tmux {
        return Ok(None);
    }
    let dir = super::bench_scratch::Scratch::new()?;
    let db = dir.path().join("open.db");
    let exe = std::env::current_exe()?;
    let socket = format!("trajan-bench-open-{}", std::process::id());
    let tmux = |args: &[&str]| std::process::Command::new("tmux").arg("-L").arg(&socket).args(args).output();
    // A server already up, so its start is not timed.
    tmux(&["-f", "/dev/null", "new", "-d", "-s", "keep", "exec sleep 600"])?;
    let cmd = format!("exec env TERM=xterm-256color {} --db {} {}", exe.display(), db.display(), file.display());
    let started = Instant::now();
    tmux(&["new", "-d", "-x", "200", "-y", "50", "-s", "b", &cmd])?;
    let pid = String::from_utf8_lossy(&tmux(&["display", "-p", "-t", "b", "#{pane_pid}"])?.stdout).trim().to_string();
    let screen = || tmux(&["capture-pane", "-p", "-t", "b"]).map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    let wait = |what: &str, poll: Duration, done: &dyn Fn(&str) -> bool| -> Result<Duration> {
        while started.elapsed() < Duration::from_secs(120) {
            if done(&screen()?) {
                return Ok(started.elapsed());
            }
            std::thread::sleep(poll);
        }
        let _ = tmux(&["kill-server"]);
        bail!("trajan did not show {what} in tmux within 120 s")
    };
    let first = wait("its first step", Duration::from_millis(2), &|s| s.contains(FIRST))?;
    let pressed = started.elapsed();
    tmux(&["send-keys", "-t", "b", "-l", "l"])?;
    let next = wait("its second step", Duration::from_millis(2), &|s| s.contains(NEXT))? - pressed;
    let pressed = started.elapsed();
    tmux(&["send-keys", "-t", "b", "-l", "G"])?;
    // After `G`: the last step's thought.
    let marker = format!("Step {}: ", STEPS - 1);
    let last_at = wait("its last step", Duration::from_millis(2), &|s| s.contains(&marker))?;
    let last = last_at - pressed;
    let complete = wait("the end of the reading", Duration::from_millis(20), &|s| s.contains("steps in "))?;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let peak_kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .context("VmHWM of trajan")?;
    let _ = tmux(&["kill-server"]);
    Ok(Some(Timed { first, next, last, last_at, complete, peak_kb }))
}

/// A headless app following the reading of `file` on a thread into a new database, as
/// `trajan FILE` runs them, and when it was started.
struct Session {
    ui: Headless,
    reader: std::thread::JoinHandle<()>,
    started: Instant,
    /// Stops the reading (as quitting `trajan FILE` does).
    cancel: Arc<AtomicBool>,
    _dir: super::bench_scratch::Scratch,
}

impl Session {
    fn open(file: &Path) -> Result<Session> {
        let dir = super::bench_scratch::Scratch::new()?;
        let db = dir.path().join("open.db");
        let started = Instant::now();
        let mut writer = Store::open(&db)?;
        writer.limit_cache(16 * 1024)?;
        let ctx = ViewCtx::new(Theme::load("dark", ColorDepth::TrueColor)?, Keymap::default_map(), "bench".into());
        let mut ui = Headless::open(Store::open_read_only(&db)?, ctx, 200, 50).map_err(anyhow::Error::msg)?;
        ui.start_worker(&trajan::store::Location::File(db.clone()));
        let (tx, rx) = mpsc::channel::<Action>();
        ui.follow(rx);
        let label = file.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let path = file.to_path_buf();
        let cancel = Arc::new(AtomicBool::new(false));
        let stop = Arc::clone(&cancel);
        let reader = std::thread::spawn(move || {
            let t = Instant::now();
            let tell = |e| {
                let _ = tx.send(Action::Feed(feed(e, &label)));
            };
            let opts = Options { after_first: Some(super::open::yield_to_keys), ..Options::default() };
            let opened = reading::open(&mut writer, &[path], &opts, &tell, &stop);
            let _ = tx.send(Action::Feed(done(&opened, &label, "stored in the benchmark's database", t.elapsed())));
        });
        Ok(Session { ui, reader, started, cancel, _dir: dir })
    }

    /// Poll the app until `done` holds (within `limit` from the launch), then draw.
    fn until(&mut self, what: &str, limit: Duration, done: impl Fn(&Headless) -> bool) -> Result<Duration> {
        while !done(&self.ui) {
            if self.started.elapsed() > limit {
                bail!("{what} did not come within {} s", limit.as_secs());
            }
            self.ui.poll();
            std::thread::sleep(Duration::from_micros(200));
        }
        self.ui.draw();
        Ok(self.started.elapsed())
    }
}

/// The current step has its body.
fn shown(ui: &Headless) -> bool {
    ui.app.run.as_ref().is_some_and(|r| r.body().is_some())
}

/// In this process: the reading on a thread, its news followed by a headless app with the worker.
fn headless(file: &Path) -> Result<String> {
    let mut session = Session::open(file)?;
    // The first screen: the run open with its first steps drawn.
    let first = session.until("the first screen", Duration::from_secs(60), shown)?;
    let Session { mut ui, reader, started, .. } = session;
    // Keys while the rest is read, 100 a second (faster than anyone reads): each timed from the
    // key until its step's body is drawn (the worker loads it; the news that arrived meanwhile is
    // applied too, as the driver applies it), then the news until the next key.
    let (mut keys, mut cpu, mut news, mut news_cpu) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    while ui.app.reading.is_some() || !reader.is_finished() {
        let (t, c) = (Instant::now(), thread_cpu());
        ui.press("j").map_err(anyhow::Error::msg)?;
        while !shown(&ui) && t.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_micros(200));
            ui.poll();
        }
        ui.draw();
        keys.push(t.elapsed());
        cpu.push(thread_cpu().saturating_sub(c));
        std::thread::sleep(Duration::from_millis(10));
        let (t, c) = (Instant::now(), thread_cpu());
        ui.poll();
        ui.draw();
        news.push(t.elapsed());
        news_cpu.push(thread_cpu().saturating_sub(c));
    }
    let read = started.elapsed();
    let _ = reader.join();
    ui.settle();
    // The same keys once the file is read, for comparison.
    let mut after = Vec::new();
    for _ in 0..keys.len().min(500) {
        let t = Instant::now();
        ui.press("j").map_err(anyhow::Error::msg)?;
        ui.settle();
        after.push(t.elapsed());
    }
    Ok(format!(
        "  in process      first screen {:.0} ms; read whole in {:.2} s\n  keys (j) while it is read, until the step is drawn: {}\n      CPU time of the UI thread per key: {}\n      news applied and drawn between keys: {}; CPU: {}\n  keys (j) once it is read:  {}\n",
        ms(first),
        read.as_secs_f64(),
        spread(&mut keys),
        tail(&mut cpu),
        tail(&mut news),
        tail(&mut news_cpu),
        spread(&mut after),
    ))
}

/// In this process, a new database again: `G` pressed on the first screen, and the time from
/// the launch until the last step is drawn (the skim, the index, the step parsed from its own
/// bytes), the path the 0.3 s is about. Then the reading is stopped, as quitting does.
fn last_at_once(file: &Path) -> Result<String> {
    let mut session = Session::open(file)?;
    let first = session.until("the first screen", Duration::from_secs(60), shown)?;
    session.ui.press("G").map_err(anyhow::Error::msg)?;
    let last = (STEPS - 1) as i64;
    let at_end =
        |ui: &Headless| ui.app.run.as_ref().is_some_and(|r| r.step_index() == Some(last) && r.body().is_some());
    let drawn = session.until("the last step", Duration::from_secs(60), at_end)?;
    session.cancel.store(true, Ordering::Relaxed);
    let _ = session.reader.join();
    Ok(format!(
        "  in process      G on the first screen ({:.0} ms): the last step drawn {:.0} ms after the launch\n",
        ms(first),
        ms(drawn)
    ))
}

/// `N: median, p99, max` of key times.
fn spread(times: &mut [Duration]) -> String {
    times.sort();
    let at = |p: f64| times.get(((times.len().max(1) - 1) as f64 * p) as usize).copied().unwrap_or_default();
    format!(
        "{} keys, median {:.2} ms, p99 {:.2} ms, max {:.2} ms",
        times.len(),
        ms(at(0.5)),
        ms(at(0.99)),
        ms(times.last().copied().unwrap_or_default())
    )
}

/// `median, p99, max` of times.
fn tail(times: &mut [Duration]) -> String {
    spread(times).split_once(", ").map(|(_, s)| s.to_string()).unwrap_or_default()
}

/// CPU time this thread has used: a key's work, whatever the scheduler did meanwhile.
fn thread_cpu() -> Duration {
    #[cfg(unix)]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
        Duration::new(t.tv_sec.max(0) as u64, t.tv_nsec.clamp(0, 999_999_999) as u32)
    }
    #[cfg(not(unix))]
    {
        Duration::ZERO
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}
