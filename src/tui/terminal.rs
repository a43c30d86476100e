//! The terminal: raw mode and alternate screen behind a guard that restores them on every exit
//! path (panics included), synchronized frames, and the OSC 52 clipboard.

use base64::Engine;
use crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use crossterm::terminal::{self, EnterAlternateScreen, LeaveAlternateScreen};
use crossterm::{cursor, execute};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::{Stdout, Write};
use std::sync::atomic::{AtomicBool, Ordering};

pub type Term = Terminal<CrosstermBackend<Stdout>>;

/// Whether mouse capture is on, so the restore (from Drop or the panic hook) undoes it.
static MOUSE: AtomicBool = AtomicBool::new(false);

/// Owns the terminal setup; dropping it restores the terminal.
pub struct Guard {
    pub terminal: Term,
}

impl Guard {
    pub fn enter(mouse: bool) -> std::io::Result<Guard> {
        install_panic_hook();
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
        match Terminal::new(CrosstermBackend::new(std::io::stdout())) {
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

/// Undo everything `enter` did. Safe to call more than once.
pub fn restore() {
    let mut out = std::io::stdout();
    if MOUSE.swap(false, Ordering::SeqCst) {
        let _ = execute!(out, DisableMouseCapture);
    }
    let _ = execute!(out, terminal::EndSynchronizedUpdate, LeaveAlternateScreen, cursor::Show);
    let _ = terminal::disable_raw_mode();
    let _ = out.flush();
}

fn install_panic_hook() {
    static INSTALLED: AtomicBool = AtomicBool::new(false);
    if INSTALLED.swap(true, Ordering::SeqCst) {
        return;
    }
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
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
    use super::osc52;

    #[test]
    fn osc52_wraps_base64() {
        assert_eq!(osc52("hi"), "\u{1b}]52;c;aGk=\u{7}");
    }
}
