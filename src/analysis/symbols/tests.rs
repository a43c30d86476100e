//! Definitions, references and diff changes in each of the seven languages.

use super::*;

fn def<'a>(s: &'a Symbols, qualified: &str) -> &'a Definition {
    s.definitions
        .iter()
        .find(|d| d.qualified == qualified)
        .unwrap_or_else(|| panic!("no {qualified}: {:?}", s.definitions))
}

fn calls(s: &Symbols, name: &str) -> Vec<(bool, Option<usize>)> {
    s.references.iter().filter(|r| r.name == name && r.kind == RefKind::Call).map(|r| (r.qualified, r.args)).collect()
}

fn kinds(s: &Symbols, name: &str) -> Vec<RefKind> {
    s.references.iter().filter(|r| r.name == name).map(|r| r.kind).collect()
}

fn diff(path: &str, hunks: &str) -> String {
    format!("diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}")
}

fn summary(c: &FileChanges) -> Vec<(ChangeKind, String, Option<String>)> {
    c.changes.iter().map(|c| (c.kind, c.qualified.clone(), c.renamed_from.clone())).collect()
}

#[test]
fn python_definitions_references_and_changes() {
    let src = "import os, a.b as c\nfrom .utils import super_len, x as y\nTIMEOUT = 3\n\
               class Foo(Base):\n    limit: int = 3\n    def bar(self, a, b=1, *args, c, **kw) -> int:\n        \
               \"\"\"Uses super_len.\"\"\"\n        return super_len(a, *b) + self.baz(x=1)\n\
               @staticmethod\ndef top(a: Foo, /, b): pass\n";
    let s = extract(Lang::Python, src);
    let got: Vec<(DefKind, &str)> = s.definitions.iter().map(|d| (d.kind, d.qualified.as_str())).collect();
    assert_eq!(
        got,
        [
            (DefKind::Constant, "TIMEOUT"),
            (DefKind::Class, "Foo"),
            (DefKind::Field, "Foo.limit"),
            (DefKind::Method, "Foo.bar"),
            (DefKind::Function, "top")
        ]
    );
    let bar = def(&s, "Foo.bar");
    assert_eq!(bar.signature, "def bar(self, a, b=1, *args, c, **kw) -> int");
    let p = bar.params.as_ref().unwrap();
    assert_eq!((p.min, p.max), (2, None), "self is the receiver; c is keyword-only but required");
    assert_eq!(calls(&s, "super_len"), [(false, None)], "a spread hides the count");
    assert_eq!(calls(&s, "baz"), [(true, Some(1))]);
    assert!(kinds(&s, "super_len").contains(&RefKind::Import) && kinds(&s, "super_len").contains(&RefKind::Mention));
    assert!(kinds(&s, "Foo").contains(&RefKind::Type), "{:?}", kinds(&s, "Foo"));
    assert!(
        kinds(&s, "kw").is_empty() && kinds(&s, "x").iter().all(|k| *k == RefKind::Import),
        "bindings are not uses"
    );
    // An indented window (a method cut out of its class) still parses.
    let w = extract(Lang::Python, "    def bar(self, a):\n        x = fetch(a, 1)\n    return y\n");
    assert_eq!(calls(&w, "fetch"), [(false, Some(2))]);
    assert_eq!(w.definitions[0].name, "bar");
}

#[test]
fn python_rename_resign_and_removal() {
    let d = diff(
        "src/requests/utils.py",
        "@@ -10,6 +10,6 @@ import os\n-def super_len(o):\n+def complex_len(o):\n     return len(o)\n \n-def keep(a):\n+def keep(a, b):\n     pass\n@@ -40,4 +40,3 @@ class Session:\n     def send(self):\n         pass\n-    def close_all(self):\n-        pass\n",
    );
    let c = changes(Lang::Python, &d);
    assert_eq!(
        summary(&c),
        [
            (ChangeKind::Renamed, "complex_len".into(), Some("super_len".into())),
            (ChangeKind::Resigned, "keep".into(), None),
            (ChangeKind::Removed, "Session.close_all".into(), None)
        ]
    );
    assert_eq!(c.changes[2].def, DefKind::Method, "a function inside the header's class");
    let keep = &c.changes[1];
    assert_eq!((keep.old_params.as_ref().unwrap().max, keep.new_params.as_ref().unwrap().min), (Some(1), 2));
    // Where the changed lines sit: inside the renamed function, in `keep`, and (the removed method
    // being gone) in its class.
    assert!(c.touched.contains(&vec!["complex_len".to_string()]), "{:?}", c.touched);
    assert!(c.touched.contains(&vec!["Session".to_string()]), "{:?}", c.touched);
    // A definition replaced by an import of the same name is not removed.
    let moved = diff("p/core.py", "@@ -1,2 +1,1 @@\n-def slugify(s):\n-    return s\n+from p.text import slugify\n");
    assert!(changes(Lang::Python, &moved).changes.is_empty());
}

