//! Writing rows (JSON values) as a Parquet shard of a nested schema, with the parquet crate's
//! column writers: each row is shredded into its leaf columns' values and definition and
//! repetition levels (Dremel), as pyarrow writes a dataset's shards. Used by `bench gen` and the
//! tests, which write shards of the published schemas ([`super::Kind::schema`]).

use crate::error::IngestError;
use parquet::basic::{Compression, LogicalType, Repetition, Type as Physical};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{Type, TypePtr};
use serde_json::Value;
use std::path::Path;
use std::sync::Arc;

/// One leaf column's values and levels for the rows of a group.
#[derive(Default)]
struct Leaf {
    values: Vec<Value>,
    def: Vec<i16>,
    rep: Vec<i16>,
}

fn leaf_count(t: &Type) -> usize {
    if t.is_primitive() { 1 } else { t.get_fields().iter().map(|f| leaf_count(f)).sum() }
}

fn leaf_types(t: &Type, out: &mut Vec<Physical>) {
    if t.is_primitive() {
        out.push(t.get_physical_type());
    } else {
        for f in t.get_fields() {
            leaf_types(f, out);
        }
    }
}

fn nulls(t: &Type, def: i16, rep: i16, leaves: &mut [Leaf]) {
    for l in leaves.iter_mut().take(leaf_count(t)) {
        l.def.push(def);
        l.rep.push(rep);
    }
}

/// `v` (None: absent or null) at node `t`, the node's parent defined to `def`, the value's first
/// leaf entries repeated at `rep`, `depth` repeated ancestors above.
fn walk(t: &Type, v: Option<&Value>, def: i16, rep: i16, depth: i16, leaves: &mut [Leaf]) {
    let v = v.filter(|v| !v.is_null());
    match t.get_basic_info().repetition() {
        Repetition::REPEATED => {
            let items = v.and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
            if items.is_empty() {
                return nulls(t, def, rep, leaves);
            }
            for (i, item) in items.iter().enumerate() {
                let r = if i == 0 { rep } else { depth + 1 };
                inner(t, item, def + 1, r, depth + 1, leaves);
            }
        }
        Repetition::OPTIONAL => match v {
            None => nulls(t, def, rep, leaves),
            Some(v) => inner(t, v, def + 1, rep, depth, leaves),
        },
        Repetition::REQUIRED => match v {
            None => nulls(t, def, rep, leaves),
            Some(v) => inner(t, v, def, rep, depth, leaves),
        },
    }
}

fn inner(t: &Type, v: &Value, def: i16, rep: i16, depth: i16, leaves: &mut [Leaf]) {
    if t.is_primitive() {
        if let Some(l) = leaves.first_mut() {
            l.values.push(v.clone());
            l.def.push(def);
            l.rep.push(rep);
        }
        return;
    }
    let fields = t.get_fields();
    // A LIST group: `repeated group list { element }`, the JSON array's items the elements.
    if t.get_basic_info().logical_type_ref() == Some(&LogicalType::List)
        && let [list] = fields
        && let [element] = list.get_fields()
    {
        let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
        if items.is_empty() {
            return nulls(t, def, rep, leaves);
        }
        for (i, item) in items.iter().enumerate() {
            let r = if i == 0 { rep } else { depth + 1 };
            walk(element, Some(item), def + 1, r, depth + 1, leaves);
        }
        return;
    }
    let mut at = 0;
    for f in fields {
        let n = leaf_count(f);
        walk(f, v.get(f.name()), def, rep, depth, &mut leaves[at..at + n]);
        at += n;
    }
}

fn err(path: &Path, e: impl std::fmt::Display) -> IngestError {
    IngestError::parse(path, None, format!("writing Parquet: {e}"))
}

/// Write `rows` to `path` in row groups of `group_rows`, compressed with snappy.
pub fn write(path: &Path, schema: Arc<Type>, rows: &[Value], group_rows: usize) -> Result<u64, IngestError> {
    let mut w = Shard::create(path, schema)?;
    for group in rows.chunks(group_rows.max(1)) {
        w.group(group)?;
    }
    if rows.is_empty() {
        w.group(&[])?;
    }
    w.close()
}

