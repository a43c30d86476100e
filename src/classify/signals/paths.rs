//! File paths as the signals compare them: repository-relative, whatever root the agent's
//! sandbox used (`/testbed`, `/repo`, `/owner__repo`, `/workspace/name`), and sorted by kind.

pub use crate::analysis::paths::repo_relative;
use crate::analysis::paths::{ROOTS, resolve, strip_known_root};
use serde::{Deserialize, Serialize};

/// What a file is to a change: where definitions live, or the periphery that follows them
/// (by ecosystem: call sites, tests, docs, headers, build and config files).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    Source,
    Test,
    Doc,
    Config,
    /// A C/C++ header: declarations that follow their definitions.
    Header,
}

/// Build and config files by name, per ecosystem.
const BUILD_FILES: &[&str] = &[
    "setup.py",
    "setup.cfg",
    "pyproject.toml",
    "tox.ini",
    "requirements.txt",
    "manifest.in",
    "pom.xml",
    "build.gradle",
    "build.gradle.kts",
    "settings.gradle",
    "settings.gradle.kts",
    "gradle.properties",
    "package.json",
    "tsconfig.json",
    "go.mod",
    "go.sum",
    "cargo.toml",
    "cargo.lock",
    "build.rs",
    "cmakelists.txt",
    "makefile",
    "gnumakefile",
    "meson.build",
    "configure.ac",
    "build",
    "build.bazel",
    "workspace",
];

impl FileKind {
    /// In the order a reviewer reads a stale periphery: call sites first.
    pub const ALL: [FileKind; 5] =
        [FileKind::Source, FileKind::Header, FileKind::Test, FileKind::Doc, FileKind::Config];

    pub fn of(path: &str) -> FileKind {
        let lower = path.to_ascii_lowercase();
        let name = lower.rsplit('/').next().unwrap_or(&lower);
        let ext = name.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
        let original = path.rsplit('/').next().unwrap_or(path);
        let stem = original.rsplit_once('.').map(|(s, _)| s).unwrap_or(original);
        let in_dir = |d: &str| lower.starts_with(&format!("{d}/")) || lower.contains(&format!("/{d}/"));
        let java_test = ext == "java" && (stem.ends_with("Test") || stem.ends_with("Tests") || stem.ends_with("IT"));
        if in_dir("tests")
            || in_dir("test")
            || in_dir("testing")
            || in_dir("__tests__")
            || name.starts_with("test_")
            || name.ends_with("_test.py")
            || name.ends_with("_test.go")
            || ["_test.c", "_test.cc", "_test.cpp", "_unittest.cc", "_unittest.cpp"].iter().any(|t| name.ends_with(t))
            || java_test
            || name.contains(".test.")
            || name.contains(".spec.")
            || name == "conftest.py"
        {
            FileKind::Test
        } else if BUILD_FILES.contains(&name)
            || matches!(
                ext,
                "yaml" | "yml" | "toml" | "cfg" | "ini" | "json" | "conf" | "gradle" | "cmake" | "mk" | "properties"
            )
        {
            FileKind::Config
        } else if matches!(ext, "h" | "hh" | "hpp" | "hxx" | "inl") {
            FileKind::Header
        } else if matches!(ext, "md" | "rst" | "txt" | "adoc") || in_dir("docs") || in_dir("doc") {
            FileKind::Doc
        } else {
            FileKind::Source
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            FileKind::Source => "call site",
            FileKind::Test => "test",
            FileKind::Doc => "doc",
            FileKind::Config => "build/config",
            FileKind::Header => "header",
        }
    }

    /// The kind's name for a list of its files (`call sites`, `build files`).
    pub fn plural(self) -> &'static str {
        match self {
            FileKind::Source => "call sites",
            FileKind::Test => "tests",
            FileKind::Doc => "docs",
            FileKind::Config => "build/config files",
            FileKind::Header => "headers",
        }
    }
}

/// Where the repository sits in this run's sandbox, learned from the run itself: the prefixes
/// that turn its absolute edit paths into the relative paths of its patches, and the folder
/// its first step ran in. Checked before the usual roots ([`repo_relative`]).
#[derive(Debug, Clone, Default)]
pub struct Roots(Vec<String>);

