//! A SWE-agent document read member by member, its steps one at a time: the same reading for a
//! file held in memory ([`parse_text`]) and one read from disk (`stream_doc::read`).
//!
//! Members may come in any order. A run begins when its `trajectory` does (its steps go to the
//! sink as they are built); `history`, `info` and `replay_config`, which SWE-agent writes after
//! the trajectory, are kept (the history only up to the first model turn, and the task) and make
//! the run's fields at the end. A RetryAgent file's `attempts` are the runs; the best attempt it
//! repeats at the top level is skipped.

use super::{History, RunSteps, StepIn, model_name, run_fields, run_head, task_of};
use crate::error::IngestError;
use crate::ingest::file_name::instance_from_file_name;
use crate::ingest::json::{i64_field, maybe_nested_json};
use crate::ingest::stream_doc::{Ending, Halt, Halted, ReadError, StepSink};
use crate::model::Parsed;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::marker::PhantomData;
use std::ops::Deref;
use std::path::{Path, PathBuf};

/// One RetryAgent attempt, read.
struct Attempt {
    steps: RunSteps,
    history: History,
    info: Value,
    /// Some RetryAgent versions keep each attempt's own configuration.
    replay: Option<Value>,
}

/// A SWE-agent document being read.
pub struct SweDoc {
    path: PathBuf,
    instance_id: String,
    info: Option<Value>,
    replay: Option<Value>,
    /// The top-level trajectory's run, once begun.
    top: Option<RunSteps>,
    top_history: History,
    attempts: Vec<Attempt>,
    /// Skip the top-level trajectory (it came before the attempts).
    skip_top: bool,
    pub halted: Halted,
}

impl SweDoc {
    /// A document of `path`, with members read before it was known to be SWE-agent's.
    pub fn new(path: &Path, info: Option<Value>, replay: Option<Value>) -> SweDoc {
        SweDoc {
            path: path.to_path_buf(),
            instance_id: instance_from_file_name(path),
            info,
            replay,
            top: None,
            top_history: History::default(),
            attempts: Vec::new(),
            skip_top: false,
            halted: Halted::default(),
        }
    }

    /// Read the value of the member `key`. `Q` holds prompt messages (see [`StepIn`]).
    pub fn member<'de, Q, A>(&mut self, key: &str, map: &mut A, sink: &mut dyn StepSink) -> Result<(), A::Error>
    where
        Q: Deserialize<'de> + Deref<Target = RawValue>,
        A: MapAccess<'de>,
    {
        match key {
            "trajectory" if self.skip_top || !self.attempts.is_empty() => {
                map.next_value::<IgnoredAny>()?;
            }
            "trajectory" => {
                if self.top.is_some() {
                    let e = IngestError::shape(&self.path, "SWE-agent: `trajectory` appears twice");
                    return Err(self.halted.stop(Halt::Shape(e)));
                }
                let mut steps = RunSteps::default();
                let head = run_head(&self.instance_id, None);
                let seed = Trajectory::<Q> {
                    head: Some(&head),
                    steps: &mut steps,
                    sink,
                    halted: &mut self.halted,
                    q: PhantomData,
                };
                if map.next_value_seed(seed)? {
                    self.top = Some(steps);
                }
            }
            "history" if !self.attempts.is_empty() => {
                map.next_value::<IgnoredAny>()?;
            }
            "history" => {
                self.top_history = History::default();
                map.next_value_seed(HistorySeed(&mut self.top_history))?;
            }
            "info" => self.info = map.next_value()?,
            "replay_config" => self.replay = map.next_value()?,
            "attempts" => {
                let seed = Attempts::<Q> { doc: self, sink, q: PhantomData };
                map.next_value_seed(seed)?;
            }
            _ => {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok(())
    }

    /// The runs' fields, the task and the metadata, once every member is read.
    pub fn finish(self) -> Result<Ending, IngestError> {
        let replay = self.replay.as_ref().map(maybe_nested_json);
        let model = model_name(replay.as_ref(), None);
        let top_info = self.info.unwrap_or(Value::Null);
        let id = &self.instance_id;
        let mut parsed = Parsed::default();
        if self.attempts.is_empty() {
            let steps = self.top.ok_or_else(|| {
                IngestError::shape(&self.path, "SWE-agent file has neither a `trajectory` nor any `attempts`")
            })?;
            let history = &self.top_history;
            parsed.runs.push(run_fields(id, &steps, history, &top_info, model, None));
            parsed.tasks.extend(task_of(id, history, replay.as_ref()));
        } else {
            let best = i64_field(&top_info, "best_attempt_idx");
            for (i, a) in self.attempts.iter().enumerate() {
                let own = a.replay.as_ref().map(maybe_nested_json);
                let model = model_name(own.as_ref(), None).or_else(|| model_name(replay.as_ref(), Some(i)));
                let mut run = run_fields(id, &a.steps, &a.history, &a.info, model, Some(i));
                run.best_attempt = best.map(|b| b == i as i64);
                if i == 0 {
                    parsed.tasks.extend(task_of(id, &a.history, replay.as_ref()));
                }
                parsed.runs.push(run);
            }
        }
        if let Some(r) = replay {
            for run in &mut parsed.runs {
                run.metadata = Some(r.to_string());
            }
        }
        // 0.x names no model in the file: its run folder's `args.yaml` does, or its submission.
        if parsed.runs.iter().any(|r| r.model.is_none())
            && let Some(model) =
                super::args::model_beside(&self.path).or_else(|| super::args::model_of_submission(&self.path))
        {
            for run in parsed.runs.iter_mut().filter(|r| r.model.is_none()) {
                run.model = Some(model.clone());
            }
        }
        Ok(Ending { parsed, fixups: Vec::new() })
    }
}

/// Read a document held in memory (its prompt messages are slices of `text`), its steps handed
/// to `sink` as they are built; what it says at its end. `skip_top` skips the top-level
/// trajectory (see [`super::read`]).
pub fn read_text(path: &Path, text: &str, skip_top: bool, sink: &mut dyn StepSink) -> Result<Ending, ReadError> {
    struct Top<'a> {
        doc: &'a mut SweDoc,
        sink: &'a mut dyn StepSink,
    }
    impl<'de> Visitor<'de> for Top<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a SWE-agent trajectory object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                self.doc.member::<&'de RawValue, A>(&key, &mut map, self.sink)?;
            }
            Ok(())
        }
    }
    let mut doc = SweDoc::new(path, None, None);
    doc.skip_top = skip_top;
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de.deserialize_map(Top { doc: &mut doc, sink }).and_then(|()| de.end());
    if let Err(e) = read {
        return Err(doc.halted.error(path, e));
    }
    doc.finish().map_err(ReadError::Invalid)
}

