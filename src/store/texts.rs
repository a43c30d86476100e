//! Step texts compressed in chunks: the texts of consecutive steps of one run, back to back, as
//! one zstd frame (`text_chunks.body`); a step's row in `step_texts` names its chunk and where
//! its record starts. A step's texts alone compress poorly (a few kilobytes, no history); a chunk
//! of about [`CHUNK`] bytes compresses about 1.4 times better, and reading one step decompresses
//! at most its chunk up to the end of its record.
//!
//! A record: five little-endian `u32` lengths (thought, action, observation, response, args;
//! [`ABSENT`] for a missing response or args), then the five texts in that order. Search reads
//! thought, action and observation in that order, so it streams through a record once.
//!
//! The edits' bulky texts (old and new text, diff, the diff a view showed, the final patch's hunks
//! as JSON) are records of the same kind, in chunks of their own (a run's edits after its steps):
//! the diffs of the shell edits the reconstruction finds, and those their checking views showed,
//! repeat each other's context and compress about 5x in one chunk.
//!
//! Rows written before chunks existed keep their texts in `step_texts`' (or `edits`') own
//! columns (`chunk_id` NULL); both kinds are read.

use crate::error::StoreError;
use crate::model::{Edit, Step};
use std::io::Read;
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, channel, sync_channel};
use std::thread::JoinHandle;

/// Raw bytes of texts gathered before a chunk is compressed.
pub const CHUNK: usize = 128 << 10;
/// zstd level: 1 compresses these texts about as small as 3, at a lower cost on the writer.
const LEVEL: i32 = 1;
/// The length of a text that is not there (a step without response or args).
const ABSENT: u32 = u32::MAX;
const HEADER: usize = 5 * 4;
/// The largest decompression window accepted (zstd's default limit, 128 MiB): a chunk of one
/// 500 MB observation streams through a window no larger than this.
const WINDOW_LOG_MAX: u32 = 27;

/// The texts of one step, as stored (or read in part: see [`Bound`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Texts {
    pub thought: String,
    pub action: String,
    pub observation: String,
    pub response: Option<String>,
    pub args: Option<String>,
    /// Where thought, action and observation were cut, when read within a [`Bound`].
    pub cuts: [Option<Cut>; 3],
}

/// How much of a long text is read to show it: its first `head` and last `tail` bytes (a step's
/// view shows an observation folded to its head and tail; a 500 MB output is not read whole to
/// draw a screen of it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bound {
    pub head: usize,
    pub tail: usize,
}

/// What the TUI's step view reads of each text.
pub const SHOWN: Bound = Bound { head: 256 << 10, tail: 64 << 10 };

/// Where a text read within a [`Bound`] was cut: the text kept is its first `at` bytes, then
/// its last bytes; the `omitted` bytes between them were not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    pub at: usize,
    pub omitted: u64,
}

/// `text` within `bound`: unchanged when it fits, else its head and tail (on character
/// boundaries) and where it was cut.
pub fn cut(text: String, bound: Bound) -> (String, Option<Cut>) {
    let bytes = text.as_bytes();
    if bytes.len() <= bound.head + bound.tail {
        return (text, None);
    }
    match head_and_tail(&bytes[..bound.head], &bytes[bytes.len() - bound.tail..], bytes.len() as u64) {
        Ok((kept, cut)) => (kept, Some(cut)),
        // Not reached: the text is UTF-8, so are its cut ends once trimmed to characters.
        Err(_) => (text, None),
    }
}

/// A text of `len` bytes kept as its first bytes `head` and its last bytes `tail`, each trimmed
/// to whole characters: a head ends before a character it cut, a tail begins after the
/// continuation bytes of one. An error if either holds bytes that are not UTF-8.
fn head_and_tail(head: &[u8], tail: &[u8], len: u64) -> Result<(String, Cut), std::str::Utf8Error> {
    let head = match std::str::from_utf8(head) {
        Ok(h) => h,
        Err(e) if e.error_len().is_none() => std::str::from_utf8(&head[..e.valid_up_to()])?,
        Err(e) => return Err(e),
    };
    let skip = tail.iter().take_while(|&&b| b & 0xC0 == 0x80).count();
    let tail = std::str::from_utf8(&tail[skip..])?;
    let omitted = len - (head.len() + tail.len()) as u64;
    Ok((format!("{head}{tail}"), Cut { at: head.len(), omitted }))
}

