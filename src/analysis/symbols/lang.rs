//! The seven languages and their tree-sitter grammars; one parser per language per thread.

use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::HashMap;

/// A language whose symbols are read. JavaScript files are read with the TypeScript grammar (a
/// superset), `.jsx`/`.tsx` with its TSX variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Lang {
    Python,
    Java,
    TypeScript,
    Tsx,
    Go,
    C,
    Cpp,
    Rust,
}

impl Lang {
    /// The language of a file, by its extension. `.h` is read as C++ (a superset for what is
    /// read here: prototypes, structs, calls), so C and C++ headers both parse.
    pub fn of_path(path: &str) -> Option<Lang> {
        let name = path.rsplit('/').next().unwrap_or(path);
        let ext = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
        Some(match ext.as_str() {
            "py" | "pyi" => Lang::Python,
            "java" => Lang::Java,
            "ts" | "mts" | "cts" | "js" | "mjs" | "cjs" => Lang::TypeScript,
            "tsx" | "jsx" => Lang::Tsx,
            "go" => Lang::Go,
            "c" => Lang::C,
            "h" | "hpp" | "hh" | "hxx" | "cc" | "cpp" | "cxx" | "c++" | "ipp" | "tpp" => Lang::Cpp,
            "rs" => Lang::Rust,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Lang::Python => "python",
            Lang::Java => "java",
            Lang::TypeScript => "typescript",
            Lang::Tsx => "tsx",
            Lang::Go => "go",
            Lang::C => "c",
            Lang::Cpp => "cpp",
            Lang::Rust => "rust",
        }
    }

    /// How a qualified name joins its parts.
    pub fn separator(self) -> &'static str {
        match self {
            Lang::Cpp | Lang::Rust => "::",
            _ => ".",
        }
    }

    fn grammar(self) -> tree_sitter::Language {
        match self {
            Lang::Python => tree_sitter_python::LANGUAGE.into(),
            Lang::Java => tree_sitter_java::LANGUAGE.into(),
            Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
            Lang::Tsx => tree_sitter_typescript::LANGUAGE_TSX.into(),
            Lang::Go => tree_sitter_go::LANGUAGE.into(),
            Lang::C => tree_sitter_c::LANGUAGE.into(),
            Lang::Cpp => tree_sitter_cpp::LANGUAGE.into(),
            Lang::Rust => tree_sitter_rust::LANGUAGE.into(),
        }
    }
}

thread_local! {
    static PARSERS: RefCell<HashMap<Lang, tree_sitter::Parser>> = RefCell::new(HashMap::new());
}

/// Parse `text`; `None` only when the grammar cannot be loaded (an ABI mismatch of the crates).
pub(super) fn parse(lang: Lang, text: &str) -> Option<tree_sitter::Tree> {
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let parser = match parsers.entry(lang) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let mut p = tree_sitter::Parser::new();
                p.set_language(&lang.grammar()).ok()?;
                v.insert(p)
            }
        };
        parser.parse(text, None)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn languages_by_extension() {
        for (p, l) in [
            ("a/b.py", Some(Lang::Python)),
            ("X.java", Some(Lang::Java)),
            ("src/x.ts", Some(Lang::TypeScript)),
            ("src/x.js", Some(Lang::TypeScript)),
            ("src/x.tsx", Some(Lang::Tsx)),
            ("main.go", Some(Lang::Go)),
            ("lib/a.c", Some(Lang::C)),
            ("lib/a.h", Some(Lang::Cpp)),
            ("w.cpp", Some(Lang::Cpp)),
            ("src/lib.rs", Some(Lang::Rust)),
            ("README.md", None),
            ("Makefile", None),
        ] {
            assert_eq!(Lang::of_path(p), l, "{p}");
        }
    }

    #[test]
    fn every_grammar_loads() {
        for l in [Lang::Python, Lang::Java, Lang::TypeScript, Lang::Tsx, Lang::Go, Lang::C, Lang::Cpp, Lang::Rust] {
            assert!(parse(l, "x").is_some(), "{l:?}");
        }
    }
}