/// A `trajectory` list: each step built once the next is read, and handed to the sink. Its
/// value: whether there was a list (`null` is none).
struct Trajectory<'a, Q> {
    /// The run to begin when the list begins.
    head: Option<&'a crate::model::Run>,
    steps: &'a mut RunSteps,
    sink: &'a mut dyn StepSink,
    halted: &'a mut Halted,
    q: PhantomData<Q>,
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> DeserializeSeed<'de> for Trajectory<'_, Q> {
    type Value = bool;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> Visitor<'de> for Trajectory<'_, Q> {
    type Value = bool;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of steps")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        if let Some(head) = self.head
            && !self.sink.begin(head)
        {
            return Err(self.halted.stop(Halt::Sink));
        }
        let mut pending: Option<StepIn<Q>> = None;
        while let Some(s) = seq.next_element::<StepIn<Q>>()? {
            self.steps.observe(&s);
            let Some(before) = pending.replace(s) else { continue };
            let (step, edits, how) = self.steps.build(before, pending.as_ref());
            if !self.sink.step(step, edits, how) {
                return Err(self.halted.stop(Halt::Sink));
            }
        }
        if let Some(last) = pending {
            let (step, edits, how) = self.steps.build(last, None);
            if !self.sink.step(step, edits, how) {
                return Err(self.halted.stop(Halt::Sink));
            }
        }
        Ok(true)
    }
}

/// A `history` list, kept as [`History`] keeps it, one message at a time.
struct HistorySeed<'a>(&'a mut History);

impl<'de> DeserializeSeed<'de> for HistorySeed<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for HistorySeed<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of messages")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(m) = seq.next_element::<Value>()? {
            self.0.push(m);
        }
        Ok(())
    }
}

/// RetryAgent `attempts`: each attempt a run.
struct Attempts<'a, Q> {
    doc: &'a mut SweDoc,
    sink: &'a mut dyn StepSink,
    q: PhantomData<Q>,
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> DeserializeSeed<'de> for Attempts<'_, Q> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> Visitor<'de> for Attempts<'_, Q> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of attempts")
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        let doc = self.doc;
        loop {
            let i = doc.attempts.len();
            if i == 0 && doc.top.is_some() {
                // The runs are the attempts, not the trajectory already read: only a whole read
                // can leave that trajectory out.
                let peek = seq.next_element::<IgnoredAny>()?;
                if peek.is_none() {
                    return Ok(());
                }
                return Err(doc.halted.stop(Halt::Whole("a trajectory before the RetryAgent attempts")));
            }
            let seed = AttemptSeed::<Q> {
                instance_id: &doc.instance_id,
                index: i,
                sink: &mut *self.sink,
                halted: &mut doc.halted,
                q: PhantomData,
            };
            match seq.next_element_seed(seed)? {
                Some(a) => doc.attempts.push(a),
                None => return Ok(()),
            }
        }
    }
}

struct AttemptSeed<'a, Q> {
    instance_id: &'a str,
    index: usize,
    sink: &'a mut dyn StepSink,
    halted: &'a mut Halted,
    q: PhantomData<Q>,
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> DeserializeSeed<'de> for AttemptSeed<'_, Q> {
    type Value = Attempt;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Attempt, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de, Q: Deserialize<'de> + Deref<Target = RawValue>> Visitor<'de> for AttemptSeed<'_, Q> {
    type Value = Attempt;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("an attempt object")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Attempt, A::Error> {
        let head = run_head(self.instance_id, Some(self.index));
        let mut attempt =
            Attempt { steps: RunSteps::default(), history: History::default(), info: Value::Null, replay: None };
        let mut begun = false;
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "trajectory" if !begun => {
                    let seed = Trajectory::<Q> {
                        head: Some(&head),
                        steps: &mut attempt.steps,
                        sink: &mut *self.sink,
                        halted: &mut *self.halted,
                        q: PhantomData,
                    };
                    begun = map.next_value_seed(seed)?;
                }
                "history" => {
                    attempt.history = History::default();
                    map.next_value_seed(HistorySeed(&mut attempt.history))?;
                }
                "info" => attempt.info = map.next_value::<Option<Value>>()?.unwrap_or(Value::Null),
                "replay_config" => attempt.replay = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        // An attempt without steps is still a run.
        if !begun && !self.sink.begin(&head) {
            return Err(self.halted.stop(Halt::Sink));
        }
        Ok(attempt)
    }
}
