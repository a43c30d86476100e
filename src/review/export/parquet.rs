//! `export runs|steps|edits|labels --format parquet -o DIR`: one Parquet file per table
//! (`DIR/runs.parquet`, ...) with typed columns (INT64, DOUBLE, BOOLEAN, UTF8 strings, all
//! nullable), snappy-compressed, for DuckDB, pandas, polars and Spark. Written with the parquet
//! crate's column writers (no arrow), in row groups of at most 8,192 rows or 64 MiB of text, so
//! a table larger than memory is written a group at a time. The file is written beside its
//! destination and renamed over it: never half-written.

use super::ExportError;
use super::tables::{Columns, Kind, Value};
use parquet::basic::Compression;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;
use std::path::Path;
use std::sync::Arc;

const GROUP_ROWS: usize = 8192;
const GROUP_BYTES: usize = 64 << 20;

fn err(e: impl std::fmt::Display) -> ExportError {
    ExportError(e.to_string())
}

/// The Parquet schema of a table.
pub fn schema(table: &str, columns: Columns) -> String {
    let fields: Vec<String> = columns
        .iter()
        .map(|(name, kind)| match kind {
            Kind::Int => format!("OPTIONAL INT64 {name};"),
            Kind::Float => format!("OPTIONAL DOUBLE {name};"),
            Kind::Bool => format!("OPTIONAL BOOLEAN {name};"),
            Kind::Text => format!("OPTIONAL BYTE_ARRAY {name} (UTF8);"),
        })
        .collect();
    format!("message {table} {{ {} }}", fields.join(" "))
}

/// Write `rows` as `dir/<table>.parquet`; the number of rows written.
pub fn write(
    dir: &Path,
    table: &str,
    columns: Columns,
    rows: impl Iterator<Item = Vec<Value>>,
) -> Result<u64, ExportError> {
    std::fs::create_dir_all(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let dest = dir.join(format!("{table}.parquet"));
    let tmp = super::file::Staged::new_in(dir, &format!(".{table}."), ".parquet.tmp")
        .map_err(|e| err(format!("{}: {e}", dir.display())))?;
    let schema = Arc::new(parse_message_type(&schema(table, columns)).map_err(err)?);
    let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build());
    let file = tmp.file.reopen().map_err(err)?;
    let mut writer = SerializedFileWriter::new(file, schema, props).map_err(err)?;
    let mut group: Vec<Vec<Value>> = Vec::with_capacity(GROUP_ROWS);
    let mut bytes = 0usize;
    let mut total = 0u64;
    for row in rows {
        // Stopped (Ctrl-C, SIGTERM): the file being written goes, nothing is left half-made.
        if crate::interrupt::caught().is_some() {
            return Err(err("stopped by a signal"));
        }
        bytes += row.iter().map(|v| if let Value::Text(Some(t)) = v { t.len() } else { 8 }).sum::<usize>();
        group.push(row);
        total += 1;
        if group.len() >= GROUP_ROWS || bytes >= GROUP_BYTES {
            write_group(&mut writer, columns, &group)?;
            group.clear();
            bytes = 0;
        }
    }
    if !group.is_empty() || total == 0 {
        write_group(&mut writer, columns, &group)?;
    }
    writer.close().map_err(err)?;
    // Its mode is a new file's (the umask decides), as `-o FILE` makes one.
    tmp.persist(&dest).map_err(|e| err(format!("{}: {}", dest.display(), e.error)))?;
    Ok(total)
}

fn write_group<W: std::io::Write + Send>(
    writer: &mut SerializedFileWriter<W>,
    columns: Columns,
    rows: &[Vec<Value>],
) -> Result<(), ExportError> {
    let mut group = writer.next_row_group().map_err(err)?;
    let mut index = 0;
    while let Some(mut column) = group.next_column().map_err(err)? {
        let kind = columns.get(index).map(|(_, k)| *k).ok_or_else(|| err("more columns than the table has"))?;
        let cells = rows.iter().map(|r| r.get(index).cloned().unwrap_or(Value::Text(None)));
        let mut levels = Vec::with_capacity(rows.len());
        match kind {
            Kind::Int => {
                let values: Vec<i64> = present(cells, &mut levels, |v| if let Value::Int(x) = v { x } else { None });
                column.typed::<Int64Type>().write_batch(&values, Some(&levels), None).map_err(err)?;
            }
            Kind::Float => {
                let values: Vec<f64> = present(cells, &mut levels, |v| if let Value::Float(x) = v { x } else { None });
                column.typed::<DoubleType>().write_batch(&values, Some(&levels), None).map_err(err)?;
            }
            Kind::Bool => {
                let values: Vec<bool> = present(cells, &mut levels, |v| if let Value::Bool(x) = v { x } else { None });
                column.typed::<BoolType>().write_batch(&values, Some(&levels), None).map_err(err)?;
            }
            Kind::Text => {
                let values: Vec<ByteArray> = present(cells, &mut levels, |v| match v {
                    Value::Text(x) => x.map(|s| ByteArray::from(s.into_bytes())),
                    _ => None,
                });
                column.typed::<ByteArrayType>().write_batch(&values, Some(&levels), None).map_err(err)?;
            }
        }
        column.close().map_err(err)?;
        index += 1;
    }
    group.close().map_err(err)?;
    Ok(())
}

/// The present values of a column and its definition levels (1: present, 0: null).
fn present<T>(cells: impl Iterator<Item = Value>, levels: &mut Vec<i16>, get: impl Fn(Value) -> Option<T>) -> Vec<T> {
    let mut values = Vec::new();
    for cell in cells {
        match get(cell) {
            Some(v) => {
                levels.push(1);
                values.push(v);
            }
            None => levels.push(0),
        }
    }
    values
}
