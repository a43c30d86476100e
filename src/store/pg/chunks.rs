//! The compressed chunks of step and edit texts read last, kept on the connection: the TUI reads
//! one step a key, and consecutive steps share a chunk (two to a few dozen a chunk), so most keys
//! need no chunk from the server. A chunk never changes once written (a replaced run's texts
//! go to new chunks; ids come from a sequence, never handed out twice), so a chunk kept is never
//! stale (a connection opened again drops them: the database may have been made again).

use std::collections::VecDeque;

/// Chunks kept at most (the steps' chunk and the edits' chunk of the step shown, and the ones
/// before them).
const KEPT: usize = 4;
/// A chunk larger than this (compressed) is not kept: one huge record, read once within a bound.
const LARGEST: usize = 1 << 20;

/// The chunks kept, the one used last at the back.
#[derive(Default)]
pub(super) struct Held {
    bodies: VecDeque<(i64, Vec<u8>)>,
}

impl Held {
    /// Chunk `id`'s compressed body, when kept.
    pub fn get(&mut self, id: i64) -> Option<Vec<u8>> {
        let at = self.bodies.iter().position(|(i, _)| *i == id)?;
        let entry = self.bodies.remove(at)?;
        let body = entry.1.clone();
        self.bodies.push_back(entry);
        Some(body)
    }

    /// Keep chunk `id`'s body (unless it is too large), dropping the one used longest ago.
    pub fn keep(&mut self, id: i64, body: &[u8]) {
        if body.len() > LARGEST || self.bodies.iter().any(|(i, _)| *i == id) {
            return;
        }
        if self.bodies.len() == KEPT {
            self.bodies.pop_front();
        }
        self.bodies.push_back((id, body.to_vec()));
    }

    /// The ids kept: a query need not send their bodies again.
    pub fn ids(&self) -> Vec<i64> {
        self.bodies.iter().map(|(i, _)| *i).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_chunks_used_last_are_kept_and_a_large_one_is_not() {
        let mut held = Held::default();
        for id in 1..=KEPT as i64 {
            held.keep(id, &[id as u8]);
        }
        assert_eq!(held.get(1), Some(vec![1]), "used again: now the last dropped");
        held.keep(9, &[9]);
        assert_eq!(held.ids(), [3, 4, 1, 9], "2 was used longest ago");
        assert_eq!(held.get(2), None);
        held.keep(10, &vec![0; LARGEST + 1]);
        assert_eq!(held.get(10), None);
        assert_eq!(held.ids(), [3, 4, 1, 9]);
    }
}
