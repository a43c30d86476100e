//! The columns of a result row, typed, whichever backend read it: what lets a read model be
//! made from a row once (`RunSummary::from_row`, ...), each backend with its own SQL giving the
//! columns in the documented order.

use crate::error::StoreError;

/// Typed columns of a row. Integers are 64-bit; flags and booleans are 0/1 integers in both
/// backends; texts are as they were written.
pub trait Cells {
    fn text(&self, i: usize) -> Result<String, StoreError>;
    fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError>;
    fn int(&self, i: usize) -> Result<i64, StoreError>;
    fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError>;
    fn opt_real(&self, i: usize) -> Result<Option<f64>, StoreError>;
    fn opt_flag(&self, i: usize) -> Result<Option<bool>, StoreError>;
    fn bytes(&self, i: usize) -> Result<Vec<u8>, StoreError>;

    fn real(&self, i: usize) -> Result<f64, StoreError> {
        self.opt_real(i)?.ok_or_else(|| StoreError::Corrupt(format!("column {i} is NULL")))
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        Ok(self.opt_flag(i)?.unwrap_or(false))
    }
}

/// A column stored by name (`Format`, `Source`, `EditKind`, ...), `what` naming its kind: a name
/// this trajan does not know is [`StoreError::UnknownName`], never a default.
pub fn named<T: std::str::FromStr>(r: &dyn Cells, i: usize, what: &'static str) -> Result<T, StoreError> {
    parse_name(r.text(i)?, what)
}

/// An optional column stored by name.
pub fn opt_named<T: std::str::FromStr>(r: &dyn Cells, i: usize, what: &'static str) -> Result<Option<T>, StoreError> {
    r.opt_text(i)?.map(|value| parse_name(value, what)).transpose()
}

fn parse_name<T: std::str::FromStr>(value: String, what: &'static str) -> Result<T, StoreError> {
    value.parse().map_err(|_| StoreError::UnknownName { what, value })
}
