//! Signals of propagation: definitions the agent's diff renamed, removed or re-signed (read with
//! tree-sitter in seven languages) that files it did not change still use, the gold patch's core
//! against its periphery, and failing tests that name unchanged files.

use super::compiler::{Diagnostic, Problem};
use super::edits::EditEvent;
use super::paths::{FileKind, is_build_copy, is_changelog, mentioned_files, names_file, repo_relative};
use super::views::{Shown, ViewKind};
use super::{FileTable, Periphery, PeripheryFile, Sighting, StaleIdentifier, TestMention};
use crate::analysis::edits::split_patch;
use crate::analysis::symbols::{self, Change, ChangeKind, DefKind, Lang, Params, RefKind, Symbols};
use crate::classify::input::RunInput;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Identifiers shorter than this, or in [`COMMON`], are too common to call stale.
const MIN_IDENT: usize = 4;
const COMMON: &[&str] = &[
    "main", "test", "self", "setup", "init", "run", "get", "set", "call", "args", "kwargs", "new", "from", "into",
    "default", "clone", "close", "open", "read", "write", "next", "size", "name", "value", "data", "string", "equals",
    "hashCode", "toString", "String", "error", "Error",
];
/// At most this many sightings are kept per identifier.
const MAX_SIGHTINGS: usize = 20;
/// At most this many definition changes are kept per file.
const MAX_CHANGES: usize = 40;

/// What the agent's diff did to one file's definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSymbols {
    pub path: String,
    pub lang: Lang,
    pub changes: Vec<Change>,
    /// The definitions its changed lines sit in (qualified).
    pub touched: Vec<String>,
}

