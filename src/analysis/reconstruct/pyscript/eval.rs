//! The recogniser: a script's syntax tree walked statement by statement, with values only for
//! what edit scripts are made of (string literals and f-strings of them, lists, dicts, a file's
//! text, paths, open files, compiled patterns). Anything else is `Unknown`; a file written
//! with an unknown text is an edit whose diff a later view must say; a write to a file whose
//! name is unknown, or a statement that may write in a way not read here, gives up the whole
//! script ([`Abort`]).

use super::literal;
use super::text::{Doc, replace_n};
use crate::analysis::reconstruct::known::Known;
use std::collections::HashMap;
use tree_sitter::Node;

/// The script cannot be read as edits: what it wrote is left to the views that follow.
#[derive(Debug)]
pub struct Abort;

type R<T> = Result<T, Abort>;

/// A call's positional and keyword arguments.
type Args = (Vec<Val>, Vec<(String, Val)>);

/// A call's arguments, by position and by keyword.
struct CallArgs {
    pos: Vec<Val>,
    kw: Vec<(String, Val)>,
}

impl CallArgs {
    /// The argument named `name`, or else the one at position `i`.
    fn get(&self, i: usize, name: &str) -> Option<Val> {
        self.kw.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()).or_else(|| self.pos.get(i).cloned())
    }
}

