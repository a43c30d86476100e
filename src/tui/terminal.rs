//! The terminal: raw mode and alternate screen behind a guard that restores them on every exit
//! path (panics included), synchronized frames, and the OSC 52 clipboard.
//!
//! A panic on the thread that set the terminal up restores it before the message is printed. A
//! panic on another thread (the reading of files beside the TUI, a worker lane: each catches
//! its own and says so in the status line) leaves the terminal to the TUI still running on it:
//! its message is kept and printed once the terminal is restored, not written over the screen.

use base64::Engine;
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{BufWriter, Stdout, Write};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::ThreadId;

/// Frames are written through a buffer large enough for a whole frame of a big terminal, flushed
/// once per frame by `Terminal::draw`: one write per frame, not one per kilobyte (`Stdout`'s own
/// buffer), so a loaded machine or a slow link never shows a frame half drawn.
pub type Term = Terminal<CrosstermBackend<BufWriter<Stdout>>>;

/// The frame buffer's size: a 200x50 screen redrawn whole, every cell coloured, fits.
const FRAME_BUFFER: usize = 1 << 18;

/// Whether mouse capture is on, so the restore (from Drop or the panic hook) undoes it.
static MOUSE: AtomicBool = AtomicBool::new(false);

/// The thread that set the terminal up, while it is set up.
static OWNER: Mutex<Option<ThreadId>> = Mutex::new(None);

/// Panic messages of other threads while the terminal was set up, printed once it is restored.
static DEFERRED: Mutex<Vec<String>> = Mutex::new(Vec::new());

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Owns the terminal setup; dropping it restores the terminal.
pub struct Guard {
    pub terminal: Term,
}

impl Guard {
    pub fn enter(mouse: bool) -> std::io::Result<Guard> {
        install_panic_hook();
        *lock(&OWNER) = Some(std::thread::current().id());
        terminal::enable_raw_mode()?;
        let mut out = std::io::stdout();
        let setup = execute!(out, EnterAlternateScreen, cursor::Hide).and_then(|()| {
            if mouse {
                MOUSE.store(true, Ordering::SeqCst);
                execute!(out, EnableMouseCapture)
            } else {
                Ok(())
            }
        });
        if let Err(e) = setup {
            restore();
            return Err(e);
        }
        match Terminal::new(CrosstermBackend::new(BufWriter::with_capacity(FRAME_BUFFER, std::io::stdout()))) {
            Ok(terminal) => Ok(Guard { terminal }),
            Err(e) => {
                restore();
                Err(e)
            }
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        restore();
    }
}

/// Undo everything `enter` did, then print what other threads' panics said meanwhile. Safe to
/// call more than once.
pub fn restore() {
    let mut out = std::io::stdout();
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, terminal::EndSynchronizedUpdate, LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
    *lock(&OWNER) = None;
    for message in std::mem::take(&mut *lock(&DEFERRED)) {
        eprintln!("{message}");
    }
}

/// Whether a panic on this thread restores the terminal: on the thread that set it up, or when
/// it is not set up; a panic elsewhere leaves it to the TUI.
fn restores_here() -> bool {
    lock(&OWNER).is_none_or(|owner| owner == std::thread::current().id())
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !restores_here() {
            let name = std::thread::current().name().unwrap_or("a background thread").to_string();
            lock(&DEFERRED).push(format!("{name}: {info}"));
            return;
        }
        // Restore first, so the message is readable and the shell usable.
        restore();
        previous(info);
    }));
}

/// The OSC 52 sequence that puts `text` on the clipboard of the terminal the reviewer sits at,
/// through SSH and tmux.
pub fn osc52(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
    format!("\u{1b}]52;c;{encoded}\u{7}")
}

pub fn copy_to_clipboard(text: &str) -> std::io::Result<()> {
    let mut out = std::io::stdout();
    out.write_all(osc52(text).as_bytes())?;
    out.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_thread_that_set_the_terminal_up_restores_it_on_a_panic() {
        assert!(restores_here(), "nothing set up: any panic restores");
        *lock(&OWNER) = Some(std::thread::current().id());
        assert!(restores_here());
        let elsewhere = std::thread::spawn(restores_here).join();
        assert!(matches!(elsewhere, Ok(false)), "a reader's panic leaves the terminal to the TUI");
        *lock(&OWNER) = None;
    }

    #[test]
    fn osc52_wraps_base64() {
        assert_eq!(osc52("hi"), "\u{1b}]52;c;aGk=\u{7}");
    }
}
