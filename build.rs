//! Embeds `fixtures/` in the binary so `trajan demo` works wherever the binary is. The real
//! corpus (`fixtures/corpus/`), the results-folder layouts (`fixtures/layouts/`), the
//! classifier's single cases (`fixtures/classify-cases/`), the labelled development set
//! (`fixtures/labelled/`), the report's hostile run (`fixtures/report/`) and the published
//! datasets' rows (`fixtures/datasets/`) are test data, not demo data, and stay out.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // Read when the script runs, not when it was compiled: a build script compiled for another
    // checkout sharing the build folder (`build.build-dir`) is reused as is, and `env!` would
    // name that checkout (a build once embedded no fixture, or another checkout's).
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".into());
    let root = Path::new(&manifest).join("fixtures");
    println!("cargo:rerun-if-changed=fixtures");
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    // An empty demo is a broken build, not a quiet one (a build once embedded no fixture at all).
    assert!(!files.is_empty(), "no demo fixtures found under {}", root.display());
    files.sort();
    let mut out =
        String::from("/// (path relative to fixtures/, content)\npub static FIXTURES: &[(&str, &[u8])] = &[\n");
    for (rel, abs) in files {
        let _ = writeln!(out, "    ({rel:?}, include_bytes!({abs:?})),");
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap_or_else(|_| ".".into())).join("fixtures.rs");
    if let Err(e) = std::fs::write(&dest, out) {
        panic!("cannot write {}: {e}", dest.display());
    }
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        println!("cargo:rerun-if-changed={}", p.display());
        if p.is_dir() {
            // The real corpus, the layout fixtures (results folders as teams keep them), the
            // classifier's single cases, the labelled development set and the report's hostile
            // run are test data, not demo data.
            if ["corpus", "layouts", "classify-cases", "labelled", "report", "datasets"]
                .iter()
                .any(|d| p == root.join(d))
            {
                continue;
            }
            collect(root, &p, out);
        } else if let Ok(rel) = p.strip_prefix(root) {
            out.push((rel.to_string_lossy().into_owned(), p.to_string_lossy().into_owned()));
        }
    }
}