#[derive(Debug, Clone)]
pub enum Val {
    Str(String),
    Int(i64),
    Bool(bool),
    Nothing,
    List(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    /// A file's text (read from it, or made from it).
    Text(Doc),
    /// A file's lines with their newlines (`readlines()`) when some were never shown (a file
    /// known whole gives a `List` of strings).
    Lines(Doc),
    Path(String),
    /// An open file: its path and whether it was opened to write (`w`, `a`).
    File(String, bool),
    Regex(String, i64),
    Module(&'static str),
    /// A file's text not known where plain replacements changed it: the file it was read
    /// from, and what they were (old, new).
    Replaced(Option<String>, Vec<(String, String)>),
    Unknown,
}

/// What the script left in a file it wrote.
#[derive(Debug, Clone)]
pub enum Written {
    Text(Doc),
    /// Not known, but the script replaced these literals (old, new) in what it read.
    Replaced(Vec<(String, String)>),
    Unknown,
}

/// Bounds on a script's walk: statements run, the size of any text made.
const MAX_STATEMENTS: usize = 20_000;
const MAX_TEXT: usize = 1 << 24;
const MAX_DEPTH: usize = 8;

enum Flow {
    Next,
    Return(Val),
    Break,
    Continue,
    /// `sys.exit()`, `raise`: nothing after it runs.
    Stop,
}

pub struct Eval<'t, 'r> {
    src: &'t [u8],
    vars: HashMap<String, Val>,
    funcs: HashMap<String, Node<'t>>,
    /// Files written, in the order first written, and what they hold now.
    pub written: Vec<(String, Written)>,
    read: &'r dyn Fn(&str) -> Known,
    steps: usize,
    depth: usize,
}

/// Names whose calls change nothing on disk.
const HARMLESS: &[&str] = &["print", "str", "repr", "int", "sorted", "range", "isinstance", "hasattr"];

impl<'t, 'r> Eval<'t, 'r> {
    pub fn new(src: &'t [u8], read: &'r dyn Fn(&str) -> Known) -> Eval<'t, 'r> {
        let mut vars = HashMap::new();
        vars.insert("__name__".to_string(), Val::Str("__main__".into()));
        Eval { src, vars, funcs: HashMap::new(), written: Vec::new(), read, steps: 0, depth: 0 }
    }

    fn text(&self, n: Node<'_>) -> &'t str {
        std::str::from_utf8(&self.src[n.byte_range()]).unwrap_or("")
    }

    pub fn module(&mut self, root: Node<'t>) -> R<()> {
        self.block(root).map(|_| ())
    }

    fn block(&mut self, n: Node<'t>) -> R<Flow> {
        let mut cursor = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        for k in kids {
            match self.statement(k)? {
                Flow::Next => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn statement(&mut self, n: Node<'t>) -> R<Flow> {
        self.steps += 1;
        if self.steps > MAX_STATEMENTS || n.has_error() {
            return Err(Abort);
        }
        match n.kind() {
            "expression_statement" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for k in kids {
                    match k.kind() {
                        "assignment" => self.assign(k)?,
                        "augmented_assignment" => self.augmented(k)?,
                        "call" => {
                            if self.is_exit(k) {
                                return Ok(Flow::Stop);
                            }
                            self.call(k)?;
                        }
                        "string" | "concatenated_string" | "integer" | "identifier" => {}
                        _ => self.opaque(k)?,
                    }
                }
                Ok(Flow::Next)
            }
            "import_statement"
            | "import_from_statement"
            | "future_import_statement"
            | "pass_statement"
            | "comment"
            | "global_statement"
            | "nonlocal_statement"
            | "class_definition" => Ok(Flow::Next),
            "function_definition" => {
                if let Some(name) = n.child_by_field_name("name") {
                    self.funcs.insert(self.text(name).to_string(), n);
                }
                Ok(Flow::Next)
            }
            "decorated_definition" => Ok(Flow::Next),
            "return_statement" => {
                let v = match n.named_child(0) {
                    Some(e) => self.expr(e)?,
                    None => Val::Nothing,
                };
                Ok(Flow::Return(v))
            }
            "break_statement" => Ok(Flow::Break),
            "continue_statement" => Ok(Flow::Continue),
            "raise_statement" => Ok(Flow::Stop),
            "assert_statement" => match n.named_child(0).map(|c| self.expr(c)).transpose()?.and_then(truth) {
                Some(true) => Ok(Flow::Next),
                Some(false) => Ok(Flow::Stop),
                None => Err(Abort),
            },
            "if_statement" => self.if_statement(n),
            "for_statement" => self.for_statement(n),
            "with_statement" => self.with_statement(n),
            "try_statement" => {
                let Some(body) = n.child_by_field_name("body") else { return Err(Abort) };
                let flow = self.block(body)?;
                let mut c = n.walk();
                let fin: Vec<Node<'t>> = n.named_children(&mut c).filter(|k| k.kind() == "finally_clause").collect();
                for f in fin {
                    if let Some(b) = f.named_children(&mut f.walk()).find(|k| k.kind() == "block") {
                        self.block(b)?;
                    }
                }
                Ok(flow)
            }
            _ => {
                self.opaque(n)?;
                Ok(Flow::Next)
            }
        }
    }

    /// A statement or expression not read here: harmless unless it may write (then the script
    /// is given up); the names it may assign become unknown.
    fn opaque(&mut self, n: Node<'t>) -> R<()> {
        let t = self.text(n);
        if ["write", "open(", "os.", "subprocess", "shutil", "insert", "append", "extend", "exec("]
            .iter()
            .any(|w| t.contains(w))
        {
            return Err(Abort);
        }
        self.forget_assigned(n);
        Ok(())
    }

    /// Every name `n` may assign becomes unknown.
    fn forget_assigned(&mut self, n: Node<'t>) {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if matches!(x.kind(), "assignment" | "augmented_assignment" | "for_statement" | "as_pattern")
                && let Some(left) = x.child_by_field_name("left").or_else(|| x.child_by_field_name("alias"))
            {
                self.forget_targets(left);
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
    }

    fn forget_targets(&mut self, n: Node<'t>) {
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if x.kind() == "identifier" {
                self.vars.insert(self.text(x).to_string(), Val::Unknown);
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
    }

    fn is_exit(&self, call: Node<'t>) -> bool {
        call.child_by_field_name("function")
            .is_some_and(|f| matches!(self.text(f), "sys.exit" | "exit" | "quit" | "os._exit"))
    }

    fn if_statement(&mut self, n: Node<'t>) -> R<Flow> {
        let cond = n.child_by_field_name("condition").map(|c| self.expr(c)).transpose()?.and_then(truth);
        match cond {
            Some(true) => return self.field_block(n, "consequence"),
            None => return self.unknown_branches(n),
            Some(false) => {}
        }
        let mut c = n.walk();
        let alts: Vec<Node<'t>> = n.children_by_field_name("alternative", &mut c).collect();
        for alt in alts {
            match alt.kind() {
                "elif_clause" => {
                    let cond = alt.child_by_field_name("condition").map(|c| self.expr(c)).transpose()?.and_then(truth);
                    match cond {
                        Some(true) => return self.field_block(alt, "consequence"),
                        Some(false) => continue,
                        None => return self.unknown_branches(n),
                    }
                }
                _ => return self.field_block(alt, "body"),
            }
        }
        Ok(Flow::Next)
    }

    /// An `if` whose condition is not known: harmless when no branch writes or stops.
    fn unknown_branches(&mut self, n: Node<'t>) -> R<Flow> {
        let t = self.text(n);
        if t.contains("exit(") || t.contains("raise") || t.contains("return") {
            return Err(Abort);
        }
        self.opaque(n)?;
        Ok(Flow::Next)
    }

    fn field_block(&mut self, n: Node<'t>, field: &str) -> R<Flow> {
        match n.child_by_field_name(field) {
            Some(b) => self.block(b),
            None => Err(Abort),
        }
    }

    fn for_statement(&mut self, n: Node<'t>) -> R<Flow> {
        let (Some(left), Some(right), Some(body)) =
            (n.child_by_field_name("left"), n.child_by_field_name("right"), n.child_by_field_name("body"))
        else {
            return Err(Abort);
        };
        let items = match self.expr(right)? {
            Val::List(items) => items,
            Val::Dict(pairs) => pairs.into_iter().map(|(k, _)| k).collect(),
            _ => {
                self.opaque(n)?;
                return Ok(Flow::Next);
            }
        };
        for item in items {
            self.bind(left, item)?;
            match self.block(body)? {
                Flow::Break => break,
                Flow::Next | Flow::Continue => {}
                other => return Ok(other),
            }
        }
        Ok(Flow::Next)
    }

    fn with_statement(&mut self, n: Node<'t>) -> R<Flow> {
        let mut stack = vec![n];
        let mut items = Vec::new();
        while let Some(x) = stack.pop() {
            if x.kind() == "with_item" {
                items.push(x);
                continue;
            }
            if x.kind() == "block" {
                continue;
            }
            let mut c = x.walk();
            stack.extend(x.named_children(&mut c));
        }
        items.reverse();
        for item in items {
            let Some(value) = item.child_by_field_name("value") else { return Err(Abort) };
            if value.kind() == "as_pattern" {
                let (Some(e), Some(alias)) = (value.named_child(0), value.child_by_field_name("alias")) else {
                    return Err(Abort);
                };
                let v = self.expr(e)?;
                self.bind(alias, v)?;
            } else {
                self.expr(value)?;
            }
        }
        self.field_block(n, "body")
    }

    fn bind(&mut self, target: Node<'t>, v: Val) -> R<()> {
        match target.kind() {
            "identifier" => {
                self.vars.insert(self.text(target).to_string(), v);
            }
            "as_pattern_target" | "parenthesized_expression" => match target.named_child(0) {
                Some(inner) => self.bind(inner, v)?,
                None => return Err(Abort),
            },
            "pattern_list" | "tuple_pattern" | "list_pattern" | "tuple" | "list" => {
                let mut c = target.walk();
                let names: Vec<Node<'t>> = target.named_children(&mut c).collect();
                match v {
                    Val::List(items) if items.len() == names.len() => {
                        for (n, item) in names.into_iter().zip(items) {
                            self.bind(n, item)?;
                        }
                    }
                    _ => self.forget_targets(target),
                }
            }
            "subscript" if self.slice_assign(target, &v)? => {}
            // `d[k] = v`, `obj.attr = v`: the object is no longer what it was.
            "subscript" | "attribute" => {
                if let Some(obj) = target.child_by_field_name("value").or_else(|| target.child_by_field_name("object"))
                {
                    self.forget_targets(obj);
                }
            }
            _ => return Err(Abort),
        }
        Ok(())
    }

    /// `lines[a:b] = [...]` on a name bound to lines: spliced; false when not such a slice.
    fn slice_assign(&mut self, target: Node<'t>, v: &Val) -> R<bool> {
        let (Some(obj), Some(slice)) = (target.child_by_field_name("value"), target.child_by_field_name("subscript"))
        else {
            return Ok(false);
        };
        if obj.kind() != "identifier" || slice.kind() != "slice" {
            return Ok(false);
        }
        // The bounds before and after the colon (`lines[a:]`, `lines[:b]`).
        let (mut lo, mut hi, mut past) = (None, None, false);
        let mut c = slice.walk();
        let kids: Vec<Node<'t>> = slice.children(&mut c).collect();
        for k in kids {
            if k.kind() == ":" {
                if past {
                    return Ok(false);
                }
                past = true;
            } else if k.is_named() {
                let bound = match self.expr(k)? {
                    Val::Int(i) if i >= 0 => i as usize,
                    _ => return Ok(false),
                };
                if past { hi = Some(bound) } else { lo = Some(bound) }
            }
        }
        let name = self.text(obj).to_string();
        let new = match (self.vars.get(&name).cloned(), v) {
            (Some(Val::Lines(d)), Val::List(items)) => {
                let mut text = String::new();
                for i in items {
                    let Val::Str(s) = i else { return Ok(false) };
                    text.push_str(s);
                }
                match (lo.unwrap_or(0), hi) {
                    (a, Some(b)) => d.splice_lines(a, b, &text).map_or(Val::Unknown, Val::Lines),
                    _ => Val::Unknown,
                }
            }
            (Some(Val::List(mut l)), Val::List(items)) => {
                let a = lo.unwrap_or(0).min(l.len());
                let b = hi.unwrap_or(l.len()).clamp(a, l.len());
                l.splice(a..b, items.iter().cloned());
                Val::List(l)
            }
            _ => Val::Unknown,
        };
        self.vars.insert(name, new);
        Ok(true)
    }

    fn assign(&mut self, n: Node<'t>) -> R<()> {
        let Some(left) = n.child_by_field_name("left") else { return Err(Abort) };
        let v = match n.child_by_field_name("right") {
            Some(r) if r.kind() == "assignment" => {
                self.assign(r)?;
                r.child_by_field_name("left").map(|l| self.expr(l)).transpose()?.unwrap_or(Val::Unknown)
            }
            Some(r) => self.expr(r)?,
            None => return Ok(()),
        };
        self.bind(left, v)
    }

    fn augmented(&mut self, n: Node<'t>) -> R<()> {
        let (Some(left), Some(right)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
            return Err(Abort);
        };
        let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
        let (a, b) = (self.expr(left)?, self.expr(right)?);
        let v = if op == "+=" { add(a, b)? } else { Val::Unknown };
        self.bind(left, v)
    }

    fn expr(&mut self, n: Node<'t>) -> R<Val> {
        Ok(match n.kind() {
            "string" => self.string(n)?,
            "concatenated_string" => {
                let mut out = String::new();
                let mut c = n.walk();
                let parts: Vec<Node<'t>> = n.named_children(&mut c).collect();
                for p in parts {
                    match self.string(p)? {
                        Val::Str(s) => out.push_str(&s),
                        _ => return Ok(Val::Unknown),
                    }
                }
                Val::Str(out)
            }
            "integer" => self.text(n).replace('_', "").parse().map(Val::Int).unwrap_or(Val::Unknown),
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            "none" => Val::Nothing,
            "identifier" => {
                let name = self.text(n);
                match self.vars.get(name) {
                    Some(v) => v.clone(),
                    None => match name {
                        "re" => Val::Module("re"),
                        "Path" => Val::Module("Path"),
                        _ => Val::Unknown,
                    },
                }
            }
            "parenthesized_expression" => match n.named_child(0) {
                Some(i) => self.expr(i)?,
                None => Val::Unknown,
            },
            "list" | "tuple" | "expression_list" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).filter(|k| k.kind() != "comment").collect();
                let mut items = Vec::new();
                for k in kids {
                    if k.kind() == "list_splat" {
                        return Ok(Val::Unknown);
                    }
                    items.push(self.expr(k)?);
                }
                Val::List(items)
            }
            "dictionary" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).filter(|k| k.kind() != "comment").collect();
                let mut pairs = Vec::new();
                for k in kids {
                    let (Some(key), Some(value)) = (k.child_by_field_name("key"), k.child_by_field_name("value"))
                    else {
                        return Ok(Val::Unknown);
                    };
                    pairs.push((self.expr(key)?, self.expr(value)?));
                }
                Val::Dict(pairs)
            }
            "binary_operator" => {
                let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
                    return Ok(Val::Unknown);
                };
                let op = n.child_by_field_name("operator").map(|o| self.text(o)).unwrap_or("");
                let (a, b) = (self.expr(l)?, self.expr(r)?);
                match (op, a, b) {
                    ("+", a, b) => add(a, b)?,
                    ("|", Val::Int(a), Val::Int(b)) => Val::Int(a | b),
                    ("-", Val::Int(a), Val::Int(b)) => Val::Int(a - b),
                    ("*", Val::Str(s), Val::Int(k)) if (0..=4096).contains(&k) => Val::Str(s.repeat(k as usize)),
                    ("/", Val::Path(p), Val::Str(s)) => Val::Path(format!("{}/{s}", p.trim_end_matches('/'))),
                    _ => Val::Unknown,
                }
            }
            "comparison_operator" => self.compare(n)?,
            "not_operator" => {
                match n.child_by_field_name("argument").map(|a| self.expr(a)).transpose()?.and_then(truth) {
                    Some(b) => Val::Bool(!b),
                    None => Val::Unknown,
                }
            }
            "boolean_operator" => {
                let (Some(l), Some(r)) = (n.child_by_field_name("left"), n.child_by_field_name("right")) else {
                    return Ok(Val::Unknown);
                };
                let and = n.child_by_field_name("operator").is_some_and(|o| self.text(o) == "and");
                let a = self.expr(l)?;
                match (truth(a.clone()), and) {
                    (Some(true), true) | (Some(false), false) => self.expr(r)?,
                    (Some(_), _) => a,
                    (None, _) => Val::Unknown,
                }
            }
            "subscript" => {
                let (Some(v), Some(i)) = (n.child_by_field_name("value"), n.child_by_field_name("subscript")) else {
                    return Ok(Val::Unknown);
                };
                match (self.expr(v)?, self.expr(i)?) {
                    (Val::List(items), Val::Int(k)) => {
                        let at = if k < 0 { items.len() as i64 + k } else { k };
                        usize::try_from(at).ok().and_then(|a| items.get(a).cloned()).unwrap_or(Val::Unknown)
                    }
                    (Val::Lines(d), Val::Int(k)) if k >= 0 => d.line(k as usize).map_or(Val::Unknown, Val::Str),
                    (Val::Dict(pairs), key) => pairs
                        .into_iter()
                        .find(|(k, _)| same(k, &key) == Some(true))
                        .map(|(_, v)| v)
                        .unwrap_or(Val::Unknown),
                    _ => Val::Unknown,
                }
            }
            "attribute" => {
                let (Some(obj), Some(attr)) = (n.child_by_field_name("object"), n.child_by_field_name("attribute"))
                else {
                    return Ok(Val::Unknown);
                };
                match (self.expr(obj)?, self.text(attr)) {
                    (Val::Module("re"), flag) => literal::flag_value(flag).map(Val::Int).unwrap_or(Val::Unknown),
                    (Val::Unknown, "Path") if self.text(obj) == "pathlib" => Val::Module("Path"),
                    _ => Val::Unknown,
                }
            }
            "call" => self.call(n)?,
            "conditional_expression" => {
                let mut c = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut c).collect();
                let [a, cond, b] = kids.as_slice() else { return Ok(Val::Unknown) };
                match truth(self.expr(*cond)?) {
                    Some(true) => self.expr(*a)?,
                    Some(false) => self.expr(*b)?,
                    None => Val::Unknown,
                }
            }
            _ => {
                self.opaque(n)?;
                Val::Unknown
            }
        })
    }

    fn compare(&mut self, n: Node<'t>) -> R<Val> {
        let mut c = n.walk();
        let operands: Vec<Node<'t>> = n.named_children(&mut c).collect();
        let mut c = n.walk();
        let ops: Vec<&str> = n.children_by_field_name("operators", &mut c).map(|o| self.text(o)).collect();
        let ([a, b], [op]) = (operands.as_slice(), ops.as_slice()) else { return Ok(Val::Unknown) };
        let (a, b) = (self.expr(*a)?, self.expr(*b)?);
        let r = match *op {
            "in" => contains(&b, &a),
            "not in" => contains(&b, &a).map(|x| !x),
            "==" => same(&a, &b),
            "!=" => same(&a, &b).map(|x| !x),
            _ => None,
        };
        Ok(r.map(Val::Bool).unwrap_or(Val::Unknown))
    }

    fn string(&mut self, n: Node<'t>) -> R<Val> {
        if n.kind() != "string" {
            return self.expr(n);
        }
        let mut c = n.walk();
        let kids: Vec<Node<'t>> = n.children(&mut c).collect();
        let prefix = kids
            .first()
            .filter(|k| k.kind() == "string_start")
            .map(|k| self.text(*k).trim_end_matches(['\'', '"']).to_ascii_lowercase())
            .unwrap_or_default();
        if prefix.contains('b') {
            return Ok(Val::Unknown);
        }
        let (raw, fmt) = (prefix.contains('r'), prefix.contains('f'));
        let mut out = String::new();
        for k in kids {
            match k.kind() {
                "string_start" | "string_end" => {}
                "string_content" => {
                    let body = self.text(k);
                    let body = if fmt { body.replace("{{", "{").replace("}}", "}") } else { body.to_string() };
                    match literal::unescape(&body, raw) {
                        Some(s) => out.push_str(&s),
                        None => return Ok(Val::Unknown),
                    }
                }
                "interpolation" => {
                    let mut c = k.walk();
                    let parts: Vec<Node<'t>> = k.named_children(&mut c).collect();
                    let [e] = parts.as_slice() else { return Ok(Val::Unknown) };
                    match self.expr(*e)? {
                        Val::Str(s) => out.push_str(&s),
                        Val::Int(i) => out.push_str(&i.to_string()),
                        _ => return Ok(Val::Unknown),
                    }
                }
                _ => return Ok(Val::Unknown),
            }
        }
        if out.len() > MAX_TEXT {
            return Err(Abort);
        }
        Ok(Val::Str(out))
    }

    /// Positional and keyword arguments.
    fn args(&mut self, n: Node<'t>) -> R<Args> {
        let Some(list) = n.child_by_field_name("arguments") else { return Ok((Vec::new(), Vec::new())) };
        let mut c = list.walk();
        let kids: Vec<Node<'t>> = list.named_children(&mut c).filter(|k| k.kind() != "comment").collect();
        let (mut pos, mut kw) = (Vec::new(), Vec::new());
        for k in kids {
            match k.kind() {
                "keyword_argument" => {
                    let (Some(name), Some(v)) = (k.child_by_field_name("name"), k.child_by_field_name("value")) else {
                        return Err(Abort);
                    };
                    let v = self.expr(v)?;
                    kw.push((self.text(name).to_string(), v));
                }
                "list_splat" | "dictionary_splat" => pos.push(Val::Unknown),
                _ => pos.push(self.expr(k)?),
            }
        }
        Ok((pos, kw))
    }

    fn call(&mut self, n: Node<'t>) -> R<Val> {
        let Some(f) = n.child_by_field_name("function") else { return Err(Abort) };
        let (pos, kw) = self.args(n)?;
        let args = CallArgs { pos, kw };
        if f.kind() == "identifier" {
            let name = self.text(f);
            if let Some(def) = self.funcs.get(name).copied() {
                return self.user_call(def, args.pos);
            }
            return self.builtin_call(n, name, &args);
        }
        let (Some(obj), Some(attr)) = (f.child_by_field_name("object"), f.child_by_field_name("attribute")) else {
            return self.unknown_call(n);
        };
        let method = self.text(attr);
        if self.text(obj) == "pathlib" && method == "Path" {
            return Ok(match args.get(0, "") {
                Some(Val::Str(p)) => Val::Path(p),
                _ => Val::Unknown,
            });
        }
        if obj.kind() == "identifier" && MUTATORS.contains(&method) {
            self.mutate(obj, method, &args.pos);
            return Ok(Val::Nothing);
        }
        let target = self.expr(obj)?;
        self.method_call(n, obj, target, method, &args)
    }

    /// A call of a builtin by name (`open`, `len`, `enumerate`, `Path`...).
    fn builtin_call(&mut self, n: Node<'t>, name: &str, args: &CallArgs) -> R<Val> {
        let arg = |i: usize, name: &str| args.get(i, name);
        Ok(match name {
            "open" => match (arg(0, "file"), arg(1, "mode")) {
                (Some(Val::Str(p)), mode) => self.open(p, mode)?,
                (Some(Val::Path(p)), mode) => self.open(p, mode)?,
                _ => return self.unknown_call(n),
            },
            "enumerate" => match arg(0, "") {
                Some(Val::List(items)) => Val::List(
                    items.into_iter().enumerate().map(|(i, v)| Val::List(vec![Val::Int(i as i64), v])).collect(),
                ),
                _ => Val::Unknown,
            },
            "len" => match arg(0, "") {
                Some(Val::List(items)) => Val::Int(items.len() as i64),
                Some(Val::Str(s)) => Val::Int(s.chars().count() as i64),
                Some(Val::Lines(d)) => d.known.len().map_or(Val::Unknown, |n| Val::Int(n as i64)),
                _ => Val::Unknown,
            },
            "Path" => match arg(0, "") {
                Some(Val::Str(p)) => Val::Path(p),
                _ => Val::Unknown,
            },
            _ if HARMLESS.contains(&name) => Val::Unknown,
            _ => return self.unknown_call(n),
        })
    }

    /// A list (or the lines of a file) named by `obj` changed in place: `append`, `extend`,
    /// `insert`.
    fn mutate(&mut self, obj: Node<'t>, method: &str, pos: &[Val]) {
        let name = self.text(obj).to_string();
        let list = self.vars.get(&name).cloned();
        let changed = match (list, method, pos) {
            (Some(Val::List(mut l)), "append", [v]) => {
                l.push(v.clone());
                Val::List(l)
            }
            (Some(Val::List(mut l)), "extend", [Val::List(more)]) => {
                l.extend(more.iter().cloned());
                Val::List(l)
            }
            (Some(Val::Lines(d)), "insert", [Val::Int(i), Val::Str(line)]) if *i >= 0 => {
                d.splice_lines(*i as usize, *i as usize, line).map_or(Val::Unknown, Val::Lines)
            }
            (Some(Val::List(mut l)), "insert", [Val::Int(i), v]) => {
                let len = l.len() as i64;
                let at = if *i < 0 { (len + i).max(0) } else { (*i).min(len) };
                l.insert(at as usize, v.clone());
                Val::List(l)
            }
            _ => Val::Unknown,
        };
        self.vars.insert(name, changed);
    }

    /// A method called on a value: strings, file texts, files, paths, dicts, `re`.
    fn method_call(&mut self, n: Node<'t>, obj: Node<'t>, target: Val, method: &str, args: &CallArgs) -> R<Val> {
        let arg = |i: usize, name: &str| args.get(i, name);
        let pos = &args.pos;
        let count = |v: Option<Val>| -> Option<Option<usize>> {
            match v {
                None => Some(None),
                Some(Val::Int(k)) if k < 0 => Some(None),
                Some(Val::Int(k)) => Some(Some(k as usize)),
                _ => None,
            }
        };
        Ok(match (target, method) {
            (Val::Str(s), "replace") => match (arg(0, ""), arg(1, ""), count(arg(2, "count"))) {
                (Some(Val::Str(a)), Some(Val::Str(b)), Some(k)) => Val::Str(replace_n(&s, &a, &b, k).0),
                _ => Val::Unknown,
            },
            (Val::Text(d), "replace") => match (arg(0, ""), arg(1, ""), count(arg(2, "count"))) {
                (Some(Val::Str(a)), Some(Val::Str(b)), Some(k)) => match d.replace(&a, &b, k) {
                    Some(d) => Val::Text(d),
                    None if a.is_empty() => Val::Unknown,
                    None => Val::Replaced(d.from, vec![(a, b)]),
                },
                _ => Val::Unknown,
            },
            (Val::Replaced(from, mut pairs), "replace") => match (arg(0, ""), arg(1, "")) {
                (Some(Val::Str(a)), Some(Val::Str(b))) if !a.is_empty() => {
                    pairs.push((a, b));
                    Val::Replaced(from, pairs)
                }
                _ => Val::Unknown,
            },
            (Val::Str(s), "join") if s.is_empty() && matches!(arg(0, ""), Some(Val::Lines(_))) => match arg(0, "") {
                Some(Val::Lines(d)) => Val::Text(d),
                _ => Val::Unknown,
            },
            (Val::Str(s), "join") => match arg(0, "") {
                Some(Val::List(items)) => {
                    let mut parts = Vec::new();
                    for i in items {
                        match i {
                            Val::Str(p) => parts.push(p),
                            _ => return Ok(Val::Unknown),
                        }
                    }
                    Val::Str(parts.join(&s))
                }
                _ => Val::Unknown,
            },
            (Val::Str(s), "startswith") => match arg(0, "") {
                Some(Val::Str(p)) => Val::Bool(s.starts_with(&p)),
                _ => Val::Unknown,
            },
            (Val::Str(s), "endswith") => match arg(0, "") {
                Some(Val::Str(p)) => Val::Bool(s.ends_with(&p)),
                _ => Val::Unknown,
            },
            (Val::Text(d), "splitlines") => {
                let keep = matches!(arg(0, "keepends"), Some(Val::Bool(true)));
                lines_of(&d, keep)
            }
            (Val::File(p, false), "readlines") => match self.read_file(&p) {
                Val::Text(d) => lines_of(&d, true),
                _ => Val::Unknown,
            },
            (Val::Str(s), "strip") if pos.is_empty() => Val::Str(s.trim().to_string()),
            (Val::Str(s), "lstrip") if pos.is_empty() => Val::Str(s.trim_start().to_string()),
            (Val::Str(s), "rstrip") if pos.is_empty() => Val::Str(s.trim_end().to_string()),
            (Val::Dict(pairs), "items") => Val::List(pairs.into_iter().map(|(k, v)| Val::List(vec![k, v])).collect()),
            (Val::Dict(pairs), "keys") => Val::List(pairs.into_iter().map(|(k, _)| k).collect()),
            (Val::Dict(pairs), "values") => Val::List(pairs.into_iter().map(|(_, v)| v).collect()),
            (Val::File(p, false), "read") if pos.is_empty() => self.read_file(&p),
            (Val::Path(p), "read_text") => self.read_file(&p),
            (Val::File(p, true), "write") => {
                let v = arg(0, "").unwrap_or(Val::Unknown);
                self.write(&p, v, true);
                Val::Unknown
            }
            (Val::File(p, true), "writelines") => {
                let v = match arg(0, "") {
                    Some(Val::List(items)) => items.into_iter().try_fold(Val::Str(String::new()), add)?,
                    Some(Val::Lines(d)) => Val::Text(d),
                    _ => Val::Unknown,
                };
                self.write(&p, v, true);
                Val::Unknown
            }
            (Val::Path(p), "write_text") => {
                self.write(&p, arg(0, "data").unwrap_or(Val::Unknown), false);
                Val::Unknown
            }
            (Val::File(..), "close" | "flush" | "seek") => Val::Unknown,
            (Val::Path(_), "exists" | "is_file" | "resolve") => Val::Unknown,
            (Val::Module("re"), "compile") => match (arg(0, "pattern"), arg(1, "flags")) {
                (Some(Val::Str(p)), None) => Val::Regex(p, 0),
                (Some(Val::Str(p)), Some(Val::Int(f))) => Val::Regex(p, f),
                _ => Val::Unknown,
            },
            (Val::Module("re"), "sub") => {
                let re = match (arg(0, "pattern"), arg(4, "flags")) {
                    (Some(Val::Str(p)), None) => Val::Regex(p, 0),
                    (Some(Val::Str(p)), Some(Val::Int(f))) => Val::Regex(p, f),
                    (Some(r @ Val::Regex(..)), None) => r,
                    _ => return Ok(Val::Unknown),
                };
                sub(re, arg(1, "repl"), arg(2, "string"), count(arg(3, "count")))
            }
            (re @ Val::Regex(..), "sub") => sub(re, arg(0, "repl"), arg(1, "string"), count(arg(2, "count"))),
            (Val::Text(_) | Val::Str(_) | Val::List(_) | Val::Lines(_) | Val::Regex(..), _) => Val::Unknown,
            (Val::Module("re"), "search" | "match" | "findall" | "escape" | "finditer") => Val::Unknown,
            (Val::Unknown, _) if matches!(self.text(obj), "sys.stdout" | "sys.stderr" | "os.path") => Val::Unknown,
            _ => return self.unknown_call(n),
        })
    }

    /// A call not read here: unknown, unless it may write (the script is given up).
    fn unknown_call(&mut self, n: Node<'t>) -> R<Val> {
        self.opaque(n)?;
        Ok(Val::Unknown)
    }

    fn user_call(&mut self, def: Node<'t>, args: Vec<Val>) -> R<Val> {
        if self.depth >= MAX_DEPTH {
            return Err(Abort);
        }
        let Some(body) = def.child_by_field_name("body") else { return Err(Abort) };
        let saved = self.vars.clone();
        if let Some(params) = def.child_by_field_name("parameters") {
            let mut c = params.walk();
            let names: Vec<Node<'t>> = params.named_children(&mut c).collect();
            for (i, p) in names.into_iter().enumerate() {
                let name = match p.kind() {
                    "identifier" => p,
                    "default_parameter" | "typed_parameter" | "typed_default_parameter" => {
                        match p.child_by_field_name("name").or_else(|| p.named_child(0)) {
                            Some(n) => n,
                            None => return Err(Abort),
                        }
                    }
                    _ => return Err(Abort),
                };
                let v = match args.get(i) {
                    Some(v) => v.clone(),
                    None => match p.child_by_field_name("value") {
                        Some(d) => self.expr(d)?,
                        None => Val::Unknown,
                    },
                };
                self.vars.insert(self.text(name).to_string(), v);
            }
        }
        self.depth += 1;
        let flow = self.block(body);
        self.depth -= 1;
        // Names of the caller come back; what the function assigned to them is its own.
        self.vars = saved;
        match flow? {
            Flow::Return(v) => Ok(v),
            Flow::Stop => Err(Abort),
            _ => Ok(Val::Nothing),
        }
    }

    fn open(&mut self, path: String, mode: Option<Val>) -> R<Val> {
        let mode = match mode {
            None => String::from("r"),
            Some(Val::Str(m)) => m,
            Some(_) => return Err(Abort),
        };
        if mode.contains('b') {
            return Err(Abort);
        }
        if mode.contains('w') {
            self.write(&path, Val::Str(String::new()), false);
            return Ok(Val::File(path, true));
        }
        if mode.contains('a') || mode.contains('+') || mode.contains('x') {
            self.write(&path, Val::Unknown, false);
            return Ok(Val::File(path, true));
        }
        Ok(Val::File(path, false))
    }

    /// The file's text as the script sees it: what it wrote there, or what the run knows.
    fn read_file(&self, path: &str) -> Val {
        match self.written.iter().find(|(p, _)| p == path) {
            Some((_, Written::Text(d))) => Val::Text(d.clone()),
            Some((_, Written::Unknown | Written::Replaced(_))) => Val::Unknown,
            None => Val::Text(Doc { from: Some(path.to_string()), ..Doc::new((self.read)(path)) }),
        }
    }

    /// `v` written to `path`: the whole file, or after what this open file wrote (`more`).
    fn write(&mut self, path: &str, v: Val, more: bool) {
        let at = match self.written.iter().position(|(p, _)| p == path) {
            Some(i) => i,
            None => {
                self.written.push((path.to_string(), Written::Unknown));
                self.written.len() - 1
            }
        };
        let before = match (&self.written[at].1, more) {
            (Written::Text(d), true) => d.known.text().filter(|t| t.is_empty() || d.known.is_whole()),
            (_, false) => Some(String::new()),
            _ => None,
        };
        self.written[at].1 = match (before, v) {
            // A literal over a file the run knows whole keeps the lines it repeats.
            (Some(b), Val::Str(s)) => Written::Text(Doc::overwritten(&(self.read)(path), &(b + &s))),
            (Some(b), Val::Text(d)) if b.is_empty() => Written::Text(d),
            // Replacements in this file's own text, not another's written here.
            (Some(b), Val::Replaced(from, pairs)) if b.is_empty() && from.as_deref() == Some(path) => {
                Written::Replaced(pairs)
            }
            _ => Written::Unknown,
        };
    }
}

/// Methods that change the list they are called on.
const MUTATORS: &[&str] = &["append", "insert", "extend", "pop", "remove", "sort", "reverse", "clear", "update"];

/// A whole text as its lines (`splitlines`, `readlines`): `keep`, with their newlines.
fn lines_of(d: &Doc, keep: bool) -> Val {
    let Some(text) = d.known.text() else {
        return if keep { Val::Lines(d.clone()) } else { Val::Unknown };
    };
    let end = if keep { "\n" } else { "" };
    Val::List(text.lines().map(|l| Val::Str(format!("{l}{end}"))).collect())
}

/// Python's truth of a known value.
fn truth(v: Val) -> Option<bool> {
    match v {
        Val::Bool(b) => Some(b),
        Val::Int(i) => Some(i != 0),
        Val::Str(s) => Some(!s.is_empty()),
        Val::Nothing => Some(false),
        Val::List(l) => Some(!l.is_empty()),
        _ => None,
    }
}

fn same(a: &Val, b: &Val) -> Option<bool> {
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => Some(x == y),
        (Val::Int(x), Val::Int(y)) => Some(x == y),
        (Val::Bool(x), Val::Bool(y)) => Some(x == y),
        _ => None,
    }
}

