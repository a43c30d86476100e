//! The input shape: a table of items (runs) × raters, and its per-mode one-vs-rest projection.

use super::AgreementError;
use std::collections::{BTreeSet, HashMap};

/// One rater's rating of one item: the failure-mode ids it gave. The empty set is "unclassified".
pub type Rating = BTreeSet<String>;

/// A table of [`Rating`]s: the input of the report.
pub type RatingTable = Table<Rating>;

/// Items × raters; a cell is `None` when that rater did not rate that item.
///
/// Items and raters are named (names are unique) and kept in the order given.
#[derive(Debug, Clone, PartialEq)]
pub struct Table<L> {
    items: Vec<String>,
    raters: Vec<String>,
    /// `cells[item][rater]`.
    cells: Vec<Vec<Option<L>>>,
}

impl<L> Table<L> {
    /// A table with every cell empty (nobody rated anything yet).
    pub fn new(items: Vec<String>, raters: Vec<String>) -> Result<Self, AgreementError> {
        unique("item", &items)?;
        unique("rater", &raters)?;
        let cells = items.iter().map(|_| raters.iter().map(|_| None).collect()).collect();
        Ok(Table { items, raters, cells })
    }

    /// A table from its rows: `cells[item][rater]`, one row per item, one cell per rater.
    pub fn from_rows(
        items: Vec<String>,
        raters: Vec<String>,
        cells: Vec<Vec<Option<L>>>,
    ) -> Result<Self, AgreementError> {
        unique("item", &items)?;
        unique("rater", &raters)?;
        if cells.len() != items.len() {
            return Err(AgreementError::Shape(format!("{} rows for {} items", cells.len(), items.len())));
        }
        if let Some((i, row)) = cells.iter().enumerate().find(|(_, row)| row.len() != raters.len()) {
            return Err(AgreementError::Shape(format!(
                "row {i} ({:?}) has {} cells for {} raters",
                items[i],
                row.len(),
                raters.len()
            )));
        }
        Ok(Table { items, raters, cells })
    }

    /// A table from `(item, rater, rating)` records. Items and raters appear in the order of
    /// their first record; a cell without a record is missing. A cell given twice is an error.
    pub fn from_records<I>(records: I) -> Result<Self, AgreementError>
    where
        I: IntoIterator<Item = (String, String, L)>,
    {
        let mut items: Vec<String> = Vec::new();
        let mut raters: Vec<String> = Vec::new();
        let mut item_ix: HashMap<String, usize> = HashMap::new();
        let mut rater_ix: HashMap<String, usize> = HashMap::new();
        let mut given: Vec<(usize, usize, L)> = Vec::new();
        for (item, rater, value) in records {
            let i = *item_ix.entry(item.clone()).or_insert_with(|| {
                items.push(item);
                items.len() - 1
            });
            let r = *rater_ix.entry(rater.clone()).or_insert_with(|| {
                raters.push(rater);
                raters.len() - 1
            });
            given.push((i, r, value));
        }
        let mut table = Table::new(items, raters)?;
        for (i, r, value) in given {
            if table.cells[i][r].is_some() {
                return Err(AgreementError::DuplicateCell {
                    item: table.items[i].clone(),
                    rater: table.raters[r].clone(),
                });
            }
            table.cells[i][r] = Some(value);
        }
        Ok(table)
    }

    /// Sets one cell (`None` = not rated).
    pub fn set(&mut self, item: usize, rater: usize, value: Option<L>) -> Result<(), AgreementError> {
        let cell = self
            .cells
            .get_mut(item)
            .and_then(|row| row.get_mut(rater))
            .ok_or_else(|| AgreementError::Shape(format!("no cell ({item}, {rater})")))?;
        *cell = value;
        Ok(())
    }

    /// The item names, in row order.
    pub fn items(&self) -> &[String] {
        &self.items
    }

    /// The rater names, in column order.
    pub fn raters(&self) -> &[String] {
        &self.raters
    }

    /// The rows: `rows()[item][rater]`.
    pub fn rows(&self) -> &[Vec<Option<L>>] {
        &self.cells
    }

    /// One cell, or `None` if not rated (or out of range).
    pub fn get(&self, item: usize, rater: usize) -> Option<&L> {
        self.cells.get(item).and_then(|row| row.get(rater)).and_then(Option::as_ref)
    }

    /// The column of a rater by name.
    pub fn rater_index(&self, name: &str) -> Option<usize> {
        self.raters.iter().position(|r| r == name)
    }

    /// One rater's column (`None` where not rated; all `None` if the index is out of range).
    pub fn column(&self, rater: usize) -> Vec<Option<&L>> {
        self.cells.iter().map(|row| row.get(rater).and_then(Option::as_ref)).collect()
    }

    /// The same table with every rating mapped by `f`.
    pub fn map<M>(&self, mut f: impl FnMut(&L) -> M) -> Table<M> {
        Table {
            items: self.items.clone(),
            raters: self.raters.clone(),
            cells: self.cells.iter().map(|row| row.iter().map(|c| c.as_ref().map(&mut f)).collect()).collect(),
        }
    }

    /// The same table restricted to the given rater columns, in that order.
    pub fn select_raters(&self, raters: &[usize]) -> Result<Table<L>, AgreementError>
    where
        L: Clone,
    {
        let names = raters
            .iter()
            .map(|&r| self.raters.get(r).cloned().ok_or_else(|| AgreementError::Shape(format!("no rater {r}"))))
            .collect::<Result<Vec<_>, _>>()?;
        unique("rater", &names)?;
        let cells =
            self.cells.iter().map(|row| raters.iter().map(|&r| row.get(r).cloned().flatten()).collect()).collect();
        Ok(Table { items: self.items.clone(), raters: names, cells })
    }

    /// The pairs `(rating of a, rating of b)` over the items both raters rated, in item order.
    pub fn pairs(&self, a: usize, b: usize) -> Vec<(L, L)>
    where
        L: Clone,
    {
        self.cells
            .iter()
            .filter_map(|row| match (row.get(a), row.get(b)) {
                (Some(Some(x)), Some(Some(y))) => Some((x.clone(), y.clone())),
                _ => None,
            })
            .collect()
    }
}

impl Table<Rating> {
    /// The one-vs-rest projection for `mode`: `Some(true)` where the rating contains the mode,
    /// `Some(false)` where it does not (including unclassified), `None` where not rated.
    pub fn one_vs_rest(&self, mode: &str) -> Table<bool> {
        self.map(|rating| rating.contains(mode))
    }
}

fn unique(kind: &'static str, names: &[String]) -> Result<(), AgreementError> {
    let mut seen = BTreeSet::new();
    for n in names {
        if !seen.insert(n.as_str()) {
            return Err(AgreementError::Duplicate { kind, name: n.clone() });
        }
    }
    Ok(())
}
