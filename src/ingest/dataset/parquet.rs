//! Reading a dataset's Parquet shard a row group at a time, with the parquet crate's record
//! reader (no arrow): only the columns the dataset's reader uses are read (a projection), each
//! row assembled, made a JSON value and read as a run, then dropped. Memory holds one row group's
//! pages in flight and the rows of a batch, never the shard.
//!
//! What can go wrong, and what it costs:
//! - a file that is no Parquet (cut, its footer lost): the shard fails, named, before anything is
//!   written;
//! - columns of no known dataset (or `messages` alone, its first row wrapping no
//!   `<github_issue>`: a chat fine-tuning shard): the shard is skipped, its columns named, unless `--format`
//!   names the dataset: then it is read as that dataset's, each row naming the columns it lacks;
//! - `--format` naming a format that is no dataset's: the shard fails, saying which are;
//! - a known column of the wrong type (`target` as text): the shard fails naming the column and
//!   both types;
//! - a row group past the limits (its uncompressed bytes, its values): not read, named, its rows
//!   counted as lost;
//! - a row that cannot be assembled: the rest of its group is lost (the record reader cannot
//!   resume inside a group), named with the row; a row that reads but is wrong (a null instance
//!   id, `messages` that are not JSON) is named and skipped alone.

use super::add_row;
use super::row::{Kind, RowAt, dataset_name, rows_lost, split_name};
use super::task;
use crate::error::IngestError;
use crate::model::{Format, Parsed};
use parquet::basic::{ConvertedType, LogicalType, Type as Physical};
use parquet::file::metadata::RowGroupMetaData;
use parquet::file::reader::{ChunkReader, FileReader, RowGroupReader, SerializedFileReader};
use parquet::record::reader::RowIter;
use parquet::schema::types::Type;
use std::path::Path;
use std::sync::Arc;

/// The four bytes a Parquet file begins (and ends) with.
pub const MAGIC: &[u8; 4] = b"PAR1";

/// Bounds of a shard's read.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// A row group larger than this, uncompressed, is not read.
    pub group_bytes: u64,
    /// A row group with more values than this in one column is not read (a row of a million
    /// messages in a list).
    pub group_values: u64,
    /// Rows assembled at a time.
    pub batch_rows: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { group_bytes: 2 << 30, group_values: 4_000_000, batch_rows: 32 }
    }
}

/// Whether the bytes begin as a Parquet file does.
pub fn is_parquet(head: &[u8]) -> bool {
    head.starts_with(MAGIC)
}

fn open_error(path: &Path, e: impl std::fmt::Display) -> IngestError {
    IngestError::parse(path, None, format!("not a readable Parquet file (cut short, or not Parquet): {e}"))
}

/// A shard's top-level columns.
pub fn columns(root: &Type) -> Vec<String> {
    root.get_fields().iter().map(|f| f.name().to_string()).collect()
}

/// What a shard is: the dataset its columns name, or the columns when they name none.
pub enum Shape {
    Dataset(Kind),
    Unknown(Vec<String>),
}

/// Open a shard on disk and tell what it is (reads the footer; the first row too when the
/// columns tell a kind that needs its sign, [`Kind::needs_sign`]): the dataset `forced`
/// names (`--format`, [`forced_kind`]) whatever its columns, else the one its columns tell.
pub fn shape_of_file(path: &Path, forced: Option<Format>) -> Result<Shape, IngestError> {
    let forced = forced.map(|f| forced_kind(path, f)).transpose()?;
    let file = std::fs::File::open(path).map_err(|source| IngestError::Io { path: path.to_path_buf(), source })?;
    let reader = SerializedFileReader::new(file).map_err(|e| open_error(path, e))?;
    Ok(shape(&reader, forced))
}

/// The dataset `--format` names for a Parquet file: only a dataset's rows come as Parquet, so
/// another format is an error naming the ones that do.
fn forced_kind(path: &Path, format: Format) -> Result<Kind, IngestError> {
    use strum::IntoEnumIterator;
    Kind::of_format(format).ok_or_else(|| {
        let kinds: Vec<&str> = Kind::iter().map(|k| k.format().name()).collect();
        IngestError::shape(
            path,
            format!(
                "a Parquet file, read as {} (--format): only a dataset's shards are Parquet ({})",
                format.name(),
                kinds.join(", ")
            ),
        )
    })
}

