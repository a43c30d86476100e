//! Headless Chromium (Debian's `chromium`) opening a local page, for the report's tests and
//! `trajan bench report`: the DOM as the page left it (`--dump-dom`), or a screenshot, with every
//! message the page wrote to the console (Chromium logs them to stderr as `CONSOLE` lines:
//! uncaught errors, Content-Security-Policy violations, `console.*`).
//!
//! Each start gets a fresh profile folder and the switches that keep it off the network
//! (no background fetches, component updates, sync or QUIC), so nothing but the file is read.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a page did.
#[derive(Debug)]
pub struct Page {
    /// The serialized DOM after the load (empty for a screenshot).
    pub dom: String,
    /// Console messages, each as Chromium logged it.
    pub console: Vec<String>,
    /// From start to exit.
    pub elapsed: Duration,
}

/// The browser: `chromium` (Debian), else `chromium-browser`, on the PATH.
pub fn find() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    ["chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|p| p.is_file())
}

/// The browser, or an error saying how to get it (`.ci/run` installs it).
pub fn require() -> Result<PathBuf, String> {
    find().ok_or_else(|| "chromium is not installed (apt-get install chromium; .ci/run installs it)".to_string())
}

fn open(file: &Path, what: &[String]) -> Result<Page, String> {
    open_at(file, "", what)
}

/// [`open`] at `#fragment` of the page (none when empty).
fn open_at(file: &Path, fragment: &str, what: &[String]) -> Result<Page, String> {
    let browser = require()?;
    let profile = tempfile::tempdir().map_err(|e| format!("a profile folder: {e}"))?;
    let mut url =
        format!("file://{}", std::fs::canonicalize(file).map_err(|e| format!("{}: {e}", file.display()))?.display());
    if !fragment.is_empty() {
        url = format!("{url}#{fragment}");
    }
    let started = Instant::now();
    let mut child = Command::new(browser)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(what)
        .arg(&url)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("starting chromium: {e}"))?;
    // Read both pipes while it runs (a large DOM would fill one); give up after two minutes.
    let mut stdout = child.stdout.take().ok_or("no stdout")?;
    let mut stderr = child.stderr.take().ok_or("no stderr")?;
    let out = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stdout, &mut s);
        s
    });
    let err = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = std::io::Read::read_to_string(&mut stderr, &mut s);
        s
    });
    let deadline = started + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().map_err(|e| e.to_string())? {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("chromium did not finish loading {} in two minutes", file.display()));
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let elapsed = started.elapsed();
    let dom = out.join().unwrap_or_default();
    let log = err.join().unwrap_or_default();
    if !status.success() {
        return Err(format!("chromium failed ({status}) on {}:\n{log}", file.display()));
    }
    let console = log.lines().filter(|l| l.contains(":CONSOLE")).map(str::to_string).collect();
    Ok(Page { dom, console, elapsed })
}

/// The page's DOM once it has loaded (and its scripts have run).
pub fn dump_dom(file: &Path) -> Result<Page, String> {
    open(file, &["--dump-dom".to_string()])
}

/// The page's DOM once it has loaded at `#fragment` in a `width` x `height` window, its timers
/// run for up to five seconds of virtual time: what a script measured of the layout (a test's
/// probe, added to a copy of the page) is in it. (A screenshot cannot show a page scrolled to a
/// fragment: headless Chromium draws any page opened at a fragment blank.)
pub fn dump_dom_at(file: &Path, fragment: &str, width: u32, height: u32) -> Result<Page, String> {
    let what =
        [format!("--window-size={width},{height}"), "--virtual-time-budget=5000".to_string(), "--dump-dom".to_string()];
    open_at(file, fragment, &what)
}

/// A screenshot of the page's first `width` x `height` pixels, written to `png`.
pub fn screenshot(file: &Path, png: &Path, width: u32, height: u32) -> Result<Page, String> {
    open(file, &[format!("--window-size={width},{height}"), format!("--screenshot={}", png.display())])
}
