//! Compiler diagnostics in what a step showed: javac (plain and through Gradle), Maven's
//! `[ERROR] path:[line,col]` lines, and tsc (`path(line,col): error TSnnnn:` and its `--pretty`
//! form `path:line:col - error TSnnnn:`). Read for what a changed definition left stale: names
//! that no longer resolve, calls with a number of arguments that no longer fits, and members that
//! no longer override or implement what their supertype declares.

use super::commands::join;
use super::paths::Roots;
use crate::classify::input::Step;
use regex::Regex;
use std::sync::LazyLock;

/// What a diagnostic says is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A name that does not resolve (javac `cannot find symbol`; tsc TS2304, TS2305, TS2339,
    /// TS2551, TS2552, TS2724).
    Unresolved { name: String },
    /// A call whose number of arguments does not fit (javac `cannot be applied to given types`,
    /// `no suitable method found`; tsc TS2554, TS2555). `name`: the callee when the message or
    /// the printed source line names it; `expected`: tsc's count (`3`, `2-3`, `at least 2`).
    Arity { name: Option<String>, got: usize, expected: Option<(usize, Option<usize>)> },
    /// A class that no longer implements its supertype's member `name` (javac `does not override
    /// abstract method`; tsc TS2416, TS2420, TS2515).
    Override { name: String, owner: Option<String> },
}

/// One diagnostic: where, what, and its code as the compiler wrote it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub step: usize,
    /// Repository-relative.
    pub path: String,
    pub line: usize,
    /// `javac`, or tsc's code (`TS2554`).
    pub code: String,
    pub problem: Problem,
}

fn re(s: &str) -> Regex {
    // The patterns are literals of this file: a bad one is a programming error caught by tests.
    Regex::new(s).unwrap_or_else(|e| panic!("pattern {s}: {e}"))
}

/// javac (`path:12: error: msg`) and Maven (`path:[12,5] msg`, after `[ERROR] ` is cut).
static JAVAC: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(\S+\.java):(?:\[(\d+),\d+\]|(\d+):\s*error:)\s*(?:error:\s*)?(.*)$"));
/// tsc, plain and `--pretty` (colours already gone).
static TSC: LazyLock<Regex> = LazyLock::new(|| {
    re(r"^(\S+\.(?:ts|tsx|mts|cts|js|jsx)|\S+\.d\.ts)(?:\((\d+),\d+\)|:(\d+):\d+)\s*[:-]\s*error\s+(TS\d+):\s*(.*)$")
});
static QUOTED: LazyLock<Regex> = LazyLock::new(|| re(r"'([^']*)'"));
static SYMBOL: LazyLock<Regex> =
    LazyLock::new(|| re(r"^symbol:\s+(?:method|variable|class|interface|enum|static)\s+(\w+)"));
static APPLIED: LazyLock<Regex> =
    LazyLock::new(|| re(r"^(?:method|constructor) (\w+) in (?:class|interface|enum|record) \S+ cannot be applied"));
static NO_SUITABLE: LazyLock<Regex> =
    LazyLock::new(|| re(r"^no suitable (?:method|constructor) found for (\w+)\((.*)\)"));
static ABSTRACT: LazyLock<Regex> = LazyLock::new(|| re(r"does not override abstract method (\w+)\(.*\) in ([\w.]+)"));
static EXPECTED: LazyLock<Regex> =
    LazyLock::new(|| re(r"^Expected (at least )?(\d+)(?:-(\d+))? arguments?, but got (\d+)"));
/// tsc's continuation line of TS2420 (`Property 'x' is missing in type 'A' but required in type 'B'.`).
static MISSING: LazyLock<Regex> =
    LazyLock::new(|| re(r"Property '(\w+)' is missing in type '[^']*' but required in type '(\w+)"));

