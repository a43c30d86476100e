//! The columns of a result row, typed, whichever backend read it: what lets a read model be
//! made from a row once (`RunSummary::from_row`, ...), each backend with its own SQL giving the
//! columns in the documented order.

use super::copy::Value;
use crate::error::StoreError;

/// Typed columns of a row. Integers are 64-bit; flags and booleans are 0/1 integers in both
/// backends; texts are as they were written. A backend reads a column as a [`Value`]; the typed
/// readers are made of it alike for both.
pub trait Cells {
    /// Column `i` as it is stored (a boolean as 0 or 1).
    fn value(&self, i: usize) -> Result<Value, StoreError>;

    fn text(&self, i: usize) -> Result<String, StoreError> {
        self.opt_text(i)?.ok_or_else(|| null(i))
    }

    fn opt_text(&self, i: usize) -> Result<Option<String>, StoreError> {
        match self.value(i)? {
            Value::Null => Ok(None),
            Value::Text(t) => Ok(Some(t)),
            other => Err(unexpected(i, "a text", &other)),
        }
    }

    fn int(&self, i: usize) -> Result<i64, StoreError> {
        self.opt_int(i)?.ok_or_else(|| null(i))
    }

    fn opt_int(&self, i: usize) -> Result<Option<i64>, StoreError> {
        match self.value(i)? {
            Value::Null => Ok(None),
            Value::Int(v) => Ok(Some(v)),
            other => Err(unexpected(i, "an integer", &other)),
        }
    }

    /// A real; an integer column reads as one too.
    fn opt_real(&self, i: usize) -> Result<Option<f64>, StoreError> {
        match self.value(i)? {
            Value::Null => Ok(None),
            Value::Real(v) => Ok(Some(v)),
            Value::Int(v) => Ok(Some(v as f64)),
            other => Err(unexpected(i, "a real", &other)),
        }
    }

    fn opt_flag(&self, i: usize) -> Result<Option<bool>, StoreError> {
        Ok(self.opt_int(i)?.map(|v| v != 0))
    }

    fn bytes(&self, i: usize) -> Result<Vec<u8>, StoreError> {
        match self.value(i)? {
            Value::Bytes(b) => Ok(b),
            Value::Null => Err(null(i)),
            other => Err(unexpected(i, "bytes", &other)),
        }
    }

    fn real(&self, i: usize) -> Result<f64, StoreError> {
        self.opt_real(i)?.ok_or_else(|| null(i))
    }

    fn flag(&self, i: usize) -> Result<bool, StoreError> {
        Ok(self.opt_flag(i)?.unwrap_or(false))
    }
}

fn null(i: usize) -> StoreError {
    StoreError::Corrupt(format!("column {i} is NULL"))
}

fn unexpected(i: usize, wanted: &str, found: &Value) -> StoreError {
    let kind = match found {
        Value::Null => "NULL",
        Value::Int(_) => "an integer",
        Value::Real(_) => "a real",
        Value::Text(_) => "a text",
        Value::Bytes(_) => "bytes",
    };
    StoreError::Corrupt(format!("column {i} is {kind}, not {wanted}"))
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
