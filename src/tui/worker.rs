//! Effects performed off the UI thread: two lanes, each a thread with a connection of its own
//! (read-only; the first label saved opens one to write). The quick lane loads runs and steps,
//! searches and saves labels; the slow lane reads every run's labels, the whole run list and the
//! statistics, and builds the search index when runs wait for it (its progress comes back as
//! it goes). A third lane, without a connection, reads steps from a file ahead of its reading
//! (`G` while `trajan FILE` reads). A key never waits for any: effects go in, actions come back,
//! in order within a lane, and the event loop draws them when they arrive. The reading of files beside the TUI
//! (`trajan PATH`) sends its news the same way ([`Worker::follow`]).

use super::action::{Action, Feed, PeekStep};
use super::app::Effect;
use super::perform::perform_with_progress;
use crate::store::{Location, Store};
use std::sync::mpsc::{self, Receiver, Sender};

/// The two lanes and what they send back (`None` for an effect that gives no action).
pub struct Worker {
    quick: Sender<Effect>,
    /// Steps read from a file ahead of the reading.
    peek: Sender<PeekAsked>,
    slow: Sender<Effect>,
    results: Receiver<Reply>,
    /// Effects sent and not yet answered.
    pending: usize,
    /// Of those, effects that change the screen (a run to open): keys wait for them.
    opening: usize,
    /// News from files being read beside the TUI (`trajan PATH`), until the reading ends.
    feed: Option<Receiver<Action>>,
    /// The reading told its end ([`Feed::Done`]); a feed that closes without it died.
    feed_done: bool,
}

/// What the status line says when the reading's news stop without an end: its thread died.
pub const READING_DIED: &str = "the reading of the files stopped without an end (its thread died; please report it)";

/// An effect whose answer changes what the next key means (it opens a run): keys typed ahead of
/// it are read once it has been applied, in order.
fn opens(effect: &Effect) -> bool {
    matches!(effect, Effect::LoadRun(_) | Effect::LoadCompare(_) | Effect::LoadPicker(_))
}

/// Which lane an effect takes: reads of every run (seconds on a large database) go to the slow
/// one, so a step still loads while the statistics are computed. So does a run read again whole
/// once a file being read ends (`trajan FILE`: 20,000 step lines; the reviewer already has them):
/// the step a key asks for meanwhile is not held up behind it.
fn slow(effect: &Effect) -> bool {
    matches!(
        effect,
        Effect::LoadStats { .. }
            | Effect::LoadReview { .. }
            | Effect::LoadAllRuns
            | Effect::RefreshRun(_)
            | Effect::BuildIndex
            | Effect::ExportChart { .. }
            | Effect::ExportReport { .. }
    )
}

/// What a lane sends back: an effect's answer, or progress on the way to one.
enum Reply {
    Done { opening: bool, action: Option<Action> },
    Progress(Action),
}

/// A step asked of the file ahead of the reading: the run, the step's index, the reader.
type PeekAsked = (i64, i64, PeekStep);

/// The lane of steps read from a file ahead of the reading: they need no store, and wait
/// behind nothing the quick lane does (the step lines loaded as the reading stores them).
fn peek_lane(results: Sender<Reply>) -> Sender<PeekAsked> {
    let (tx, rx) = mpsc::channel::<PeekAsked>();
    std::thread::spawn(move || {
        for (run, index, peek) in rx {
            let action =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| super::perform::peek_step(run, index, &peek)))
                    .unwrap_or_else(|_| Action::Failed("internal error (reported as a bug)".into()));
            if results.send(Reply::Done { opening: false, action: Some(action) }).is_err() {
                return;
            }
        }
    });
    tx
}

fn lane(db: &Location, results: Sender<Reply>) -> Sender<Effect> {
    let (tx, rx) = mpsc::channel::<Effect>();
    let db = db.clone();
    std::thread::spawn(move || {
        let store = match Store::open_at(&db, true) {
            Ok(store) => store,
            Err(e) => {
                // Every effect is answered, so the loop does not wait for them.
                for effect in rx {
                    let action = Some(Action::Failed(format!("{}: {e}", db.shown())));
                    let _ = results.send(Reply::Done { opening: opens(&effect), action });
                }
                return;
            }
        };
        for effect in rx {
            let opening = opens(&effect);
            // A panic here becomes a message in the status line (the panic hook leaves the
            // terminal to the running TUI: `terminal::install_panic_hook`).
            let mut progress = |a: Action| {
                let _ = results.send(Reply::Progress(a));
            };
            let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                perform_with_progress(&store, effect, &mut progress)
            }))
            .unwrap_or_else(|_| Some(Action::Failed("internal error (reported as a bug)".into())));
            if results.send(Reply::Done { opening, action: done }).is_err() {
                return;
            }
        }
    });
    tx
}

impl Worker {
    pub fn start(db: &Location) -> Worker {
        let (results_tx, results) = mpsc::channel();
        let quick = lane(db, results_tx.clone());
        let peek = peek_lane(results_tx.clone());
        let slow = lane(db, results_tx);
        Worker { quick, slow, peek, results, pending: 0, opening: 0, feed: None, feed_done: false }
    }

    /// Also take the actions `feed` sends (the reading of files beside the TUI), until it closes.
    pub fn follow(&mut self, feed: Receiver<Action>) {
        self.feed = Some(feed);
        self.feed_done = false;
    }

