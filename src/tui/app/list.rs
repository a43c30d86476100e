//! The run list: all run summaries, the filtered and sorted view of them, the cursor.

use super::{Effect, Prompt, PromptKind};
use crate::review::filter::{self, Filter, Sort};
use crate::store::read::RunSummary;
use crate::tui::action::Command;

#[derive(Debug, Default)]
pub struct ListState {
    /// Every run, once loaded; the first screen arrives before the rest.
    pub runs: Vec<RunSummary>,
    /// True when `runs` holds every run of the database.
    pub complete: bool,
    /// Indices into `runs`, filtered and sorted.
    pub visible: Vec<usize>,
    /// Position in `visible`.
    pub cursor: usize,
    /// First visible row (kept by the view so the cursor stays on screen).
    pub offset: usize,
    pub filter_text: String,
    pub filter: Filter,
    pub sort: Sort,
    /// Total in the database, known before the full list arrives.
    pub total: Option<i64>,
    /// The runs of the review queue shown (`None`: all runs).
    pub queue: Option<std::collections::HashSet<i64>>,
    /// The labels the filter's `label:`, `rater:`, `source:`, `disputed`, `unlabelled` read.
    pub labels: filter::LabelIndex,
    /// Each run's rank in the text columns, computed when the runs arrive: a sort key sorts
    /// integers.
    pub ranks: crate::review::order::Ranks,
}

impl ListState {
    pub fn set_runs(&mut self, runs: Vec<RunSummary>, complete: bool) {
        // A reviewer who has not moved stays at the top (the first page came in the database's
        // order, the full list is sorted naturally); one who has keeps the run they are on.
        let selected = if self.cursor == 0 { None } else { self.selected().map(|r| r.id) };
        if selected.is_none() {
            self.offset = 0;
        }
        self.ranks = crate::review::order::Ranks::of(&runs);
        self.runs = runs;
        self.complete = complete;
        self.refresh(selected);
    }

    /// Re-apply filter and sort, keeping the selected run selected when it is still shown.
    pub fn refresh(&mut self, keep: Option<i64>) {
        self.visible = filter::apply_ranked(&self.runs, &self.ranks, &self.labels, &self.filter, self.sort);
        if let Some(queue) = &self.queue {
            self.visible.retain(|&i| queue.contains(&self.runs[i].id));
        }
        self.cursor = keep
            .and_then(|id| self.visible.iter().position(|&i| self.runs[i].id == id))
            .unwrap_or(0)
            .min(self.visible.len().saturating_sub(1));
    }

    pub fn selected(&self) -> Option<&RunSummary> {
        self.visible.get(self.cursor).and_then(|&i| self.runs.get(i))
    }

    pub fn move_by(&mut self, delta: isize) {
        let last = self.visible.len().saturating_sub(1);
        self.cursor = self.cursor.saturating_add_signed(delta).min(last);
    }

    pub fn move_to(&mut self, pos: usize) {
        self.cursor = pos.min(self.visible.len().saturating_sub(1));
    }

    /// Keep the cursor inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        self.offset = super::keep_in_view(self.cursor, self.offset, height, self.visible.len());
    }

    /// Parse and apply a filter query; on error the previous filter stays and the message is
    /// returned.
    pub fn set_filter(&mut self, text: &str) -> Result<(), String> {
        let parsed = filter::parse(text).map_err(|e| e.to_string())?;
        let keep = self.selected().map(|r| r.id);
        self.filter_text = text.to_string();
        self.filter = parsed;
        self.refresh(keep);
        Ok(())
    }

    /// The labels the filter reads; the list is filtered again.
    pub fn set_labels(&mut self, labels: filter::LabelIndex) {
        let keep = self.selected().map(|r| r.id);
        self.labels = labels;
        self.refresh(keep);
    }

    /// Show only these runs (a review queue), or all.
    pub fn set_queue(&mut self, ids: Option<std::collections::HashSet<i64>>) {
        let keep = self.selected().map(|r| r.id);
        self.queue = ids;
        self.refresh(keep);
    }

    pub fn set_sort(&mut self, sort: Sort) {
        let keep = self.selected().map(|r| r.id);
        self.sort = sort;
        self.refresh(keep);
    }
}

impl super::App {
    pub(super) fn list_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = self.rows as isize;
        match cmd {
            Command::Down | Command::NextRun | Command::ScrollDown => self.list.move_by(1),
            Command::Up | Command::PrevRun | Command::ScrollUp => self.list.move_by(-1),
            Command::PageDown => self.list.move_by(page),
            Command::PageUp => self.list.move_by(-page),
            Command::Top => self.list.move_to(0),
            Command::Bottom => self.list.move_to(usize::MAX),
            Command::Mark => self.toggle_mark(),
            Command::Compare => return self.compare_command(None),
            Command::ExportReport => return self.export_report(),
            Command::Open | Command::NextStep => {
                self.return_to = None;
                if let Some(id) = self.list.selected().map(|r| r.id) {
                    return vec![Effect::LoadRun(id)];
                }
            }
            Command::Back => self.quit_or_warn(),
            Command::Filter => {
                self.prompt = Some(Prompt { kind: PromptKind::Filter, text: self.list.filter_text.clone() });
            }
            Command::NextQueue => {
                self.review.queue = self.review.queue.next();
                self.apply_queue();
                let shown = self.list.visible.len();
                self.set_info(format!("queue: {} ({shown} runs)", self.review.queue.name()));
            }
            Command::NextUnlabelled => return self.next_unlabelled(),
            Command::SortNext => self.list.set_sort(self.list.sort.next_key()),
            Command::SortReverse => self.list.set_sort(self.list.sort.reversed()),
            Command::SortPick => {
                let text = crate::review::filter::SortKey::pick_menu();
                self.prompt = Some(Prompt { kind: PromptKind::Sort, text });
            }
            Command::Copy => {
                if let Some(id) = self.list.selected().map(|r| r.instance_id.clone()) {
                    return self.copy("the instance id", &id);
                }
            }
            _ => {}
        }
        self.list.scroll_into_view(self.rows);
        Vec::new()
    }

    /// Sort the list by the column `c` picks; the column already sorted by turns around.
    pub(super) fn pick_sort(&mut self, c: char) {
        use crate::review::filter::{Sort, SortKey};
        match SortKey::from_pick_char(c) {
            Some(key) if key == self.list.sort.key => self.list.set_sort(self.list.sort.reversed()),
            Some(key) => self.list.set_sort(Sort { key, descending: false }),
            None => self.set_error(format!("no column is sorted by {c:?}: {}", SortKey::pick_menu())),
        }
        self.list.scroll_into_view(self.rows);
    }

    /// Show only the runs of the current queue in the list.
    pub(super) fn apply_queue(&mut self) {
        let (queue, scope) = (self.review.queue, self.review.scope);
        let ids = (queue != crate::review::Queue::All).then(|| {
            self.list
                .runs
                .iter()
                .filter(|r| crate::review::in_queue(queue, self.review.states.get(&r.id), scope.admits(r.resolved)))
                .map(|r| r.id)
                .collect()
        });
        self.list.set_queue(ids);
    }
}
