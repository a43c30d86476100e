//! A mini-swe-agent document read member by member, its messages one at a time: the same
//! reading for a file held in memory ([`parse_text`]) and one read from disk
//! (`stream_doc::read`).
//!
//! A turn (an assistant message and its replies) becomes a step once the next assistant message
//! is read, the last one at the end of the list (the exit message may answer it). The run's
//! fields come at the end: `instance_id` and `trajectory_format` follow the messages. When `info`
//! (with the submission) is not read before the messages, a step whose error flag depends on
//! the submission is corrected then ([`Fixup`]).
//!
//! A bare list of messages (runs saved before `trajectory_format` existed) is read the same way,
//! from memory only: `trajan FILE` hands such a file to the whole-file path.

use super::{Built, Turn, add_f64, add_i64, bare_instance_id, bare_list_end};
use crate::analysis::edits;
use crate::error::IngestError;
use crate::ingest::file_name::instance_from_file_name;
use crate::ingest::json::{at, content_text, f64_field, i64_field, nonempty_str, str_field};
use crate::ingest::stream_doc::{Collect, Ending, Fixup, Halt, Halted, ReadError, StepSink};
use crate::ingest::swe_agent::hash16;
use crate::model::{Format, Message, Parsed, Run, StepFlags, Task};
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::path::{Path, PathBuf};

/// The messages, read.
#[derive(Default)]
struct Messages {
    task: Option<String>,
    history: Vec<Message>,
    exit: Option<Value>,
    /// The turn being read (its replies may follow).
    turn: Option<Turn>,
    /// Steps built so far.
    steps: usize,
    tokens_in: Option<i64>,
    tokens_out: Option<i64>,
    cost: Option<f64>,
    /// The first model a turn names.
    model: Option<String>,
    /// The submission the steps were built with: known when `info` came first.
    submission: Option<String>,
    /// Steps built without a submission whose error flag depends on it: step, hash of its
    /// trimmed observation, flags.
    open: Vec<(usize, [u8; 16], StepFlags)>,
    /// How the last turn ended, for a bare list ([`bare_list_end`]).
    end: Option<Option<String>>,
    warnings: Vec<String>,
}

/// A mini-swe-agent document being read.
pub struct MiniDoc {
    path: PathBuf,
    info: Option<Value>,
    instance_id: Option<Value>,
    format_version: Option<Value>,
    messages: Option<Messages>,
    /// The document is a bare list of messages, not an object.
    bare: bool,
    pub halted: Halted,
}

impl MiniDoc {
    /// A document of `path`, with members read before it was known to be mini-swe-agent's.
    pub fn new(path: &Path, info: Option<Value>, instance_id: Option<Value>, format_version: Option<Value>) -> MiniDoc {
        MiniDoc {
            path: path.to_path_buf(),
            info,
            instance_id,
            format_version,
            messages: None,
            bare: false,
            halted: Halted::default(),
        }
    }

