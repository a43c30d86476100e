//! Bounds on one run's replay. Every command of a trajectory is the agent's (or an attacker's):
//! `sed -i 's/a/&&&&&&&&&&/g'` makes a file ten times larger each time it runs, a chain of
//! `cd a; cd a; ...` makes a path as long as the chain, a view of 10^7 short lines makes 10^7
//! known lines. The replay holds one [`Budget`] per run and asks it before it grows anything:
//!
//! - **a simulated file** holds at most [`Limits::file_bytes`] (its known text plus
//!   [`LINE_COST`] a line): a view, a write or a script whose result would be larger leaves the
//!   file unknown, and the edit is [`Certainty::TooLarge`](crate::model::Certainty);
//! - **the working-folder state**: a working directory is at most [`Limits::cwd_bytes`] long
//!   (past it, the rest of the step's edits are too large to replay), and at most
//!   [`Limits::roots`] folders are kept as roots for relative paths;
//! - **the work of a run**: every line a simulation, a draw or a view goes through, every byte
//!   it makes and every edit a walk visits is [`Budget::spend`]t from [`Limits::work`]. Once
//!   it is spent, what is known of the run's files is dropped and every later edit is too
//!   large to replay: the rest of the run costs about what reading it costs.
//!
//! Past a cap the edit is unknown, never an abort: the run and every other run are kept. A
//! new simulator (another script language) spends from the same budget (`Replay::budget`).

/// What a known line costs beside its text (its segment, its shared string's header and the
/// allocator's share): a file of short lines is held at about this much per line.
pub const LINE_COST: usize = 64;

/// The caps (see the module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most one simulated file may hold: text bytes plus [`LINE_COST`] per line.
    pub file_bytes: usize,
    /// The longest working directory a `cd` may make.
    pub cwd_bytes: usize,
    /// The most folders kept as roots for relative paths (working directories, `cd` targets).
    pub roots: usize,
    /// The work of one run: lines gone through and bytes made.
    pub work: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        // About 2.5 s of replay per run at most (docs/BENCHMARKS.md, "Hostile replays");
        // ordinary runs spend well under 1% of it.
        Limits { file_bytes: 32 << 20, cwd_bytes: 4096, roots: 1024, work: 1 << 26 }
    }
}

/// One run's budget.
#[derive(Debug, Clone, Copy, Default)]
pub struct Budget {
    pub limits: Limits,
    spent: u64,
    /// A cap was passed since [`Budget::take_trip`] last looked: the edit being made is too
    /// large to replay.
    tripped: bool,
}

impl Budget {
    pub fn new(limits: Limits) -> Budget {
        Budget { limits, spent: 0, tripped: false }
    }

    /// Spend `units` of work; false (and from then on) once the run's work is spent.
    pub fn spend(&mut self, units: usize) -> bool {
        if self.spent > self.limits.work {
            return false;
        }
        self.spent = self.spent.saturating_add(units as u64);
        if self.spent > self.limits.work {
            self.tripped = true;
            return false;
        }
        true
    }

    /// The run's work is spent.
    pub fn exhausted(&self) -> bool {
        self.spent > self.limits.work
    }

    /// Whether a file of `bytes` text in `lines` lines may be held; when not, the edit being
    /// made is too large to replay.
    pub fn fits(&mut self, bytes: usize, lines: usize) -> bool {
        let fits = bytes.saturating_add(lines.saturating_mul(LINE_COST)) <= self.limits.file_bytes;
        if !fits {
            self.tripped = true;
        }
        fits
    }

    /// A cap other than the file's and the work's was passed (a working directory too long).
    pub fn trip(&mut self) {
        self.tripped = true;
    }

    /// Whether a cap was passed since the last look (and forget it).
    pub fn take_trip(&mut self) -> bool {
        std::mem::take(&mut self.tripped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_is_spent_once_and_stays_spent() {
        let mut b = Budget::new(Limits { work: 10, ..Limits::default() });
        assert!(b.spend(6));
        assert!(!b.take_trip());
        assert!(!b.spend(6), "past the cap");
        assert!(b.exhausted());
        assert!(b.take_trip(), "the edit that passed it is told");
        assert!(!b.spend(0), "spent for good");
        assert!(!b.take_trip(), "told once");
    }

    #[test]
    fn a_file_counts_its_lines_as_well_as_its_bytes() {
        let mut b = Budget::new(Limits { file_bytes: 1000, ..Limits::default() });
        assert!(b.fits(1000, 0));
        assert!(!b.take_trip());
        assert!(!b.fits(10, 16), "16 short lines cost more than their 10 bytes");
        assert!(b.take_trip());
    }
}
