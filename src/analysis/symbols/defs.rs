//! Definitions by grammar: which nodes of each language define a name, its kind, scope,
//! parameters and head; the parameters' arity and (for C and C++) types.

use super::Lang;
use super::model::{DefKind, Params};
use super::walk::{Found, Frame, ScopeKind, Walker, fold};
use tree_sitter::Node;

/// Where a candidate definition stands: the node, the frames above it, its scope.
struct Site<'a, 't> {
    node: Node<'t>,
    path: &'a [Frame<'t>],
    scope: Option<usize>,
    in_type: bool,
}

impl<'t> Site<'_, 't> {
    /// The kind of the node `up` levels above this one.
    fn parent_kind(&self, up: usize) -> Option<&'t str> {
        self.path.len().checked_sub(up).map(|i| self.path[i].node.kind())
    }
}

impl<'t> Walker<'t> {
    pub(super) fn definition(&mut self, node: Node<'t>, path: &[Frame<'t>], scope: Option<usize>) -> Option<Found<'t>> {
        let in_type = self.scope_kind(scope) == Some(ScopeKind::Type);
        let site = Site { node, path, scope, in_type };
        match self.lang {
            Lang::Python => self.python_definition(&site),
            Lang::Java => self.java_definition(&site),
            Lang::Go => self.go_definition(&site),
            Lang::C | Lang::Cpp => self.c_definition(&site),
            Lang::Rust => self.rust_definition(&site),
            Lang::TypeScript | Lang::Tsx => self.typescript_definition(&site),
        }
    }

    /// A definition whose name, parameters and body are the node's own fields.
    fn simple(&self, site: &Site<'_, 't>, kind: DefKind, opens: Option<ScopeKind>) -> Option<Found<'t>> {
        let node = site.node;
        let name = node.child_by_field_name("name")?;
        Some(Found {
            kind,
            name: self.text(name).to_string(),
            extra_scope: Vec::new(),
            params: node.child_by_field_name("parameters"),
            body: node.child_by_field_name("body"),
            prototype: node.child_by_field_name("body").is_none(),
            opens,
            name_nodes: vec![name],
        })
    }

    /// The definitions of Python.
    fn python_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let (node, kind) = (site.node, site.node.kind());
        let func = if site.in_type { DefKind::Method } else { DefKind::Function };
        match (self.lang, kind) {
            (Lang::Python, "function_definition") => self.simple(site, func, Some(ScopeKind::Function)),
            (Lang::Python, "class_definition") => self.simple(site, DefKind::Class, Some(ScopeKind::Type)),
            (Lang::Python, "assignment") => {
                let left = node.child_by_field_name("left").filter(|l| l.kind() == "identifier")?;
                let at_module =
                    site.parent_kind(1) == Some("expression_statement") && site.parent_kind(2) == Some("module");
                let in_class = site.parent_kind(1) == Some("expression_statement")
                    && site.parent_kind(2) == Some("block")
                    && site.parent_kind(3) == Some("class_definition");
                let k = if at_module {
                    DefKind::Constant
                } else if in_class {
                    DefKind::Field
                } else {
                    return None;
                };
                Some(self.named(k, left, node))
            }
            _ => None,
        }
    }

    /// The definitions of Java.
    fn java_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let (node, kind) = (site.node, site.node.kind());
        match (self.lang, kind) {
            (Lang::Java, "class_declaration" | "record_declaration") => {
                self.simple(site, DefKind::Class, Some(ScopeKind::Type))
            }
            (Lang::Java, "interface_declaration" | "annotation_type_declaration") => {
                self.simple(site, DefKind::Interface, Some(ScopeKind::Type))
            }
            (Lang::Java, "enum_declaration") => self.simple(site, DefKind::Enum, Some(ScopeKind::Type)),
            (Lang::Java, "method_declaration" | "constructor_declaration" | "compact_constructor_declaration") => {
                self.simple(site, DefKind::Method, Some(ScopeKind::Function))
            }
            (Lang::Java, "variable_declarator")
                if matches!(site.parent_kind(1), Some("field_declaration" | "constant_declaration")) =>
            {
                let name = node.child_by_field_name("name")?;
                let constant = site.parent_kind(1) == Some("constant_declaration") || {
                    let decl = site.path[site.path.len() - 1].node;
                    let mods = decl.named_child(0).filter(|m| m.kind() == "modifiers").map(|m| self.text(m));
                    mods.is_some_and(|m| m.contains("static") && m.contains("final"))
                };
                let decl = site.path[site.path.len() - 1].node;
                Some(self.named(if constant { DefKind::Constant } else { DefKind::Field }, name, decl))
            }
            (Lang::Java, "enum_constant") => self.simple(site, DefKind::Constant, None),
            (Lang::Java, "package_declaration") => {
                let n = node.named_child(0)?;
                Some(self.named(DefKind::Module, n, node))
            }
            _ => None,
        }
    }

    /// The definitions of Go.
    fn go_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let (node, kind) = (site.node, site.node.kind());
        match (self.lang, kind) {
            (Lang::Go, "function_declaration") => self.simple(site, DefKind::Function, Some(ScopeKind::Function)),
            (Lang::Go, "method_declaration") => {
                let mut f = self.simple(site, DefKind::Method, Some(ScopeKind::Function))?;
                let receiver = node.child_by_field_name("receiver").and_then(|r| r.named_child(0));
                if let Some(ty) = receiver.and_then(|p| p.child_by_field_name("type")) {
                    f.extra_scope.push(self.type_name(ty));
                }
                Some(f)
            }
            (Lang::Go, "type_spec") => {
                let k = match node.child_by_field_name("type").map(|t| t.kind()) {
                    Some("struct_type") => DefKind::Struct,
                    Some("interface_type") => DefKind::Interface,
                    _ => DefKind::TypeAlias,
                };
                let mut f = self.simple(site, k, Some(ScopeKind::Type))?;
                f.params = None;
                f.body = node.child_by_field_name("type");
                f.prototype = false;
                Some(f)
            }
            (Lang::Go, "type_alias") => {
                let mut f = self.simple(site, DefKind::TypeAlias, None)?;
                f.prototype = false;
                Some(f)
            }
            (Lang::Go, "method_elem" | "method_spec") => self.simple(site, DefKind::Method, None),
            (Lang::Go, "field_declaration" | "const_spec") | (Lang::Go, "var_spec")
                if kind != "var_spec" || site.parent_kind(2) == Some("source_file") =>
            {
                // Several names may share one declaration (`a, b int`): the first is recorded here,
                // the others by `identifier` below.
                let k = if kind == "field_declaration" { DefKind::Field } else { DefKind::Constant };
                let names: Vec<Node<'t>> = {
                    let mut c = node.walk();
                    node.children_by_field_name("name", &mut c).collect()
                };
                let first = *names.first()?;
                for other in &names[1..] {
                    let f = self.named(k, *other, node);
                    self.record(node, f, site.scope);
                }
                Some(self.named(k, first, node))
            }
            (Lang::Go, "package_clause") => {
                let n = node.named_child(0)?;
                Some(self.named(DefKind::Module, n, node))
            }
            _ => None,
        }
    }

    /// The definitions of C and C++.
    fn c_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let (node, kind) = (site.node, site.node.kind());
        match (self.lang, kind) {
            (Lang::C | Lang::Cpp, "function_definition") => {
                let declarator = node.child_by_field_name("declarator")?;
                let Some(decl) = function_declarator(declarator) else {
                    return self.macro_headed(node, declarator);
                };
                let mut f = self.c_function(decl, site.in_type)?;
                // `PHP_FUNCTION(strlen) { ... }` as C++ reads it: the macro is the declarator, the
                // function its only argument; its parameters are the macro's business.
                if let Some(inner) = self.macro_argument(decl) {
                    f.name = self.text(inner).to_string();
                    f.params = None;
                    f.name_nodes.insert(0, inner);
                }
                f.body = node.child_by_field_name("body");
                f.prototype = false;
                f.opens = Some(ScopeKind::Function);
                Some(f)
            }
            (Lang::C | Lang::Cpp, "declaration" | "field_declaration") => {
                let declarator = node.child_by_field_name("declarator")?;
                if let Some(decl) = function_declarator(declarator) {
                    let inside_function = site.path.last().is_some_and(|p| p.in_block);
                    if inside_function {
                        return None;
                    }
                    let mut f = self.c_function(decl, site.in_type)?;
                    f.prototype = true;
                    return Some(f);
                }
                if kind == "field_declaration" {
                    let name = innermost_name(declarator)?;
                    return Some(self.named(DefKind::Field, name, node));
                }
                None
            }
            (Lang::C | Lang::Cpp, "struct_specifier" | "union_specifier" | "class_specifier")
                if node.child_by_field_name("body").is_some() =>
            {
                let k = if kind == "class_specifier" { DefKind::Class } else { DefKind::Struct };
                let mut f = self.simple(site, k, Some(ScopeKind::Type))?;
                f.prototype = false;
                Some(f)
            }
            (Lang::C | Lang::Cpp, "enum_specifier") if node.child_by_field_name("body").is_some() => {
                let mut f = self.simple(site, DefKind::Enum, None)?;
                f.prototype = false;
                Some(f)
            }
            (Lang::C | Lang::Cpp, "enumerator") => self.simple(site, DefKind::Constant, None),
            (Lang::C | Lang::Cpp, "type_definition") => {
                let name = node.child_by_field_name("declarator").and_then(innermost_name)?;
                Some(self.named(DefKind::TypeAlias, name, node))
            }
            (Lang::Cpp, "alias_declaration") => self.simple(site, DefKind::TypeAlias, None).map(|mut f| {
                f.prototype = false;
                f
            }),
            (Lang::Cpp, "namespace_definition") => {
                let mut f = self.simple(site, DefKind::Module, Some(ScopeKind::Module))?;
                f.prototype = false;
                Some(f)
            }
            (Lang::C | Lang::Cpp, "preproc_def") => self.simple(site, DefKind::Constant, None).map(|mut f| {
                f.prototype = false;
                f
            }),
            (Lang::C | Lang::Cpp, "preproc_function_def") => {
                let mut f = self.simple(site, DefKind::Macro, None)?;
                f.prototype = false;
                f.body = node.child_by_field_name("value");
                Some(f)
            }
            _ => None,
        }
    }

    /// The definitions of Rust.
    fn rust_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let kind = site.node.kind();
        let func = if site.in_type { DefKind::Method } else { DefKind::Function };
        match (self.lang, kind) {
            (Lang::Rust, "function_item") => self.simple(site, func, Some(ScopeKind::Function)),
            (Lang::Rust, "function_signature_item") => self.simple(site, DefKind::Method, None),
            (Lang::Rust, "struct_item" | "union_item") => {
                self.simple(site, DefKind::Struct, Some(ScopeKind::Type)).map(|f| Found { prototype: false, ..f })
            }
            (Lang::Rust, "enum_item") => {
                self.simple(site, DefKind::Enum, Some(ScopeKind::Type)).map(|f| Found { prototype: false, ..f })
            }
            (Lang::Rust, "trait_item") => {
                self.simple(site, DefKind::Trait, Some(ScopeKind::Type)).map(|f| Found { prototype: false, ..f })
            }
            (Lang::Rust, "mod_item") => {
                self.simple(site, DefKind::Module, Some(ScopeKind::Module)).map(|f| Found { prototype: false, ..f })
            }
            (Lang::Rust, "field_declaration") => self.simple(site, DefKind::Field, None).map(no_proto),
            (Lang::Rust, "enum_variant") => self.simple(site, DefKind::Constant, None).map(no_proto),
            (Lang::Rust, "type_item" | "associated_type") => self.simple(site, DefKind::TypeAlias, None).map(no_proto),
            (Lang::Rust, "const_item" | "static_item") => self.simple(site, DefKind::Constant, None).map(no_proto),
            (Lang::Rust, "macro_definition") => self.simple(site, DefKind::Macro, None).map(no_proto),
            _ => None,
        }
    }

    /// The definitions of TypeScript and TSX.
    fn typescript_definition(&mut self, site: &Site<'_, 't>) -> Option<Found<'t>> {
        let (node, kind) = (site.node, site.node.kind());
        match (self.lang, kind) {
            (Lang::TypeScript | Lang::Tsx, "function_declaration" | "generator_function_declaration") => {
                self.simple(site, DefKind::Function, Some(ScopeKind::Function))
            }
            (Lang::TypeScript | Lang::Tsx, "function_signature") => self.simple(site, DefKind::Function, None),
            (Lang::TypeScript | Lang::Tsx, "class_declaration" | "abstract_class_declaration") => {
                self.simple(site, DefKind::Class, Some(ScopeKind::Type)).map(no_proto)
            }
            (Lang::TypeScript | Lang::Tsx, "interface_declaration") => {
                self.simple(site, DefKind::Interface, Some(ScopeKind::Type)).map(no_proto)
            }
            (Lang::TypeScript | Lang::Tsx, "method_definition") => {
                self.simple(site, DefKind::Method, Some(ScopeKind::Function))
            }
            (Lang::TypeScript | Lang::Tsx, "method_signature" | "abstract_method_signature") => {
                self.simple(site, DefKind::Method, None)
            }
            (Lang::TypeScript | Lang::Tsx, "public_field_definition" | "property_signature") => {
                self.simple(site, DefKind::Field, None).map(no_proto)
            }
            (Lang::TypeScript | Lang::Tsx, "type_alias_declaration") => {
                self.simple(site, DefKind::TypeAlias, None).map(no_proto)
            }
            (Lang::TypeScript | Lang::Tsx, "enum_declaration") => self.simple(site, DefKind::Enum, None).map(no_proto),
            (Lang::TypeScript | Lang::Tsx, "internal_module" | "module") => {
                self.simple(site, DefKind::Module, Some(ScopeKind::Module)).map(no_proto)
            }
            (Lang::TypeScript | Lang::Tsx, "variable_declarator") => {
                let top = matches!(site.parent_kind(1), Some("lexical_declaration" | "variable_declaration"))
                    && matches!(site.parent_kind(2), Some("program" | "export_statement" | "statement_block"))
                    && (site.parent_kind(2) != Some("statement_block")
                        || site.parent_kind(3) == Some("internal_module"));
                let name = node.child_by_field_name("name").filter(|n| n.kind() == "identifier")?;
                if !top {
                    return None;
                }
                let value = node.child_by_field_name("value");
                let is_fn =
                    value.is_some_and(|v| matches!(v.kind(), "arrow_function" | "function_expression" | "function"));
                let mut f = self.named(if is_fn { DefKind::Function } else { DefKind::Constant }, name, node);
                if is_fn {
                    f.params = value.and_then(|v| v.child_by_field_name("parameters"));
                    f.body = value.and_then(|v| v.child_by_field_name("body"));
                    f.opens = Some(ScopeKind::Function);
                }
                Some(f)
            }
            _ => None,
        }
    }

    /// A definition named by one node, with no parameters and no scope of its own.
    fn named(&self, kind: DefKind, name: Node<'t>, _at: Node<'t>) -> Found<'t> {
        Found {
            kind,
            name: self.text(name).to_string(),
            extra_scope: Vec::new(),
            params: None,
            body: None,
            prototype: false,
            opens: None,
            name_nodes: vec![name],
        }
    }

    /// A C/C++ function from its `function_declarator`: the name, a `Type::` scope written in
    /// it, the parameters.
    fn c_function(&self, decl: Node<'t>, in_type: bool) -> Option<Found<'t>> {
        let d = decl.child_by_field_name("declarator")?;
        let mut extra_scope = Vec::new();
        let mut name_node = d;
        let mut n = d;
        while n.kind() == "qualified_identifier" {
            if let Some(s) = n.child_by_field_name("scope") {
                extra_scope.push(self.type_name(s));
            }
            match n.child_by_field_name("name") {
                Some(x) => n = x,
                None => break,
            }
        }
        if matches!(
            n.kind(),
            "identifier" | "field_identifier" | "destructor_name" | "operator_name" | "template_function"
        ) {
            name_node = n;
        }
        let name = match name_node.kind() {
            "template_function" => name_node.child_by_field_name("name").map(|x| self.text(x)).unwrap_or(""),
            _ => self.text(name_node),
        };
        if name.is_empty() {
            return None;
        }
        let kind = if in_type || !extra_scope.is_empty() { DefKind::Method } else { DefKind::Function };
        Some(Found {
            kind,
            name: name.to_string(),
            extra_scope,
            params: decl.child_by_field_name("parameters"),
            body: None,
            prototype: false,
            opens: None,
            name_nodes: vec![name_node, n, d],
        })
    }

    /// `PHP_FUNCTION(strlen) { ... }` as C reads it: the macro is the type and the function a
    /// parenthesized declarator.
    fn macro_headed(&self, node: Node<'t>, declarator: Node<'t>) -> Option<Found<'t>> {
        let ty = node.child_by_field_name("type")?;
        let inner = declarator.named_child(0)?;
        let wrapped = declarator.kind() == "parenthesized_declarator"
            && inner.kind() == "identifier"
            && ty.kind() == "type_identifier"
            && macro_like(self.text(ty));
        if !wrapped {
            return None;
        }
        let mut f = self.named(DefKind::Function, inner, node);
        f.body = node.child_by_field_name("body");
        f.opens = Some(ScopeKind::Function);
        f.name_nodes.push(ty);
        Some(f)
    }

    /// The name inside a macro-wrapped definition read as a function declarator: `NAME(inner)`,
    /// NAME written as a macro, its only argument a bare name, which a parameter of a
    /// definition (`int x`, `void`) never is.
    fn macro_argument(&self, decl: Node<'t>) -> Option<Node<'t>> {
        let name = decl.child_by_field_name("declarator")?;
        let list = decl.child_by_field_name("parameters")?;
        if name.kind() != "identifier" || !macro_like(self.text(name)) || list.named_child_count() != 1 {
            return None;
        }
        let only = list.named_child(0)?;
        if only.kind() != "parameter_declaration" || only.child_by_field_name("declarator").is_some() {
            return None;
        }
        only.child_by_field_name("type").filter(|t| t.kind() == "type_identifier")
    }

    /// The parameters of a callable. `method`: a leading `self`/`cls` (Python) is the receiver,
    /// not an argument.
    pub(super) fn params(&self, list: Node<'t>, method: bool, def: Node<'t>) -> Params {
        let mut out = Params { list: Vec::new(), min: 0, max: Some(0) };
        let mut cursor = list.walk();
        let children: Vec<Node<'t>> =
            list.named_children(&mut cursor).filter(|c| !c.kind().contains("comment")).collect();
        let static_method = self.lang == Lang::Python && {
            let decorated = def.parent().filter(|p| p.kind() == "decorated_definition");
            decorated.is_some_and(|d| self.text(d).lines().any(|l| l.trim_start().starts_with("@staticmethod")))
        };
        let add = |out: &mut Params, text: String, required: bool, variadic: bool| {
            out.list.push(text);
            if variadic {
                out.max = None;
            } else {
                if required {
                    out.min += 1;
                }
                out.max = out.max.map(|m| m + 1);
            }
        };
        for (i, p) in children.iter().enumerate() {
            let kind = p.kind();
            let text = fold(self.text(*p));
            match (self.lang, kind) {
                (Lang::Python, "identifier" | "typed_parameter")
                    if i == 0
                        && method
                        && !static_method
                        && matches!(text.split(':').next().map(str::trim), Some("self" | "cls")) => {}
                (Lang::Python, "identifier" | "typed_parameter") => add(&mut out, text, true, false),
                (Lang::Python, "default_parameter" | "typed_default_parameter") => add(&mut out, text, false, false),
                (Lang::Python, "list_splat_pattern" | "dictionary_splat_pattern") => add(&mut out, text, false, true),
                (Lang::Python, _) => {}
                (Lang::Java, "formal_parameter") => {
                    let ty = p.child_by_field_name("type").map(|t| fold(self.text(t))).unwrap_or(text);
                    add(&mut out, ty, true, false)
                }
                (Lang::Java, "spread_parameter") => add(&mut out, text, false, true),
                (Lang::Java, _) => {}
                (Lang::Go, "parameter_declaration") => {
                    let ty = p.child_by_field_name("type").map(|t| fold(self.text(t))).unwrap_or_default();
                    let mut c = p.walk();
                    let names = p.children_by_field_name("name", &mut c).count().max(1);
                    for _ in 0..names {
                        add(&mut out, ty.clone(), true, false);
                    }
                }
                (Lang::Go, "variadic_parameter_declaration") => add(&mut out, text, false, true),
                (Lang::Go, _) => {}
                (Lang::C | Lang::Cpp, "parameter_declaration") => {
                    let void = children.len() == 1 && p.child_by_field_name("declarator").is_none() && text == "void";
                    if !void {
                        add(&mut out, self.c_param_type(*p), true, false);
                    }
                }
                (Lang::C | Lang::Cpp, "optional_parameter_declaration") => {
                    add(&mut out, self.c_param_type(*p), false, false)
                }
                (Lang::C | Lang::Cpp, "variadic_parameter" | "variadic_parameter_declaration") => {
                    add(&mut out, text, false, true)
                }
                (Lang::C | Lang::Cpp, "identifier") => add(&mut out, text, true, false), // macro parameters
                (Lang::C | Lang::Cpp, _) if self.text(*p) == "..." => add(&mut out, text, false, true),
                (Lang::C | Lang::Cpp, _) => {}
                (Lang::Rust, "parameter") => {
                    let ty = p.child_by_field_name("type").map(|t| fold(self.text(t))).unwrap_or(text);
                    add(&mut out, ty, true, false)
                }
                (Lang::Rust, "variadic_parameter") => add(&mut out, text, false, true),
                (Lang::Rust, _) => {}
                (Lang::TypeScript | Lang::Tsx, "required_parameter") => {
                    let rest = p.child_by_field_name("pattern").is_some_and(|x| x.kind() == "rest_pattern");
                    let optional = p.child_by_field_name("value").is_some();
                    let is_this = p.child_by_field_name("pattern").is_some_and(|x| x.kind() == "this");
                    if !is_this {
                        add(&mut out, text, !optional && !rest, rest)
                    }
                }
                (Lang::TypeScript | Lang::Tsx, "optional_parameter") => add(&mut out, text, false, false),
                (Lang::TypeScript | Lang::Tsx, _) => {}
            }
        }
        // Python's `(a, *, b)`: a bare `*` is a keyword_separator, not a parameter.
        out
    }

    /// A C/C++ parameter's type: its text without the parameter's own name (`const char *buf` →
    /// `const char *`), so a prototype and its definition compare.
    fn c_param_type(&self, p: Node<'t>) -> String {
        let full = self.text(p);
        let Some(name) = p.child_by_field_name("declarator").and_then(innermost_name) else { return fold(full) };
        let start = name.start_byte().saturating_sub(p.start_byte());
        let end = name.end_byte().saturating_sub(p.start_byte());
        let without = format!("{}{}", full.get(..start).unwrap_or(""), full.get(end..).unwrap_or(""));
        let without = match p.child_by_field_name("default_value") {
            Some(_) => without.split('=').next().unwrap_or("").to_string(),
            None => without,
        };
        fold(&without).replace(" *", "*").replace(" &", "&").replace(" [", "[")
    }
}

fn no_proto(f: Found<'_>) -> Found<'_> {
    Found { prototype: false, ..f }
}

/// Written as a macro: upper case, digits and underscores, with a letter (`PHP_FUNCTION`).
fn macro_like(text: &str) -> bool {
    text.len() >= 2
        && text.chars().any(|c| c.is_ascii_uppercase())
        && text.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// A C/C++ declarator's `function_declarator`, through pointers and references (`int *f(void)`).
fn function_declarator(mut n: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..8 {
        match n.kind() {
            "function_declarator" => return Some(n),
            "pointer_declarator" | "reference_declarator" | "parenthesized_declarator" | "attributed_declarator" => {
                n = n
                    .child_by_field_name("declarator")
                    .or_else(|| n.named_child(n.named_child_count().saturating_sub(1) as u32))?;
            }
            _ => return None,
        }
    }
    None
}

/// The identifier a C/C++ declarator names (`*buf[3]` → `buf`).
fn innermost_name(mut n: Node<'_>) -> Option<Node<'_>> {
    for _ in 0..8 {
        if matches!(n.kind(), "identifier" | "field_identifier" | "type_identifier") {
            return Some(n);
        }
        n = n.child_by_field_name("declarator").or_else(|| n.named_child(0))?;
    }
    None
}