#[test]
fn a_body_change_inside_a_method_is_located_by_the_hunk_header() {
    let d = diff(
        "django/db/models/query.py",
        "@@ -900,7 +900,7 @@ class QuerySet:\n         clone = self._chain()\n-        clone.query.add_q(q)\n+        clone.query.add_q(~q)\n         return clone\n",
    );
    let c = changes(Lang::Python, &d);
    assert!(c.changes.is_empty());
    assert_eq!(c.touched, vec![vec!["QuerySet".to_string()]]);
    let d = diff(
        "django/db/models/query.py",
        "@@ -900,7 +900,7 @@ class QuerySet:\n     def _filter_or_exclude(self, negate, q):\n         clone = self._chain()\n-        clone.query.add_q(q)\n+        clone.query.add_q(~q)\n",
    );
    assert_eq!(changes(Lang::Python, &d).touched, vec![vec!["QuerySet".to_string(), "_filter_or_exclude".to_string()]]);
}

#[test]
fn java_methods_fields_overloads_and_calls() {
    let src = "package com.x;\nimport com.alibaba.fastjson2.JSONReader;\npublic interface JSON {\n    int MAX = 3;\n    \
               @SuppressWarnings(\"unchecked\")\n    static <T> T parseObject(String text, Type type, JSONReader.Context ctx) { return JSON.parse(text, ctx); }\n}\n\
               class A extends B { private int f = 1; A(int x) { super(x); } void m(String... xs) { new D(1, 2); obj.call(); } }\n";
    let s = extract(Lang::Java, src);
    let got: Vec<(DefKind, &str)> = s.definitions.iter().map(|d| (d.kind, d.qualified.as_str())).collect();
    assert_eq!(
        got,
        [
            (DefKind::Module, "com.x"),
            (DefKind::Interface, "JSON"),
            (DefKind::Constant, "JSON.MAX"),
            (DefKind::Method, "JSON.parseObject"),
            (DefKind::Class, "A"),
            (DefKind::Field, "A.f"),
            (DefKind::Method, "A.A"),
            (DefKind::Method, "A.m")
        ]
    );
    let p = def(&s, "JSON.parseObject");
    assert_eq!(p.signature, "static <T> T parseObject(String text, Type type, JSONReader.Context ctx)");
    assert_eq!(p.params.as_ref().unwrap().list, ["String", "Type", "JSONReader.Context"]);
    assert_eq!(def(&s, "A.m").params.as_ref().unwrap().max, None);
    assert_eq!(calls(&s, "parse"), [(true, Some(2))]);
    assert_eq!(calls(&s, "D"), [(false, Some(2))]);
    assert!(kinds(&s, "JSONReader").contains(&RefKind::Import));
    // A new overload is added, not a re-signature.
    let d = diff(
        "core/src/main/java/com/alibaba/fastjson2/JSON.java",
        "@@ -1281,6 +1281,10 @@ public interface JSON {\n     static <T> T parseObject(String text, Type type) {\n         return null;\n     }\n+    static <T> T parseObject(String text, Type type, JSONReader.Context context) {\n+        return null;\n+    }\n",
    );
    let c = changes(Lang::Java, &d);
    assert_eq!(summary(&c), [(ChangeKind::Added, "JSON.parseObject".into(), None)]);
    // The added overload is the changed location, not the whole interface.
    assert_eq!(c.touched, vec![vec!["JSON".to_string(), "parseObject".to_string()]]);
}