/// `needle in hay`.
fn contains(hay: &Val, needle: &Val) -> Option<bool> {
    match (hay, needle) {
        (Val::Str(h), Val::Str(n)) => Some(h.contains(n.as_str())),
        (Val::Text(d), Val::Str(n)) => d.contains(n),
        (Val::List(items), n) => {
            let mut unknown = false;
            for i in items {
                match same(i, n) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    _ => {}
                }
            }
            (!unknown).then_some(false)
        }
        _ => None,
    }
}

fn add(a: Val, b: Val) -> R<Val> {
    Ok(match (a, b) {
        (Val::Str(a), Val::Str(b)) => {
            if a.len() + b.len() > MAX_TEXT {
                return Err(Abort);
            }
            Val::Str(a + &b)
        }
        (Val::Int(a), Val::Int(b)) => Val::Int(a.saturating_add(b)),
        (Val::List(mut a), Val::List(b)) => {
            a.extend(b);
            Val::List(a)
        }
        _ => Val::Unknown,
    })
}

/// `re.sub` of a compiled pattern on a text.
fn sub(re: Val, repl: Option<Val>, on: Option<Val>, count: Option<Option<usize>>) -> Val {
    let (Val::Regex(p, flags), Some(Val::Str(repl)), Some(count)) = (re, repl, count) else { return Val::Unknown };
    let (Some(re), Some(t)) = (literal::regex(&p, flags), literal::template(&repl)) else { return Val::Unknown };
    let count = count.filter(|k| *k > 0);
    match on {
        Some(Val::Text(d)) => d.sub(&re, &t, count).map_or(Val::Unknown, Val::Text),
        Some(Val::Str(s)) => Val::Str(super::text::sub_n(&re, &s, &t, count).0),
        _ => Val::Unknown,
    }
}
