//! One walk over a syntax tree: definitions where a node defines a name, references where an
//! identifier is used. What each grammar calls its nodes is in the tables of this file; the walk
//! itself is the same for every language.

use super::Lang;
use super::model::{DefKind, Definition, RefKind, Reference, Symbols};
use std::collections::HashSet;
use tree_sitter::{Node, Tree};

/// Longest signature kept, in characters.
const MAX_SIGNATURE: usize = 240;
/// Words in comments and strings shorter than this are not kept as mentions.
const MIN_MENTION: usize = 3;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum ScopeKind {
    /// A class, struct, interface, trait, enum or impl: its functions are methods.
    Type,
    Function,
    Module,
}

struct Scope {
    parent: Option<usize>,
    pub(super) name: String,
    kind: ScopeKind,
}

/// A definition found at a node: what the walk needs to record it.
pub(super) struct Found<'t> {
    pub(super) kind: DefKind,
    pub(super) name: String,
    /// Scope parts written in the name itself (`Widget::resize`, a Go receiver).
    pub(super) extra_scope: Vec<String>,
    pub(super) params: Option<Node<'t>>,
    pub(super) body: Option<Node<'t>>,
    pub(super) prototype: bool,
    /// The scope its children are in, when it opens one.
    pub(super) opens: Option<ScopeKind>,
    /// Nodes whose identifiers name the definition (not references).
    pub(super) name_nodes: Vec<Node<'t>>,
}

/// Nodes deeper than this are not read (nor their children): a patch adding a list nested
/// 100,000 deep is not walked to its bottom. Deeper than any code a person writes (a chain of
/// two thousand `+` is two thousand deep).
pub const MAX_DEPTH: usize = 4096;

/// A node on the way from the root to the one being read.
#[derive(Clone, Copy)]
pub(super) struct Frame<'t> {
    pub(super) node: Node<'t>,
    /// Its field name in its parent.
    pub(super) field: Option<&'t str>,
    /// The scope in force for it and its children.
    pub(super) scope: Option<usize>,
    /// It or a node above it is an import (its identifiers are imported names).
    pub(super) in_import: bool,
    /// It or a node above it is a C or C++ block (a declaration there is a local one).
    pub(super) in_block: bool,
}

pub(super) struct Walker<'t> {
    pub(super) lang: Lang,
    pub(super) src: &'t str,
    scopes: Vec<Scope>,
    out: Symbols,
    /// Identifier nodes already read (definition names, callees, import names).
    consumed: HashSet<usize>,
}

/// The walk: a cursor down the tree, the path from the root kept beside it, what a node needs
/// of its ancestors carried in its frame (so each node costs the same however deep it is).
pub(super) fn walk<'t>(lang: Lang, tree: &'t Tree, src: &'t str) -> Symbols {
    let mut w = Walker { lang, src, scopes: Vec::new(), out: Symbols::default(), consumed: HashSet::new() };
    let mut cursor = tree.walk();
    let mut path: Vec<Frame<'t>> = Vec::new();
    loop {
        let node = cursor.node();
        let field = cursor.field_name();
        let above = path.last().copied();
        let scope = above.and_then(|p| p.scope);
        let inner = w.visit(node, field, &path, scope);
        let kind = node.kind();
        path.push(Frame {
            node,
            field,
            scope: inner.or(scope),
            in_import: above.is_some_and(|p| p.in_import) || is_import(lang, kind),
            in_block: above.is_some_and(|p| p.in_block) || kind == "compound_statement",
        });
        let skip_children = is_opaque(lang, node) || path.len() >= MAX_DEPTH;
        if !skip_children && cursor.goto_first_child() {
            continue;
        }
        loop {
            path.pop();
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return w.out;
            }
        }
    }
}

/// Comments and strings: their words are mentions, their children are not read.
fn is_comment_or_string(lang: Lang, kind: &str) -> bool {
    match kind {
        "comment" | "line_comment" | "block_comment" | "string_literal" | "raw_string_literal" | "char_literal" => true,
        "string" => matches!(lang, Lang::Python | Lang::TypeScript | Lang::Tsx),
        "interpreted_string_literal" => lang == Lang::Go,
        "concatenated_string" => matches!(lang, Lang::Python | Lang::C | Lang::Cpp),
        _ => false,
    }
}

