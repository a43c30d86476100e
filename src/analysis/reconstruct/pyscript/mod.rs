//! Python edit scripts simulated: what `python - <<'PY' ... PY`, `python3 -c '...'` and a
//! script written by a here-document and then run (`python apply_fix.py`) did to the files
//! they wrote, read from the script's syntax tree (tree-sitter's Python grammar), not run.
//!
//! The idioms of shell-only agents are read ([`eval`]): a file's text read (`open(p).read()`,
//! `Path(p).read_text()`, `readlines()`), changed by literal `str.replace(old, new[, count])` and
//! `re.sub` (or a compiled pattern's `sub`) with patterns the `regex` crate compiles, lines
//! inserted or appended in a list of the file's lines, and written back (`write`,
//! `writelines`, `write_text`); whole-file writes of a literal; `in` tests, `if`/`elif`/`else`
//! on what is known, `for` loops over literal lists and dicts, f-strings of known names,
//! functions called from the script (`main()`), several files in one script. The operations
//! run on the file's known lines ([`text`]): a literal found among the lines the run showed is
//! replaced there (the file's other lines assumed not to hold it: the edit is partial); one
//! absent from a file the run knows whole changed nothing; one absent from the lines shown of
//! a file with others never shown leaves the file unknown, as does anything not read here.
//! A script that may write in a way not read here (a file name not known, `os.system`, a loop
//! over what is not known that writes) is not simulated at all: [`simulate`] says `None`, and
//! the files it writes ([`super::script::python_writes`]) wait for a view to say what changed.

mod apply;
mod eval;
pub mod literal;
pub mod text;

pub use text::Doc;

use super::known::Known;
use eval::Eval;
pub use eval::Written;
use tree_sitter::Tree;

/// What a script did to each file it wrote, in the order first written (paths as the script
/// names them): the file's text after it, the literals it replaced in a text not known, or
/// nothing known. `None` when the script is not read as edits. `read`: what the run knows of a
/// file, by the script's name.
/// `tree`: the script's syntax tree ([`Trees::tree`]).
pub fn simulate(code: &str, tree: &Tree, read: &dyn Fn(&str) -> Known) -> Option<Vec<(String, Written)>> {
    let mut ev = Eval::new(code.as_bytes(), read);
    ev.module(tree.root_node()).ok()?;
    Some(ev.written)
}

/// Scripts kept parsed at most.
const TREES: usize = 4;
/// The longest script kept parsed: a copy of it is kept to tell it again.
const TREE_BYTES: usize = 256 * 1024;

/// The syntax trees of the scripts a run ran last: an agent runs one script again and again
/// (`python reproduce.py` after each edit), and parsing is most of what reading one costs.
#[derive(Default)]
pub struct Trees(Vec<(Box<str>, Tree)>);

impl Trees {
    /// The syntax tree of `code`, parsed unless it was among the last scripts parsed.
    pub fn tree(&mut self, code: &str) -> Option<Tree> {
        if let Some(i) = self.0.iter().position(|(kept, _)| **kept == *code) {
            let kept = self.0.remove(i);
            let tree = kept.1.clone();
            self.0.push(kept);
            return Some(tree);
        }
        let tree = crate::analysis::symbols::parse_python(code)?;
        if code.len() <= TREE_BYTES {
            if self.0.len() == TREES {
                self.0.remove(0);
            }
            self.0.push((code.into(), tree.clone()));
        }
        Some(tree)
    }
}

#[cfg(test)]
mod tests;
