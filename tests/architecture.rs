//! The layer rule of docs/ARCHITECTURE.md, kept by the build: every path a source file names
//! (`use crate::...`, `crate::a::b` in code, `super::...`, and `trajan::...` in the binary) is
//! read with `syn`, resolved to the module it reaches, and checked against one table of the
//! layers each layer may use. A wrong-way import fails this test, and so does an import circle
//! between modules (a module may use its ancestors, which declare it, but no two modules may
//! reach each other through their imports).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The layers, lowest first, and the layers each may use (besides itself). A module belongs to
/// the layer of the longest prefix listed in `LAYER_OF`.
const LAYERS: &[(&str, &[&str])] = &[
    ("core", &[]),
    ("store", &["core"]),
    ("ingest", &["core", "store"]),
    ("classify", &["core", "store"]),
    ("review", &["core", "store"]),
    ("tui", &["core", "store", "review"]),
    ("testkit", &["core"]),
    ("bin", &["core", "store", "ingest", "classify", "review", "tui", "testkit"]),
];

/// Module path prefix → layer. The library's root modules, then the binary (`cli`, `main`).
const LAYER_OF: &[(&str, &str)] = &[
    ("model", "core"),
    ("error", "core"),
    ("sanitize", "core"),
    ("analysis", "core"),
    ("atif", "core"),
    ("agreement", "core"),
    ("label", "core"),
    ("taxonomy", "core"),
    ("files", "core"),
    ("config", "core"),
    ("signals", "core"),
    ("store", "store"),
    ("ingest", "ingest"),
    ("classify", "classify"),
    ("review", "review"),
    ("tui", "tui"),
    ("testkit", "testkit"),
    ("cli", "bin"),
    ("main", "bin"),
];

fn layer_of(module: &[String]) -> Option<&'static str> {
    let first = module.first()?;
    LAYER_OF.iter().find(|(prefix, _)| prefix == first).map(|(_, layer)| *layer)
}

fn may_use(from: &str, to: &str) -> bool {
    from == to || LAYERS.iter().any(|(layer, uses)| *layer == from && uses.contains(&to))
}

/// A source file: its module path (`["tui", "app", "run"]`), whether it is part of the binary,
/// and whether it is test code (a `tests.rs`, a `tests/` folder or `snapshots.rs`).
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    binary: bool,
}

fn source_files() -> Vec<SourceFile> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut out = Vec::new();
    for entry in walkdir::WalkDir::new(&src).sort_by_file_name() {
        let entry = entry.unwrap_or_else(|e| panic!("{e}"));
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = path.strip_prefix(&src).unwrap_or(path);
        let mut module: Vec<String> =
            rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
        if module.last().is_some_and(|m| m == "mod" || m == "lib") {
            module.pop();
        }
        let binary = module.first().is_some_and(|m| m == "cli" || m == "main");
        out.push(SourceFile { path: path.to_path_buf(), module, binary });
    }
    out
}

/// Test code may use what it tests from any layer below and is no part of an import circle.
fn is_test(module: &[String]) -> bool {
    module.iter().any(|m| m == "tests" || m == "snapshots" || m.ends_with("_tests"))
}

/// Every module path a file's code names, resolved to absolute module paths (as far as they
/// name modules: the last segments may be items, which the checks ignore by prefix matching).
struct Paths<'a> {
    file: &'a SourceFile,
    found: BTreeSet<Vec<String>>,
    /// Nested inline `mod x { ... }`: their names are added to `self`.
    inline: Vec<String>,
    /// Depth of `#[cfg(test)]` items being visited.
    in_test: usize,
}