#[test]
fn go_receivers_fields_and_variadic_calls() {
    let src = "package reader\nimport (\n    \"fmt\"\n    io2 \"io\"\n)\nconst Max = 3\n\
               type Reader struct { buf []byte; n, m int }\ntype Iface interface { Read(p []byte) (int, error) }\n\
               func (r *Reader) Read(p []byte, xs ...int) (int, error) { return fmt.Println(r.buf, Helper(1, 2)) }\n\
               func Helper(a, b int) int { return Helper(xs...) }\n";
    let s = extract(Lang::Go, src);
    let names: Vec<&str> = s.definitions.iter().map(|d| d.qualified.as_str()).collect();
    for want in [
        "reader",
        "Max",
        "Reader",
        "Reader.buf",
        "Reader.n",
        "Reader.m",
        "Iface",
        "Iface.Read",
        "Reader.Read",
        "Helper",
    ] {
        assert!(names.contains(&want), "{want} in {names:?}");
    }
    assert_eq!(def(&s, "Helper").params.as_ref().unwrap().list, ["int", "int"]);
    assert_eq!(def(&s, "Reader.Read").params.as_ref().unwrap().max, None);
    assert!(def(&s, "Iface.Read").prototype);
    assert_eq!(calls(&s, "Helper"), [(false, Some(2)), (false, None)]);
    assert_eq!(calls(&s, "Println"), [(true, Some(2))]);
    assert!(kinds(&s, "fmt").contains(&RefKind::Import) && kinds(&s, "io").contains(&RefKind::Import));
    let d = diff(
        "pkg/reader/reader.go",
        "@@ -10,3 +10,3 @@ type Reader struct {\n-func (r *Reader) ReadAll() ([]byte, error) {\n+func (r *Reader) ReadFull() ([]byte, error) {\n \treturn r.buf, nil\n }\n",
    );
    assert_eq!(
        summary(&changes(Lang::Go, &d)),
        [(ChangeKind::Renamed, "Reader.ReadFull".into(), Some("ReadAll".into()))]
    );
}

#[test]
fn c_prototypes_and_definitions_compare_by_parameter_types() {
    let src = "#include \"util.h\"\n#define MAX 3\n#define SQ(x) ((x)*(x))\n\
               typedef struct node { int v; struct node *next; } node_t;\nenum color { RED, GREEN };\n\
               int parse_header(const char *buf, size_t len);\nstatic int *helper(void) { return NULL; }\n\
               int parse_header(const char *data, size_t n) { return helper() + count(data, n); }\n";
    let s = extract(Lang::C, src);
    let protos: Vec<&Definition> = s.definitions.iter().filter(|d| d.name == "parse_header").collect();
    assert_eq!(protos.len(), 2);
    assert!(protos[0].prototype && !protos[1].prototype);
    assert_eq!(protos[0].params, protos[1].params, "names differ, types agree");
    assert_eq!(protos[0].params.as_ref().unwrap().list, ["const char*", "size_t"]);
    assert_eq!(def(&s, "helper").params.as_ref().unwrap().max, Some(0), "(void) takes nothing");
    for (name, kind) in [
        ("MAX", DefKind::Constant),
        ("SQ", DefKind::Macro),
        ("node", DefKind::Struct),
        ("node_t", DefKind::TypeAlias),
        ("RED", DefKind::Constant),
        ("next", DefKind::Field),
    ] {
        assert!(s.definitions.iter().any(|d| d.name == name && d.kind == kind), "{name}: {:?}", s.definitions);
    }
    assert_eq!(kinds(&s, "util.h"), [RefKind::Import]);
    assert_eq!(calls(&s, "count"), [(false, Some(2))]);
    // A search-output line: a statement, read inside a body.
    let line = extract_line(Lang::C, "    int r = parse_header(buf, n, 0);");
    assert_eq!(calls(&line, "parse_header"), [(false, Some(3))]);
    let proto = extract_line(Lang::C, "int parse_header(const char *buf, size_t len);");
    assert!(proto.definitions.iter().any(|d| d.name == "parse_header" && d.prototype), "{:?}", proto);
}

#[test]
fn a_macro_wrapped_c_definition_is_the_function_inside() {
    let src = "PHP_FUNCTION(strlen)\n{\n    zend_string *str;\n    RETURN_LONG(ZSTR_LEN(str));\n}\n\nstatic int UPPER(void) { return 0; }\n\nint add(int a, int b) { return a + b; }\n";
    for lang in [Lang::C, Lang::Cpp] {
        let s = extract(lang, src);
        let names: Vec<&str> = s.definitions.iter().map(|d| d.name.as_str()).collect();
        assert!(names.contains(&"strlen") && !names.contains(&"PHP_FUNCTION"), "{lang:?}: {names:?}");
        assert!(
            names.contains(&"UPPER") && names.contains(&"add"),
            "{lang:?}: a function of `void` is no macro: {names:?}"
        );
    }
    // A change inside it is located in the function, not the macro.
    let d = diff(
        "ext/standard/string.c",
        "@@ -1,5 +1,5 @@\n PHP_FUNCTION(strlen)\n {\n     zend_string *str;\n-    RETURN_LONG(ZSTR_LEN(str));\n+    RETURN_LONG((zend_long) ZSTR_LEN(str));\n }\n",
    );
    assert_eq!(changes(Lang::C, &d).touched, vec![vec!["strlen".to_string()]]);
}