impl Roots {
    /// `absolute`: paths the agent used; `relative`: paths of the final and gold patches;
    /// `first_dir`: the working folder of the first step.
    pub fn learn<'a>(absolute: impl Iterator<Item = &'a str>, relative: &[String], first_dir: Option<&str>) -> Roots {
        let mut roots: Vec<String> = Vec::new();
        for a in absolute.filter(|a| a.starts_with('/')) {
            for r in relative.iter().filter(|r| !r.is_empty()) {
                if let Some(prefix) = a.strip_suffix(r.as_str()).filter(|p| p.ends_with('/') && p.len() > 1)
                    && !is_build_copy(prefix)
                    && !roots.iter().any(|x| x == prefix)
                {
                    roots.push(prefix.to_string());
                }
            }
        }
        // The first working folder only when the paths taught nothing: it may be a subfolder
        // (`/testbed/src`), and a root learned from the paths is surer.
        if roots.is_empty()
            && let Some(dir) = first_dir.map(|d| format!("{}/", d.trim_end_matches('/'))).filter(|d| d.len() > 2)
            && dir.starts_with('/')
            && !ROOTS.iter().any(|r| dir.starts_with(r) && dir != *r)
        {
            roots.push(dir);
        }
        roots.sort_by_key(|r| std::cmp::Reverse(r.len()));
        Roots(roots)
    }

    /// The repository path of `path` (relative paths resolved against `working_dir`).
    pub fn rel(&self, path: &str, working_dir: Option<&str>) -> String {
        let resolved = resolve(path, working_dir);
        match self.0.iter().find_map(|r| resolved.strip_prefix(r.as_str())) {
            Some(rest) => rest.to_string(),
            None => strip_known_root(&resolved),
        }
    }
}

/// Whether repository path `path` is the file a text named as `named` (`models.py`,
/// `src/requests/models.py`, `../src/requests/models.py`).
pub fn names_file(path: &str, named: &str) -> bool {
    let named = named.trim_start_matches("./");
    let named = named.trim_start_matches("../");
    path == named || path.ends_with(&format!("/{named}"))
}

/// The repository file a text's name stands for among the files a run met: the shortest match
/// that is not a build copy; failing that, the file a matching build copy stands for (the
/// copy shows the real file exists).
pub fn resolve_named<'a>(met: impl Iterator<Item = &'a str>, named: &str) -> Option<String> {
    let matches: Vec<&str> = met.filter(|p| names_file(p, named)).collect();
    if let Some(real) = matches.iter().filter(|p| !is_build_copy(p)).min_by_key(|p| p.len()) {
        return Some(real.to_string());
    }
    matches
        .iter()
        .filter_map(|p| build_copy_target(p))
        .filter(|t| names_file(t, named))
        .min_by_key(|t| t.len())
        .map(str::to_string)
}

/// Folders that hold copies of the repository's files (build outputs, installed packages,
/// virtual environments): an edit there changes nothing the tests read.
const COPY_DIRS: &[&str] = &[
    "build/",
    "site-packages/",
    "dist-packages/",
    "dist/",
    ".tox/",
    ".nox/",
    "node_modules/",
    "target/",
    ".eggs/",
    ".venv/",
];

/// A copy of a source file that is not the repository's own: edits there change nothing.
/// `build/` counts at the repository root (or as `build/lib/`), the others anywhere.
pub fn is_build_copy(path: &str) -> bool {
    let p = path.trim_start_matches("./");
    COPY_DIRS.iter().any(|m| {
        let inner = p.contains(&format!("/{m}"));
        p.starts_with(m) || (inner && (*m != "build/" || p.contains("/build/lib/")))
    })
}

/// The repository file a Python build or installed copy stands for (`build/lib/pkg/m.py` →
/// `pkg/m.py`, `.tox/py39/lib/python3.9/site-packages/pkg/m.py` → `pkg/m.py`).
pub fn build_copy_target(path: &str) -> Option<&str> {
    ["build/lib/", "site-packages/", "dist-packages/"]
        .iter()
        .filter_map(|m| path.rfind(m).map(|p| &path[p + m.len()..]))
        .next()
}