/// The agent's diff: its submission, else its applied edits' diffs.
pub(super) fn agent_diff(run: &RunInput, edits: &[EditEvent]) -> String {
    match run.submission.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(s) => s.to_string(),
        None => edits
            .iter()
            .filter(|e| e.step.is_some() && !e.rejected())
            .filter_map(|e| e.diff.clone())
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Per file of a diff in one of the seven languages: the definitions it changed.
pub(super) fn file_symbols(diff: &str) -> Vec<FileSymbols> {
    let mut out: Vec<FileSymbols> = Vec::new();
    // Where each file is in `out`: one look-up per file's diff, however many files.
    let mut at: HashMap<String, usize> = HashMap::new();
    for f in split_patch(diff) {
        let Some(lang) = Lang::of_path(&f.path) else { continue };
        let path = repo_relative(&f.path, None);
        let c = symbols::changes(lang, &f.diff);
        let sep = lang.separator();
        let touched = c.touched.iter().map(|p| p.join(sep));
        match at.get(&path).and_then(|i| out.get_mut(*i)) {
            // Edits of one file come one diff at a time: gather them.
            Some(x) => {
                for ch in c.changes {
                    if x.changes.len() >= MAX_CHANGES {
                        break;
                    }
                    if !x.changes.iter().any(|y| y.qualified == ch.qualified && y.kind == ch.kind) {
                        x.changes.push(ch);
                    }
                }
                x.touched.extend(touched.filter(|t| !x.touched.contains(t)).collect::<Vec<_>>());
            }
            None => {
                let mut changes = c.changes;
                changes.truncate(MAX_CHANGES);
                at.insert(path.clone(), out.len());
                out.push(FileSymbols { path, lang, changes, touched: touched.collect() })
            }
        }
    }
    out
}

fn interesting(c: &Change) -> bool {
    let name = c.old_name();
    c.kind != ChangeKind::Added
        && name.len() >= MIN_IDENT
        && !COMMON.contains(&name)
        && !name.starts_with("__")
        && !(c.kind == ChangeKind::Resigned && c.old_params.is_none())
}

/// How `text` (what a step showed of file `path`) still uses what `c` changed: `None` when it
/// does not. `own`: the symbols of that text in its language (`None`: a doc, config or file in
/// another language, read word by word).
fn stale_use(c: &Change, own: Option<&Symbols>, text: &str) -> Option<String> {
    let old = c.old_name();
    let Some(s) = own else {
        let plain = c.kind != ChangeKind::Resigned && contains_word(text, old);
        return plain.then(|| "mention".to_string());
    };
    if let Some(o) = stale_override(c, s) {
        return Some(o);
    }
    match c.kind {
        ChangeKind::Removed | ChangeKind::Renamed => {
            let defines_own = s.defines_top_level(old);
            let used = s.uses(old).find(|r| {
                if r.kind == RefKind::Mention {
                    return false;
                }
                if c.def.member() { r.qualified || r.kind == RefKind::Import } else { r.qualified || !defines_own }
            });
            match used {
                Some(r) => Some(r.kind.name().to_string()),
                None => s.uses(old).any(|r| r.kind == RefKind::Mention).then(|| "mention".to_string()),
            }
        }
        ChangeKind::Resigned => {
            let (old_p, new_p) = (c.old_params.as_ref()?, c.new_params.as_ref()?);
            let caller = s.uses(old).find(|r| {
                r.kind == RefKind::Call
                    && (!c.def.member() || r.qualified)
                    && r.args.is_some_and(|n| old_p.accepts(n) && !new_p.accepts(n))
            });
            if let Some(r) = caller {
                return Some(format!("call with {} arguments", r.args.unwrap_or(0)));
            }
            let declaration = s.definitions.iter().find(|d| {
                d.name == old
                    && d.prototype
                    && d.params.as_ref().is_some_and(|p| p.list == old_p.list && p.list != new_p.list)
            });
            declaration.map(|d| format!("declaration {}", d.signature))
        }
        ChangeKind::Added => None,
    }
}

/// Definitions the agent's diff removed, renamed or re-signed that files it did not change
/// still use, as far as the run showed those files (opened files, search output lines and
/// compiler diagnostics): uses of an old name, calls with the old number of arguments,
/// prototypes with the old parameters, overrides and implementations of a changed member.
pub(super) fn stale_identifiers(
    files: &[FileSymbols],
    shown: &[Shown<'_>],
    diagnostics: &[Diagnostic],
    edits: &[EditEvent],
    patch_files: &[String],
) -> Vec<StaleIdentifier> {
    let changed: Vec<String> = if patch_files.is_empty() {
        edits.iter().filter(|e| e.step.is_some() && !e.rejected()).map(|e| e.path.clone()).collect()
    } else {
        patch_files.to_vec()
    };
    let unchanged = |p: &str| !changed.iter().any(|c| c == p) && !is_build_copy(p) && !p.starts_with('/');
    let mut out: Vec<(StaleIdentifier, &Change)> = files
        .iter()
        .flat_map(|f| f.changes.iter().filter(|c| interesting(c)).map(move |c| (f, c)))
        .map(|(f, c)| {
            (
                StaleIdentifier {
                    identifier: c.old_name().to_string(),
                    defined_in: f.path.clone(),
                    renamed_to: c.renamed_from.as_ref().map(|_| c.name.clone()),
                    change: c.kind,
                    qualified: c.qualified.clone(),
                    old_signature: c.old_signature.clone(),
                    new_signature: c.new_signature.clone(),
                    seen_in: Vec::new(),
                },
                c,
            )
        })
        .collect();
    if out.is_empty() {
        return Vec::new();
    }
    let mut cache: HashMap<(usize, usize), Symbols> = HashMap::new();
    for s in shown {
        let opened: Vec<&str> = s.views.iter().filter(|v| v.kind == ViewKind::Open).map(|v| v.path.as_str()).collect();
        // (path, text, whole view or one line)
        let mut texts: Vec<(&str, &str, bool)> = Vec::new();
        if let [only] = opened.as_slice() {
            texts.push((only, s.observation, true));
        }
        texts.extend(s.hits.iter().map(|(p, t)| (p.as_str(), *t, false)));
        for (i, (path, text, whole)) in texts.into_iter().enumerate() {
            if !unchanged(path) || !out.iter().any(|(st, _)| path != st.defined_in && text.contains(&st.identifier)) {
                continue;
            }
            let lang = Lang::of_path(path);
            let own = lang.map(|l| {
                cache.entry((s.step, i)).or_insert_with(|| {
                    if whole { symbols::extract(l, &symbols::strip_view(text)) } else { symbols::extract_line(l, text) }
                })
            });
            let own: Option<&Symbols> = own.map(|x| &*x);
            for (st, c) in out.iter_mut() {
                if path == st.defined_in || !text.contains(&st.identifier) {
                    continue;
                }
                if let Some(how) = stale_use(c, own, text) {
                    sight(st, path, s.step, how);
                }
            }
        }
    }
    // What compilers said of files the agent did not change, after it changed the definition.
    let changed_at = |file: &str| edits.iter().filter(|e| e.path == file && !e.rejected()).filter_map(|e| e.step).min();
    for d in diagnostics.iter().filter(|d| unchanged(&d.path)) {
        let after = |st: &StaleIdentifier| changed_at(&st.defined_in).is_none_or(|at| d.step > at);
        let fits: Vec<usize> = out
            .iter()
            .enumerate()
            .filter(|(_, (st, c))| d.path != st.defined_in && after(st) && compiled_use(c, &d.problem))
            .map(|(i, _)| i)
            .collect();
        // A count of arguments with no callee named fits a re-signature only when it fits one.
        let unnamed = matches!(d.problem, Problem::Arity { name: None, .. });
        if unnamed && fits.len() != 1 {
            continue;
        }
        for i in fits {
            let how = match &d.problem {
                Problem::Unresolved { .. } => format!("unresolved ({} at line {})", d.code, d.line),
                Problem::Arity { got, .. } => format!("call with {got} arguments ({} at line {})", d.code, d.line),
                Problem::Override { owner, .. } => {
                    format!("override of {} ({} at line {})", owner.as_deref().unwrap_or("a supertype"), d.code, d.line)
                }
            };
            sight(&mut out[i].0, &d.path, d.step, how);
        }
    }
    out.into_iter().map(|(st, _)| st).filter(|s| !s.seen_in.is_empty()).collect()
}

/// Record that `path` still uses `st`: one sighting per file, the first, told by its strongest use.
fn sight(st: &mut StaleIdentifier, path: &str, step: usize, how: String) {
    let full = st.seen_in.len() >= MAX_SIGHTINGS;
    match st.seen_in.iter_mut().find(|x| x.path == path) {
        Some(x) if strength(&how) > strength(&x.how) => x.how = how,
        Some(_) => {}
        None if !full => st.seen_in.push(Sighting { path: path.to_string(), step, how }),
        None => {}
    }
}

/// The type a member belongs to (`Shape` of `geo.Shape.area`, `Widget` of `ns::Widget::resize`).
fn owner(qualified: &str) -> Option<&str> {
    let mut parts = qualified.rsplit(['.', ':']).filter(|p| !p.is_empty());
    parts.next()?;
    parts.next()
}

/// A type in `s` that still overrides or implements member `c` of the changed supertype under its
/// old name (a rename) or with its old number of parameters (a re-signature): a method of that
/// name in another type of a text that names the supertype (`implements Shape`, `extends Shape`).
fn stale_override(c: &Change, s: &Symbols) -> Option<String> {
    if c.def != DefKind::Method || !matches!(c.kind, ChangeKind::Renamed | ChangeKind::Resigned) {
        return None;
    }
    let sup = owner(&c.qualified)?;
    if !s.uses(sup).any(|r| r.kind != RefKind::Mention) {
        return None;
    }
    let arity = |p: &Option<Params>| p.as_ref().map(|p| p.list.len());
    let d = s.definitions.iter().find(|d| {
        let of_other = owner(&d.qualified).is_some_and(|o| o != sup);
        let stale = match c.kind {
            ChangeKind::Resigned => {
                arity(&d.params) == arity(&c.old_params) && arity(&c.old_params) != arity(&c.new_params)
            }
            _ => true,
        };
        d.kind == DefKind::Method && d.name == c.old_name() && of_other && stale
    })?;
    Some(format!("override in {} of {sup}", owner(&d.qualified).unwrap_or("?")))
}

/// Whether a compiler's complaint is about what `c` changed: the old name no longer resolves; a
/// call passes a number of arguments the old parameters took and the new do not; a type's
/// member no longer implements what the changed supertype declares.
fn compiled_use(c: &Change, p: &Problem) -> bool {
    match (p, c.kind) {
        (Problem::Unresolved { name }, ChangeKind::Removed | ChangeKind::Renamed) => name == c.old_name(),
        (Problem::Arity { name, got, expected }, ChangeKind::Resigned) => {
            let (Some(old_p), Some(new_p)) = (&c.old_params, &c.new_params) else { return false };
            let fits = old_p.accepts(*got) && !new_p.accepts(*got);
            let named = name.as_deref().is_none_or(|n| n == c.old_name());
            let counted = expected.is_none_or(|(min, max)| min == new_p.min && max == new_p.max);
            fits && named && counted
        }
        (Problem::Override { name, owner: o }, ChangeKind::Renamed | ChangeKind::Resigned) => {
            c.def.member() && name == &c.name && o.as_deref().is_none_or(|o| owner(&c.qualified) == Some(o))
        }
        _ => false,
    }
}

/// How sure a use is: a call or declaration beats an import, which beats a bare name or a word.
fn strength(how: &str) -> u8 {
    match how.split_whitespace().next().unwrap_or("") {
        "call" | "declaration" | "unresolved" | "override" => 5,
        "import" => 4,
        "type" | "member" => 3,
        "name" => 2,
        _ => 1,
    }
}

/// Whether `ident` occurs in `text` with no identifier character on either side.
pub(super) fn contains_word(text: &str, ident: &str) -> bool {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    text.match_indices(ident).any(|(i, _)| {
        let before = text[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = text[i + ident.len()..].chars().next().is_none_or(|c| !is_ident(c));
        before && after
    })
}

/// Names whose definitions a gold file's diff changes (added, removed, renamed or re-signed),
/// dunders aside.
fn changed_names(path: &str, diff: &str) -> Vec<String> {
    let Some(lang) = Lang::of_path(path) else { return Vec::new() };
    let mut names: Vec<String> = symbols::changes(lang, diff)
        .changes
        .into_iter()
        .flat_map(|c| {
            let old = c.renamed_from.clone();
            std::iter::once(c.name).chain(old)
        })
        .filter(|n| !n.starts_with("__"))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// Split the gold patch into core and periphery, and see which the agent edited. Core: source
/// files that change a definition another gold file uses (the others follow it); failing such
/// cross-references, source files that change any definition; failing that, the only source
/// file, or headers that change definitions (header-only C++). Periphery: the other files whose
/// change names a redefined name (call sites, tests, docs, headers, build and config files);
/// changelogs and release notes are neither.
pub(super) fn periphery(gold: &str, table: &FileTable, patch_files: &[String]) -> Periphery {
    let files = split_patch(gold);
    let names: Vec<(String, Vec<String>)> =
        files.iter().map(|f| (f.path.clone(), changed_names(&f.path, &f.diff))).collect();
    let names_of = |p: &str| names.iter().find(|(x, _)| x == p).map(|(_, n)| n.as_slice()).unwrap_or(&[]);
    let of_kind = |k: FileKind| files.iter().filter(move |f| FileKind::of(&f.path) == k);
    let used_elsewhere = |f: &crate::analysis::edits::FilePatch| {
        names_of(&f.path)
            .iter()
            .any(|name| files.iter().any(|other| other.path != f.path && contains_word(&other.diff, name)))
    };
    let mut core: Vec<String> =
        of_kind(FileKind::Source).filter(|f| used_elsewhere(f)).map(|f| f.path.clone()).collect();
    if core.is_empty() {
        core = of_kind(FileKind::Source).filter(|f| !names_of(&f.path).is_empty()).map(|f| f.path.clone()).collect();
    }
    if core.is_empty() && of_kind(FileKind::Source).count() == 1 {
        core = of_kind(FileKind::Source).map(|f| f.path.clone()).collect();
    }
    if core.is_empty() {
        core = of_kind(FileKind::Header).filter(|f| !names_of(&f.path).is_empty()).map(|f| f.path.clone()).collect();
    }
    let edited = |p: &str| patch_files.iter().any(|x| x == p) || table.find(p).is_some_and(|f| !f.edited.is_empty());
    let core_edited = core.iter().filter(|p| edited(p)).cloned().collect();
    // The periphery follows the core: files whose gold change names what the core redefined.
    // Release notes and changelogs record a change; they do not follow it.
    let redefined: Vec<&String> = core.iter().flat_map(|c| names_of(c)).collect();
    // The central change: the core's redefined names that the periphery follows.
    let mut central: Vec<String> = redefined
        .iter()
        .filter(|n| files.iter().any(|f| !core.contains(&f.path) && contains_word(&f.diff, n)))
        .map(|n| n.to_string())
        .collect();
    central.sort_unstable();
    central.dedup();
    let periphery = files
        .iter()
        .filter(|f| !core.contains(&f.path) && !is_changelog(&f.path))
        .filter(|f| redefined.iter().any(|n| contains_word(&f.diff, n)))
        .map(|f| PeripheryFile {
            path: f.path.clone(),
            kind: FileKind::of(&f.path),
            edited: edited(&f.path),
            first_seen: table.find(&f.path).and_then(|a| a.first_seen),
        })
        .collect();
    Periphery { core, core_edited, periphery, central, central_edited: Vec::new() }
}

/// The gold's central definitions that the agent's own diff changed too: renamed, re-signed,
/// removed or added under the same name, or changed inside (in behaviour).
pub(super) fn central_edited(p: &Periphery, agent: &[FileSymbols]) -> Vec<String> {
    p.central
        .iter()
        .filter(|name| {
            agent.iter().filter(|f| p.core.iter().any(|c| c == &f.path)).any(|f| {
                let last = |q: &str| q.rsplit(f.lang.separator()).next().unwrap_or(q).to_string();
                f.changes.iter().any(|c| &c.name == *name || c.renamed_from.as_ref() == Some(*name))
                    || f.touched.iter().any(|t| &last(t) == *name)
            })
        })
        .cloned()
        .collect()
}

/// Files named by failing tests' messages that are not in the agent's patch.
pub(super) fn failing_test_files(run: &RunInput, patch_files: &[String]) -> Vec<TestMention> {
    let mut out: Vec<TestMention> = Vec::new();
    let Some(outcome) = &run.outcome else { return out };
    for t in outcome.tests.iter().filter(|t| !t.passed) {
        for named in t.message.as_deref().map(mentioned_files).unwrap_or_default() {
            let changed = patch_files.iter().any(|p| names_file(p, &named));
            let path = named.trim_start_matches("../").trim_start_matches("./").to_string();
            if !changed && !out.iter().any(|m| m.path == path) {
                out.push(TestMention { test: t.name.clone(), path });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(path: &str, hunks: &str) -> Vec<Change> {
        let d = format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}");
        file_symbols(&d).into_iter().flat_map(|f| f.changes).collect()
    }

    #[test]
    fn renames_and_removals_not_re_signatures_with_the_same_arity() {
        let c = one(
            "src/requests/utils.py",
            "@@ -1,3 +1,3 @@\n-def super_len(o):\n+def complex_len(o):\n-def keep(a):\n+def keep(a, b=None):\n-def run(x):\n",
        );
        let kept: Vec<(&str, ChangeKind)> =
            c.iter().filter(|c| interesting(c)).map(|c| (c.old_name(), c.kind)).collect();
        assert_eq!(kept, [("super_len", ChangeKind::Renamed), ("keep", ChangeKind::Resigned)], "`run` is too common");
    }

    #[test]
    fn methods_need_receivers_other_classes_methods_are_not_uses() {
        let c = one(
            "p/core.py",
            "@@ -10,3 +10,3 @@ class Circle:\n-    def area_of(self):\n+    def area(self):\n         return 1\n",
        );
        let c = &c[0];
        let s = |t: &str| symbols::extract(Lang::Python, t);
        let other = "class Square:\n    def area_of(self):\n        return 1\n";
        assert_eq!(stale_use(c, Some(&s(other)), other), None);
        let call = "print(shape.area_of())\n";
        assert_eq!(stale_use(c, Some(&s(call)), call).as_deref(), Some("call"));
        let bare = "area_of = 3\nprint(area_of)\n";
        assert_eq!(stale_use(c, Some(&s(bare)), bare), None, "a bare name is not the method");
    }

    #[test]
    fn a_re_signed_function_flags_callers_with_the_old_arity_and_old_prototypes() {
        let c = one(
            "src/hdr.c",
            "@@ -5,3 +5,3 @@\n-int parse_header(const char *buf, size_t len) {\n+int parse_header(const char *buf, size_t len, int flags) {\n     return 0;\n",
        );
        let c = &c[0];
        assert_eq!(c.kind, ChangeKind::Resigned);
        let caller = "    n = parse_header(buf, len);";
        let sym = symbols::extract_line(Lang::C, caller);
        assert_eq!(stale_use(c, Some(&sym), caller).as_deref(), Some("call with 2 arguments"));
        let updated = "    n = parse_header(buf, len, 0);";
        assert_eq!(stale_use(c, Some(&symbols::extract_line(Lang::C, updated)), updated), None);
        let header = "int parse_header(const char *data, size_t n);\n";
        let hs = symbols::extract(Lang::Cpp, header);
        assert_eq!(
            stale_use(c, Some(&hs), header).as_deref(),
            Some("declaration int parse_header(const char *data, size_t n)")
        );
    }

    fn diag(step: usize, path: &str, problem: Problem) -> Diagnostic {
        Diagnostic { step, path: path.into(), line: 12, code: "TS2554".into(), problem }
    }

    fn edited_at(step: i64, path: &str) -> EditEvent {
        let row = super::super::tests::edit(Some(step), path, "str_replace", "applied", &[], None);
        EditEvent::from_row(&row, path.to_string())
    }

    const FORMAT_TS: &str = "diff --git a/src/format.ts b/src/format.ts\n--- a/src/format.ts\n+++ b/src/format.ts\n@@ -1,3 +1,3 @@\n-export function formatPrice(amount: number, currency: string): string {\n+export function formatPrice(amount: number, currency: string, locale: string): string {\n   return amount.toFixed(2);\n";

    #[test]
    fn tsc_counts_of_arguments_flag_the_one_re_signature_they_fit_after_the_change() {
        let files = file_symbols(FORMAT_TS);
        let got2 = Problem::Arity { name: None, got: 2, expected: Some((3, Some(3))) };
        let patch = ["src/format.ts".to_string(), "src/cart.ts".to_string()];
        let edits = [edited_at(2, "src/format.ts")];
        let st = stale_identifiers(&files, &[], &[diag(5, "src/invoice.ts", got2.clone())], &edits, &patch);
        assert_eq!(st.len(), 1);
        assert_eq!(st[0].seen_in[0].path, "src/invoice.ts");
        assert_eq!(st[0].seen_in[0].how, "call with 2 arguments (TS2554 at line 12)");
        // Before the change, the same complaint is about something else; a file the agent
        // changed is not stale; a count the new parameters expect otherwise is not this change.
        assert!(stale_identifiers(&files, &[], &[diag(1, "src/invoice.ts", got2.clone())], &edits, &patch).is_empty());
        assert!(stale_identifiers(&files, &[], &[diag(5, "src/cart.ts", got2)], &edits, &patch).is_empty());
        let other = Problem::Arity { name: None, got: 2, expected: Some((1, Some(1))) };
        assert!(stale_identifiers(&files, &[], &[diag(5, "src/invoice.ts", other)], &edits, &patch).is_empty());
    }

    #[test]
    fn javac_unresolved_old_name_of_a_renamed_method() {
        let files = file_symbols(
            "diff --git a/src/main/java/io/jsonkit/JsonReader.java b/src/main/java/io/jsonkit/JsonReader.java\n--- a/src/main/java/io/jsonkit/JsonReader.java\n+++ b/src/main/java/io/jsonkit/JsonReader.java\n@@ -10,7 +10,7 @@ public final class JsonReader {\n     }\n \n-    public <T> T readObjectStrict(Class<T> type) {\n+    public <T> T readStrict(Class<T> type) {\n         Object value = lexer.nextValue();\n",
        );
        let loader = "src/main/java/io/jsonkit/Loader.java";
        let d = |name: &str| Diagnostic {
            step: 4,
            path: loader.into(),
            line: 21,
            code: "javac".into(),
            problem: Problem::Unresolved { name: name.into() },
        };
        let patch = ["src/main/java/io/jsonkit/JsonReader.java".to_string()];
        let st = stale_identifiers(&files, &[], &[d("readObjectStrict")], &[], &patch);
        assert_eq!(st[0].identifier, "readObjectStrict");
        assert_eq!(st[0].seen_in[0].how, "unresolved (javac at line 21)");
        assert!(stale_identifiers(&files, &[], &[d("readStrict")], &[], &patch).is_empty());
    }

    #[test]
    fn implementations_of_a_renamed_interface_method() {
        let c = one(
            "src/main/java/geo/Shape.java",
            "@@ -3,4 +3,4 @@ package geo;\n public interface Shape {\n-    double area();\n+    double surface();\n     String label();\n }\n",
        );
        let c = c.iter().find(|c| c.kind == ChangeKind::Renamed).expect("the rename");
        let s = |t: &str| symbols::extract(Lang::Java, t);
        let circle = "package geo;\n\npublic final class Circle implements Shape {\n    private final double r;\n\n    @Override\n    public double area() {\n        return Math.PI * r * r;\n    }\n}\n";
        assert_eq!(stale_use(c, Some(&s(circle)), circle).as_deref(), Some("override in Circle of Shape"));
        let done = circle.replace("area()", "surface()");
        assert_eq!(stale_use(c, Some(&s(&done)), &done), None);
        let unrelated =
            "package geo;\n\npublic final class Room {\n    public double area() {\n        return 1;\n    }\n}\n";
        assert_eq!(
            stale_use(c, Some(&s(unrelated)), unrelated),
            None,
            "a method of a type that does not implement Shape"
        );
        let javac = Problem::Override { name: "surface".into(), owner: Some("Shape".into()) };
        assert!(compiled_use(c, &javac));
        assert!(!compiled_use(c, &Problem::Override { name: "surface".into(), owner: Some("Solid".into()) }));
    }

    #[test]
    fn word_bounded() {
        assert!(contains_word("from .utils import super_len, x", "super_len"));
        assert!(!contains_word("super_length = 3", "super_len"));
        assert!(!contains_word("my_super_len()", "super_len"));
    }
}