#[test]
fn cpp_classes_namespaces_out_of_class_methods() {
    let src = "#include <vector>\nnamespace ns {\nclass Widget : public Base {\n public:\n  Widget(int w);\n  \
               int resize(int w, int h = 0) const;\n  virtual ~Widget();\n private:\n  int width_;\n};\n\
               template <typename T> T maxOf(T a, T b) { return a > b ? a : b; }\n\
               int Widget::resize(int w, int h) const { return helper(w) + this->other(h); }\nusing Size = int;\n}\n";
    let s = extract(Lang::Cpp, src);
    let names: Vec<(&str, bool)> = s.definitions.iter().map(|d| (d.qualified.as_str(), d.prototype)).collect();
    for want in [
        ("ns", false),
        ("ns::Widget", false),
        ("ns::Widget::Widget", true),
        ("ns::Widget::resize", true),
        ("ns::Widget::width_", false),
        ("ns::maxOf", false),
        ("ns::Widget::resize", false),
        ("ns::Size", false),
    ] {
        assert!(names.contains(&want), "{want:?} in {names:?}");
    }
    let resize: Vec<&Definition> = s.definitions.iter().filter(|d| d.qualified == "ns::Widget::resize").collect();
    assert_eq!(resize[0].params.as_ref().unwrap().min, 1);
    assert_eq!(resize[0].params.as_ref().unwrap().list, resize[1].params.as_ref().unwrap().list);
    assert_eq!(calls(&s, "other"), [(true, Some(1))]);
}

#[test]
fn rust_impls_traits_and_uses() {
    let src = "use std::collections::{HashMap, HashSet as Set};\npub const MAX: usize = 3;\n\
               pub struct Reader { buf: Vec<u8>, pub n: usize }\npub enum Kind { A, B(u8) }\n\
               pub trait Read { fn read(&mut self, buf: &mut [u8]) -> usize; }\n\
               impl Read for Reader { fn read(&mut self, buf: &mut [u8]) -> usize { helper(buf, 1); self.other(2); Reader::new(); 0 } }\n\
               impl<T> Wrapper<T> { pub fn new() -> Self { todo!() } }\nmod inner { fn f() {} }\n";
    let s = extract(Lang::Rust, src);
    let names: Vec<(&str, DefKind)> = s.definitions.iter().map(|d| (d.qualified.as_str(), d.kind)).collect();
    for want in [
        ("MAX", DefKind::Constant),
        ("Reader", DefKind::Struct),
        ("Reader::buf", DefKind::Field),
        ("Kind::B", DefKind::Constant),
        ("Read::read", DefKind::Method),
        ("Reader::read", DefKind::Method),
        ("Wrapper::new", DefKind::Method),
        ("inner::f", DefKind::Function),
    ] {
        assert!(names.contains(&want), "{want:?} in {names:?}");
    }
    let read = def(&s, "Reader::read");
    assert_eq!(
        (read.params.as_ref().unwrap().min, read.signature.as_str()),
        (1, "fn read(&mut self, buf: &mut [u8]) -> usize")
    );
    assert_eq!(calls(&s, "other"), [(true, Some(1))]);
    assert_eq!(calls(&s, "new"), [(true, Some(0))]);
    assert!(kinds(&s, "HashSet").contains(&RefKind::Import) && !kinds(&s, "Set").contains(&RefKind::Import));
    let d = diff(
        "src/reader.rs",
        "@@ -20,4 +20,4 @@ impl Reader {\n-    pub fn fill(&mut self, n: usize) -> usize {\n+    pub fn fill(&mut self, n: usize, strict: bool) -> usize {\n         n\n     }\n",
    );
    let c = changes(Lang::Rust, &d);
    assert_eq!(summary(&c), [(ChangeKind::Resigned, "Reader::fill".into(), None)]);
    assert_eq!(c.changes[0].new_params.as_ref().unwrap().min, 2);
}