/// A chunk ready to be written: its compressed body and, for each of its steps (by index in the
/// run), where the step's record starts in the decompressed body.
pub struct Chunk {
    pub body: Vec<u8>,
    pub records: Vec<(usize, u32)>,
}

/// The five texts of a record, each possibly absent.
pub type Fields<'a> = [Option<&'a str>; 5];

/// A step's texts as a record's fields: thought, action, observation, response, args.
pub fn step_fields(s: &Step) -> Fields<'_> {
    [Some(&s.thought), Some(&s.action), Some(&s.observation), s.response.as_deref(), s.args.as_deref()]
}

/// An edit's texts as a record's fields (the order readers reads them in):
/// old text, new text, diff, the diff a view showed, the final patch's hunks as JSON.
pub fn edit_fields<'a>(e: &'a Edit, hunks: Option<&'a str>) -> Fields<'a> {
    [e.old_text.as_deref(), e.new_text.as_deref(), e.diff.as_deref(), e.trace.shown.as_deref(), hunks]
}

/// The final patch's hunks as stored (JSON), or nothing for an edit without them.
pub fn hunks_json(e: &Edit) -> Option<String> {
    (!e.trace.hunks.is_empty()).then(|| serde_json::to_string(&e.trace.hunks).unwrap_or_default())
}

/// Whether texts fit a record (each shorter than 4 GiB); a step or edit whose texts do not is
/// stored plainly.
pub fn fits(fields: &Fields<'_>) -> bool {
    fields.iter().flatten().all(|t| (t.len() as u64) < u64::from(ABSENT))
}

/// Gathers step records and compresses them a chunk at a time, on threads of their own
/// ([`HELPERS`]): the writer goes on with its rows while chunks are compressed (on one big file,
/// the core the parsing leaves idle compresses; at the end of a document, when the writer waits
/// for the last edits' chunks, both cores do). Chunks come out in the order they were gathered.
pub struct Packer {
    raw: Vec<u8>,
    records: Vec<(usize, u32)>,
    helpers: Vec<Compressing>,
    /// Chunks sent to the helpers, and received back: chunk `k` goes to helper `k % HELPERS`.
    sent: usize,
    got: usize,
}

/// A chunk's raw records, and where each starts in it.
type Gathered = (Vec<u8>, Vec<(usize, u32)>);

/// One helper thread compressing the chunks sent to it, in order.
struct Compressing {
    /// `None` once the helper is told to end (when dropped).
    work: Option<SyncSender<Gathered>>,
    done: Receiver<Result<Chunk, StoreError>>,
    thread: Option<JoinHandle<()>>,
}

/// Compressing threads.
const HELPERS: usize = 2;

/// Raw chunks waiting for each helper at most (each about [`CHUNK`] bytes).
const QUEUED: usize = 2;

impl Packer {
    /// The packer in `slot`, made on first use (a store makes its compressor once).
    pub fn ready(slot: &mut Option<Packer>) -> Result<&mut Packer, StoreError> {
        if slot.is_none() {
            *slot = Some(Packer::new()?);
        }
        slot.as_mut().ok_or_else(|| StoreError::Encode("no compressor".into()))
    }

    pub fn new() -> Result<Packer, StoreError> {
        let helpers = (0..HELPERS).map(|_| Compressing::start()).collect::<Result<_, _>>()?;
        Ok(Packer { raw: Vec::new(), records: Vec::new(), helpers, sent: 0, got: 0 })
    }

