//! The comparison screen: runs of one task in columns, their steps aligned row by row; and the
//! picker that chooses a run to compare with. State and transitions only.

use super::{App, Effect, Prompt, PromptKind, Screen};
use crate::review::compare::Comparison;
use crate::store::read::RunSummary;
use crate::tui::action::Command;
use crate::tui::diff::DiffMode;

/// Columns narrower than this are not shown: more runs than fit scroll sideways.
pub const MIN_COLUMN: u16 = 36;
/// At most this many runs side by side, however wide the terminal.
pub const MAX_COLUMNS: usize = 4;

/// How many run columns a terminal `width` columns wide shows of `runs`.
pub fn visible_columns(width: u16, runs: usize) -> usize {
    usize::from((width.saturating_sub(2) / MIN_COLUMN).max(1)).min(MAX_COLUMNS).min(runs.max(1))
}

/// What the comparison's main panel shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComparePanel {
    /// The aligned steps.
    Steps,
    /// The patches, file by file.
    Patches,
}

/// A search over every compared run: the rows that hold a matching step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompareSearch {
    pub query: String,
    pub rows: Vec<usize>,
}

#[derive(Debug)]
pub struct CompareView {
    pub data: Comparison,
    /// The row under the cursor, and the first row shown.
    pub cursor: usize,
    pub offset: usize,
    /// The run column the cursor is in (Enter opens it), and the first column shown.
    pub focus: usize,
    pub first_column: usize,
    pub panel: ComparePanel,
    pub search: Option<CompareSearch>,
    /// The patch panel's file, its scroll and diff layout.
    pub file: usize,
    pub scroll: usize,
    pub diff_mode: DiffMode,
}

impl CompareView {
    pub fn new(data: Comparison) -> CompareView {
        // Open at the first divergence: that is what the reviewer came for.
        let cursor = data.divergences.first().map_or(0, |d| d.row);
        CompareView {
            data,
            cursor,
            offset: 0,
            focus: 0,
            first_column: 0,
            panel: ComparePanel::Steps,
            search: None,
            file: 0,
            scroll: 0,
            diff_mode: DiffMode::Unified,
        }
    }

    pub fn rows(&self) -> usize {
        self.data.positions.len()
    }

    /// Keep the cursor inside a window of `height` rows.
    pub fn scroll_into_view(&mut self, height: usize) {
        self.offset = super::keep_in_view(self.cursor, self.offset, height, self.rows());
    }

    fn go(&mut self, row: usize) {
        self.cursor = row.min(self.rows().saturating_sub(1));
    }

    /// The divergence the cursor is in or after (its position among them), and how many.
    pub fn divergence_at(&self) -> Option<usize> {
        let at = self.data.divergences.partition_point(|d| d.end <= self.cursor);
        self.data.divergences.get(at).filter(|d| d.row <= self.cursor).map(|_| at)
    }

    /// The next (or previous) row of interest: a search match while a search is on, else a
    /// divergence point.
    fn next_mark(&self, forward: bool) -> Option<usize> {
        let marks: Vec<usize> = match &self.search {
            Some(s) if !s.rows.is_empty() => s.rows.clone(),
            _ => self.data.divergences.iter().map(|d| d.row).collect(),
        };
        if forward {
            marks.into_iter().find(|&r| r > self.cursor)
        } else {
            marks.into_iter().rev().find(|&r| r < self.cursor)
        }
    }

    /// Keep the focused column on screen when `shown` columns fit.
    fn keep_focus_visible(&mut self, shown: usize) {
        let shown = shown.max(1);
        if self.focus < self.first_column {
            self.first_column = self.focus;
        } else if self.focus >= self.first_column + shown {
            self.first_column = self.focus + 1 - shown;
        }
    }

    /// The position of the focused run's step on the cursor's row, or its last step above it.
    pub fn focused_step(&self) -> Option<usize> {
        self.data.positions.get(..=self.cursor)?.iter().rev().find_map(|row| row.get(self.focus).copied().flatten())
    }

    /// The search's rows, from each run's matching steps (indices as the runs number them).
    pub fn set_search(&mut self, query: String, steps: &[Vec<i64>]) {
        let rows = self
            .data
            .rows
            .iter()
            .enumerate()
            .filter(|(_, row)| {
                row.iter().zip(steps).any(|(cell, hits)| cell.is_some_and(|i| hits.binary_search(&i).is_ok()))
            })
            .map(|(r, _)| r)
            .collect();
        self.search = Some(CompareSearch { query, rows });
    }
}