    /// News of the reading arrived: its end is noted.
    fn news(&mut self, action: Action, out: &mut Vec<Action>) {
        self.feed_done |= matches!(action, Action::Feed(Feed::Done { .. }));
        out.push(action);
    }

    /// The reading's news closed: when no end was told, its thread died, and the status line
    /// says so (the screen would otherwise say it is reading forever).
    fn closed(&mut self, out: &mut Vec<Action>) {
        self.feed = None;
        if !std::mem::replace(&mut self.feed_done, true) {
            out.push(Action::Feed(Feed::Done { runs: Vec::new(), message: READING_DIED.into(), error: true }));
        }
    }

    /// Hand an effect to its lane.
    pub fn send(&mut self, effect: Effect) {
        let opening = opens(&effect);
        let sent = match effect {
            Effect::PeekStep { run, index, peek } => self.peek.send((run, index, peek)).is_ok(),
            e if slow(&e) => self.slow.send(e).is_ok(),
            e => self.quick.send(e).is_ok(),
        };
        if sent {
            self.pending += 1;
            self.opening += usize::from(opening);
        }
    }

    /// A run is being opened: keys wait until it is (so `Enter x` opens a run and goes to its
    /// first problem, as typed).
    pub fn opening(&self) -> bool {
        self.opening > 0
    }

    fn answered(&mut self, opening: bool) {
        self.pending = self.pending.saturating_sub(1);
        self.opening = self.opening.saturating_sub(usize::from(opening));
    }

    /// Effects still being performed, or files still being read (the loop polls often while
    /// there are).
    pub fn busy(&self) -> bool {
        self.pending > 0 || self.feed.is_some()
    }

    /// The actions that have arrived, without waiting.
    pub fn ready(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        while let Ok(reply) = self.results.try_recv() {
            out.extend(self.take(reply));
        }
        while let Some(feed) = &self.feed {
            match feed.try_recv() {
                Ok(action) => self.news(action, &mut out),
                Err(mpsc::TryRecvError::Empty) => break,
                Err(mpsc::TryRecvError::Disconnected) => self.closed(&mut out),
            }
        }
        out
    }

    /// Wait for every effect sent (and those their actions ask for are the caller's to send).
    pub fn wait(&mut self) -> Vec<Action> {
        let mut out = Vec::new();
        while self.pending > 0 {
            match self.results.recv() {
                Ok(reply) => out.extend(self.take(reply)),
                Err(_) => break,
            }
        }
        // Nothing else to wait for: the next news of the reading (or its end).
        if out.is_empty()
            && let Some(feed) = &self.feed
        {
            match feed.recv() {
                Ok(action) => self.news(action, &mut out),
                Err(_) => self.closed(&mut out),
            }
        }
        out
    }

    /// The action a reply carries; an answer ends its effect, progress does not.
    fn take(&mut self, reply: Reply) -> Option<Action> {
        match reply {
            Reply::Done { opening, action } => {
                self.answered(opening);
                action
            }
            Reply::Progress(action) => Some(action),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_read_again_at_the_end_of_a_reading_does_not_hold_up_a_step() {
        assert!(slow(&Effect::RefreshRun(1)));
        assert!(!slow(&Effect::LoadStep { run: 1, index: 3 }) && !slow(&Effect::LoadRun(1)));
        assert!(!opens(&Effect::RefreshRun(1)), "keys do not wait for it");
    }

    #[test]
    fn news_of_a_reading_arrive_with_the_results_and_the_worker_is_busy_until_it_ends() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut worker = Worker::start(&Location::File(dir.path().join("none.db")));
        assert!(!worker.busy());
        let (tx, rx) = mpsc::channel();
        worker.follow(rx);
        assert!(worker.busy(), "the loop polls while files are read");
        let _ = tx.send(Action::Feed(Feed::Begun(3)));
        let got = worker.wait();
        assert!(matches!(got.as_slice(), [Action::Feed(Feed::Begun(3))]), "{got:?}");
        let _ = tx.send(Action::Feed(Feed::Done { runs: vec![3], message: "read".into(), error: false }));
        drop(tx);
        let got = worker.ready();
        assert!(matches!(got.as_slice(), [Action::Feed(Feed::Done { error: false, .. })]), "{got:?}");
        assert!(!worker.busy(), "the reading is over");
    }

    #[test]
    fn a_reading_whose_thread_dies_without_an_end_is_said_to_have_stopped() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let mut worker = Worker::start(&Location::File(dir.path().join("none.db")));
        let (tx, rx) = mpsc::channel::<Action>();
        worker.follow(rx);
        let reader = std::thread::spawn(move || {
            let _ = tx.send(Action::Feed(Feed::Begun(1)));
            panic!("the reader dies");
        });
        assert!(reader.join().is_err());
        let got = worker.wait();
        assert!(matches!(got.as_slice(), [Action::Feed(Feed::Begun(1))]), "{got:?}");
        let got = worker.wait();
        match got.as_slice() {
            [Action::Feed(Feed::Done { error: true, message, .. })] => assert_eq!(message, READING_DIED),
            other => panic!("{other:?}"),
        }
        assert!(!worker.busy());
    }
}
