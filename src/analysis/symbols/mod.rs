//! Symbols of source text in seven languages (Python, Java, TypeScript, Go, C, C++, Rust), read
//! with tree-sitter: definitions (functions, methods, classes, structs, interfaces, traits,
//! enums, fields, constants, type aliases, modules, macros) with qualified names, signatures and
//! arity; references (calls with their argument counts, member accesses, imports and includes,
//! type uses, plain names, and words in comments and strings); and what a diff renamed, removed,
//! re-signed or added, with the definitions its changed lines sit in.
//!
//! Pure functions over text. The grammars are error-tolerant, so diff hunks, windows of a file
//! and single search-output lines parse too: what cannot be read is left out, never guessed.

mod defs;
mod diff;
mod lang;
mod model;
pub mod scopes;
mod text;
mod walk;

#[cfg(test)]
mod tests;

pub use diff::{Change, ChangeKind, FileChanges, changes};
pub use lang::Lang;
pub use model::{DefKind, Definition, MAX_PARSE, Params, RefKind, Reference, Symbols};
pub use text::{extract, extract_line, numbered_view, strip_view};

/// A Python source's syntax tree (the reconstruction reads edit scripts with it).
pub(crate) fn parse_python(text: &str) -> Option<tree_sitter::Tree> {
    lang::parse(Lang::Python, text)
}