/// Every diagnostic of every step's output.
pub fn diagnostics(steps: &[Step], roots: &Roots) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = Vec::new();
    for s in steps {
        for d in read(&s.observation) {
            let path = roots.rel(&join(s.working_dir.as_deref(), &d.0), None);
            let d = Diagnostic { step: s.index as usize, path, line: d.1, code: d.2, problem: d.3 };
            // Maven prints each error twice (as it compiles, then in the build failure).
            if !out.iter().any(|x| x.step == d.step && x.path == d.path && x.line == d.line && x.problem == d.problem) {
                out.push(d);
            }
        }
    }
    out
}

/// The diagnostics of one output: (path as printed, line, code, problem).
fn read(output: &str) -> Vec<(String, usize, String, Problem)> {
    // Most output holds no diagnostic: skip it without reading it line by line.
    if !output.contains(".java:") && !output.contains("error TS") {
        return Vec::new();
    }
    let lines: Vec<&str> = output.lines().map(clean).collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        // The lines after a diagnostic, up to the next one: javac's source line, caret and
        // `symbol:`/`found:` details; tsc's continuation and `--pretty` source excerpt.
        let rest = || lines[i + 1..].iter().take(8).take_while(|l| !JAVAC.is_match(l) && !TSC.is_match(l));
        if let Some(c) = JAVAC.captures(line) {
            let Some(n) = c.get(2).or(c.get(3)).and_then(|m| m.as_str().parse().ok()) else { continue };
            let msg = c.get(4).map_or("", |m| m.as_str());
            if let Some(p) = javac(msg, &rest().copied().collect::<Vec<_>>()) {
                out.push((c[1].to_string(), n, "javac".to_string(), p));
            }
        } else if let Some(c) = TSC.captures(line) {
            let Some(n) = c.get(2).or(c.get(3)).and_then(|m| m.as_str().parse().ok()) else { continue };
            if let Some(p) = tsc(&c[4], &c[5], &rest().copied().collect::<Vec<_>>()) {
                out.push((c[1].to_string(), n, c[4].to_string(), p));
            }
        }
    }
    out
}

/// A line without Maven's level prefix, ANSI colours and surrounding blanks.
fn clean(line: &str) -> &str {
    let l = line.trim();
    let l = l.strip_prefix("[ERROR]").map_or(l, str::trim);
    l.trim_start_matches("\u{1b}[0m").trim()
}

fn javac(msg: &str, rest: &[&str]) -> Option<Problem> {
    if msg.starts_with("cannot find symbol") {
        let name = rest.iter().find_map(|l| SYMBOL.captures(l)).map(|c| c[1].to_string())?;
        return Some(Problem::Unresolved { name });
    }
    if let Some(c) = APPLIED.captures(msg) {
        let found = rest.iter().find_map(|l| l.strip_prefix("found:"))?.trim();
        let got = if found == "no arguments" { 0 } else { top_level_count(found) };
        return Some(Problem::Arity { name: Some(c[1].to_string()), got, expected: None });
    }
    if let Some(c) = NO_SUITABLE.captures(msg) {
        return Some(Problem::Arity { name: Some(c[1].to_string()), got: top_level_count(&c[2]), expected: None });
    }
    let c = ABSTRACT.captures(msg)?;
    let owner = c[2].rsplit('.').next().map(str::to_string);
    Some(Problem::Override { name: c[1].to_string(), owner })
}