    /// Read the value of the member `key`.
    pub fn member<'de, A: MapAccess<'de>>(
        &mut self,
        key: &str,
        map: &mut A,
        sink: &mut dyn StepSink,
    ) -> Result<(), A::Error> {
        match key {
            "info" => self.info = Some(map.next_value()?),
            "instance_id" => self.instance_id = Some(map.next_value()?),
            "trajectory_format" => self.format_version = Some(map.next_value()?),
            "messages" => {
                if self.messages.is_some() {
                    let e = IngestError::shape(&self.path, "mini-swe-agent: `messages` appears twice");
                    return Err(self.halted.stop(Halt::Shape(e)));
                }
                map.next_value_seed(self.messages_seed(sink))?;
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }

    /// What reads the list of messages: the run begins with it.
    fn messages_seed<'a>(&'a mut self, sink: &'a mut dyn StepSink) -> MessagesSeed<'a> {
        let submission = self.info.as_ref().filter(|i| i.is_object()).and_then(|i| nonempty_str(i, "submission"));
        // The submission, when `info` came first: the shell edits can be reconstructed as the
        // steps come (`replay::Alongside`).
        let head = Run {
            instance_id: self.instance(),
            format: Some(Format::MiniSweAgent),
            agent: Some("mini-swe-agent".to_string()),
            submission: submission.clone(),
            ..Run::default()
        };
        MessagesSeed { doc: self, head, sink, submission }
    }

    /// The instance: the document's `instance_id`, else the file name's (a bare list's:
    /// [`bare_instance_id`]).
    fn instance(&self) -> String {
        if self.bare {
            return bare_instance_id(&self.path);
        }
        self.instance_id
            .as_ref()
            .and_then(Value::as_str)
            .filter(|s| !s.trim().is_empty())
            .map(str::to_string)
            .unwrap_or_else(|| instance_from_file_name(&self.path))
    }

    /// The run's fields and task once every member is read.
    pub fn finish(self) -> Result<Ending, IngestError> {
        let instance_id = self.instance();
        let m = self.messages.ok_or_else(|| IngestError::shape(&self.path, "mini-swe-agent: no `messages` list"))?;
        if self.bare && m.steps == 0 {
            return Err(IngestError::shape(&self.path, "mini-swe-agent: a list of messages with no assistant message"));
        }
        let info = self.info.filter(Value::is_object).unwrap_or(Value::Null);
        let exit_extra = m.exit.as_ref().and_then(|e| e.get("extra")).unwrap_or(&Value::Null);
        let bare_end = if self.bare { m.end } else { None };
        let submission = nonempty_str(&info, "submission")
            .or_else(|| nonempty_str(exit_extra, "submission"))
            .or_else(|| bare_end.clone().flatten());
        let stats = info.get("model_stats").unwrap_or(&Value::Null);
        let model =
            at(&info, &["config", "model", "model_name"]).and_then(Value::as_str).map(str::to_string).or(m.model);
        let mut run = Run {
            instance_id: instance_id.clone(),
            format: Some(Format::MiniSweAgent),
            format_version: self.format_version.as_ref().and_then(Value::as_str).map(str::to_string),
            agent: Some("mini-swe-agent".to_string()),
            model,
            exit_status: nonempty_str(&info, "exit_status")
                .or_else(|| nonempty_str(exit_extra, "exit_status"))
                .or_else(|| bare_end.as_ref().map(|_| "Submitted".to_string())),
            submission: submission.clone(),
            cost: f64_field(stats, "instance_cost").or(m.cost),
            api_calls: i64_field(stats, "api_calls"),
            tokens_sent: m.tokens_in,
            tokens_received: m.tokens_out,
            position: 0,
            history: m.history,
            ..Run::default()
        };
        let mut fixups = Vec::new();
        if let Some(patch) = &submission {
            run.edits.extend(edits::final_patch_edits(patch));
            // The steps built before the submission was known whose observation is the patch.
            let hash = hash16(patch.trim());
            for (step, h, flags) in m.open {
                if h == hash {
                    fixups.push(Fixup { run: 0, step, flags: StepFlags { error: false, ..flags } });
                }
            }
        }
        let mut parsed = Parsed { warnings: m.warnings, ..Parsed::default() };
        parsed.tasks.push(Task {
            instance_id,
            instruction: m.task.filter(|t| !t.trim().is_empty()),
            ..Task::default()
        });
        parsed.runs.push(run);
        Ok(Ending { parsed, fixups })
    }
}

/// Parse a document held in memory: an object, or a bare list of messages.
pub fn parse_text(path: &Path, text: &str) -> Result<Parsed, ReadError> {
    struct Top<'a> {
        doc: &'a mut MiniDoc,
        sink: &'a mut Collect,
    }
    impl<'de> Visitor<'de> for Top<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                self.doc.member(&key, &mut map, self.sink)?;
            }
            Ok(())
        }
    }
    let mut doc = MiniDoc::new(path, None, None, None);
    let mut sink = Collect::default();
    let mut de = serde_json::Deserializer::from_str(text);
    let read = match text.trim_start().chars().next() {
        Some('{') => de.deserialize_map(Top { doc: &mut doc, sink: &mut sink }).and_then(|()| de.end()),
        Some('[') => {
            doc.bare = true;
            de.deserialize_seq(doc.messages_seed(&mut sink)).and_then(|()| de.end())
        }
        _ => {
            // Still JSON first: a syntax error is reported where it is.
            serde_json::from_str::<IgnoredAny>(text).map_err(|e| doc.halted.error(path, e))?;
            let e = IngestError::shape(path, "mini-swe-agent: the document is not a JSON object or list of messages");
            return Err(ReadError::Invalid(e));
        }
    };
    if let Err(e) = read {
        return Err(doc.halted.error(path, e));
    }
    let ending = doc.finish().map_err(ReadError::Invalid)?;
    Ok(sink.finish(ending))
}