/// A changelog or release note: it records a change, no code follows it.
pub fn is_changelog(path: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    let name = lower.rsplit('/').next().unwrap_or(&lower);
    let prose = matches!(name.rsplit_once('.').map(|(_, e)| e), None | Some("md" | "rst" | "txt" | "adoc"));
    (prose && ["changes", "changelog", "news", "history", "release", "whatsnew"].iter().any(|p| name.starts_with(p)))
        || ["docs/releases/", "doc/releases/", "changelog.d/", "newsfragments/", "changes/", "whatsnew/"]
            .iter()
            .any(|d| lower.starts_with(d) || lower.contains(&format!("/{d}")))
}

/// A scratch file the agent wrote for itself (reproduction, inspection or check scripts, patch
/// files, backups), by its name: not part of the change.
pub fn is_scratch(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const PREFIXES: &[&str] = &[
        "reproduce",
        "repro",
        "debug",
        "check_",
        "verify",
        "scratch",
        "temp",
        "tmp",
        "test_fix",
        "test_issue",
        "test_repro",
        "test_my",
        "inspect",
        "explore",
        "demo_",
    ];
    const SUFFIXES: &[&str] = &[".patch", ".diff", ".orig", ".rej", ".bak", ".swp", ".pyc", ".class", ".log"];
    PREFIXES.iter().any(|p| name.starts_with(p))
        || SUFFIXES.iter().any(|s| name.ends_with(s))
        || path.starts_with("tmp/")
}