fn shape<R: ChunkReader + 'static>(reader: &SerializedFileReader<R>, forced: Option<Kind>) -> Shape {
    let cols = columns(reader.metadata().file_metadata().schema());
    let told = Kind::of_columns(&cols).filter(|k| !k.needs_sign() || first_row_signed(reader, *k));
    match forced.or(told) {
        Some(k) => Shape::Dataset(k),
        None => Shape::Unknown(cols),
    }
}

/// Whether the shard's first row bears `kind`'s sign (a chat fine-tuning shard of `messages`
/// alone is not R2E-Gym's): that row alone is read. A first row group over the limits, or one
/// that cannot be read, is not looked at: the reading names why.
fn first_row_signed<R: ChunkReader + 'static>(reader: &SerializedFileReader<R>, kind: Kind) -> bool {
    let meta = reader.metadata();
    let Some(gm) = meta.row_groups().first() else { return true };
    let every: Vec<usize> = (0..gm.num_columns()).collect();
    if over_limits(gm, &every, Limits::default()).is_some() {
        return true;
    }
    // The record reader asserts on some malformed input: a panic is a row not looked at.
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let group = reader.get_row_group(0).ok()?;
        let mut rows = RowIter::from_row_group(None, &*group).ok()?.with_batch_size(1);
        rows.next()?.ok().map(|row| row.to_json_value().to_string())
    }));
    match first {
        Ok(Some(text)) => kind.signed_by(&text),
        _ => true,
    }
}

/// Why a row group is not read, when it is over `limits` (its size; the values in one of the
/// `columns`).
fn over_limits(gm: &RowGroupMetaData, columns: &[usize], limits: Limits) -> Option<String> {
    let values =
        columns.iter().filter_map(|&c| gm.columns().get(c)).map(|c| c.num_values().max(0) as u64).max().unwrap_or(0);
    if gm.total_byte_size().max(0) as u64 > limits.group_bytes {
        Some(format!(
            "{} uncompressed, over the limit of {} for one row group",
            crate::error::bytes(gm.total_byte_size().max(0) as u64),
            crate::error::bytes(limits.group_bytes)
        ))
    } else if values > limits.group_values {
        Some(format!("{values} values in one column, over the limit of {} for one row group", limits.group_values))
    } else {
        None
    }
}

/// What a column must be for the reader to read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Text,
    List,
    Verdict,
    Number,
    Struct,
}

impl Expect {
    fn words(self) -> &'static str {
        match self {
            Expect::Text => "text (a UTF-8 byte array)",
            Expect::List => "a list",
            Expect::Verdict => "a boolean or an integer",
            Expect::Number => "a number",
            Expect::Struct => "a struct",
        }
    }
}

fn expected(kind: Kind, column: &str) -> Expect {
    match (kind, column) {
        (Kind::TerminalBench, "trajectory") => Expect::Text,
        (Kind::TerminalBench, "reward" | "cost_usd" | "n_input_tokens" | "n_output_tokens") => Expect::Number,
        (_, "trajectory") | (Kind::OpenSwe | Kind::SweGym | Kind::R2eGym, "messages") => Expect::List,
        (Kind::OpenSwe, "metadata") | (Kind::SweGym, "test_result") => Expect::Struct,
        (Kind::Nebius, "target") | (Kind::Rebench | Kind::Smith | Kind::OpenSwe | Kind::SweGym, "resolved") => {
            Expect::Verdict
        }
        (Kind::Rebench, "gen_tests_correct" | "pred_passes_gen_tests") => Expect::Number,
        _ => Expect::Text,
    }
}

/// How a column is typed, in words.
fn describe(t: &Type) -> String {
    if t.is_group() {
        let info = t.get_basic_info();
        return match info.logical_type_ref() {
            Some(LogicalType::List) => "a list".into(),
            Some(LogicalType::Map) => "a map".into(),
            _ if info.converted_type() == ConvertedType::LIST => "a list".into(),
            _ => "a struct".into(),
        };
    }
    let physical = t.get_physical_type();
    match t.get_basic_info().logical_type_ref() {
        Some(LogicalType::String) => format!("{physical} (STRING)"),
        Some(l) => format!("{physical} ({l:?})"),
        None => physical.to_string(),
    }
}