/// Nodes whose children are not read: comments and strings, except strings with code in them
/// (f-strings, template literals).
fn is_opaque(lang: Lang, node: Node<'_>) -> bool {
    is_comment_or_string(lang, node.kind()) && !has_code(node)
}

fn has_code(node: Node<'_>) -> bool {
    let mut c = node.walk();
    node.children(&mut c).any(|x| matches!(x.kind(), "interpolation" | "template_substitution"))
}

fn is_identifier(kind: &str) -> bool {
    matches!(
        kind,
        "identifier"
            | "type_identifier"
            | "field_identifier"
            | "property_identifier"
            | "package_identifier"
            | "namespace_identifier"
            | "shorthand_property_identifier"
            | "private_property_identifier"
            | "statement_identifier"
    )
}

fn is_import(lang: Lang, kind: &str) -> bool {
    match lang {
        Lang::Python => matches!(kind, "import_statement" | "import_from_statement" | "future_import_statement"),
        Lang::Java => kind == "import_declaration",
        Lang::Go => kind == "import_spec",
        Lang::C | Lang::Cpp => kind == "preproc_include",
        Lang::Rust => matches!(kind, "use_declaration" | "extern_crate_declaration"),
        Lang::TypeScript | Lang::Tsx => matches!(kind, "import_statement" | "import_clause" | "import_specifier"),
    }
}