/// File names mentioned in prose: tokens with a path-like shape and a source, doc or config
/// extension. Traceback lines (`File "...", line N`) and installed-library paths are skipped:
/// they name frames, not places to change.
pub fn mentioned_files(text: &str) -> Vec<String> {
    const EXTS: &[&str] = &[
        "py", "pyi", "js", "jsx", "ts", "tsx", "java", "go", "rs", "c", "h", "cc", "cpp", "hpp", "rb", "php", "cs",
        "kt", "scala", "swift", "md", "rst", "toml", "yaml", "yml", "cfg", "ini",
    ];
    let mut out: Vec<String> = Vec::new();
    for line in text.lines() {
        let t = line.trim_start();
        if t.starts_with("File \"") || line.contains("site-packages") || line.contains("/lib/python") {
            continue;
        }
        for token in line.split(|c: char| c.is_whitespace() || "`'\"(),;:<>[]{}*".contains(c)) {
            let token = token.trim_end_matches(['.', '!', '?']);
            let Some((stem, ext)) = token.rsplit_once('.') else { continue };
            let stem_ok = !stem.is_empty()
                && stem.chars().all(|c| c.is_alphanumeric() || "_-/.".contains(c))
                && stem.chars().any(|c| c.is_alphabetic());
            if stem_ok && EXTS.contains(&ext) && !token.contains("//") {
                let clean = token.trim_start_matches("./").to_string();
                if !out.contains(&clean) {
                    out.push(clean);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sandbox_roots_are_stripped() {
        for (p, wd, want) in [
            ("/testbed/src/a.py", None, "src/a.py"),
            ("/pydicom__pydicom/pydicom/x.py", None, "pydicom/x.py"),
            ("/workspace/ponyc/src/libponyc/a.c", None, "src/libponyc/a.c"),
            ("a.py", Some("/testbed/src"), "src/a.py"),
            ("./src/../src/a.py", None, "src/a.py"),
            ("'/repo/x y.py'", None, "x y.py"),
        ] {
            assert_eq!(repo_relative(p, wd), want, "{p}");
        }
    }

    #[test]
    fn roots_learned_from_the_run() {
        let roots =
            Roots::learn(["/confkit/src/confkit/cli.py"].into_iter(), &["src/confkit/cli.py".to_string()], None);
        assert_eq!(roots.rel("/confkit/src/confkit/loader.py", None), "src/confkit/loader.py");
        assert_eq!(roots.rel("/testbed/a.py", None), "a.py");
        // Nothing learned from the paths: the first working folder.
        let roots = Roots::learn(std::iter::empty(), &[], Some("/tabula"));
        assert_eq!(roots.rel("src/tabula/export.py", Some("/tabula")), "src/tabula/export.py");
        assert_eq!(roots.rel("../x.py", Some("/tabula/src")), "x.py");
        // A first folder inside a known root is a subfolder, not the root.
        let roots = Roots::learn(std::iter::empty(), &[], Some("/testbed/src"));
        assert_eq!(roots.rel("/testbed/src/pkg/a.py", None), "src/pkg/a.py");
        assert_eq!(roots.rel("pkg/a.py", Some("/testbed/src")), "src/pkg/a.py");
        // Learned roots win over the first folder.
        let learned = ["/testbed/src/pkg/a.py"];
        let roots = Roots::learn(learned.into_iter(), &["src/pkg/a.py".to_string()], Some("/testbed/src"));
        assert_eq!(roots.rel("/testbed/src/pkg/b.py", None), "src/pkg/b.py");
    }

    #[test]
    fn kinds_names_and_copies() {
        assert_eq!(FileKind::of("tests/test_utils.py"), FileKind::Test);
        assert_eq!(FileKind::of("src/pkg/test_x.py"), FileKind::Test);
        assert_eq!(FileKind::of("docs/api.rst"), FileKind::Doc);
        assert_eq!(FileKind::of("setup.cfg"), FileKind::Config);
        assert_eq!(FileKind::of("lib/client.py"), FileKind::Source);
        // Periphery by ecosystem.
        for (p, k) in [
            ("pom.xml", FileKind::Config),
            ("core/build.gradle.kts", FileKind::Config),
            ("package.json", FileKind::Config),
            ("tsconfig.json", FileKind::Config),
            ("go.mod", FileKind::Config),
            ("Cargo.toml", FileKind::Config),
            ("CMakeLists.txt", FileKind::Config),
            ("src/Makefile", FileKind::Config),
            ("pyproject.toml", FileKind::Config),
            ("include/http.h", FileKind::Header),
            ("include/widgets/widget.hpp", FileKind::Header),
            ("core/src/test/java/io/x/ParserTest.java", FileKind::Test),
            ("src/main/java/io/x/ParserTests.java", FileKind::Test),
            ("pkg/store_test.go", FileKind::Test),
            ("src/__tests__/cart.ts", FileKind::Test),
            ("src/cart.spec.ts", FileKind::Test),
            ("src/widget_unittest.cc", FileKind::Test),
            ("src/main/java/io/x/Parser.java", FileKind::Source),
            ("src/lexer.rs", FileKind::Source),
        ] {
            assert_eq!(FileKind::of(p), k, "{p}");
        }
        assert!(names_file("src/requests/models.py", "../src/requests/models.py"));
        assert!(names_file("src/requests/models.py", "models.py"));
        assert!(!names_file("src/requests/models.py", "odels.py"));
        assert!(is_build_copy("build/lib/pkg/mod.py") && !is_build_copy("src/builder/lib.py"));
        assert_eq!(build_copy_target("build/lib/pkg/mod.py"), Some("pkg/mod.py"));
        assert!(is_scratch("reproduce_bug.py") && !is_scratch("src/pkg/core.py"));
        for c in ["docs/releases/4.2.1.txt", "CHANGES.rst", "changelog.d/123.fix.md", "doc/whatsnew/3.0.rst"] {
            assert!(is_changelog(c), "{c}");
        }
        assert!(
            is_changelog("HISTORY.rst") && !is_changelog("src/pkg/history_model.py") && !is_changelog("docs/api.rst")
        );
    }

    #[test]
    fn files_named_in_prose_not_in_tracebacks() {
        let text = "Rename `super_len` in the file named `utils.py` in src/requests, then models.py.\n\
                    File \"/usr/lib/python3.9/site-packages/x.py\", line 3\n  File \"django/db/query.py\", line 9\n\
                    See https://example.com/a.py and version 1.2.";
        assert_eq!(mentioned_files(text), vec!["utils.py", "models.py"]);
    }
}