fn fits(t: &Type, e: Expect) -> bool {
    let is_list = |t: &Type| {
        t.is_group()
            && (t.get_basic_info().logical_type_ref() == Some(&LogicalType::List)
                || t.get_basic_info().converted_type() == ConvertedType::LIST
                || t.get_basic_info().repetition() == parquet::basic::Repetition::REPEATED)
    };
    match e {
        Expect::List => is_list(t),
        Expect::Struct => t.is_group() && !is_list(t),
        _ if t.is_group() => false,
        Expect::Text => t.get_physical_type() == Physical::BYTE_ARRAY,
        Expect::Verdict => matches!(t.get_physical_type(), Physical::BOOLEAN | Physical::INT32 | Physical::INT64),
        Expect::Number => {
            matches!(t.get_physical_type(), Physical::FLOAT | Physical::DOUBLE | Physical::INT32 | Physical::INT64)
        }
    }
}

/// The projection the reader asks for: the dataset's columns the shard has, each checked.
fn projection(path: &Path, kind: Kind, root: &Type) -> Result<Type, IngestError> {
    let mut fields = Vec::new();
    for f in root.get_fields() {
        if !kind.wanted().contains(&f.name()) {
            continue;
        }
        let want = expected(kind, f.name());
        if !fits(f, want) {
            return Err(IngestError::shape(
                path,
                format!(
                    "{}: column `{}` is {}, where the dataset has {}: not read",
                    kind.dataset(),
                    f.name(),
                    describe(f),
                    want.words()
                ),
            ));
        }
        fields.push(f.clone());
    }
    Type::group_type_builder(root.name()).with_fields(fields).build().map_err(|e| open_error(path, e))
}

/// Read the shard at `path` (a dataset of `kind`) a row group at a time, handing `emit` each
/// group's runs and how many of the shard's bytes the group covers. Rows that cannot be read
/// are warnings naming them, with a count at the end; the shard fails only when it cannot be
/// opened, a column has the wrong type, or no row at all could be read. `emit` returns false to
/// stop.
pub fn read_groups(
    path: &Path,
    kind: Kind,
    limits: Limits,
    mut emit: impl FnMut(Parsed, u64) -> bool,
) -> Result<(), IngestError> {
    let file = std::fs::File::open(path).map_err(|source| IngestError::Io { path: path.to_path_buf(), source })?;
    let size = file.metadata().map(|m| m.len()).unwrap_or(0);
    let reader = SerializedFileReader::new(file).map_err(|e| open_error(path, e))?;
    read_reader(path, &reader, size, kind, limits, &mut emit)
}

/// [`read_groups`] on a shard held in memory (an archive's member): all its groups in one; the
/// shard read as `forced` names ([`shape_of_file`]).
pub fn parse_bytes(
    path: &Path,
    bytes: Vec<u8>,
    limits: Limits,
    forced: Option<Format>,
) -> Result<Option<(Format, Parsed)>, IngestError> {
    let forced = forced.map(|f| forced_kind(path, f)).transpose()?;
    let size = bytes.len() as u64;
    let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).map_err(|e| open_error(path, e))?;
    let Shape::Dataset(kind) = shape(&reader, forced) else { return Ok(None) };
    let mut all = Parsed::default();
    read_reader(path, &reader, size, kind, limits, &mut |p, _| {
        all.absorb(p);
        true
    })?;
    Ok(Some((kind.format(), all)))
}