/// A shard being written a row group at a time (a generator never holds more than a group).
pub struct Shard {
    path: std::path::PathBuf,
    schema: Arc<Type>,
    writer: SerializedFileWriter<std::io::BufWriter<std::fs::File>>,
}

impl Shard {
    pub fn create(path: &Path, schema: Arc<Type>) -> Result<Shard, IngestError> {
        let file =
            std::fs::File::create(path).map_err(|source| IngestError::Io { path: path.to_path_buf(), source })?;
        let props = Arc::new(WriterProperties::builder().set_compression(Compression::SNAPPY).build());
        let writer = SerializedFileWriter::new(std::io::BufWriter::new(file), schema.clone(), props)
            .map_err(|e| err(path, e))?;
        Ok(Shard { path: path.to_path_buf(), schema, writer })
    }

    /// Write one row group.
    pub fn group(&mut self, rows: &[Value]) -> Result<(), IngestError> {
        write_group(&self.path, &mut self.writer, &self.schema, rows)
    }

    /// Bytes written so far.
    pub fn written(&self) -> u64 {
        self.writer.bytes_written() as u64
    }

    /// Finish the file (its footer): its size.
    pub fn close(self) -> Result<u64, IngestError> {
        let path = self.path.clone();
        self.writer.close().map_err(|e| err(&path, e))?;
        Ok(std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0))
    }
}

/// Write one row group of `rows`.
pub fn write_group<W: std::io::Write + Send>(
    path: &Path,
    writer: &mut SerializedFileWriter<W>,
    schema: &TypePtr,
    rows: &[Value],
) -> Result<(), IngestError> {
    let mut leaves: Vec<Leaf> = (0..leaf_count(schema)).map(|_| Leaf::default()).collect();
    for row in rows {
        let mut at = 0;
        for f in schema.get_fields() {
            let n = leaf_count(f);
            walk(f, row.get(f.name()), 0, 0, 0, &mut leaves[at..at + n]);
            at += n;
        }
    }
    let mut types = Vec::new();
    leaf_types(schema, &mut types);
    let mut group = writer.next_row_group().map_err(|e| err(path, e))?;
    let mut i = 0;
    while let Some(mut col) = group.next_column().map_err(|e| err(path, e))? {
        let leaf = leaves.get(i).ok_or_else(|| err(path, "more columns than leaves"))?;
        let (def, rep) = (Some(leaf.def.as_slice()), Some(leaf.rep.as_slice()));
        match types.get(i).copied().unwrap_or(Physical::BYTE_ARRAY) {
            Physical::BYTE_ARRAY => {
                let vals: Vec<ByteArray> = leaf
                    .values
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => ByteArray::from(s.as_bytes().to_vec()),
                        other => ByteArray::from(other.to_string().into_bytes()),
                    })
                    .collect();
                col.typed::<ByteArrayType>().write_batch(&vals, def, rep).map_err(|e| err(path, e))?;
            }
            Physical::BOOLEAN => {
                let vals: Vec<bool> = leaf.values.iter().map(|v| v.as_bool().unwrap_or(false)).collect();
                col.typed::<BoolType>().write_batch(&vals, def, rep).map_err(|e| err(path, e))?;
            }
            Physical::INT64 => {
                let vals: Vec<i64> = leaf.values.iter().map(|v| v.as_i64().unwrap_or(0)).collect();
                col.typed::<Int64Type>().write_batch(&vals, def, rep).map_err(|e| err(path, e))?;
            }
            Physical::INT32 => {
                let vals: Vec<i32> =
                    leaf.values.iter().map(|v| v.as_i64().and_then(|n| i32::try_from(n).ok()).unwrap_or(0)).collect();
                col.typed::<Int32Type>().write_batch(&vals, def, rep).map_err(|e| err(path, e))?;
            }
            Physical::DOUBLE => {
                let vals: Vec<f64> = leaf.values.iter().map(|v| v.as_f64().unwrap_or(0.0)).collect();
                col.typed::<DoubleType>().write_batch(&vals, def, rep).map_err(|e| err(path, e))?;
            }
            other => return Err(err(path, format!("no writer for {other} columns"))),
        }
        col.close().map_err(|e| err(path, e))?;
        i += 1;
    }
    group.close().map_err(|e| err(path, e))?;
    Ok(())
}