#[test]
fn typescript_classes_arrow_functions_and_optional_parameters() {
    let src = "import { a, b as c } from './x';\nexport const MAX = 3;\n\
               export const handler = (x: number, y?: string) => x;\n\
               export function fetchData(url: string, opts: Opts = {}, ...rest: any[]): Promise<Data> { return get(url, 1); }\n\
               export class Client extends Base { private n: number = 1; async send(msg: Msg): Promise<void> { this.fetch(msg); new Foo(1); } }\n\
               export interface Opts { timeout?: number; go(a: number): void }\ntype T = string | number;\nnamespace NS { export function f() {} }\n";
    let s = extract(Lang::TypeScript, src);
    let names: Vec<(&str, DefKind)> = s.definitions.iter().map(|d| (d.qualified.as_str(), d.kind)).collect();
    for want in [
        ("MAX", DefKind::Constant),
        ("handler", DefKind::Function),
        ("fetchData", DefKind::Function),
        ("Client", DefKind::Class),
        ("Client.n", DefKind::Field),
        ("Client.send", DefKind::Method),
        ("Opts.timeout", DefKind::Field),
        ("Opts.go", DefKind::Method),
        ("T", DefKind::TypeAlias),
        ("NS.f", DefKind::Function),
    ] {
        assert!(names.contains(&want), "{want:?} in {names:?}");
    }
    let h = def(&s, "handler").params.clone().unwrap();
    assert_eq!((h.min, h.max), (1, Some(2)));
    let f = def(&s, "fetchData").params.clone().unwrap();
    assert_eq!((f.min, f.max), (1, None));
    assert_eq!(calls(&s, "fetch"), [(true, Some(1))]);
    assert_eq!(calls(&s, "Foo"), [(false, Some(1))]);
    assert!(kinds(&s, "b").contains(&RefKind::Import) && kinds(&s, "c").is_empty());
    let tsx = extract(Lang::Tsx, "export function App(props: Props) { return <div>{render(props.x)}</div>; }\n");
    assert_eq!(calls(&tsx, "render"), [(false, Some(1))]);
}

#[test]
fn broken_and_hostile_text_never_panics() {
    for lang in [Lang::Python, Lang::Java, Lang::TypeScript, Lang::Tsx, Lang::Go, Lang::C, Lang::Cpp, Lang::Rust] {
        for text in ["", "((((((((", "}}}}", "def (", "\u{0}\u{feff}", &"(".repeat(5000), "@@ -1 +1 @@\n-x\n+y"] {
            let _ = extract(lang, text);
            let _ = extract_line(lang, text);
            let _ = changes(lang, text);
        }
    }
}

#[test]
fn a_python_method_re_signed_in_a_class_hunk_counts_its_arguments_without_self() {
    let d = diff(
        "lib/client.py",
        "@@ -20,3 +20,3 @@ class Client:\n-    def send(self, msg):\n+    def send(self, msg, retries):\n         pass\n",
    );
    let c = changes(Lang::Python, &d);
    let send = &c.changes[0];
    assert_eq!((send.kind, send.def), (ChangeKind::Resigned, DefKind::Method));
    assert_eq!((send.old_params.as_ref().unwrap().min, send.new_params.as_ref().unwrap().min), (1, 2));
}

#[test]
fn assignments_in_a_hunk_deeper_than_a_class_body_are_locals() {
    let d = diff(
        "a/ts.py",
        "@@ -50,2 +50,3 @@ class BaseTimeSeries:\n         required = self._required\n+        missing = [c for c in required if c not in self.colnames]\n         return missing\n",
    );
    assert!(changes(Lang::Python, &d).changes.is_empty());
    let d = diff("a/ts.py", "@@ -5,1 +5,2 @@ class BaseTimeSeries:\n     _required = []\n+    _strict = True\n");
    assert_eq!(summary(&changes(Lang::Python, &d)), [(ChangeKind::Added, "BaseTimeSeries._strict".into(), None)]);
}

#[test]
fn a_comment_between_a_python_head_and_its_body_is_no_part_of_the_signature() {
    // django-16560 (the corpus): the deprecation comment on the first line of the body.
    let s = extract(
        Lang::Python,
        "class B:\n    def __init__(self, *args, name=None):\n        # RemovedInDjango60Warning.\n        pass\n",
    );
    assert_eq!(def(&s, "B.__init__").signature, "def __init__(self, *args, name=None)");
}

