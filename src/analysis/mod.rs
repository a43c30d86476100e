//! Pure functions over trajectory text: edit verdicts and diffs, the reconstruction of shell
//! edits (with the one shell lexer, `reconstruct::command`), definitions read by tree-sitter,
//! output markers, actions in brief, comparisons of runs.
//! No IO, no SQL: the ingest adapters, the classifier and the views call these.

pub mod brief;
pub mod compare;
pub mod diff;
pub mod edit_blocks;
pub mod edits;
pub mod markers;
pub mod paths;
pub mod reconstruct;
pub mod snippet;
pub mod streams;
pub mod symbols;
pub mod syntax;
pub mod tool_edits;