/// A run to compare with, picked from the other runs of an instance.
#[derive(Debug, Clone)]
pub struct Picker {
    /// The run being compared.
    pub base: i64,
    pub instance: String,
    pub runs: Vec<RunSummary>,
    pub cursor: usize,
}

impl App {
    /// `c` in the list: the marked runs compared, or (none or one marked) a picker of the
    /// other runs of the selected run's instance. `C` in a run: the picker.
    pub(super) fn compare_command(&mut self, base: Option<i64>) -> Vec<Effect> {
        let marked: Vec<i64> = self.marked_in_list_order();
        if base.is_none() && marked.len() >= 2 {
            return vec![Effect::LoadCompare(marked)];
        }
        let Some(base) = base.or_else(|| self.list.selected().map(|r| r.id)) else { return Vec::new() };
        if let [one] = marked.as_slice()
            && *one != base
        {
            return vec![Effect::LoadCompare(vec![*one, base])];
        }
        // The store, not the list in memory, which may not hold every run yet (the full list
        // loads in the background).
        vec![Effect::LoadPicker(base)]
    }

    /// The other runs of `base`'s instance read: the picker, or why there is none.
    pub(super) fn picker_loaded(&mut self, base: i64, instance: String, runs: Vec<RunSummary>) {
        if runs.is_empty() {
            self.set_error(format!("no other run of {instance} in the database to compare with"));
            return;
        }
        self.picker = Some(Picker { base, instance, runs, cursor: 0 });
    }

    pub(super) fn marked_in_list_order(&self) -> Vec<i64> {
        self.list.runs.iter().map(|r| r.id).filter(|id| self.marked.contains(id)).collect()
    }

    /// `m` in the list: mark or unmark the selected run for comparison.
    pub(super) fn toggle_mark(&mut self) {
        let Some(id) = self.list.selected().map(|r| r.id) else { return };
        if !self.marked.remove(&id) {
            self.marked.insert(id);
        }
        let n = self.marked.len();
        self.set_info(match n {
            0 => "no run marked".to_string(),
            1 => "1 run marked (c compares it with the run under the cursor)".to_string(),
            _ => format!("{n} runs marked (c compares them)"),
        });
    }

    pub(super) fn picker_command(&mut self, cmd: Command) -> Vec<Effect> {
        let Some(picker) = self.picker.as_mut() else { return Vec::new() };
        match cmd {
            Command::Down => picker.cursor = (picker.cursor + 1).min(picker.runs.len().saturating_sub(1)),
            Command::Up => picker.cursor = picker.cursor.saturating_sub(1),
            Command::Open => {
                let ids = picker.runs.get(picker.cursor).map(|r| vec![picker.base, r.id]);
                self.picker = None;
                return ids.map(|ids| vec![Effect::LoadCompare(ids)]).unwrap_or_default();
            }
            Command::Quit => {
                self.picker = None;
                self.quit_or_warn();
            }
            // The picker's keys; closing the help comes back to the picker.
            Command::Help => self.help = Some(0),
            _ => self.picker = None,
        }
        Vec::new()
    }

    pub(super) fn compare_loaded(&mut self, data: Comparison) {
        if self.screen != Screen::Compare {
            self.compare_from = self.screen;
        }
        self.marked.clear();
        let view = CompareView::new(data);
        if view.divergence_at().is_some() {
            self.set_info(format!(
                "first divergence at row {} of {} ({} in all; n/N walk them)",
                view.cursor + 1,
                view.rows(),
                view.data.divergences.len()
            ));
        } else {
            self.set_info("the runs take the same steps: no divergence".to_string());
        }
        self.compare = Some(view);
        self.screen = Screen::Compare;
    }

    pub(super) fn compare_search_done(&mut self, query: String, steps: Vec<Vec<i64>>) {
        let Some(view) = self.compare.as_mut() else { return };
        view.set_search(query.clone(), &steps);
        let rows = view.search.as_ref().map_or(0, |s| s.rows.len());
        if rows == 0 {
            self.set_info(format!("{query:?}: no step matches"));
            return;
        }
        if let Some(first) = view.search.as_ref().and_then(|s| s.rows.iter().find(|&&r| r >= view.cursor).copied()) {
            view.go(first);
        }
        self.set_info(format!("{query:?}: {rows} rows match (n/N next/previous; Esc ends the search)"));
    }