#[test]
fn a_class_whose_head_is_a_context_line_of_a_hunk_scopes_its_methods() {
    // django-16560: the hunk starts in the previous class's body (its header names that class),
    // and the next class's head is a context line.
    let d = diff(
        "django/db/models/constraints.py",
        "@@ -74,9 +76,8 @@ class BaseConstraint:\n             and self.m != self.d\n         ):\n             kwargs[\"m\"] = self.m\n-        return (path, (), kwargs)\n+        return (path, (), dict(kwargs))\n \n-\n class CheckConstraint(BaseConstraint):\n-    def __init__(self, *, check, name):\n+    def __init__(self, *, check, name, code=None):\n         self.check = check\n",
    );
    let c = changes(Lang::Python, &d);
    assert_eq!(summary(&c), [(ChangeKind::Resigned, "CheckConstraint.__init__".to_string(), None)], "{:?}", c.changes);
    // The changed line before the next class sits in the class the header names.
    assert_eq!(c.touched, [vec!["BaseConstraint".to_string()], vec!["CheckConstraint".into(), "__init__".into()]]);
}

#[test]
fn a_nesting_deeper_than_the_cap_is_not_walked_to_its_bottom() {
    // A patch adding a list nested 10,000 deep, a name at every level (the walk was quadratic in
    // depth: each name looked at every node above it), then a definition after it.
    let depth = 10_000;
    let line = format!("x = {}1{}", "[a, ".repeat(depth), "]".repeat(depth));
    let s = extract(Lang::Python, &format!("{line}\ndef after():\n    return b\n"));
    let a = s.references.iter().filter(|r| r.name == "a").count();
    assert!(a > 1000 && a < depth, "the names above the cap are read, not those below: {a}");
    assert!(s.definitions.iter().any(|d| d.name == "after"), "{:?}", s.definitions);
    assert_eq!(kinds(&s, "b"), [RefKind::Name]);
    let c = changes(Lang::Python, &diff("d.py", &format!("@@ -0,0 +1,3 @@\n+{line}\n+def after():\n+    return b\n")));
    assert!(summary(&c).iter().any(|(k, q, _)| *k == ChangeKind::Added && q == "after"), "{:?}", summary(&c));
}

#[test]
fn a_function_header_before_a_hunk_that_defines_its_sibling_is_not_its_scope() {
    // sphinx-style: the header names the method before the hunk; the hunk changes the next one.
    let d = diff(
        "sphinx/domains/python.py",
        "@@ -304,7 +304,7 @@ def make_xref(self, rolename: str, domain: str, target: str,\n         return result\n \n     def make_xrefs(self, rolename: str, domain: str, target: str):\n-        delims = r'(\\s*[\\[\\]\\(\\),](?:\\s*or\\s)?\\s*|\\s+or\\s+|\\s*\\.\\.\\.\\s*)'\n+        delims = r'(\\s*[\\[\\]\\(\\),](?:\\s*o[r]\\s)?\\s*|\\s+or\\s+|\\s*\\|\\s*|\\.\\.\\.\\s*)'\n         delims_re = re.compile(delims)\n",
    );
    assert_eq!(changes(Lang::Python, &d).touched, vec![vec!["make_xrefs".to_string()]]);
    // A method added after the header's: the added method is the location, and a changed line
    // before it is still in the header's method.
    let d = diff(
        "a/timer.py",
        "@@ -10,3 +10,7 @@ def reset(self):\n-        self.x = 0\n+        self.x = None\n         return self\n+\n+    def clear(self):\n+        self.y = 0\n",
    );
    let mut touched = changes(Lang::Python, &d).touched;
    touched.sort();
    assert_eq!(touched, vec![vec!["clear".to_string()], vec!["reset".to_string()]]);
    // A class header is still the scope of the methods in its hunk.
    let d = diff(
        "a/timer.py",
        "@@ -10,3 +10,3 @@ class Timer:\n     def clear(self):\n-        self.y = 0\n+        self.y = 1\n",
    );
    assert_eq!(changes(Lang::Python, &d).touched, vec![vec!["Timer".to_string(), "clear".to_string()]]);
}

/// Issue 43: a removed line whose text starts `-- ` (a docstring's rule) ended the hunk, so
/// the change below it was read apart from the function it sits in (its docstring's closing
/// quotes opening a string that swallowed it).
#[test]
fn a_removed_line_reading_like_a_header_does_not_end_its_hunk() {
    let hunk = "@@ -1,6 +1,5 @@\n def f():\n     \"\"\"Doc.\n--- old rule\n     \"\"\"\n-    return 1\n+    return 2\n";
    let c = changes(Lang::Python, &diff("h.py", hunk));
    assert_eq!(c.touched, [vec!["f".to_string()]]);
}