fn read_reader<R: parquet::file::reader::ChunkReader + 'static>(
    path: &Path,
    reader: &SerializedFileReader<R>,
    size: u64,
    kind: Kind,
    limits: Limits,
    emit: &mut dyn FnMut(Parsed, u64) -> bool,
) -> Result<(), IngestError> {
    let meta = reader.metadata();
    let root = meta.file_metadata().schema();
    let proj = projection(path, kind, root)?;
    let wanted: Vec<usize> = {
        let descr = meta.file_metadata().schema_descr();
        (0..descr.num_columns())
            .filter(|&i| proj.get_fields().iter().any(|f| f.name() == descr.column(i).path().parts()[0]))
            .collect()
    };
    let dataset = dataset_name(path, kind);
    let split = split_name(path);
    let groups = reader.num_row_groups();
    let total_rows: i64 = meta.row_groups().iter().map(|g| g.num_rows()).sum();
    let (mut position, mut read, mut failed) = (0usize, 0usize, 0usize);
    let mut tasks = task::Seen::default();
    let mut first_problem: Option<String> = None;
    for g in 0..groups {
        let gm = meta.row_group(g);
        let rows = usize::try_from(gm.num_rows()).unwrap_or(0);
        // The group's share of the file, for progress and the parts committed.
        let bytes = gm.compressed_size().max(0) as u64;
        let bytes = if g + 1 == groups {
            size.saturating_sub(meta.row_groups()[..g].iter().map(|x| x.compressed_size().max(0) as u64).sum())
        } else {
            bytes
        };
        let mut parsed = Parsed::default();
        if let Some(why) = over_limits(gm, &wanted, limits) {
            let w = format!("{}: row group {g} ({rows} rows): {why}: not read", path.display());
            first_problem.get_or_insert(w.clone());
            parsed.warnings.push(w);
            failed += rows;
            position += rows;
        } else {
            let (ok, bad) = read_group(
                path,
                reader,
                g,
                &proj,
                kind,
                limits,
                (&dataset, split.as_deref()),
                position,
                rows,
                &mut parsed,
            );
            if bad > 0 {
                first_problem = first_problem.or_else(|| parsed.warnings.first().cloned());
            }
            read += ok;
            failed += bad;
            position += rows;
        }
        tasks.keep_new(&mut parsed.tasks);
        if !emit(parsed, bytes) {
            return Ok(());
        }
    }
    if read == 0 {
        let why = first_problem.unwrap_or_else(|| "the shard has no row".into());
        return Err(IngestError::shape(path, format!("{}: no row could be read ({why})", kind.dataset())));
    }
    if failed > 0 {
        let total = usize::try_from(total_rows).unwrap_or(read + failed);
        let mut end = Parsed::default();
        end.warnings.push(rows_lost(path, failed, total));
        emit(end, 0);
    }
    Ok(())
}

/// Read row group `g` into `parsed`: how many rows were read and how many were not.
#[allow(clippy::too_many_arguments)]
fn read_group<R: parquet::file::reader::ChunkReader + 'static>(
    path: &Path,
    reader: &SerializedFileReader<R>,
    g: usize,
    proj: &Type,
    kind: Kind,
    limits: Limits,
    (dataset, split): (&str, Option<&str>),
    first: usize,
    rows: usize,
    parsed: &mut Parsed,
) -> (usize, usize) {
    let at = |row: usize| RowAt { shard: path, dataset, split, group: Some(g), row, position: first + row };
    let lost_from = |row: usize, why: String, parsed: &mut Parsed| {
        parsed.warnings.push(format!(
            "{}: rows {row} to {} of the group ({} rows) could not be read: {why}",
            at(row).name(),
            rows.saturating_sub(1),
            rows - row.min(rows)
        ));
        rows - row.min(rows)
    };
    let group: Box<dyn RowGroupReader + '_> = match reader.get_row_group(g) {
        Ok(r) => r,
        Err(e) => return (0, lost_from(0, e.to_string(), parsed)),
    };
    // The record reader asserts on some malformed input: a panic is this group's error.
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let mut local = Parsed::default();
        let (mut ok, mut bad) = (0usize, 0usize);
        let iter = match RowIter::from_row_group(Some(proj.clone()), &*group) {
            Ok(it) => it.with_batch_size(limits.batch_rows),
            Err(e) => return (local, 0, 0, Some(e.to_string())),
        };
        for (r, row) in iter.enumerate() {
            match row {
                Ok(row) => {
                    let v = row.to_json_value();
                    drop(row);
                    if add_row(kind, &at(r), &v, &mut local) {
                        ok += 1;
                    } else {
                        bad += 1;
                    }
                }
                Err(e) => {
                    let mut w = Parsed::default();
                    bad += lost_from(r, e.to_string(), &mut w);
                    local.warnings.extend(w.warnings);
                    return (local, ok, bad, None);
                }
            }
            if r + 1 >= rows {
                break;
            }
        }
        (local, ok, bad, None)
    }));
    match outcome {
        Ok((local, ok, bad, open_failed)) => {
            parsed.absorb(local);
            if let Some(e) = open_failed {
                return (0, lost_from(0, e, parsed));
            }
            (ok, bad)
        }
        Err(panic) => {
            let why = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "the Parquet reader stopped".into());
            (0, lost_from(0, why, parsed))
        }
    }
}

/// The schema of a kind, parsed (the generator and the tests write shards of it).
pub fn schema(kind: Kind) -> Result<Arc<Type>, IngestError> {
    schema_text(kind.schema())
}

/// A Parquet message type, parsed.
pub fn schema_text(text: &str) -> Result<Arc<Type>, IngestError> {
    parquet::schema::parser::parse_message_type(text)
        .map(Arc::new)
        .map_err(|e| IngestError::shape(Path::new("schema"), e.to_string()))
}