    /// Add the texts of record `index` (a step's or an edit's; [`fits`] must hold); the chunks
    /// compressed since the last call, in order. A record larger than a chunk gets a chunk of
    /// its own, so reading a small step never decompresses a huge neighbour: a chunk is at most
    /// `2 × CHUNK`, or one record.
    pub fn push(&mut self, index: usize, texts: Fields<'_>) -> Result<Vec<Chunk>, StoreError> {
        let size: usize = texts.iter().flatten().map(|t| t.len()).sum();
        if size >= CHUNK {
            let mut done = self.finish()?;
            // Compressed here, straight from the step's strings: a 500 MB observation is not
            // copied whole once more before it is compressed.
            let mut encoder = zstd::stream::write::Encoder::new(Vec::new(), LEVEL).map_err(encode)?;
            write_record(&mut encoder, texts)?;
            let body = encoder.finish().map_err(encode)?;
            done.push(Chunk { body, records: vec![(index, 0)] });
            return Ok(done);
        }
        let at = u32::try_from(self.raw.len()).map_err(encode)?;
        self.records.push((index, at));
        write_record(&mut self.raw, texts)?;
        if self.raw.len() >= CHUNK {
            self.send()?;
        }
        self.received(false)
    }

    /// Drop what was gathered (a write that failed midway), and the chunks being compressed.
    pub fn clear(&mut self) {
        self.raw.clear();
        self.records.clear();
        let _ = self.received(true);
    }

    /// The chunks of everything pushed and not given out yet, in order.
    pub fn finish(&mut self) -> Result<Vec<Chunk>, StoreError> {
        self.send()?;
        self.received(true)
    }

    /// Hand what was gathered to the next helper.
    fn send(&mut self) -> Result<(), StoreError> {
        if self.records.is_empty() {
            return Ok(());
        }
        let raw = std::mem::replace(&mut self.raw, Vec::with_capacity(CHUNK + CHUNK / 4));
        let records = std::mem::take(&mut self.records);
        let helper = &self.helpers[self.sent % HELPERS];
        let work = helper.work.as_ref().ok_or_else(|| encode("the compressor has ended"))?;
        work.send((raw, records)).map_err(|_| encode("the compressor has ended"))?;
        self.sent += 1;
        Ok(())
    }

    /// The chunks compressed so far, in order; all those in flight when `all` (a helper that
    /// has gone answers each with an error at once). After an error the rest in flight is taken
    /// too, so none is given out with a later write's.
    fn received(&mut self, all: bool) -> Result<Vec<Chunk>, StoreError> {
        let mut chunks = Vec::new();
        let mut failed = None;
        while self.got < self.sent {
            let done = &self.helpers[self.got % HELPERS].done;
            let next = match all {
                true => done.recv().map_err(|_| encode("the compressor has ended")),
                false => match done.try_recv() {
                    Ok(chunk) => Ok(chunk),
                    Err(TryRecvError::Empty) => break,
                    Err(TryRecvError::Disconnected) => Err(encode("the compressor has ended")),
                },
            };
            self.got += 1;
            match next.and_then(|chunk| chunk) {
                Ok(chunk) => chunks.push(chunk),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        match failed {
            Some(e) => Err(e),
            None => Ok(chunks),
        }
    }
}

impl Compressing {
    fn start() -> Result<Compressing, StoreError> {
        let (work, queued) = sync_channel::<Gathered>(QUEUED);
        let (finished, done) = channel();
        let thread = std::thread::Builder::new()
            .name("compress".into())
            .spawn(move || {
                let mut compressor = match zstd::bulk::Compressor::new(LEVEL) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = finished.send(Err(encode(e)));
                        return;
                    }
                };
                for (raw, records) in queued {
                    let chunk = compressor.compress(&raw).map_err(encode).map(|body| Chunk { body, records });
                    if finished.send(chunk).is_err() {
                        return;
                    }
                }
            })
            .map_err(encode)?;
        Ok(Compressing { work: Some(work), done, thread: Some(thread) })
    }
}