    pub(super) fn compare_screen_command(&mut self, cmd: Command) -> Vec<Effect> {
        let page = self.rows;
        let shown = visible_columns(self.size.0, self.compare.as_ref().map_or(1, |v| v.data.runs.len()));
        let Some(view) = self.compare.as_mut() else {
            self.screen = Screen::List;
            return Vec::new();
        };
        let runs = view.data.runs.len();
        let patches = view.panel == ComparePanel::Patches;
        match cmd {
            Command::Back if view.search.is_some() => {
                view.search = None;
                self.set_info("search ended: n/N walk the divergences".to_string());
            }
            Command::Back => {
                self.screen = match self.compare_from {
                    Screen::Run if self.run.is_some() => Screen::Run,
                    _ => Screen::List,
                };
            }
            Command::Down | Command::ScrollDown if patches => view.scroll += 1,
            Command::Up | Command::ScrollUp if patches => view.scroll = view.scroll.saturating_sub(1),
            Command::PageDown if patches => view.scroll += page,
            Command::PageUp if patches => view.scroll = view.scroll.saturating_sub(page),
            Command::Top if patches => view.scroll = 0,
            Command::Bottom if patches => view.scroll = usize::MAX / 2,
            Command::Down | Command::ScrollDown => view.go(view.cursor + 1),
            Command::Up | Command::ScrollUp => view.go(view.cursor.saturating_sub(1)),
            Command::PageDown => view.go(view.cursor + page),
            Command::PageUp => view.go(view.cursor.saturating_sub(page)),
            Command::Top => view.go(0),
            Command::Bottom => view.go(usize::MAX),
            Command::NextStep | Command::ScrollRight => {
                view.focus = (view.focus + 1).min(runs.saturating_sub(1));
                view.keep_focus_visible(shown);
            }
            Command::PrevStep | Command::ScrollLeft => {
                view.focus = view.focus.saturating_sub(1);
                view.keep_focus_visible(shown);
            }
            Command::NextDivergence | Command::PrevDivergence => {
                let forward = cmd == Command::NextDivergence;
                let searching = view.search.as_ref().is_some_and(|s| !s.rows.is_empty());
                match view.next_mark(forward) {
                    Some(row) => {
                        view.go(row);
                        if !searching && let Some(i) = view.divergence_at() {
                            let n = view.data.divergences.len();
                            self.set_info(format!("divergence {} of {n}", i + 1));
                        }
                    }
                    None => {
                        let what = if searching { "match" } else { "divergence" };
                        let way = if forward { "after" } else { "before" };
                        self.set_info(format!("no {what} {way} this row"));
                    }
                }
            }
            Command::NextPanel | Command::PrevPanel => {
                view.panel = match view.panel {
                    ComparePanel::Steps => ComparePanel::Patches,
                    ComparePanel::Patches => ComparePanel::Steps,
                };
                view.scroll = 0;
            }
            Command::NextFile => {
                view.file = (view.file + 1).min(view.data.patches.len().saturating_sub(1));
                view.scroll = 0;
            }
            Command::PrevFile => {
                view.file = view.file.saturating_sub(1);
                view.scroll = 0;
            }
            Command::DiffMode => {
                view.diff_mode = match view.diff_mode {
                    DiffMode::Unified => DiffMode::SideBySide,
                    DiffMode::SideBySide => DiffMode::Unified,
                };
            }
            Command::Search => {
                let text = view.search.as_ref().map(|s| s.query.clone()).unwrap_or_default();
                self.prompt = Some(Prompt { kind: PromptKind::Search, text });
            }
            Command::Copy => {
                let run = view.data.runs.get(view.focus);
                let head = view.focused_step().and_then(|i| run?.steps.get(i)).map(|s| s.action_head.clone());
                if let Some(head) = head {
                    return self.copy("the step's action (first line)", &head);
                }
            }
            Command::Open => {
                let Some(run) = view.data.runs.get(view.focus) else { return Vec::new() };
                let id = run.summary.id;
                if let Some(pos) = view.focused_step() {
                    self.places.insert(id, pos);
                }
                self.return_to = Some(Screen::Compare);
                return vec![Effect::LoadRun(id)];
            }
            _ => {}
        }
        if let Some(view) = self.compare.as_mut() {
            view.scroll_into_view(page);
        }
        Vec::new()
    }

    /// The search prompt submitted on the comparison screen: every run is searched.
    pub(super) fn compare_search(&mut self, query: String) -> Vec<Effect> {
        let Some(view) = self.compare.as_mut() else { return Vec::new() };
        if query.is_empty() {
            view.search = None;
            return Vec::new();
        }
        let runs = view.data.runs.iter().map(|r| r.summary.id).collect();
        vec![Effect::SearchCompared { runs, query }]
    }
}