fn tsc(code: &str, msg: &str, rest: &[&str]) -> Option<Problem> {
    let quoted: Vec<&str> = QUOTED.captures_iter(msg).filter_map(|c| c.get(1)).map(|m| m.as_str()).collect();
    match code {
        // Cannot find name 'x' / Property 'x' does not exist on type 'T' (Did you mean...).
        "TS2304" | "TS2552" | "TS2339" | "TS2551" => {
            quoted.first().map(|n| Problem::Unresolved { name: n.to_string() })
        }
        // Module '"./m"' has no exported member 'x' / '"./m"' has no exported member named 'x'.
        "TS2305" | "TS2724" => quoted.get(1).map(|n| Problem::Unresolved { name: n.to_string() }),
        "TS2554" | "TS2555" => {
            let c = EXPECTED.captures(msg)?;
            let min: usize = c[2].parse().ok()?;
            let max = match (c.get(1), c.get(3)) {
                (Some(_), _) => None,
                (None, Some(m)) => Some(m.as_str().parse().ok()?),
                (None, None) => Some(min),
            };
            let got = c[4].parse().ok()?;
            Some(Problem::Arity { name: pretty_callee(rest, got), got, expected: Some((min, max)) })
        }
        // Property 'x' in type 'A' is not assignable to the same property in base type 'B'.
        "TS2416" => {
            Some(Problem::Override { name: quoted.first()?.to_string(), owner: quoted.get(2).map(|s| s.to_string()) })
        }
        // Non-abstract class 'A' does not implement inherited abstract member 'x' from class 'B'.
        "TS2515" => {
            Some(Problem::Override { name: quoted.get(1)?.to_string(), owner: quoted.get(2).map(|s| s.to_string()) })
        }
        // Class 'A' incorrectly implements interface 'B'. / Property 'x' is missing in ...
        "TS2420" => {
            let c = rest.iter().find_map(|l| MISSING.captures(l))?;
            Some(Problem::Override { name: c[1].to_string(), owner: Some(c[2].to_string()) })
        }
        _ => None,
    }
}

/// The callee of a `--pretty` diagnostic's source excerpt (`12     total(a, b)`), read with
/// tree-sitter: the call there with `got` arguments, when there is exactly one.
fn pretty_callee(rest: &[&str], got: usize) -> Option<String> {
    use crate::analysis::symbols::{Lang, RefKind, extract_line};
    let source = rest.iter().find_map(|l| {
        let (n, code) = l.split_once(char::is_whitespace)?;
        n.chars().all(|c| c.is_ascii_digit()).then_some(code)
    })?;
    let sym = extract_line(Lang::TypeScript, source);
    let mut calls = sym.references.iter().filter(|r| r.kind == RefKind::Call && r.args == Some(got));
    match (calls.next(), calls.next()) {
        (Some(r), None) => Some(r.name.clone()),
        _ => None,
    }
}