impl Paths<'_> {
    fn here(&self) -> Vec<String> {
        let mut m = self.file.module.clone();
        m.extend(self.inline.iter().cloned());
        m
    }

    /// An absolute module path for `segments`, or `None` when they name no module of this crate.
    fn resolve(&self, segments: &[String]) -> Option<Vec<String>> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "crate" if !self.file.binary => Some(rest.to_vec()),
            "trajan" if self.file.binary => Some(rest.to_vec()),
            "crate" => Some(rest.to_vec()),
            "self" => Some(self.here().into_iter().chain(rest.iter().cloned()).collect()),
            "super" => {
                let mut base = self.here();
                let mut rest = segments;
                while let Some(("super", tail)) = rest.split_first().map(|(h, t)| (h.as_str(), t)) {
                    base.pop()?;
                    rest = tail;
                }
                Some(base.into_iter().chain(rest.iter().cloned()).collect())
            }
            _ => None,
        }
    }

    fn add(&mut self, segments: Vec<String>) {
        if self.in_test > 0 {
            return;
        }
        if let Some(path) = self.resolve(&segments).filter(|p| !p.is_empty()) {
            self.found.insert(path);
        }
    }

    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let mut full = prefix.clone();
                if n.ident != "self" {
                    full.push(n.ident.to_string());
                }
                self.add(full);
            }
            syn::UseTree::Rename(r) => {
                let mut full = prefix.clone();
                full.push(r.ident.to_string());
                self.add(full);
            }
            syn::UseTree::Glob(_) => self.add(prefix.clone()),
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }
}

fn is_cfg_test(attrs: &[syn::Attribute]) -> bool {
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| m.path().is_ident("test")))
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        if is_cfg_test(&u.attrs) {
            return;
        }
        self.use_tree(&mut Vec::new(), &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        if segments.len() > 1 {
            self.add(segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        let test = is_cfg_test(&m.attrs) || m.ident == "tests";
        self.in_test += usize::from(test);
        if m.content.is_some() {
            self.inline.push(m.ident.to_string());
            syn::visit::visit_item_mod(self, m);
            self.inline.pop();
        }
        self.in_test -= usize::from(test);
    }

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        let test = is_cfg_test(&f.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_fn(self, f);
        self.in_test -= usize::from(test);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        let test = is_cfg_test(&i.attrs);
        self.in_test += usize::from(test);
        syn::visit::visit_item_impl(self, i);
        self.in_test -= usize::from(test);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        // Paths inside macro calls (`format!`, `matches!`, `vec!`): their tokens, as text.
        let tokens = m.tokens.to_string().replace(" :: ", "::");
        for word in tokens.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')) {
            if word.contains("::")
                && (word.starts_with("crate::") || word.starts_with("super::") || word.starts_with("trajan::"))
            {
                let segments: Vec<String> =
                    word.split("::").map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
                self.add(segments);
            }
        }
        syn::visit::visit_macro(self, m);
    }
}

/// Module → the modules of this crate its code names (file-module granularity).
/// A module path, `["tui", "app", "run"]`.
type Module = Vec<String>;

fn graph() -> (BTreeMap<Module, BTreeSet<Module>>, BTreeSet<Module>) {
    let files = source_files();
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    let mut edges = BTreeMap::new();
    for file in &files {
        let text = std::fs::read_to_string(&file.path).unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
        let ast = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.path.display()));
        let mut paths = Paths { file, found: BTreeSet::new(), inline: Vec::new(), in_test: 0 };
        paths.visit_file(&ast);
        // The longest known module each path starts with (the rest names items).
        let targets: BTreeSet<Vec<String>> = paths
            .found
            .iter()
            .filter_map(|p| (1..=p.len()).rev().map(|n| p[..n].to_vec()).find(|m| modules.contains(m)))
            .filter(|m| m != &file.module)
            .collect();
        edges.insert(file.module.clone(), targets);
    }
    (edges, modules)
}