/// Fold runs of whitespace into one space.
pub(super) fn fold(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl<'t> Walker<'t> {
    pub(super) fn text(&self, n: Node) -> &'t str {
        self.src.get(n.byte_range()).unwrap_or("")
    }

    pub(super) fn line(n: Node) -> usize {
        n.start_position().row + 1
    }

    pub(super) fn scope_kind(&self, scope: Option<usize>) -> Option<ScopeKind> {
        scope.map(|s| self.scopes[s].kind)
    }

    fn scope_names(&self, scope: Option<usize>) -> Vec<String> {
        let mut names = Vec::new();
        let mut at = scope;
        while let Some(i) = at {
            if !self.scopes[i].name.is_empty() {
                names.push(self.scopes[i].name.clone());
            }
            at = self.scopes[i].parent;
        }
        names.reverse();
        names
    }

    /// Read one node; returns the scope it opens for its children.
    fn visit(
        &mut self,
        node: Node<'t>,
        field: Option<&'t str>,
        path: &[Frame<'t>],
        scope: Option<usize>,
    ) -> Option<usize> {
        let kind = node.kind();
        if node.is_missing() {
            return None;
        }
        if is_comment_or_string(self.lang, kind) {
            if !has_code(node) && !path.last().is_some_and(|p| p.in_import) {
                self.mentions(node);
            }
            return None;
        }
        if let Some(found) = self.definition(node, path, scope) {
            return self.record(node, found, scope);
        }
        if let Some(scope_name) = self.anonymous_scope(node) {
            self.scopes.push(Scope { parent: scope, name: scope_name, kind: ScopeKind::Type });
            return Some(self.scopes.len() - 1);
        }
        self.call(node);
        self.import_path(node);
        if is_identifier(kind) && !self.consumed.contains(&node.id()) {
            self.identifier(node, field, path);
        }
        None
    }

    pub(super) fn record(&mut self, node: Node<'t>, found: Found<'t>, scope: Option<usize>) -> Option<usize> {
        for n in &found.name_nodes {
            self.consumed.insert(n.id());
        }
        let mut parts = self.scope_names(scope);
        parts.extend(found.extra_scope.iter().cloned());
        parts.push(found.name.clone());
        let qualified = parts.join(self.lang.separator());
        let head = self.src.get(node.start_byte()..head_end(node, &found)).unwrap_or("");
        let mut signature = fold(strip_annotations(head));
        signature = signature.trim_end_matches(['{', ':', ';', '=', ' ']).trim_end_matches("=>").trim_end().to_string();
        if signature.chars().count() > MAX_SIGNATURE {
            signature = signature.chars().take(MAX_SIGNATURE).collect::<String>() + "…";
        }
        let in_type = self.scope_kind(scope) == Some(ScopeKind::Type) || !found.extra_scope.is_empty();
        let params = found.params.map(|p| self.params(p, found.kind == DefKind::Method || in_type, node));
        self.out.definitions.push(Definition {
            kind: found.kind,
            name: found.name.clone(),
            qualified,
            signature,
            params,
            prototype: found.prototype,
            line: Self::line(node),
            end_line: node.end_position().row + 1,
        });
        let opens = found.opens?;
        let mut parent = scope;
        for s in found.extra_scope {
            self.scopes.push(Scope { parent, name: s, kind: ScopeKind::Type });
            parent = Some(self.scopes.len() - 1);
        }
        self.scopes.push(Scope { parent, name: found.name, kind: opens });
        Some(self.scopes.len() - 1)
    }

    /// Scopes that define nothing themselves: a Rust `impl T`.
    fn anonymous_scope(&mut self, node: Node<'t>) -> Option<String> {
        if self.lang == Lang::Rust && node.kind() == "impl_item" {
            let ty = node.child_by_field_name("type")?;
            return Some(self.type_name(ty));
        }
        None
    }

    /// The plain name of a type node (`Vec<T>` → `Vec`, `*Reader` → `Reader`, `a::B` → `B`).
    pub(super) fn type_name(&self, ty: Node) -> String {
        let mut n = ty;
        while matches!(
            n.kind(),
            "generic_type" | "pointer_type" | "reference_type" | "scoped_type_identifier" | "qualified_type"
        ) {
            let next = n
                .child_by_field_name("type")
                .or_else(|| n.child_by_field_name("name"))
                .or_else(|| n.named_child(n.named_child_count().saturating_sub(1) as u32));
            match next {
                Some(x) if x.id() != n.id() => n = x,
                _ => break,
            }
        }
        self.text(n).trim_start_matches(['*', '&']).trim().to_string()
    }

    /// Imports named by a string: a C/C++ `#include "x.h"` (the file name) and a Go import path
    /// (its last part, the package name).
    fn import_path(&mut self, node: Node<'t>) {
        let path = match (self.lang, node.kind()) {
            (Lang::C | Lang::Cpp, "preproc_include") | (Lang::Go, "import_spec") => node.child_by_field_name("path"),
            _ => None,
        };
        let Some(p) = path else { return };
        let text = self.text(p).trim_matches(['"', '<', '>', '`']);
        let name = if self.lang == Lang::Go { text.rsplit('/').next().unwrap_or(text) } else { text };
        if !name.is_empty() {
            self.out.references.push(Reference {
                name: name.to_string(),
                kind: RefKind::Import,
                line: Self::line(node),
                qualified: false,
                args: None,
            });
        }
    }

    /// A call: its callee and argument count.
    fn call(&mut self, node: Node<'t>) {
        let kind = node.kind();
        let (callee, args) = match (self.lang, kind) {
            (Lang::Python, "call") => (node.child_by_field_name("function"), node.child_by_field_name("arguments")),
            (Lang::Java, "method_invocation") => (Some(node), node.child_by_field_name("arguments")),
            (Lang::Java, "object_creation_expression") => {
                (node.child_by_field_name("type"), node.child_by_field_name("arguments"))
            }
            (Lang::Go | Lang::C | Lang::Cpp | Lang::Rust | Lang::TypeScript | Lang::Tsx, "call_expression") => {
                (node.child_by_field_name("function"), node.child_by_field_name("arguments"))
            }
            (Lang::Cpp, "new_expression") => (node.child_by_field_name("type"), node.child_by_field_name("arguments")),
            (Lang::TypeScript | Lang::Tsx, "new_expression") => {
                (node.child_by_field_name("constructor"), node.child_by_field_name("arguments"))
            }
            (Lang::Rust, "macro_invocation") => (node.child_by_field_name("macro"), None),
            _ => return,
        };
        let Some(callee) = callee else { return };
        let (name, qualified) = if kind == "method_invocation" {
            (node.child_by_field_name("name"), node.child_by_field_name("object").is_some())
        } else {
            self.callee_name(callee)
        };
        let Some(name) = name else { return };
        self.consumed.insert(name.id());
        let count = args.and_then(|a| self.argument_count(a));
        let args = if kind == "macro_invocation" { None } else { count };
        self.out.references.push(Reference {
            name: self.text(name).to_string(),
            kind: RefKind::Call,
            line: Self::line(node),
            qualified,
            args,
        });
    }

    /// The name node a callee expression ends in, and whether a receiver or scope led to it.
    fn callee_name(&self, callee: Node<'t>) -> (Option<Node<'t>>, bool) {
        let mut n = callee;
        let mut qualified = false;
        for _ in 0..8 {
            let next = match n.kind() {
                "identifier" | "type_identifier" | "field_identifier" | "property_identifier" => {
                    return (Some(n), qualified);
                }
                "attribute" => n.child_by_field_name("attribute"),
                "selector_expression" => n.child_by_field_name("field"),
                "field_expression" => n.child_by_field_name("field"),
                "member_expression" => n.child_by_field_name("property"),
                "scoped_identifier" | "qualified_identifier" | "scoped_type_identifier" => {
                    n.child_by_field_name("name")
                }
                "generic_function" => {
                    qualified = false;
                    n.child_by_field_name("function")
                }
                "template_function" | "generic_type" => n.child_by_field_name("name").or_else(|| n.named_child(0)),
                "parenthesized_expression" => n.named_child(0),
                _ => None,
            };
            if matches!(
                n.kind(),
                "attribute"
                    | "selector_expression"
                    | "field_expression"
                    | "member_expression"
                    | "scoped_identifier"
                    | "qualified_identifier"
                    | "scoped_type_identifier"
            ) {
                qualified = true;
            }
            match next {
                Some(x) => n = x,
                None => return (None, qualified),
            }
        }
        (None, qualified)
    }

    /// Arguments passed, or `None` when a spread hides how many.
    fn argument_count(&self, args: Node<'t>) -> Option<usize> {
        if args.kind() == "generator_expression" {
            return Some(1);
        }
        let mut cursor = args.walk();
        let mut n = 0;
        for c in args.children(&mut cursor) {
            match c.kind() {
                "list_splat" | "dictionary_splat" | "spread_element" | "variadic_argument" | "..." => return None,
                k if k.contains("comment") => {}
                _ if c.is_named() => n += 1,
                _ => {}
            }
        }
        Some(n)
    }

    fn identifier(&mut self, node: Node<'t>, field: Option<&'t str>, path: &[Frame<'t>]) {
        let Some(parent) = path.last() else { return };
        let pk = parent.node.kind();
        if parent.in_import {
            if field != Some("alias") {
                self.push(node, RefKind::Import, false);
            }
            return;
        }
        if self.binding(pk, field, path) {
            return;
        }
        let member = matches!(
            (pk, field),
            ("attribute", Some("attribute"))
                | ("field_access", Some("field"))
                | ("selector_expression", Some("field"))
                | ("field_expression", Some("field"))
                | ("member_expression", Some("property"))
                | ("scoped_identifier" | "qualified_identifier", Some("name"))
                | ("method_reference", _)
        ) && !(pk == "method_reference" && node.prev_sibling().is_none());
        let kind = if member {
            RefKind::Member
        } else if node.kind() == "type_identifier"
            || (self.lang == Lang::Python && path.iter().rev().take(4).any(|p| p.node.kind() == "type"))
        {
            RefKind::Type
        } else {
            RefKind::Name
        };
        self.push(node, kind, member);
    }

    /// Identifiers that bind a local name (parameters, assignment targets, keyword argument
    /// names): neither definitions of interest nor uses.
    fn binding(&self, pk: &str, field: Option<&str>, path: &[Frame<'t>]) -> bool {
        match self.lang {
            Lang::Python => {
                matches!(
                    (pk, field),
                    ("parameters" | "lambda_parameters" | "list_splat_pattern" | "dictionary_splat_pattern", _)
                        | ("default_parameter" | "typed_default_parameter" | "keyword_argument", Some("name"))
                        | ("assignment" | "augmented_assignment" | "for_statement" | "for_in_clause", Some("left"))
                        | ("as_pattern_target" | "global_statement" | "nonlocal_statement", _)
                        | ("pattern_list" | "tuple_pattern", _)
                ) || (pk == "typed_parameter" && field.is_none() && path.len() > 1)
            }
            Lang::Java => matches!(
                (pk, field),
                (
                    "formal_parameter" | "variable_declarator" | "catch_formal_parameter" | "lambda_expression",
                    Some("name") | Some("parameters")
                ) | ("inferred_parameters", _)
            ),
            Lang::Go => {
                matches!(
                    (pk, field),
                    (
                        "parameter_declaration" | "variadic_parameter_declaration" | "var_spec" | "const_spec",
                        Some("name")
                    ) | ("range_clause", Some("left"))
                ) || (pk == "expression_list"
                    && path.last().is_some_and(|p| p.field == Some("left"))
                    && path.len() >= 2
                    && path[path.len() - 2].node.kind() == "short_var_declaration")
            }
            Lang::C | Lang::Cpp => matches!(
                (pk, field),
                (
                    "parameter_declaration" | "optional_parameter_declaration" | "init_declarator" | "declaration",
                    Some("declarator") | Some("name")
                ) | ("pointer_declarator" | "array_declarator" | "reference_declarator", _)
                    | ("preproc_params", _)
            ),
            Lang::Rust => matches!(
                (pk, field),
                ("parameter" | "let_declaration" | "closure_parameters" | "for_expression", Some("pattern"))
                    | ("closure_parameters", _)
                    | ("tuple_pattern" | "struct_pattern" | "tuple_struct_pattern" | "field_pattern", _)
            ),
            Lang::TypeScript | Lang::Tsx => matches!(
                (pk, field),
                ("required_parameter" | "optional_parameter" | "variable_declarator", Some("pattern") | Some("name"))
                    | (
                        "rest_pattern" | "shorthand_property_identifier_pattern" | "object_pattern" | "array_pattern",
                        _
                    )
            ),
        }
    }

    fn push(&mut self, node: Node<'t>, kind: RefKind, qualified: bool) {
        let name = self.text(node);
        if name.is_empty() {
            return;
        }
        let name = match self.lang {
            Lang::C | Lang::Cpp if kind == RefKind::Import => name.trim_matches(['"', '<', '>']),
            _ => name,
        };
        self.out.references.push(Reference {
            name: name.to_string(),
            kind,
            line: Self::line(node),
            qualified,
            args: None,
        });
    }

    /// Words of a comment or string, once per line: a docstring or help text naming a symbol.
    fn mentions(&mut self, node: Node<'t>) {
        let text = self.text(node);
        let first = Self::line(node);
        // C/C++ `#include "x.h"` paths are strings too, but imports: read above.
        for (i, line) in text.lines().enumerate() {
            let mut seen: Vec<&str> = Vec::new();
            for word in line.split(|c: char| !(c.is_alphanumeric() || c == '_')) {
                let ok =
                    word.len() >= MIN_MENTION && word.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
                if ok && !seen.contains(&word) {
                    seen.push(word);
                    self.out.references.push(Reference {
                        name: word.to_string(),
                        kind: RefKind::Mention,
                        line: first + i,
                        qualified: false,
                        args: None,
                    });
                }
            }
        }
    }
}

/// Where a definition's head ends: at its body, or at a comment between the two (Python attaches
/// a comment on the body's first line to the definition: `def f(a):  # note`).
fn head_end(node: Node<'_>, found: &Found<'_>) -> usize {
    let body_start = found.body.map_or(node.end_byte(), |b| b.start_byte());
    let after_name = found.name_nodes.iter().map(|n| n.end_byte()).max().unwrap_or(node.start_byte());
    let mut cursor = node.walk();
    node.children(&mut cursor)
        .filter(|c| c.kind().contains("comment") && c.start_byte() >= after_name && c.start_byte() < body_start)
        .map(|c| c.start_byte())
        .min()
        .unwrap_or(body_start)
}

/// A head without its leading annotations and decorators (`@Override public void f()` →
/// `public void f()`).
fn strip_annotations(head: &str) -> &str {
    let mut h = head.trim_start();
    while let Some(rest) = h.strip_prefix('@') {
        let name_end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
        let mut after = &rest[name_end..];
        if after.starts_with('(') {
            let mut depth = 0usize;
            let mut end = after.len();
            for (i, c) in after.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            end = i + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            after = &after[end..];
        }
        h = after.trim_start();
    }
    h
}
