//! An [`Alongside`] on a thread of its own: the reading core parses on while the other core
//! reconstructs. It is fed the steps in the pieces handed to the writer (shared with it, never
//! copied), in the order they were read, so it makes what an [`Alongside`] fed a step at a time
//! makes.

use super::{Alongside, Document, ReadError};
use crate::analysis::reconstruct::{Exec, Reconstructed};
use crate::model::{Edit, Run, Step};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Pieces of steps waiting for the reconstruction at most (the reading goes no further ahead).
const PIECES_AHEAD: usize = 8;

/// The reconstruction's thread, fed as [`Alongside`] is.
pub struct Beside {
    tx: Option<SyncSender<Feed>>,
    back: Receiver<Finished>,
    thread: Option<JoinHandle<()>>,
}

enum Feed {
    /// [`Alongside::begin_assuming`].
    Begin(Option<Option<String>>),
    /// Steps of the run begun last, each with how its action ran and the adapter's edits.
    Steps(Arc<[Step]>, Vec<(Exec, Vec<Edit>)>),
    /// Everything fed so far is forgotten: the document is read again from its start.
    Restart,
    /// [`Alongside::finish`] on the document read.
    Finish(Box<Document>),
}

type Finished = (Box<Document>, Option<Vec<Reconstructed>>);

impl Beside {
    /// The thread, waiting for its first run.
    pub fn spawn() -> std::io::Result<Beside> {
        let (tx, rx) = sync_channel::<Feed>(PIECES_AHEAD);
        let (done, back) = sync_channel(1);
        let thread = std::thread::Builder::new().name("reconstruct".into()).spawn(move || {
            let mut along = Alongside::default();
            for feed in rx {
                match feed {
                    Feed::Begin(submission) => along.begin_assuming(submission),
                    Feed::Steps(steps, hows) => {
                        for (step, (how, edits)) in steps.iter().zip(hows) {
                            along.step(step, how, edits);
                        }
                    }
                    Feed::Restart => along = Alongside::default(),
                    Feed::Finish(mut doc) => {
                        let made = std::mem::take(&mut along).finish(&mut doc);
                        if done.send((doc, made)).is_err() {
                            return;
                        }
                    }
                }
            }
        })?;
        Ok(Beside { tx: Some(tx), back, thread: Some(thread) })
    }

    fn feed(&self, feed: Feed) {
        // A thread gone (it panicked) is told by `finish`.
        if let Some(tx) = &self.tx {
            let _ = tx.send(feed);
        }
    }

    /// [`Alongside::begin`].
    pub fn begin(&self, run: &Run) {
        self.begin_assuming(Alongside::assumed(run));
    }

    /// [`Alongside::begin_assuming`].
    pub fn begin_assuming(&self, submission: Option<Option<String>>) {
        self.feed(Feed::Begin(submission));
    }

    /// [`Alongside::step`] for each step of a piece, `hows` holding each one's `how` and edits.
    pub fn steps(&self, steps: Arc<[Step]>, hows: Vec<(Exec, Vec<Edit>)>) {
        self.feed(Feed::Steps(steps, hows));
    }

    /// Forget what was fed: the document is read again from its start.
    pub fn restart(&self) {
        self.feed(Feed::Restart);
    }

    /// [`Alongside::finish`], once every step fed is reconstructed: the document back, with its
    /// runs' edits when what was assumed holds.
    pub fn finish(&self, doc: Document) -> Result<(Document, Option<Vec<Reconstructed>>), ReadError> {
        let Some(tx) = &self.tx else { return Ok((doc, None)) };
        match tx.send(Feed::Finish(Box::new(doc))) {
            Ok(()) => self
                .back
                .recv()
                .map(|(doc, made)| (*doc, made))
                .map_err(|_| ReadError::Whole("the reconstruction stopped")),
            // The thread is gone (it panicked): the edits are made by a second reading.
            Err(unsent) => match unsent.0 {
                Feed::Finish(doc) => Ok((*doc, None)),
                _ => Err(ReadError::Whole("the reconstruction stopped")),
            },
        }
    }
}

impl Drop for Beside {
    fn drop(&mut self) {
        self.tx = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
