//! The layer rule of docs/ARCHITECTURE.md, kept by the build: every path a source file names
//! (`use crate::...`, `crate::a::b` in code and in macro calls, `super::...`, a parent's bare
//! path into its child (`detect::detect` in `ingest`), and `trajan::...` in the binary) is read
//! with `syn`, resolved to the module it reaches, and checked against one table of the layers
//! each layer may use; a file compiled into another module with `#[path]` is read as that module.
//! A wrong-way import fails this test, so does a module (using or used) that no layer lists, and
//! so does an import circle between modules (a module may use the types its ancestors declare,
//! but calling an ancestor's function is a use like any other). The checks are tested on
//! violations planted in memory (the last tests).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// The layers, lowest first, and the layers each may use (besides itself). The core is split:
/// the model and its neighbours at the bottom, IO beside them (files, config, stop signals),
/// then the label model, text analysis, ATIF, agreement statistics, each above only what it
/// names here.
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("io", &["base"]),
    ("label", &["base", "io"]),
    ("analysis", &["base"]),
    ("atif", &["base"]),
    ("agreement", &["base"]),
    ("store", &["base", "io", "label", "analysis", "atif", "agreement"]),
    ("ingest", &["base", "io", "label", "analysis", "atif", "agreement", "store"]),
    ("classify", &["base", "io", "label", "analysis", "atif", "agreement"]),
    ("classify-store", &["base", "io", "label", "analysis", "atif", "agreement", "store", "classify"]),
    ("review", &["base", "io", "label", "analysis", "atif", "agreement", "store"]),
    ("tui", &["base", "io", "label", "analysis", "atif", "agreement", "store", "review"]),
    ("testkit", &["base"]),
    (
        "bin",
        &[
            "base",
            "io",
            "label",
            "analysis",
            "atif",
            "agreement",
            "store",
            "ingest",
            "classify",
            "classify-store",
            "review",
            "tui",
            "testkit",
        ],
    ),
];

/// Module → layer: a module belongs to the layer of the longest module path here it is in
/// (`tui::app::run` is `tui`'s; `classify::llm::pipeline` is `classify-store`'s, the rest of
/// `classify` is `classify`'s). The library's root modules, then the modules of `classify` that
/// read and write the store (the pure signals, rules and prompt may not), then the binary
/// (`cli`, `main`).
const LAYER_OF: &[(&str, &str)] = &[
    ("model", "base"),
    ("error", "base"),
    ("sanitize", "base"),
    ("files", "io"),
    ("config", "io"),
    ("interrupt", "io"),
    ("label", "label"),
    ("analysis", "analysis"),
    ("atif", "atif"),
    ("agreement", "agreement"),
    ("store", "store"),
    ("ingest", "ingest"),
    ("classify", "classify"),
    ("classify::from_store", "classify-store"),
    ("classify::pipeline", "classify-store"),
    ("classify::llm::pipeline", "classify-store"),
    ("review", "review"),
    ("tui", "tui"),
    ("testkit", "testkit"),
    ("cli", "bin"),
    ("main", "bin"),
];

fn layer_of(module: &[String]) -> Option<&'static str> {
    let within = |prefix: &str| {
        let segments: Vec<&str> = prefix.split("::").collect();
        module.len() >= segments.len() && module.iter().zip(&segments).all(|(m, p)| m == p)
    };
    LAYER_OF
        .iter()
        .filter(|(prefix, _)| within(prefix))
        .max_by_key(|(prefix, _)| prefix.split("::").count())
        .map(|(_, layer)| *layer)
}

fn may_use(from: &str, to: &str) -> bool {
    from == to || LAYERS.iter().any(|(layer, uses)| *layer == from && uses.contains(&to))
}

/// A module path, `["tui", "app", "run"]`.
type Module = Vec<String>;

/// A source file: where it is (`src/tui/app/run.rs`), its module path, whether it is part of
/// the binary, and its text.
struct SourceFile {
    path: PathBuf,
    module: Module,
    binary: bool,
    text: String,
}