/// The `messages` list: each message read and placed (a turn's reply, the history, the exit),
/// each turn built into a step once the next begins.
struct MessagesSeed<'a> {
    doc: &'a mut MiniDoc,
    head: Run,
    sink: &'a mut dyn StepSink,
    submission: Option<String>,
}

impl<'de> DeserializeSeed<'de> for MessagesSeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl MessagesSeed<'_> {
    fn not_a_list<E: serde::de::Error>(self) -> Result<(), E> {
        let e = IngestError::shape(&self.doc.path, "mini-swe-agent: `messages` is not a list");
        Err(self.doc.halted.stop(Halt::Shape(e)))
    }
}

impl<'de> Visitor<'de> for MessagesSeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let doc = self.doc;
        if !self.sink.begin(&self.head) {
            return Err(doc.halted.stop(Halt::Sink));
        }
        let mut m = Messages { submission: self.submission, ..Messages::default() };
        let mut i = 0usize;
        while let Some(message) = seq.next_element::<Value>()? {
            if !m.read(&doc.path, i, message, &mut *self.sink) {
                return Err(doc.halted.stop(Halt::Sink));
            }
            i += 1;
        }
        if let Some(last) = m.turn.take()
            && !m.build(last, true, &mut *self.sink)
        {
            return Err(doc.halted.stop(Halt::Sink));
        }
        doc.messages = Some(m);
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<(), A::Error> {
        self.not_a_list()
    }
    fn visit_str<E: serde::de::Error>(self, _v: &str) -> Result<(), E> {
        self.not_a_list()
    }
    fn visit_bool<E: serde::de::Error>(self, _v: bool) -> Result<(), E> {
        self.not_a_list()
    }
    fn visit_i64<E: serde::de::Error>(self, _v: i64) -> Result<(), E> {
        self.not_a_list()
    }
    fn visit_u64<E: serde::de::Error>(self, _v: u64) -> Result<(), E> {
        self.not_a_list()
    }
    fn visit_f64<E: serde::de::Error>(self, _v: f64) -> Result<(), E> {
        self.not_a_list()
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        self.not_a_list()
    }
}

impl Messages {
    /// Place message `i`. False when the sink stopped.
    fn read(&mut self, path: &Path, i: usize, message: Value, sink: &mut dyn StepSink) -> bool {
        if !message.is_object() {
            self.warnings.push(format!("{}: messages[{i}] is not an object; skipped", path.display()));
            return true;
        }
        let role = str_field(&message, "role").unwrap_or_default();
        // Messages that become steps are stored as steps; the history keeps the rest (system
        // prompt, task, exit), so no text is stored twice.
        match role.as_str() {
            "assistant" => {
                let turn = Turn::new(&message);
                if let Some(before) = self.turn.replace(turn) {
                    return self.build(before, false, sink);
                }
                return true;
            }
            "user" | "tool" if self.turn.is_some() => {
                if let Some(t) = self.turn.as_mut() {
                    t.replies.push(message);
                }
                return true;
            }
            "user" if self.task.is_none() => self.task = Some(content_text(message.get("content"))),
            "exit" => {
                let content = content_text(message.get("content"));
                self.history.push(Message { role, content, extra: None });
                self.exit = Some(message);
                return true;
            }
            _ => {}
        }
        let content = content_text(message.get("content"));
        self.history.push(Message { role, content, extra: None });
        true
    }

    /// Build a turn into a step for the sink. False when the sink stopped.
    fn build(&mut self, turn: Turn, last: bool, sink: &mut dyn StepSink) -> bool {
        self.tokens_in = add_i64(self.tokens_in, turn.tokens_in);
        self.tokens_out = add_i64(self.tokens_out, turn.tokens_out);
        self.cost = add_f64(self.cost, turn.cost);
        if self.model.is_none() {
            self.model = turn.model.clone();
        }
        let idx = self.steps;
        self.steps += 1;
        if last {
            self.end = bare_list_end(&turn);
        }
        let Built { mut step, how, by_submission } = turn.into_step(self.submission.as_deref());
        if by_submission && self.submission.is_none() {
            self.open.push((idx, hash16(step.observation.trim()), step.flags));
        }
        if last && step.observation.is_empty() {
            // v2: the submitting command is answered by the exit message, not by a user message.
            if let Some(m) = &self.exit {
                step.observation = content_text(m.get("content"));
            }
        }
        sink.step(step, Vec::new(), how)
    }
}
