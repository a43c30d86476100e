//! Stop signals (SIGHUP, SIGTERM, SIGINT): noticed, so the process ends through its normal
//! exits, with a fallback for when it cannot.
//!
//! By default these signals end the process at once: no destructor runs, so a temporary folder
//! stays behind and a TUI leaves the terminal in raw mode on the alternate screen. After
//! [`catch`], a stop signal is recorded instead; the TUI's event loop (and `trajan demo`
//! between its steps) checks [`caught`] and returns, so destructors remove temporary folders and
//! restore the terminal, and the process ends with the status a shell expects of one killed by
//! that signal ([`exit_status`]: 128 + its number).
//!
//! The main thread may not get back to a check: when the terminal is gone (a closed window, a
//! dropped SSH connection), crossterm's event polling spins on the dead tty and never returns
//! (crossterm-rs/crossterm#793). So a watcher thread gives the main thread [`GRACE`] to end by
//! itself, then runs what was registered with [`on_forced_exit`] (restore the terminal, remove
//! the folder) and ends the process with the same status.
//!
//! A second stop signal while the first is pending ends the process at once, as it would have
//! without [`catch`].

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// How long the main thread has, after a stop signal, to end by itself.
pub const GRACE: Duration = Duration::from_secs(1);

/// The number of the last stop signal received; 0 before any.
fn received() -> &'static Arc<AtomicUsize> {
    static RECEIVED: OnceLock<Arc<AtomicUsize>> = OnceLock::new();
    RECEIVED.get_or_init(|| Arc::new(AtomicUsize::new(0)))
}

type Hook = Box<dyn Fn() + Send>;

/// What to do if the process must be ended by the watcher, by registration id.
fn hooks() -> &'static Mutex<Vec<(u64, Hook)>> {
    static HOOKS: OnceLock<Mutex<Vec<(u64, Hook)>>> = OnceLock::new();
    HOOKS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Catch SIGHUP, SIGTERM and SIGINT from now on (see the module documentation). Calling it again
/// does nothing more.
#[cfg(unix)]
pub fn catch() -> std::io::Result<()> {
    use signal_hook::consts::signal::{SIGHUP, SIGINT, SIGTERM};
    use signal_hook::flag;
    use std::sync::atomic::AtomicBool;
    static INSTALLED: Mutex<bool> = Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if *installed {
        return Ok(());
    }
    let stops = [SIGHUP, SIGTERM, SIGINT];
    let pending = Arc::new(AtomicBool::new(false));
    for signal in stops {
        // The order matters: a second signal finds `pending` set by the first and takes the
        // default action (ends the process).
        flag::register_conditional_default(signal, Arc::clone(&pending))?;
        flag::register(signal, Arc::clone(&pending))?;
        flag::register_usize(signal, Arc::clone(received()), signal as usize)?;
    }
    let mut signals = signal_hook::iterator::Signals::new(stops)?;
    std::thread::Builder::new().name("stop-signals".into()).spawn(move || {
        if let Some(signal) = signals.forever().next() {
            std::thread::sleep(GRACE);
            force_exit(signal);
        }
    })?;
    *installed = true;
    Ok(())
}

/// Signals are a Unix matter; elsewhere nothing is caught.
#[cfg(not(unix))]
pub fn catch() -> std::io::Result<()> {
    Ok(())
}

/// The main thread did not end in time: run the hooks, latest first, and end the process.
fn force_exit(signal: i32) -> ! {
    run_hooks();
    std::process::exit(exit_status(signal))
}

/// Run what [`on_forced_exit`] registered, latest first: for a process about to end while other
/// threads still hold what the hooks undo (`main`, before `process::exit`: a reading thread
/// with an unpacked archive).
pub fn run_hooks() {
    let hooks = hooks().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    for (_, hook) in hooks.iter().rev() {
        hook();
    }
}

/// The stop signal received since [`catch`], if any (its number).
pub fn caught() -> Option<i32> {
    let n = received().load(Ordering::SeqCst);
    (n != 0).then(|| i32::try_from(n).unwrap_or(i32::MAX))
}

/// The exit status of a process that stops because of `signal`, as a shell reports one killed
/// by it: 128 + its number (129 for SIGHUP, 130 for SIGINT, 143 for SIGTERM).
pub fn exit_status(signal: i32) -> i32 {
    128 + signal
}

/// Registered with [`on_forced_exit`]; dropping it unregisters.
#[must_use = "the hook is unregistered when this is dropped"]
#[derive(Debug)]
pub struct ForcedExitHook(u64);

/// Run `hook` if the process has to be ended by the watcher (see the module documentation):
/// work the main thread's destructors would have done, such as restoring the terminal or
/// removing a temporary folder. It runs on the watcher thread while the main thread may still
/// run, so it must be safe to run twice.
pub fn on_forced_exit(hook: impl Fn() + Send + 'static) -> ForcedExitHook {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let id = NEXT.fetch_add(1, Ordering::SeqCst) as u64;
    hooks().lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((id, Box::new(hook)));
    ForcedExitHook(id)
}

impl Drop for ForcedExitHook {
    fn drop(&mut self) {
        hooks().lock().unwrap_or_else(std::sync::PoisonError::into_inner).retain(|(id, _)| *id != self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Raising a signal here would end the test process (that is the watcher's job): the
    // signals themselves are tested on the real binary (tests/tmux.rs).

    #[test]
    fn the_exit_status_is_a_shells_for_a_killed_process() {
        assert_eq!(exit_status(1), 129);
        assert_eq!(exit_status(15), 143);
        assert_eq!(caught(), None);
    }

    #[test]
    fn hooks_are_unregistered_when_dropped() {
        let count = || hooks().lock().map(|h| h.len()).unwrap_or_default();
        let before = count();
        let hook = on_forced_exit(|| {});
        assert_eq!(count(), before + 1);
        drop(hook);
        assert_eq!(count(), before);
    }
}
