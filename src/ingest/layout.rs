//! Agent folder layouts met in a walk (`source::discover`): the units made of several files that
//! agents other than the SWE-bench family leave (an OpenHands V1 conversation), and the files
//! beside a unit that are not read, each named with what it is (an OpenHands event cache, a
//! pickled agent state, a Terminal-Bench run's summary of the trials read one by one, an earlier
//! Agentless stage that a later one carries whole, aider's input history, an AutoCodeRover task
//! folder).

use super::skip::Skip;
use std::path::{Path, PathBuf};

/// What a folder holds beside its units: files read as members of a unit found deeper (claimed
/// now, as the walk meets them first), and files not read.
#[derive(Debug, Default)]
pub struct Beside {
    pub members: Vec<PathBuf>,
    pub passed: Vec<(PathBuf, Skip)>,
}

/// Hidden folders that agents write their runs into, walked as any other.
const WALKED_HIDDEN: &[&str] = &[".eval_sessions"];

/// Whether a hidden folder is walked (OpenHands evaluations keep sessions in `.eval_sessions/`).
pub fn walked_hidden_folder(dir: &Path) -> bool {
    dir.file_name().and_then(|n| n.to_str()).is_some_and(|n| WALKED_HIDDEN.contains(&n))
}

/// A hidden file: `None` when it is read all the same (aider writes its chat history as
/// `.aider.chat.history.md`), else why it is not.
pub fn hidden_file(path: &Path) -> Option<Skip> {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(".aider.chat.history.md") => None,
        Some(".aider.input.history") => {
            Some(Skip::not_read("aider's input history: the prompts again (the chat history beside it is read)"))
        }
        _ => Some(Skip::hidden(false)),
    }
}

/// The regular files under `dir` (at any depth) that are not `members`, each skipped as `what`.
pub fn unread_under(dir: &Path, members: &[PathBuf], what: &str) -> Vec<(PathBuf, Skip)> {
    unread_under_by(dir, members, |_| what)
}

/// As [`unread_under`], each file with the reason `why` gives for it.
pub fn unread_under_by<'a>(dir: &Path, members: &[PathBuf], why: impl Fn(&Path) -> &'a str) -> Vec<(PathBuf, Skip)> {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .flatten()
        .filter(|e| e.file_type().is_file() && !members.iter().any(|m| m == e.path()))
        .map(|e| (e.path().to_path_buf(), Skip::not_read(why(e.path()))))
        .collect()
}

/// Why an AutoCodeRover task folder's files are not read.
pub const AUTOCODEROVER_TASK: &str = "part of an AutoCodeRover task folder (not read: its rounds are no other agent's run, \
     its verdict is in the run's final_report.json or eval results)";

/// An AutoCodeRover task folder (`<instance>_<date>/`: `meta.json` with `conversation_round_N.json`
/// or `tool_call_sequence.json`): its message lists would read as another agent's runs, and
/// `developer_patch.diff` is the gold patch, so nothing in it is read.
pub fn autocoderover_task(dir: &Path) -> bool {
    if !dir.join("meta.json").is_file() {
        return false;
    }
    dir.join("tool_call_sequence.json").is_file()
        || names_in(dir).iter().any(|n| n.starts_with("conversation_round_") && n.ends_with(".json"))
}

/// An event file's index: its digits without leading zeros, ordered as the number they write,
/// whatever its size (an index past 64 bits is still an event's, in its place).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Index<'a>(usize, &'a str);

impl<'a> Index<'a> {
    /// The index `digits` write (ASCII digits only: no sign, no space).
    pub fn of(digits: &'a str) -> Option<Index<'a>> {
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let d = digits.trim_start_matches('0');
        Some(Index(d.len(), d))
    }
}

/// An OpenHands V1 event file name: `event-<index, 5+ digits>-<uuid>.json`; its index.
pub fn v1_event_index(name: &str) -> Option<Index<'_>> {
    let rest = name.strip_prefix("event-")?.strip_suffix(".json")?;
    let (index, id) = rest.split_once('-')?;
    let hex_id = id.len() >= 8 && id.chars().all(|c| c.is_ascii_hexdigit() || c == '-');
    (index.len() >= 5 && hex_id).then(|| Index::of(index)).flatten()
}

/// An OpenHands V0 event file name (in an `events/` folder): `<id>.json`, the id in digits.
pub fn v0_event_index(name: &str) -> Option<Index<'_>> {
    Index::of(name.strip_suffix(".json")?)
}

/// Why a file among a conversation's events that is not one is not read.
pub const NOT_AN_EVENT: &str = "in an OpenHands conversation's events folder, not an event by its name \
     (the events beside it are read as one conversation): not read";