impl Drop for Packer {
    fn drop(&mut self) {
        for helper in &mut self.helpers {
            helper.work = None;
        }
        for helper in &mut self.helpers {
            if let Some(thread) = helper.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

/// One record: the five lengths, then the texts.
fn write_record(out: &mut impl std::io::Write, texts: Fields<'_>) -> Result<(), StoreError> {
    for t in texts {
        let len = t.map_or(ABSENT, |t| t.len() as u32);
        out.write_all(&len.to_le_bytes()).map_err(encode)?;
    }
    for t in texts.into_iter().flatten() {
        out.write_all(t.as_bytes()).map_err(encode)?;
    }
    Ok(())
}

fn encode(e: impl std::fmt::Display) -> StoreError {
    StoreError::Encode(format!("compressing step texts: {e}"))
}

fn corrupt(e: impl std::fmt::Display) -> StoreError {
    StoreError::Corrupt(format!("a compressed step text cannot be read: {e}"))
}

/// The last chunk read, decompressed: consecutive steps share a chunk, read once.
#[derive(Default)]
pub struct ChunkCache {
    held: Option<(i64, Vec<u8>)>,
}

/// Where compressed chunks are read from: a chunk's body by its id.
pub trait Chunks {
    fn chunk(&self, chunk_id: i64) -> Result<Vec<u8>, StoreError>;
}

impl ChunkCache {
    /// The texts of the step whose record is at byte `at` of chunk `chunk_id`.
    pub fn texts(&mut self, conn: &dyn Chunks, chunk_id: i64, at: i64) -> Result<Texts, StoreError> {
        Record::from_decoded(self.rest(conn, chunk_id, at)?)?.read_all()
    }

    /// The five fields of the record at byte `at` of chunk `chunk_id` (an edit's texts).
    pub fn fields(&mut self, conn: &dyn Chunks, chunk_id: i64, at: i64) -> Result<[Option<String>; 5], StoreError> {
        let mut r = Record::from_decoded(self.rest(conn, chunk_id, at)?)?;
        Ok([r.read_text(0)?, r.read_text(1)?, r.read_text(2)?, r.read_text(3)?, r.read_text(4)?])
    }

    /// An edit's texts, read from its chunk if it has one.
    pub fn edit(&mut self, conn: &dyn Chunks, place: EditPlace) -> Result<EditTexts, StoreError> {
        let [old_text, new_text, diff, shown, hunks] = match place.chunk {
            Some((chunk_id, at)) => self.fields(conn, chunk_id, at)?,
            None => place.own,
        };
        Ok(EditTexts { old_text, new_text, diff, shown, hunks })
    }

    /// The decompressed chunk from byte `at` on.
    fn rest(&mut self, conn: &dyn Chunks, chunk_id: i64, at: i64) -> Result<&[u8], StoreError> {
        if self.held.as_ref().is_none_or(|(id, _)| *id != chunk_id) {
            self.held = None;
            self.held = Some((chunk_id, unpack(&conn.chunk(chunk_id)?)?));
        }
        let raw = self.held.as_ref().map_or(&[][..], |(_, raw)| raw.as_slice());
        let start = usize::try_from(at).map_err(corrupt)?;
        raw.get(start..).ok_or_else(|| corrupt("the chunk ends before the record"))
    }
}

/// An edit's bulky texts as its row holds them: in its own columns, or in a chunk.
pub struct EditPlace {
    own: [Option<String>; 5],
    chunk: Option<(i64, i64)>,
}

/// An edit's bulky texts.
#[derive(Debug, Default)]
pub struct EditTexts {
    pub old_text: Option<String>,
    pub new_text: Option<String>,
    pub diff: Option<String>,
    pub shown: Option<String>,
    pub hunks: Option<String>,
}

impl EditPlace {
    /// The texts in the row's own columns (old text, new text, diff, shown, hunks), and the
    /// chunk and offset of its record when it has one.
    pub fn new(own: [Option<String>; 5], chunk_id: Option<i64>, chunk_at: Option<i64>) -> EditPlace {
        let chunk = match (chunk_id, chunk_at) {
            (Some(id), Some(at)) => Some((id, at)),
            _ => None,
        };
        EditPlace { own, chunk }
    }

    /// The chunk holding its record, when it has one.
    pub fn chunk_id(&self) -> Option<i64> {
        self.chunk.map(|(id, _)| id)
    }
}

/// A step's texts from a row's columns `first..first + 7`: thought, action, observation,
/// response, args (a row written before chunks), then the chunk's id and the record's offset.
pub fn of_row(
    r: &dyn super::cells::Cells,
    first: usize,
    cache: &mut ChunkCache,
    chunks: &dyn Chunks,
) -> Result<Texts, StoreError> {
    match r.opt_int(first + 5)? {
        None => Ok(Texts {
            thought: r.text(first)?,
            action: r.text(first + 1)?,
            observation: r.text(first + 2)?,
            response: r.opt_text(first + 3)?,
            args: r.opt_text(first + 4)?,
            cuts: [None; 3],
        }),
        Some(id) => cache.texts(chunks, id, r.int(first + 6)?),
    }
}

/// As [`of_row`], thought, action and observation read within `bound`. A step's own chunk is
/// streamed from its compressed body, so a 500 MB observation is never held whole.
pub fn within_of_row(
    r: &dyn super::cells::Cells,
    first: usize,
    chunks: &dyn Chunks,
    bound: Bound,
) -> Result<Texts, StoreError> {
    match r.opt_int(first + 5)? {
        None => {
            let mut texts = of_row(r, first, &mut ChunkCache::default(), chunks)?;
            texts.cuts = [&mut texts.thought, &mut texts.action, &mut texts.observation].map(|text| {
                let (kept, at) = cut(std::mem::take(text), bound);
                *text = kept;
                at
            });
            Ok(texts)
        }
        Some(id) => {
            let at = u64::try_from(r.int(first + 6)?).map_err(corrupt)?;
            open_record(chunks.chunk(id)?.as_slice(), at)?.read_within(bound)
        }
    }
}

/// An edit's texts as its row's columns `first..first + 7` hold them: old text, new text, diff,
/// shown, hunks, the chunk's id and the record's offset.
pub fn edit_place(r: &dyn super::cells::Cells, first: usize) -> Result<EditPlace, StoreError> {
    let own = [
        r.opt_text(first)?,
        r.opt_text(first + 1)?,
        r.opt_text(first + 2)?,
        r.opt_text(first + 3)?,
        r.opt_text(first + 4)?,
    ];
    Ok(EditPlace::new(own, r.opt_int(first + 5)?, r.opt_int(first + 6)?))
}

/// A chunk's body decompressed (at most `2 × CHUNK` bytes, or one step's texts).
pub fn unpack(body: &[u8]) -> Result<Vec<u8>, StoreError> {
    let mut decoder = zstd::stream::read::Decoder::new(body).map_err(corrupt)?;
    decoder.window_log_max(WINDOW_LOG_MAX).map_err(corrupt)?;
    let mut raw = Vec::new();
    decoder.read_to_end(&mut raw).map_err(corrupt)?;
    Ok(raw)
}

/// The thought, action and observation of the step whose record is at byte `at` of a
/// decompressed chunk (what search indexes).
pub fn searched(raw: &[u8], at: u64) -> Result<[String; 3], StoreError> {
    let start = usize::try_from(at).map_err(corrupt)?;
    let rest = raw.get(start..).ok_or_else(|| corrupt("the chunk ends before the record"))?;
    let mut r = Record::from_decoded(rest)?;
    Ok([r.read_text(0)?.unwrap_or_default(), r.read_text(1)?.unwrap_or_default(), r.read_text(2)?.unwrap_or_default()])
}

/// The texts of the record at byte `at` of a decompressed chunk.
#[cfg(test)]
pub fn record(raw: &[u8], at: u64) -> Result<Texts, StoreError> {
    let start = usize::try_from(at).map_err(corrupt)?;
    let rest = raw.get(start..).ok_or_else(|| corrupt("the chunk ends before the record"))?;
    Record::from_decoded(rest)?.read_all()
}

/// A record being read from a chunk's compressed body, streamed: nothing before the record is
/// kept, and each text is read whole ([`Record::read_text`]) or in pieces ([`Record::reader`]).
pub struct Record<R: Read> {
    decoder: R,
    lengths: [u32; 5],
    /// The next text to read (0 to 4).
    next: usize,
}

/// The record at byte `at` of the decompressed chunk read from the compressed `body`.
pub fn open_record<B: Read>(
    body: B,
    at: u64,
) -> Result<Record<zstd::stream::read::Decoder<'static, std::io::BufReader<B>>>, StoreError> {
    let mut decoder = zstd::stream::read::Decoder::new(body).map_err(corrupt)?;
    decoder.window_log_max(WINDOW_LOG_MAX).map_err(corrupt)?;
    let skipped = std::io::copy(&mut (&mut decoder).take(at), &mut std::io::sink()).map_err(corrupt)?;
    if skipped != at {
        return Err(corrupt("the chunk ends before the record"));
    }
    Record::from_decoded(decoder)
}

impl<R: Read> Record<R> {
    /// The record at the start of `decoder`'s bytes (decompressed).
    fn from_decoded(mut decoder: R) -> Result<Record<R>, StoreError> {
        let mut header = [0u8; HEADER];
        decoder.read_exact(&mut header).map_err(corrupt)?;
        let mut lengths = [0u32; 5];
        for (i, len) in lengths.iter_mut().enumerate() {
            let mut b = [0u8; 4];
            b.copy_from_slice(&header[4 * i..4 * i + 4]);
            *len = u32::from_le_bytes(b);
        }
        Ok(Record { decoder, lengths, next: 0 })
    }

    /// The length of text `i` (0 thought, 1 action, 2 observation, 3 response, 4 args).
    pub fn len(&self, i: usize) -> Option<u64> {
        self.lengths.get(i).filter(|&&l| l != ABSENT).map(|&l| u64::from(l))
    }

    /// Skip to text `i` (not before the next one) and read its bytes as a stream.
    pub fn reader(&mut self, i: usize) -> Result<impl Read + '_, StoreError> {
        while self.next < i {
            let len = self.len(self.next).unwrap_or(0);
            let skipped = std::io::copy(&mut (&mut self.decoder).take(len), &mut std::io::sink()).map_err(corrupt)?;
            if skipped != len {
                return Err(corrupt("the chunk ends inside a record"));
            }
            self.next += 1;
        }
        let len = self.len(i).unwrap_or(0);
        self.next = i + 1;
        Ok((&mut self.decoder).take(len))
    }

    /// Text `i` whole; `None` for a missing response or args.
    pub fn read_text(&mut self, i: usize) -> Result<Option<String>, StoreError> {
        let Some(len) = self.len(i) else {
            self.reader(i)?;
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        self.reader(i)?.read_to_end(&mut bytes).map_err(corrupt)?;
        if bytes.len() as u64 != len {
            return Err(corrupt("the chunk ends inside a text"));
        }
        String::from_utf8(bytes).map(Some).map_err(corrupt)
    }

    /// All five texts of a step's record (thought, action and observation are never absent).
    pub fn read_all(mut self) -> Result<Texts, StoreError> {
        if self.lengths[..3].contains(&ABSENT) {
            return Err(corrupt("a required text is marked absent"));
        }
        Ok(Texts {
            thought: self.read_text(0)?.unwrap_or_default(),
            action: self.read_text(1)?.unwrap_or_default(),
            observation: self.read_text(2)?.unwrap_or_default(),
            response: self.read_text(3)?,
            args: self.read_text(4)?,
            cuts: [None; 3],
        })
    }

    /// A step's record with thought, action and observation read within `bound`: of a longer
    /// text only its head and tail are kept (the bytes between are decompressed and dropped).
    pub fn read_within(mut self, bound: Bound) -> Result<Texts, StoreError> {
        if self.lengths[..3].contains(&ABSENT) {
            return Err(corrupt("a required text is marked absent"));
        }
        let (thought, c0) = self.read_part(0, bound)?;
        let (action, c1) = self.read_part(1, bound)?;
        let (observation, c2) = self.read_part(2, bound)?;
        Ok(Texts {
            thought,
            action,
            observation,
            response: self.read_text(3)?,
            args: self.read_text(4)?,
            cuts: [c0, c1, c2],
        })
    }

    /// Text `i` within `bound` (see [`cut`]), streamed: no more than the head and tail is held.
    fn read_part(&mut self, i: usize, bound: Bound) -> Result<(String, Option<Cut>), StoreError> {
        let len = self.len(i).unwrap_or(0);
        if len <= (bound.head + bound.tail) as u64 {
            return Ok((self.read_text(i)?.unwrap_or_default(), None));
        }
        let mut reader = self.reader(i)?;
        let mut head = vec![0u8; bound.head];
        reader.read_exact(&mut head).map_err(corrupt)?;
        let middle = len - (bound.head + bound.tail) as u64;
        let skipped = std::io::copy(&mut (&mut reader).take(middle), &mut std::io::sink()).map_err(corrupt)?;
        if skipped != middle {
            return Err(corrupt("the chunk ends inside a text"));
        }
        let mut tail = vec![0u8; bound.tail];
        reader.read_exact(&mut tail).map_err(corrupt)?;
        let (text, cut) = head_and_tail(&head, &tail, len).map_err(corrupt)?;
        Ok((text, Some(cut)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(i: usize, observation: &str) -> Step {
        Step {
            thought: format!("thought {i}"),
            action: format!("action {i}"),
            observation: observation.to_string(),
            response: i.is_multiple_of(2).then(|| format!("response {i} ✓")),
            args: i.is_multiple_of(3).then(|| "{\"command\":\"ls\"}".to_string()),
            ..Step::default()
        }
    }

    fn pack(steps: &[Step]) -> Vec<Chunk> {
        let mut p = Packer::new().unwrap_or_else(|e| panic!("{e}"));
        let mut chunks = Vec::new();
        for (i, s) in steps.iter().enumerate() {
            chunks.extend(p.push(i, step_fields(s)).unwrap_or_else(|e| panic!("{e}")));
        }
        chunks.extend(p.finish().unwrap_or_else(|e| panic!("{e}")));
        chunks
    }

    #[test]
    fn chunks_compressed_aside_come_in_order_and_a_clear_drops_those_on_their_way() {
        // Observations of 50 KB: a chunk every few steps, several in flight at once.
        let steps: Vec<Step> = (0..40).map(|i| step(i, &format!("line {i}\n").repeat(6_000))).collect();
        let mut p = Packer::new().unwrap_or_else(|e| panic!("{e}"));
        for (i, s) in steps.iter().enumerate().take(20) {
            let _ = p.push(i, step_fields(s)).unwrap_or_else(|e| panic!("{e}"));
        }
        p.clear();
        let mut chunks = Vec::new();
        for (i, s) in steps.iter().enumerate().skip(20) {
            chunks.extend(p.push(i, step_fields(s)).unwrap_or_else(|e| panic!("{e}")));
        }
        chunks.extend(p.finish().unwrap_or_else(|e| panic!("{e}")));
        let indices: Vec<usize> = chunks.iter().flat_map(|c| c.records.iter().map(|r| r.0)).collect();
        assert_eq!(indices, (20..40).collect::<Vec<_>>(), "only the records pushed after the clear, in order");
        for c in &chunks {
            let raw = unpack(&c.body).unwrap_or_else(|e| panic!("{e}"));
            for &(i, at) in &c.records {
                let t = record(&raw, u64::from(at)).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(t.observation, steps[i].observation);
            }
        }
    }

    #[test]
    fn every_step_reads_back_from_its_chunk_as_written() {
        // Observations of 50 KB: several steps per chunk, records starting mid-chunk.
        let steps: Vec<Step> = (0..12).map(|i| step(i, &format!("line {i}\n").repeat(6_000))).collect();
        let chunks = pack(&steps);
        assert!(chunks.len() > 1 && chunks.len() < steps.len(), "{} chunks", chunks.len());
        let mut seen = 0;
        for c in &chunks {
            for &(i, at) in &c.records {
                let texts = open_record(c.body.as_slice(), u64::from(at)).and_then(Record::read_all);
                let whole = unpack(&c.body).and_then(|raw| record(&raw, u64::from(at)));
                let s = &steps[i];
                let want = Texts {
                    thought: s.thought.clone(),
                    action: s.action.clone(),
                    observation: s.observation.clone(),
                    response: s.response.clone(),
                    args: s.args.clone(),
                    cuts: [None; 3],
                };
                assert_eq!(texts.unwrap_or_else(|e| panic!("{e}")), want, "step {i}");
                assert_eq!(whole.unwrap_or_else(|e| panic!("{e}")), want, "step {i}");
                seen += 1;
            }
        }
        assert_eq!(seen, steps.len());
    }

    #[test]
    fn a_step_larger_than_a_chunk_has_a_chunk_of_its_own() {
        let big = "x".repeat(3 * CHUNK);
        let steps = [step(0, "small"), step(1, &big), step(2, "small")];
        let chunks = pack(&steps);
        let held: Vec<Vec<usize>> = chunks.iter().map(|c| c.records.iter().map(|r| r.0).collect()).collect();
        assert_eq!(held, vec![vec![0], vec![1], vec![2]]);
    }

    #[test]
    fn a_text_is_read_in_pieces_after_the_ones_before_it() {
        let chunks = pack(&[step(0, "the observation")]);
        let mut r = open_record(chunks[0].body.as_slice(), 0).unwrap_or_else(|e| panic!("{e}"));
        let mut obs = String::new();
        r.reader(2).and_then(|mut t| t.read_to_string(&mut obs).map_err(corrupt)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(obs, "the observation");
        assert_eq!(r.read_text(3).unwrap_or_else(|e| panic!("{e}")), Some("response 0 ✓".into()));
    }

    #[test]
    fn a_long_text_read_within_a_bound_keeps_its_head_and_tail_on_character_boundaries() {
        // Three-byte characters, so that most cuts fall inside one.
        let observation: String = (0..400_000).map(|i| ['€', 'a', '\n', 'ü'][i % 4]).collect();
        let chunks = pack(&[step(0, &observation)]);
        let bound = Bound { head: 1_001, tail: 2_002 };
        for b in [bound, Bound { head: 1_000, tail: 2_000 }, SHOWN] {
            let got = open_record(chunks[0].body.as_slice(), 0)
                .and_then(|r| r.read_within(b))
                .unwrap_or_else(|e| panic!("{e}"));
            let (want, cut_at) = cut(observation.clone(), b);
            assert_eq!(got.observation, want, "{b:?}");
            assert_eq!(got.cuts, [None, None, cut_at], "{b:?}");
            let c = cut_at.unwrap_or_else(|| panic!("cut"));
            assert!(observation.starts_with(&got.observation[..c.at]));
            assert!(observation.ends_with(&got.observation[c.at..]));
            assert_eq!(c.omitted as usize + got.observation.len(), observation.len());
            assert!(c.at <= b.head && got.observation.len() - c.at <= b.tail);
            assert_eq!(got.response.as_deref(), Some("response 0 ✓"), "the texts after it are read");
        }
        // A text within the bound is read whole.
        let whole = open_record(chunks[0].body.as_slice(), 0)
            .and_then(|r| r.read_within(Bound { head: observation.len(), tail: 0 }))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!((whole.observation.as_str(), whole.cuts), (observation.as_str(), [None; 3]));
    }

    #[test]
    fn a_damaged_chunk_is_an_error_not_a_panic() {
        let chunks = pack(&[step(0, "x")]);
        let mut body = chunks[0].body.clone();
        body.truncate(body.len() / 2);
        assert!(open_record(body.as_slice(), 0).and_then(Record::read_all).is_err());
        assert!(open_record(&b"not zstd"[..], 0).is_err());
        assert!(open_record(chunks[0].body.as_slice(), 1 << 20).is_err(), "a record past the end");
    }
}