/// How many comma-separated items `list` holds outside `<>`, `()` and `[]` (javac's `found:`
/// types: `Map<String,Integer>,int` is two).
fn top_level_count(list: &str) -> usize {
    if list.trim().is_empty() {
        return 0;
    }
    let mut depth = 0i32;
    let mut n = 1;
    for c in list.chars() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => n += 1,
            _ => {}
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(out: &str) -> Vec<(String, usize, String, Problem)> {
        read(out)
    }

    #[test]
    fn maven_cannot_find_symbol_printed_twice() {
        let out = "[INFO] -------------------------------------------------------------\n\
[ERROR] COMPILATION ERROR : \n\
[INFO] -------------------------------------------------------------\n\
[ERROR] /workspace/jsonkit/src/main/java/io/jsonkit/Loader.java:[21,22] cannot find symbol\n\
  symbol:   method readObjectStrict(java.lang.Class<java.util.Map>)\n\
  location: variable in of type io.jsonkit.JsonReader\n\
[INFO] 1 error\n\
[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.11.0:compile (default-compile) on project jsonkit: Compilation failure\n\
[ERROR] /workspace/jsonkit/src/main/java/io/jsonkit/Loader.java:[21,22] cannot find symbol\n\
[ERROR]   symbol:   method readObjectStrict(java.lang.Class<java.util.Map>)\n\
[ERROR]   location: variable in of type io.jsonkit.JsonReader\n";
        let p = problems(out);
        assert_eq!(p.len(), 2, "read per line; deduplicated per step by diagnostics()");
        assert_eq!(p[0].0, "/workspace/jsonkit/src/main/java/io/jsonkit/Loader.java");
        assert_eq!(p[0].1, 21);
        assert_eq!(p[0].3, Problem::Unresolved { name: "readObjectStrict".into() });
        let step = Step::sample(3, "mvn -q compile", out);
        let roots = Roots::learn(
            ["/workspace/jsonkit/src/main/java/io/jsonkit/JsonReader.java"].into_iter(),
            &["src/main/java/io/jsonkit/JsonReader.java".to_string()],
            None,
        );
        let d = diagnostics(&[step], &roots);
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].path, "src/main/java/io/jsonkit/Loader.java");
    }

    #[test]
    fn javac_and_gradle_arity_with_generic_types() {
        let out = "> Task :compileJava FAILED\n\
/home/gradle/project/src/main/java/shop/Invoice.java:14: error: method format in class Prices cannot be applied to given types;\n\
        return Prices.format(total, currency);\n\
                     ^\n\
  required: double,String,Locale\n\
  found:    double,String\n\
  reason: actual and formal argument lists differ in length\n\
src/main/java/shop/Cart.java:9: error: no suitable method found for format(double,Map<String,Integer>,int)\n\
1 error\n";
        let p = problems(out);
        assert_eq!(p[0].3, Problem::Arity { name: Some("format".into()), got: 2, expected: None });
        assert_eq!(p[0].1, 14);
        assert_eq!(p[1].3, Problem::Arity { name: Some("format".into()), got: 3, expected: None });
    }

    #[test]
    fn javac_abstract_method_not_implemented() {
        let out = "[ERROR] /w/src/main/java/geo/Circle.java:[3,8] geo.Circle is not abstract and does not override abstract method surface(double) in geo.Shape\n";
        assert_eq!(problems(out)[0].3, Problem::Override { name: "surface".into(), owner: Some("Shape".into()) });
    }

    #[test]
    fn tsc_plain_and_pretty() {
        let out = "src/invoice.ts(12,5): error TS2554: Expected 3 arguments, but got 2.\n\
src/index.ts(1,10): error TS2305: Module '\"./format\"' has no exported member 'formatPrice'.\n\
src/cart.ts(4,10): error TS2724: '\"./format\"' has no exported member named 'formatPrice'. Did you mean 'formatAmount'?\n\
src/view.ts(8,14): error TS2339: Property 'totalPrice' does not exist on type 'Cart'.\n\
src/geo/circle.ts(3,14): error TS2420: Class 'Circle' incorrectly implements interface 'Shape'.\n\
  Property 'surface' is missing in type 'Circle' but required in type 'Shape'.\n\
src/report.ts:20:11 - error TS2555: Expected at least 2 arguments, but got 1.\n\
\n\
20   const s = render(rows);\n\
               ~~~~~~~~~~~~\n\
\n\
Found 6 errors in 6 files.\n";
        let p: Vec<(String, Problem)> = problems(out).into_iter().map(|x| (x.2, x.3)).collect();
        assert_eq!(
            p,
            [
                ("TS2554".into(), Problem::Arity { name: None, got: 2, expected: Some((3, Some(3))) }),
                ("TS2305".into(), Problem::Unresolved { name: "formatPrice".into() }),
                ("TS2724".into(), Problem::Unresolved { name: "formatPrice".into() }),
                ("TS2339".into(), Problem::Unresolved { name: "totalPrice".into() }),
                ("TS2420".into(), Problem::Override { name: "surface".into(), owner: Some("Shape".into()) }),
                ("TS2555".into(), Problem::Arity { name: Some("render".into()), got: 1, expected: Some((2, None)) }),
            ]
        );
    }

    #[test]
    fn other_output_is_no_diagnostic() {
        assert!(problems("src/a.ts:12: const x = 1;\nFoo.java:3:import x;\nerror: something\n").is_empty());
        assert_eq!(top_level_count("Map<String,Integer>,int"), 2);
        assert_eq!(top_level_count(""), 0);
    }
}
