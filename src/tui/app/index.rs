//! The search index built in the background (slow lane) when the database has runs waiting
//! for it: the status line shows how far it is, and a search asked meanwhile waits for it,
//! saying so, instead of building the index on the quick lane (which froze every step load
//! behind it).

use super::{App, Effect};

impl App {
    pub(super) fn indexing_progress(&mut self, done: i64, total: i64) -> Vec<Effect> {
        self.indexing = Some((done, total));
        // An error or another message in the status line stays until the next key.
        if self.status.as_ref().is_none_or(|s| !s.error) {
            let waiting = if self.held_searches.is_empty() { "" } else { " (the search waits for it)" };
            self.set_info(format!("indexing for search: {}%{waiting}", percent(done, total)));
        }
        Vec::new()
    }

    pub(super) fn indexed(&mut self) -> Vec<Effect> {
        self.indexing = None;
        if self.status.as_ref().is_some_and(|s| !s.error && s.text.starts_with("indexing for search")) {
            self.status = None;
        }
        std::mem::take(&mut self.held_searches)
    }

    /// Searches wait while the index is built; the status line says so.
    pub(super) fn hold_searches(&mut self, effects: Vec<Effect>) -> Vec<Effect> {
        let Some((done, total)) = self.indexing else { return effects };
        let (held, rest): (Vec<Effect>, Vec<Effect>) =
            effects.into_iter().partition(|e| matches!(e, Effect::Search { .. } | Effect::SearchCompared { .. }));
        if !held.is_empty() {
            // The latest search of each kind replaces an older one still waiting.
            for e in held {
                let kind = std::mem::discriminant(&e);
                self.held_searches.retain(|h| std::mem::discriminant(h) != kind);
                self.held_searches.push(e);
            }
            self.set_info(format!("the search waits for the index: indexing for search: {}%", percent(done, total)));
        }
        rest
    }
}

fn percent(done: i64, total: i64) -> i64 {
    if total <= 0 { 100 } else { (100 * done / total).clamp(0, 100) }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::action::Action;

    fn ok<T, E: std::fmt::Display>(r: Result<T, E>) -> T {
        r.unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_search_asked_while_the_index_is_built_waits_for_it_and_says_so() {
        let mut app = App::new((100, 30));
        assert!(app.update(Action::Indexing { done: 4, total: 10 }).is_empty());
        assert_eq!(app.status.as_ref().map(|s| s.text.as_str()), Some("indexing for search: 40%"));
        let search = Effect::Search { run: 1, query: "needle".into() };
        let step = Effect::LoadStep { run: 1, index: 0 };
        assert_eq!(app.hold_searches(vec![search.clone(), step.clone()]), vec![step.clone()], "the step still loads");
        let status = app.status.as_ref().map(|s| s.text.clone()).unwrap_or_default();
        assert!(status.contains("waits for the index") && status.contains("40%"), "{status}");
        app.update(Action::Indexing { done: 7, total: 10 });
        assert!(app.status.as_ref().is_some_and(|s| s.text.contains("70%")));
        assert_eq!(app.update(Action::Indexed), vec![search], "sent once the index is built");
        assert!(app.status.is_none() && app.indexing.is_none());
        assert_eq!(app.hold_searches(vec![step.clone()]), vec![step]);
    }

    #[test]
    fn the_slow_lane_builds_the_index_and_reports_its_progress() {
        let dir = ok(tempfile::tempdir());
        let db = dir.path().join("t.db");
        let mut store = ok(crate::store::Store::open(&db));
        for i in 0..3u8 {
            let step = crate::model::Step { observation: format!("word{i}"), ..crate::model::Step::default() };
            let run = crate::model::Run {
                instance_id: format!("r-{i}"),
                format: Some(crate::model::Format::SweAgent),
                steps: vec![step],
                ..Default::default()
            };
            let parsed = crate::model::Parsed { runs: vec![run], ..Default::default() };
            let path = format!("/t/{i}.traj");
            let record =
                crate::store::SourceRecord { path: &path, kind: "file", format: "test", size: 1, hash: &[i; 32] };
            ok(store.write_source(&record, &parsed));
        }
        assert_eq!(ok(store.search_pending()), 3);
        drop(store);
        let mut worker = crate::tui::worker::Worker::start(&crate::store::Location::File(db.clone()));
        worker.send(Effect::BuildIndex);
        let actions = worker.wait();
        assert!(matches!(actions.first(), Some(Action::Indexing { done: 0, total: 3 })), "{actions:?}");
        assert!(matches!(actions.last(), Some(Action::Indexed)), "{actions:?}");
        assert_eq!(ok(ok(crate::store::Store::open_read_only(&db)).search_pending()), 0);
    }
}