#[test]
fn no_layer_uses_a_layer_above_it() {
    let (edges, _) = graph();
    let mut wrong = Vec::new();
    for (from, targets) in &edges {
        // The crate root only declares the modules.
        if is_test(from) || from.is_empty() {
            continue;
        }
        let Some(from_layer) = layer_of(from) else {
            wrong.push(format!("{} belongs to no layer: add it to LAYER_OF", from.join("::")));
            continue;
        };
        for to in targets {
            let Some(to_layer) = layer_of(to) else { continue };
            if !may_use(from_layer, to_layer) {
                wrong.push(format!("{} ({from_layer}) uses {} ({to_layer})", from.join("::"), to.join("::")));
            }
        }
    }
    assert!(wrong.is_empty(), "wrong-way imports (docs/ARCHITECTURE.md, \"Layers\"):\n  {}", wrong.join("\n  "));
}

#[test]
fn no_import_circles_between_modules() {
    let (edges, _) = graph();
    // A module may use its ancestors (they declare it); edges into its own descendants are its
    // declarations and re-exports, not uses.
    let uses = |from: &Vec<String>| -> Vec<Vec<String>> {
        edges.get(from).into_iter().flatten().filter(|to| !to.starts_with(from) && !is_test(to)).cloned().collect()
    };
    let nodes: Vec<Vec<String>> = edges.keys().filter(|m| !is_test(m)).cloned().collect();
    let circles = strongly_connected(&nodes, uses);
    let shown: Vec<String> =
        circles.iter().map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" <-> ")).collect();
    assert!(shown.is_empty(), "import circles:\n  {}", shown.join("\n  "));
}

/// The strongly connected components of more than one module (Tarjan's algorithm).
fn strongly_connected(
    nodes: &[Vec<String>],
    edges: impl Fn(&Vec<String>) -> Vec<Vec<String>>,
) -> Vec<Vec<Vec<String>>> {
    struct State {
        index: BTreeMap<Vec<String>, usize>,
        low: BTreeMap<Vec<String>, usize>,
        stack: Vec<Vec<String>>,
        on_stack: BTreeSet<Vec<String>>,
        out: Vec<Vec<Vec<String>>>,
    }
    fn visit(v: &Vec<String>, edges: &dyn Fn(&Vec<String>) -> Vec<Vec<String>>, s: &mut State) {
        let i = s.index.len();
        s.index.insert(v.clone(), i);
        s.low.insert(v.clone(), i);
        s.stack.push(v.clone());
        s.on_stack.insert(v.clone());
        for w in edges(v) {
            if !s.index.contains_key(&w) {
                visit(&w, edges, s);
                let low = s.low[&w].min(s.low[v]);
                s.low.insert(v.clone(), low);
            } else if s.on_stack.contains(&w) {
                let low = s.index[&w].min(s.low[v]);
                s.low.insert(v.clone(), low);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = &w == v;
                component.push(w);
                if done {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.out.push(component);
            }
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in nodes {
        if !s.index.contains_key(v) {
            visit(v, &edges, &mut s);
        }
    }
    s.out
}

/// The checks see what they must: a wrong-way import and a circle planted in text are found.
#[test]
fn the_checks_catch_a_planted_violation() {
    let file = SourceFile { path: PathBuf::new(), module: vec!["store".into(), "labels".into()], binary: false };
    let ast: syn::File = syn::parse_str(concat!(
        "use crate::",
        "classify::label::{Label, Evidence}; fn f() { let _ = super::read::x(); }"
    ))
    .unwrap();
    let mut paths = Paths { file: &file, found: BTreeSet::new(), inline: Vec::new(), in_test: 0 };
    paths.visit_file(&ast);
    let to: Vec<String> = vec!["classify".into(), "label".into(), "Label".into()];
    assert!(paths.found.contains(&to), "{:?}", paths.found);
    assert!(paths.found.contains(&vec!["store".to_string(), "read".into(), "x".into()]));
    assert!(!may_use("store", layer_of(&to).unwrap()), "store may not use classify");
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    let circle =
        strongly_connected(&[a.clone(), b.clone()], |m| if m == &a { vec![b.clone()] } else { vec![a.clone()] });
    assert_eq!(circle, vec![vec![a, b]]);
}