/// The module a file under `src/` declares (`src/tui/app/mod.rs` is `["tui", "app"]`).
fn module_of(rel: &Path) -> Module {
    let mut module: Module = rel.iter().map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
    if module.last().is_some_and(|m| m == "mod" || m == "lib") {
        module.pop();
    }
    module
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
        let module = module_of(rel);
        let binary = module.first().is_some_and(|m| m == "cli" || m == "main");
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        out.push(SourceFile { path: Path::new("src").join(rel), module, binary, text });
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
    /// The module the file is compiled as, and whether in the binary.
    module: Module,
    binary: bool,
    /// Every module of the crate: a bare path whose first segment is a child module
    /// (`detect::detect` in `ingest`) names that child.
    modules: &'a BTreeSet<Module>,
    found: BTreeSet<Module>,
    /// `#[path = "…"] mod name;`: the module it is compiled as, and the path as written.
    includes: Vec<(Module, String)>,
    /// Nested inline `mod x { ... }`: their names are added to `self`.
    inline: Vec<String>,
    /// Depth of `#[cfg(test)]` items being visited.
    in_test: usize,
}

impl<'a> Paths<'a> {
    fn new(module: Module, binary: bool, modules: &'a BTreeSet<Module>) -> Paths<'a> {
        Paths { module, binary, modules, found: BTreeSet::new(), includes: Vec::new(), inline: Vec::new(), in_test: 0 }
    }

    fn here(&self) -> Module {
        let mut m = self.module.clone();
        m.extend(self.inline.iter().cloned());
        m
    }

    /// Where the children of the current module are: the binary's root (`main`) declares
    /// top-level modules (`cli`).
    fn children_base(&self) -> Module {
        if self.module == ["main"] && self.inline.is_empty() { Vec::new() } else { self.here() }
    }

    /// An absolute module path for `segments`, or `None` when they name no module of this crate.
    fn resolve(&self, segments: &[String]) -> Option<Module> {
        let (first, rest) = segments.split_first()?;
        match first.as_str() {
            "trajan" if self.binary => Some(rest.to_vec()),
            // The binary's `crate` is `main`, whose children are top-level here.
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
            // A bare path from a parent into its child (`detect::detect`, `atif::parse`).
            _ => {
                let mut child = self.children_base();
                child.push(first.clone());
                self.modules.contains(&child).then(|| child.into_iter().chain(rest.iter().cloned()).collect())
            }
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

/// The file a `#[path = "…"]` attribute names.
fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find(|a| a.path().is_ident("path")).and_then(|a| match &a.meta {
        syn::Meta::NameValue(nv) => match &nv.value {
            syn::Expr::Lit(syn::ExprLit { lit: syn::Lit::Str(s), .. }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
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
        } else if let Some(file) = path_attribute(&m.attrs).filter(|_| self.in_test == 0) {
            let mut module = self.children_base();
            module.push(m.ident.to_string());
            self.includes.push((module, file));
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

/// `a/b/../c.rs` → `a/c.rs`, without the file system (the sources may be in memory).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Module → the modules of this crate its code names (file-module granularity); and module →
/// the ancestors whose functions it calls.
struct Graph {
    edges: BTreeMap<Module, BTreeSet<Module>>,
    calls_up: BTreeMap<Module, BTreeSet<Module>>,
}

/// The modules of this crate each module's code names (file-module granularity). A file included with `#[path]` is read again as the module it is
/// compiled as (its paths are that module's, its layer the includer's), and the includer uses
/// the module of the file's own place (`testkit::chat_server`).
fn graph(files: &[SourceFile]) -> Graph {
    let mut modules: BTreeSet<Module> = files.iter().map(|f| f.module.clone()).collect();
    let parsed: Vec<syn::File> = files
        .iter()
        .map(|f| syn::parse_file(&f.text).unwrap_or_else(|e| panic!("{}: {e}", f.path.display())))
        .collect();
    // The functions each file declares at its top level.
    let fns = |ast: &syn::File| -> BTreeSet<String> {
        ast.items
            .iter()
            .filter_map(|item| match item {
                syn::Item::Fn(f) if !is_cfg_test(&f.attrs) => Some(f.sig.ident.to_string()),
                _ => None,
            })
            .collect()
    };
    let mut functions: BTreeMap<Module, BTreeSet<String>> =
        files.iter().zip(&parsed).map(|(f, ast)| (f.module.clone(), fns(ast))).collect();
    // (the module a file is compiled as, in the binary, the file)
    let mut read: Vec<(Module, bool, usize)> =
        files.iter().enumerate().map(|(i, f)| (f.module.clone(), f.binary, i)).collect();
    let mut edges: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    let mut calls_up: BTreeMap<Module, BTreeSet<Module>> = BTreeMap::new();
    let mut i = 0;
    while i < read.len() {
        let (module, binary, index) = (read[i].0.clone(), read[i].1, read[i].2);
        i += 1;
        let file = &files[index];
        let mut paths = Paths::new(module.clone(), binary, &modules);
        paths.visit_file(&parsed[index]);
        let mut found = paths.found;
        for (declared, target) in paths.includes {
            let at = normalize(&file.path.parent().unwrap_or(Path::new("")).join(&target));
            let Some(included) = files.iter().position(|f| f.path == at) else {
                panic!("{}: #[path = {target:?}] names no source file under src/", file.path.display());
            };
            let home = files[included].module.clone();
            found.insert(home.clone());
            functions.insert(declared.clone(), fns(&parsed[included]));
            read.push((declared.clone(), binary, included));
            modules.insert(declared);
        }
        // The longest known module each path starts with (the rest names items); a path that
        // reaches no module is kept whole: it names a module no layer lists.
        let mut targets = BTreeSet::new();
        for p in &found {
            let to = (1..=p.len()).rev().map(|n| p[..n].to_vec()).find(|m| modules.contains(m)).unwrap_or(p.clone());
            if to == module {
                continue;
            }
            // A function of an ancestor (`super::instance_from_file_name`), not a type it
            // declares for its children.
            if module.starts_with(&to)
                && p.get(to.len()).is_some_and(|item| functions.get(&to).is_some_and(|f| f.contains(item)))
            {
                calls_up.entry(module.clone()).or_default().insert(to.clone());
            }
            targets.insert(to);
        }
        edges.entry(module).or_default().extend(targets);
    }
    Graph { edges, calls_up }
}

/// Wrong-way imports, modules of no layer, and uses of a module no layer lists.
fn layer_violations(edges: &BTreeMap<Module, BTreeSet<Module>>) -> Vec<String> {
    let mut wrong = Vec::new();
    for (from, targets) in edges {
        // The crate root only declares the modules.
        if is_test(from) || from.is_empty() {
            continue;
        }
        let Some(from_layer) = layer_of(from) else {
            wrong.push(format!("{} belongs to no layer: add it to LAYER_OF", from.join("::")));
            continue;
        };
        for to in targets {
            let Some(to_layer) = layer_of(to) else {
                wrong.push(format!("{} uses {}, which belongs to no layer", from.join("::"), to.join("::")));
                continue;
            };
            if !may_use(from_layer, to_layer) {
                wrong.push(format!("{} ({from_layer}) uses {} ({to_layer})", from.join("::"), to.join("::")));
            }
        }
    }
    wrong
}

/// Import circles. A module may use the types its ancestors declare (they declare it), but a
/// call of an ancestor's function is a use like any other; and an ancestor's uses of its
/// descendants count (`ingest` calling `ingest::detect`). So a child that calls its parent's
/// helpers while the parent calls it is a circle: helpers go in a module of their own.
fn circles(g: &Graph) -> Vec<String> {
    let uses = |from: &Module| -> Vec<Module> {
        let up = g.calls_up.get(from);
        g.edges
            .get(from)
            .into_iter()
            .flatten()
            .filter(|to| !is_test(to) && (!from.starts_with(to) || up.is_some_and(|u| u.contains(*to))))
            .cloned()
            .collect()
    };
    let nodes: Vec<Module> = g.edges.keys().filter(|m| !is_test(m)).cloned().collect();
    strongly_connected(&nodes, uses)
        .iter()
        .map(|c| c.iter().map(|m| m.join("::")).collect::<Vec<_>>().join(" <-> "))
        .collect()
}

#[test]
fn no_layer_uses_a_layer_above_it() {
    let wrong = layer_violations(&graph(&source_files()).edges);
    assert!(wrong.is_empty(), "wrong-way imports (docs/ARCHITECTURE.md, \"Layers\"):\n  {}", wrong.join("\n  "));
}

/// Circles between a module and its children that were there when calls of an ancestor's
/// functions began to count (issue 23): each child calls a helper of its parent that the
/// parent's other children share. The list only shrinks: a new circle fails, and so does one
/// listed here that is gone (remove it). `ingest`'s, the largest, is gone (`ingest::file_name`).
const KNOWN_CIRCLES: &[&str] = &[
    "ingest::mini_swe_agent <-> ingest::mini_swe_agent::doc",
    "ingest::swe_agent <-> ingest::swe_agent::actions <-> ingest::swe_agent::doc",
    "tui::app <-> tui::app::compare <-> tui::app::list <-> tui::app::run",
    "tui::views <-> tui::views::compare <-> tui::views::run",
];

#[test]
fn no_import_circles_between_modules() {
    let found = circles(&graph(&source_files()));
    let new: Vec<&String> = found.iter().filter(|c| !KNOWN_CIRCLES.contains(&c.as_str())).collect();
    let gone: Vec<&&str> = KNOWN_CIRCLES.iter().filter(|k| !found.iter().any(|c| c == *k)).collect();
    assert!(new.is_empty(), "import circles:\n  {}", new.iter().map(|c| c.as_str()).collect::<Vec<_>>().join("\n  "));
    assert!(gone.is_empty(), "circles no longer there (remove them from KNOWN_CIRCLES): {gone:?}");
}

/// In-memory sources: (path under the checkout, text).
fn sources(list: &[(&str, &str)]) -> Vec<SourceFile> {
    list.iter()
        .map(|(path, text)| {
            let rel = Path::new(path).strip_prefix("src").unwrap_or(Path::new(path));
            let module = module_of(rel);
            let binary = module.first().is_some_and(|m| m == "cli" || m == "main");
            SourceFile { path: PathBuf::from(path), module, binary, text: text.to_string() }
        })
        .collect()
}

fn violations(list: &[(&str, &str)]) -> Vec<String> {
    layer_violations(&graph(&sources(list)).edges)
}

#[test]
fn a_planted_wrong_way_import_fails() {
    let wrong = violations(&[
        ("src/store/labels.rs", concat!("use crate::", "classify::label::{Label, Evidence};")),
        ("src/classify/label.rs", ""),
    ]);
    assert_eq!(wrong, vec!["store::labels (store) uses classify::label (classify)"]);
    // In code and in a macro call too.
    let wrong = violations(&[
        (
            "src/store/labels.rs",
            concat!("fn f() { let _ = crate::", "tui::x(); println!(\"{}\", crate::", "review::y()); }"),
        ),
        ("src/tui/mod.rs", ""),
        ("src/review/mod.rs", ""),
    ]);
    assert_eq!(wrong, vec!["store::labels (store) uses review (review)", "store::labels (store) uses tui (tui)"]);
}

#[test]
fn the_classifiers_pure_parts_do_not_read_the_store() {
    let wrong = violations(&[
        ("src/classify/signals/views.rs", concat!("use crate::", "store::read::StepRow;")),
        ("src/store/read.rs", ""),
    ]);
    assert_eq!(wrong, vec!["classify::signals::views (classify) uses store::read (store)"]);
    // Its pipelines do, and use the pure parts; the pure parts do not use the pipelines.
    assert!(
        violations(&[
            ("src/classify/llm/pipeline.rs", "use crate::store::Store; use crate::classify::llm::prompt::build;"),
            ("src/store/mod.rs", ""),
            ("src/classify/llm/prompt.rs", ""),
        ])
        .is_empty()
    );
    let wrong = violations(&[
        ("src/classify/rules.rs", concat!("fn f() { crate::", "classify::pipeline::measure(); }")),
        ("src/classify/pipeline.rs", ""),
    ]);
    assert_eq!(wrong, vec!["classify::rules (classify) uses classify::pipeline (classify-store)"]);
}

#[test]
fn the_layers_inside_the_core_are_kept() {
    let wrong = violations(&[("src/model.rs", concat!("use crate::", "label::Label;")), ("src/label/mod.rs", "")]);
    assert_eq!(wrong, vec!["model (base) uses label (label)"]);
    let wrong = violations(&[
        ("src/analysis/mod.rs", concat!("fn f() { crate::", "config::load(); }")),
        ("src/config/mod.rs", ""),
    ]);
    assert_eq!(wrong, vec!["analysis (analysis) uses config (io)"]);
    assert!(violations(&[("src/label/mod.rs", "use crate::files::read;"), ("src/files.rs", "")]).is_empty());
}

#[test]
fn a_bare_path_from_a_parent_into_its_child_is_resolved() {
    let files = sources(&[
        ("src/ingest/mod.rs", "mod detect;\nuse detect::Shape;\nfn parse() { detect::detect(); }\npub fn helper() {}"),
        ("src/ingest/detect.rs", "pub struct Shape;\npub fn detect() { super::helper(); }"),
    ]);
    let g = graph(&files);
    let ingest: Module = vec!["ingest".into()];
    assert!(g.edges[&ingest].contains(&vec!["ingest".to_string(), "detect".into()]), "{:?}", g.edges);
    // The child calls its parent's helper while the parent calls it: a circle.
    assert_eq!(circles(&g), vec!["ingest <-> ingest::detect"]);
    // A child that uses only a type its parent declares is no circle.
    let files = sources(&[
        ("src/ingest/mod.rs", "mod detect;\npub struct Outcome;\nfn parse() { detect::detect(); }"),
        ("src/ingest/detect.rs", "pub fn detect() -> super::Outcome { super::Outcome }"),
    ]);
    assert!(circles(&graph(&files)).is_empty());
    // Bare paths reach the layers too: `cli` from the binary's root.
    let wrong = violations(&[("src/main.rs", "mod cli;\nfn main() { cli::run(); }"), ("src/cli/mod.rs", "")]);
    assert!(wrong.is_empty(), "{wrong:?}");
}

#[test]
fn a_file_included_with_path_is_read_as_its_includer() {
    // The includer uses the file's own module: classify may not use testkit.
    let wrong = violations(&[
        ("src/classify/llm/client.rs", "#[path = \"../../testkit/chat_server.rs\"]\nmod chat_server;"),
        ("src/testkit/chat_server.rs", ""),
    ]);
    assert_eq!(wrong, vec!["classify::llm::client (classify) uses testkit::chat_server (testkit)"]);
    // The included file's paths are its includer's: here, store code that reaches the TUI.
    let wrong = violations(&[
        ("src/store/x.rs", "#[path = \"../testkit/helper.rs\"]\nmod helper;"),
        ("src/testkit/helper.rs", concat!("use crate::", "tui::App;")),
        ("src/tui/mod.rs", ""),
    ]);
    assert!(wrong.contains(&"store::x::helper (store) uses tui (tui)".to_string()), "{wrong:?}");
    // Included in test code only, it is test code.
    let test_only = violations(&[
        ("src/classify/llm/client.rs", "#[cfg(test)]\n#[path = \"../../testkit/chat_server.rs\"]\nmod chat_server;"),
        ("src/testkit/chat_server.rs", ""),
    ]);
    assert!(test_only.is_empty(), "{test_only:?}");
}

#[test]
fn a_module_of_no_layer_fails_as_user_and_as_used() {
    let wrong = violations(&[("src/store/a.rs", "use crate::extra::X;"), ("src/extra.rs", "")]);
    assert_eq!(
        wrong,
        vec!["extra belongs to no layer: add it to LAYER_OF", "store::a uses extra, which belongs to no layer"]
    );
    let wrong = violations(&[("src/store/a.rs", "use crate::nowhere::X;")]);
    assert_eq!(wrong, vec!["store::a uses nowhere::X, which belongs to no layer"]);
}

#[test]
fn a_planted_circle_is_found() {
    let a = vec!["a".to_string()];
    let b = vec!["b".to_string()];
    let circle =
        strongly_connected(&[a.clone(), b.clone()], |m| if m == &a { vec![b.clone()] } else { vec![a.clone()] });
    assert_eq!(circle, vec![vec![a, b]]);
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

/// The checkout's top level is the design card's (`Cargo.toml`, `src`, `fixtures`, `themes`,
/// `tests`, `docs`) and the tooling's (`.ci`, `scripts`, the lock file, the build script, the
/// formatter's settings, the README): the looks (themes, the chart font's licence) live under
/// `themes/`, not in a folder of their own.
#[test]
fn the_top_level_is_the_design_cards() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let allowed = [
        "Cargo.toml",
        "Cargo.lock",
        "README.md",
        "build.rs",
        "rustfmt.toml",
        "src",
        "fixtures",
        "themes",
        "tests",
        "docs",
        "scripts",
        ".ci",
        ".git",
        ".gitignore",
        "target",
    ];
    let tracked = std::process::Command::new("git").arg("-C").arg(root).args(["ls-files"]).output();
    let Ok(tracked) = tracked.map(|o| String::from_utf8_lossy(&o.stdout).into_owned()) else { return };
    let top: BTreeSet<&str> = tracked.lines().filter_map(|l| l.split('/').next()).collect();
    let stray: Vec<&&str> = top.iter().filter(|t| !allowed.contains(t)).collect();
    assert!(stray.is_empty(), "top-level entries outside the design card: {stray:?}");
    assert!(root.join("themes/fonts/DejaVu-LICENSE").is_file(), "the chart font's licence, with the looks");
}
