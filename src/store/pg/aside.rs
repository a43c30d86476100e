//! A unit's search terms written on a second connection, on a thread of their own, while the
//! unit's other rows are written on the first: the tokenizing (client CPU) and the trigram index
//! (the server's CPU, another backend) run beside the write instead of after it.
//!
//! The unit's terms commit first, then the unit (`commit_source` waits for them): whoever sees a
//! unit's steps sees their terms, so search never finds a unit only half searchable. A unit
//! given up after its terms committed leaves terms of step ids no step holds (ids are never
//! handed out twice): the writer has them deleted (`Job::Forget`), and search reads terms only
//! through `steps`, so none is ever found. `step_terms` and `step_lexemes` have no foreign key to
//! `steps` for this (migrations 4 and 5): their rows go with their steps by a trigger.

use super::Pg;
use crate::error::StoreError;
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread::JoinHandle;

/// Text bytes of steps sent to the thread at once; the channel holds two such jobs, so about
/// three are in memory at most.
pub(super) const JOB_BYTES: usize = 8 << 20;

/// What the writer asks of the terms thread.
pub(super) enum Job {
    /// Steps' searchable texts (thought, action, observation) by step id: their terms are
    /// written in the unit's transaction on the second connection.
    Steps(Vec<(i64, [String; 3])>),
    /// The unit's steps are all sent: commit their terms, then answer.
    End,
    /// The unit was given up: roll back its terms, delete those of these steps already
    /// committed, then answer.
    Forget(Vec<i64>),
}

/// Opens the terms thread's connection.
pub(super) type Connect = Box<dyn FnOnce() -> Result<Pg, StoreError> + Send>;

/// The thread's loop: jobs in, an answer to each `End` and `Forget` out (`term_rows::serve`).
pub(super) type Serve = fn(&Pg, &Receiver<Job>, &SyncSender<Result<(), StoreError>>);

/// The terms thread and its channels.
pub(super) struct Aside {
    jobs: Option<SyncSender<Job>>,
    answers: Receiver<Result<(), StoreError>>,
    thread: Option<JoinHandle<()>>,
}

impl Aside {
    /// The thread and its connection, opened there by `connect` (its answer to whether it
    /// connected comes first).
    pub fn start(connect: Connect, serve: Serve) -> Result<Aside, StoreError> {
        let (jobs, inbox) = sync_channel::<Job>(2);
        let (reply, answers) = sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("pg-terms".into())
            .spawn(move || match connect() {
                Ok(pg) => {
                    if reply.send(Ok(())).is_ok() {
                        serve(&pg, &inbox, &reply);
                    }
                }
                Err(e) => {
                    let _ = reply.send(Err(e));
                }
            })
            .map_err(|e| StoreError::Postgres(format!("cannot start the terms thread: {e}")))?;
        let aside = Aside { jobs: Some(jobs), answers, thread: Some(thread) };
        aside.answers.recv().map_err(|_| StoreError::Postgres("the terms connection ended".into()))??;
        Ok(aside)
    }

    pub fn send(&self, job: Job) -> Result<(), StoreError> {
        let gone = || StoreError::Postgres("the terms connection ended".into());
        self.jobs.as_ref().ok_or_else(gone)?.send(job).map_err(|_| gone())
    }

    /// Send `End` or `Forget` and wait for the answer.
    pub fn finish(&self, job: Job) -> Result<(), StoreError> {
        self.send(job)?;
        self.answers.recv().map_err(|_| StoreError::Postgres("the terms connection ended".into()))?
    }
}

impl Drop for Aside {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