/// A folder of events read as one unit: the files read, in order, and the files beside them
/// that are not events (a README, `desktop.ini`, `+3.json`), skipped by name and never
/// splitting the conversation into a run per event.
#[derive(Debug, Default)]
pub struct Events {
    pub members: Vec<PathBuf>,
    pub strays: Vec<PathBuf>,
}

/// The events a folder holds (its non-hidden entries `names`, in the order of `index`), and its
/// other files. `None` when no file is an event.
fn events_in<'a>(
    dir: &Path,
    names: &'a [String],
    index: impl Fn(&'a str) -> Option<Index<'a>>,
    also: &[&str],
) -> Option<Events> {
    let mut events: Vec<(Index, &String)> = names.iter().filter_map(|n| Some((index(n)?, n))).collect();
    if events.is_empty() {
        return None;
    }
    events.sort();
    let strays = names
        .iter()
        .filter(|n| index(n).is_none() && !also.contains(&n.as_str()))
        .map(|n| dir.join(n))
        .filter(|p| !p.is_dir())
        .collect();
    Some(Events { members: events.into_iter().map(|(_, n)| dir.join(n)).collect(), strays })
}

/// The OpenHands events a folder holds, read as one unit.
#[derive(Debug)]
pub enum EventFolder {
    /// A V1 conversation: `base_state.json` (in the folder, or beside an `events/` folder), then
    /// the `event-NNNNN-<uuid>.json` files in the order of their index.
    V1(Events),
    /// A V0 file-store session's `events/` folder: the `<id>.json` files in the order of their ids.
    V0(Events),
}

/// The events of a folder (its non-hidden entries `names`), by the kind most of its event files
/// are (the other kind's files are strays). `None` when no file is an event.
pub fn event_folder(dir: &Path, names: &[String]) -> Option<EventFolder> {
    let v1 = events_in(dir, names, v1_event_index, &["base_state.json"]);
    let in_events = dir.file_name().is_some_and(|n| n == "events");
    let v0 = events_in(dir, names, v0_event_index, &[]).filter(|_| in_events);
    let count = |e: &Option<Events>| e.as_ref().map_or(0, |e| e.members.len());
    if count(&v0) > count(&v1) {
        return v0.map(EventFolder::V0);
    }
    let mut found = v1?;
    let beside = dir.parent().map(|p| p.join("base_state.json")).filter(|_| in_events);
    if names.iter().any(|n| n == "base_state.json") {
        found.members.insert(0, dir.join("base_state.json"));
    } else if let Some(b) = beside.filter(|b| b.is_file()) {
        found.members.insert(0, b);
    }
    Some(EventFolder::V1(found))
}

/// The non-hidden file names directly in a folder.
fn names_in(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| e.file_name().to_str().map(str::to_string))
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default()
}

/// What a folder holds beside the units under it, for the OpenHands layouts (the Terminal-Bench
/// run folder and the Agentless stages add theirs: `terminal_bench::run_folder`,
/// `agentless::superseded`).
pub fn beside(dir: &Path) -> Beside {
    let mut b = Beside::default();
    let events = dir.join("events");
    let event_names = if events.is_dir() { names_in(&events) } else { Vec::new() };
    // An OpenHands V1 conversation: its state is read with the events.
    let found = event_folder(&events, &event_names);
    if matches!(found, Some(EventFolder::V1(_))) && dir.join("base_state.json").is_file() {
        b.members.push(dir.join("base_state.json"));
    }
    // An OpenHands V0 file-store session: the cache pages copy the events; the state is a pickle.
    if matches!(found, Some(EventFolder::V0(_))) {
        let cache = dir.join("event_cache");
        let what = "an OpenHands event cache page: copies of events/<id>.json, which are read";
        b.passed.extend(unread_under(&cache, &[], what).into_iter().filter(|(p, _)| !is_hidden(p)));
        for pickle in ["agent_state.pkl", "conversation_stats.pkl"] {
            let p = dir.join(pickle);
            if p.is_file() {
                b.passed.push((p, Skip::not_read("an OpenHands session's state, a pickled Python object (not read)")));
            }
        }
    }
    b
}

fn is_hidden(p: &Path) -> bool {
    p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_event_names_give_their_index() {
        assert_eq!(v1_event_index("event-00012-0881f83f-b543-43f3-9baa-4c9e190a1167.json"), Index::of("12"));
        assert_eq!(v1_event_index("event-123456-abcdef01.json"), Index::of("123456"));
        for other in ["event-0012-0881f83f.json", "event-00012-xyz.json", "12.json", "event-00012-0881f83f.jsonl"] {
            assert_eq!(v1_event_index(other), None, "{other}");
        }
    }
}
