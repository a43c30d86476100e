//! Charts and the HTML report through the binary: every number a chart draws is the number
//! `stats --json` / `agreement --json` prints (read back from the SVG's text); the report opened
//! in headless Chromium (`src/testkit/chromium.rs`): the corpus's report loads without a console
//! message, shows every run and its steps, and a screenshot is not blank; a run full of XSS
//! payloads (`fixtures/report/`) leaves no element, attribute or script of theirs in the page.

/// Test support shared with `bench report` (which reads `elapsed`).
use crate::chromium;
use crate::common;

use crate::common::{json, text as ok, trajan};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    common::fixtures_dir(name)
}

/// The classify and demo fixtures, classified, and labelled by two reviewers who disagree.
fn labelled(dir: &Path) -> PathBuf {
    let db = dir.join("t.db");
    let (classify, demo) = (fixture("classify"), fixture("demo"));
    ok(&db, &["ingest", &classify.to_string_lossy(), &demo.to_string_lossy()]);
    ok(&db, &["classify"]);
    let runs = json(&db, &["runs", "--json"]);
    let ids: Vec<String> = runs.as_array().into_iter().flatten().map(|r| r["id"].to_string()).collect();
    for id in &ids[..8] {
        ok(&db, &["--rater", "alice", "label", id, "--mode", "context_flooding"]);
    }
    for id in &ids[3..12] {
        ok(&db, &["--rater", "bob", "label", id, "--mode", "missed_edit_location", "--evidence", "1"]);
    }
    db
}

/// The text of every `<text>` element of an SVG, in document order, unescaped.
fn svg_texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    for piece in svg.split("<text").skip(1) {
        let body = piece.split_once('>').map(|(_, b)| b).unwrap_or("");
        let text = body.split("</text>").next().unwrap_or("").trim();
        let text = text.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'");
        out.push(text.replace("&amp;", "&"));
    }
    out
}

fn pct(x: &Value) -> String {
    format!("{:.1}%", x.as_f64().unwrap_or(f64::NAN) * 100.0)
}

fn n(x: &Value) -> u64 {
    x.as_u64().unwrap_or_else(|| panic!("not a count: {x}"))
}

/// What each chart must say per category, from `stats --json` (and the modes in order).
fn expected(kind: &str, stats: &Value, modes: &[String], grouped: bool) -> Vec<String> {
    let rows: Vec<&Value> = stats["rows"].as_array().into_iter().flatten().collect();
    let mut failed_rows = rows.clone();
    let mut outcomes: Vec<&Value> = stats["outcomes"].as_array().into_iter().flatten().collect();
    if grouped {
        failed_rows.push(&stats["total"]);
        outcomes.push(&stats["outcomes_total"]);
    }
    let mut out = Vec::new();
    match kind {
        "modes" => {
            for m in modes {
                out.push(m.clone());
                for r in &rows {
                    let count = r["modes"][m].as_u64().unwrap_or(0);
                    out.push(match n(&r["labelled"]) {
                        0 => format!("{count}"),
                        of => format!("{count} ({:.1}%)", count as f64 * 100.0 / of as f64),
                    });
                }
            }
        }
        "coverage" => {
            for r in failed_rows {
                out.push(r["group"].as_str().unwrap_or("").to_string());
                out.push(format!("{} of {} ({})", r["with_mode"], r["labelled"], pct(&r["coverage"])));
            }
        }
        "resolve" => {
            for o in outcomes {
                out.push(o["group"].as_str().unwrap_or("").to_string());
                // Runs and evaluations without a trajectory alike: X of Y with P = X/Y.
                let resolved = n(&o["resolved"]) + n(&o["no_trajectory_resolved"]);
                let verdicts = resolved + n(&o["failed"]) + n(&o["no_trajectory_failed"]);
                let mut text = match o["resolve_rate"].is_null() {
                    true => "no verdict".to_string(),
                    false => format!("{resolved} of {verdicts} ({})", pct(&o["resolve_rate"])),
                };
                if n(&o["no_trajectory"]) > 0 {
                    text.push_str(&format!(", {} without a trajectory", o["no_trajectory"]));
                }
                if n(&o["unknown"]) > 0 {
                    text.push_str(&format!(", {} runs without a verdict", o["unknown"]));
                }
                out.push(text);
            }
        }
        "steps" | "cost" => {
            let num = |x: &Value| {
                let v = x.as_f64().unwrap_or(f64::NAN);
                if kind == "cost" { format!("{v:.3}") } else { format!("{v}") }
            };
            for o in outcomes {
                for side in ["failed", "resolved"] {
                    let g = o["group"].as_str().unwrap_or("");
                    out.push(if grouped { format!("{g} · {side}") } else { side.to_string() });
                    let s = &o[format!("{kind}_{side}")];
                    out.push(match s.is_null() {
                        true => "no runs".into(),
                        false => format!(
                            "n {} · median {} · quartiles {}–{} · range {}–{}",
                            s["n"],
                            num(&s["median"]),
                            num(&s["q1"]),
                            num(&s["q3"]),
                            num(&s["min"]),
                            num(&s["max"])
                        ),
                    });
                }
            }
        }
        other => panic!("no expectation for {other}"),
    }
    out
}

fn estimate(e: &Value, count: &Value) -> String {
    let f = |x: &Value| format!("{:.2}", x.as_f64().unwrap_or(f64::NAN));
    match (e["value"].is_null(), e["ci"].is_null()) {
        (true, _) => format!("— n {count}"),
        (false, false) => format!("{} [{}, {}] n {count}", f(&e["value"]), f(&e["ci"]["low"]), f(&e["ci"]["high"])),
        (false, true) => format!("{} n {count}", f(&e["value"])),
    }
}

fn chart(db: &Path, dir: &Path, kind: &str, by: &str) -> Vec<String> {
    let file = dir.join(format!("{kind}-{by}.svg"));
    ok(db, &["export", "chart", kind, "--by", by, "-o", &file.to_string_lossy()]);
    let svg = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(svg.starts_with("<svg"), "{svg}");
    svg_texts(&svg)
}

#[test]
fn every_chart_draws_the_numbers_stats_and_agreement_print() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = labelled(dir.path());
    let agreement = json(&db, &["agreement", "--json"]);
    let report = &agreement["report"];
    let modes: Vec<String> = report["modes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| m["mode"].as_str().unwrap_or("").to_string())
        .collect();
    assert_eq!(modes.len(), 4, "the refactoring taxonomy: {agreement}");
    for by in ["all", "model"] {
        let stats = json(&db, &["stats", "--json", "--by", by]);
        assert!(n(&stats["total"]["labelled"]) > 0 && stats["outcomes"].as_array().is_some_and(|o| !o.is_empty()));
        for kind in ["modes", "coverage", "resolve", "steps", "cost"] {
            let texts = chart(&db, dir.path(), kind, by);
            let want = expected(kind, &stats, &modes, by != "all");
            assert!(texts.ends_with(&want), "{kind} --by {by}: the chart's text\n{texts:#?}\nends not with\n{want:#?}");
            assert!(texts[1].starts_with(&format!("{} · ", stats["taxonomy"].as_str().unwrap_or("?"))), "{texts:?}");
        }
    }
    // Per mode: alpha over every rater, then each scored rater's kappa against the reference.
    let texts = chart(&db, dir.path(), "agreement", "all");
    let mut want = Vec::new();
    for m in report["modes"].as_array().into_iter().flatten() {
        want.push(m["mode"].as_str().unwrap_or("").to_string());
        want.push(estimate(&m["alpha"]["alpha"], &m["alpha"]["units"]));
        for c in m["against_reference"].as_array().into_iter().flatten() {
            want.push(estimate(&c["kappa"], &c["n"]));
        }
    }
    assert!(want.iter().any(|w| w.contains('[')), "some interval is drawn: {want:?}");
    assert!(texts.ends_with(&want), "agreement: the chart's text\n{texts:#?}\nends not with\n{want:#?}");
}

#[test]
fn a_png_is_the_chart_drawn_with_the_bundled_font() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = labelled(dir.path());
    let (svg, png) = (dir.path().join("m.svg"), dir.path().join("m.png"));
    ok(&db, &["export", "chart", "modes", "--by", "model", "-o", &svg.to_string_lossy()]);
    // No fonts for fontconfig to find: the picture must not depend on them.
    let out = common::command()
        .arg("--db")
        .arg(&db)
        .args(["export", "chart", "modes", "--by", "model", "-o", &png.to_string_lossy()])
        .env("FONTCONFIG_FILE", "/nonexistent")
        .env("XDG_DATA_DIRS", "/nonexistent")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{e}"));
    let image = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap_or_else(|e| panic!("not a PNG: {e}"));
    let svg = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
    let width: u32 = svg.split("width=\"").nth(1).and_then(|w| w.split('"').next()?.parse().ok()).unwrap_or(0);
    assert_eq!(image.width(), width * 2, "twice the SVG's size");
    // The title's row (dark text on white) and the palette's colours are there.
    let pixels = image.pixels();
    let dark = pixels[..(image.width() * 60) as usize].iter().filter(|p| p.red() < 80 && p.alpha() == 255).count();
    assert!(dark > 500, "the title is drawn: {dark} dark pixels");
    let blue = pixels.iter().filter(|p| (p.red(), p.green(), p.blue()) == (0, 114, 178)).count();
    assert!(blue > 1000, "the first series' bars: {blue} pixels");
}

/// Start tags in a serialized DOM (its text is escaped, so each is an element).
fn tags(dom: &str) -> Vec<(String, String)> {
    dom.split('<')
        .skip(1)
        .filter(|t| t.starts_with(|c: char| c.is_ascii_alphabetic()))
        .map(|t| {
            let tag = t.split('>').next().unwrap_or("");
            let name = tag.split(|c: char| c.is_whitespace() || c == '/').next().unwrap_or("").to_ascii_lowercase();
            (name, tag.to_string())
        })
        .collect()
}

/// The run sections of a report's DOM: (run id, data-steps, step articles in it).
fn sections(dom: &str) -> Vec<(i64, usize, usize)> {
    dom.split("<section class=\"run\"")
        .skip(1)
        .map(|s| {
            let attr = |name: &str| {
                s.split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|v| v.split('"').next()?.parse::<i64>().ok())
                    .unwrap_or(-1)
            };
            (attr("data-run"), attr("data-steps") as usize, s.matches("<article class=\"step").count())
        })
        .collect()
}

/// A screenshot with more than a background: many colours, and ink on a good share of it.
fn assert_not_blank(png: &Path) {
    let bytes = std::fs::read(png).unwrap_or_else(|e| panic!("{}: {e}", png.display()));
    let image = resvg::tiny_skia::Pixmap::decode_png(&bytes).unwrap_or_else(|e| panic!("not a PNG: {e}"));
    let colours: BTreeSet<(u8, u8, u8)> = image.pixels().iter().map(|p| (p.red(), p.green(), p.blue())).collect();
    let ink = image.pixels().iter().filter(|p| p.red() < 128 || p.green() < 128 || p.blue() < 128).count();
    assert!(
        colours.len() > 20 && ink * 100 > image.pixels().len(),
        "blank screenshot: {} colours, {ink} ink",
        colours.len()
    );
}

#[test]
fn the_corpus_report_opens_in_chromium_with_every_run_and_step() {
    if !common::tools::have(common::tools::Tool::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("c.db");
    ok(&db, &["ingest", &fixture("corpus").to_string_lossy()]);
    ok(&db, &["classify"]);
    let html = dir.path().join("corpus.html");
    ok(&db, &["export", "report", "-o", &html.to_string_lossy()]);
    let page = chromium::dump_dom(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(page.console.is_empty(), "console messages:\n{}", page.console.join("\n"));
    let runs = json(&db, &["runs", "--json"]);
    let want: Vec<(i64, usize, usize)> = runs
        .as_array()
        .into_iter()
        .flatten()
        .map(|r| {
            let steps = r["steps"].as_u64().unwrap_or(0) as usize;
            (r["id"].as_i64().unwrap_or(0), steps, steps)
        })
        .collect();
    assert!(want.len() > 20, "the corpus's runs: {}", want.len());
    assert_eq!(sections(&page.dom), want, "a page per run, each with its steps");
    assert_eq!(tags(&page.dom).iter().filter(|(t, _)| t == "figure").count(), 6, "every chart");
    let shot = dir.path().join("corpus.png");
    let page = chromium::screenshot(&html, &shot, 1200, 900).unwrap_or_else(|e| panic!("{e}"));
    assert!(page.console.is_empty(), "console messages:\n{}", page.console.join("\n"));
    assert_not_blank(&shot);
}

#[test]
fn no_payload_of_a_hostile_run_becomes_markup_or_runs() {
    if !common::tools::have(common::tools::Tool::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("x.db");
    ok(&db, &["ingest", &fixture("report").to_string_lossy()]);
    let payload = "<script>document.title='PWNED-note'</script><img src=x onerror=\"document.title='PWNED-note-img'\">";
    let rater = "<b onmouseover=alert(1)>eve</b>";
    ok(
        &db,
        &[
            "--rater",
            rater,
            "label",
            "xss__payload-1",
            "--mode",
            "context_flooding",
            "--evidence",
            "2",
            "--note",
            payload,
        ],
    );
    ok(&db, &["classify"]);
    let html = dir.path().join("x.html");
    ok(&db, &["export", "report", "-o", &html.to_string_lossy()]);
    let page = chromium::dump_dom(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(page.console.is_empty(), "console messages (a blocked payload shows here):\n{}", page.console.join("\n"));
    let allowed: BTreeSet<&str> = [
        "html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "h3", "h4", "span", "nav", "a",
        "input", "button", "main", "section", "p", "div", "table", "tbody", "tr", "th", "td", "figure", "svg", "rect",
        "text", "polyline", "dl", "dt", "dd", "details", "summary", "pre", "article", "code", "b", "ul", "li", "br",
        "wbr", "script",
    ]
    .into_iter()
    .collect();
    let found = tags(&page.dom);
    for (name, tag) in &found {
        assert!(allowed.contains(name.as_str()), "an element from a payload: <{tag}>");
        let lower = tag.to_ascii_lowercase();
        assert!(!lower.split_whitespace().any(|a| a.starts_with("on")), "an event handler: <{tag}>");
        assert!(!lower.contains("javascript:"), "a javascript: URL: <{tag}>");
        if let Some(href) = lower.split("href=\"").nth(1) {
            assert!(href.starts_with('#'), "a link out of the page: <{tag}>");
        }
    }
    let scripts: Vec<&String> = found.iter().filter(|(t, _)| t == "script").map(|(_, tag)| tag).collect();
    let data = scripts.iter().filter(|tag| tag.contains("type=\"application/json\"")).count();
    assert!(data >= 1, "the folded observations' data block: {scripts:?}");
    assert_eq!(scripts.len() - data, 1, "only the page's own script runs: {scripts:?}");
    assert!(page.dom.contains("<title>trajan report"), "the title is the page's");
    // The payloads are there, as text.
    for text in ["PWNED-script", "PWNED-img", "PWNED-diff", "PWNED-test", "PWNED-model", "PWNED-note", "PWNED-path"] {
        assert!(page.dom.contains(text), "{text} is shown as text");
    }
    assert_eq!(sections(&page.dom).len(), 1);
    // A style payload (`body{display:none}`, a fixed red cover) would blank or redden the shot.
    let shot = dir.path().join("x.png");
    chromium::screenshot(&html, &shot, 1000, 800).unwrap_or_else(|e| panic!("{e}"));
    assert_not_blank(&shot);
}

#[test]
fn a_report_of_the_runs_a_filter_keeps() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = labelled(dir.path());
    let runs = json(&db, &["runs", "--json"]);
    let want: Vec<i64> = runs
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r["model"].as_str().is_some_and(|m| m.contains("classify")) && r["steps"].as_i64() > Some(9))
        .map(|r| r["id"].as_i64().unwrap_or(0))
        .collect();
    assert!(!want.is_empty() && want.len() < runs.as_array().map_or(0, Vec::len));
    let html = ok(&db, &["export", "report", "--filter", "model:classify steps>9", "-o", "/dev/stdout"]);
    let mut got: Vec<i64> = sections(&html).into_iter().map(|(id, _, _)| id).collect();
    got.sort_unstable();
    let mut want = want;
    want.sort_unstable();
    assert_eq!(got, want);
    assert!(html.contains(&format!("over the {} runs of this report", want.len())), "the statistics are the report's");
    let out = trajan(&db, &["export", "report", "--filter", "steps>x", "-o", "/dev/null"]);
    assert!(!out.status.success() && String::from_utf8_lossy(&out.stderr).contains("steps>x"));
}

/// A report of many runs (a dataset's 100,000) gives the first `--pages` their pages and says
/// so; its statistics count them all, and its run list lists only the runs with a page.
#[test]
fn a_report_pages_only_its_first_runs_and_says_so() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = labelled(dir.path());
    let runs = json(&db, &["runs", "--json"]);
    let all: Vec<i64> = runs.as_array().into_iter().flatten().filter_map(|r| r["id"].as_i64()).collect();
    assert!(all.len() > 2, "{}", all.len());
    let html = ok(&db, &["export", "report", "--pages", "2", "-o", "/dev/stdout"]);
    let got: Vec<i64> = sections(&html).into_iter().map(|(id, _, _)| id).collect();
    assert_eq!(got, all[..2], "the first two runs, in the run list's order");
    let said = format!("The statistics count all {} runs; the first 2 have their pages here.", all.len());
    assert!(html.contains(&said), "the page says what it left out");
    assert_eq!(html.matches("<tr><td><a href=\"#r").count(), 2, "the run list links only pages that exist");
    let whole = ok(&db, &["export", "report", "-o", "/dev/stdout"]);
    assert_eq!(sections(&whole).len(), all.len());
    assert!(!whole.contains("have their pages here"));
}

/// The part of a report's DOM that is run `id`'s page.
fn section(dom: &str, id: i64) -> &str {
    let start = format!("<section class=\"run\" id=\"r{id}\"");
    let at = dom.find(&start).unwrap_or_else(|| panic!("no page for run {id}"));
    let rest = &dom[at..];
    &rest[..rest.find("</section>").unwrap_or(rest.len())]
}

#[test]
fn a_runs_page_names_its_onset_and_blame_and_links_the_onset_step() {
    if !common::tools::have(common::tools::Tool::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("o.db");
    ok(&db, &["ingest", &fixture("demo").to_string_lossy()]);
    ok(&db, &["classify"]);
    // demo__calc-2: the heuristic's onset is step 2; an adjudication (by a hostile name) says 4.
    let rater = "<i onmouseover=alert(1)>cat</i>";
    let adjudicate = ["label", "demo__calc-2", "--mode", "context_flooding", "--onset", "4", "--blame", "agent"];
    ok(&db, &[&["--rater", rater][..], &adjudicate, &["--adjudicate"]].concat());
    ok(
        &db,
        &["--rater", "cat", "label", "demo__mini-1", "--mode", "context_flooding", "--blame", "task", "--adjudicate"],
    );
    let runs = json(&db, &["runs", "--json"]);
    let id = |instance: &str| {
        runs.as_array().into_iter().flatten().find(|r| r["instance_id"] == instance).and_then(|r| r["id"].as_i64())
    };
    let (calc, mini) = (id("demo__calc-2").unwrap_or(-1), id("demo__mini-1").unwrap_or(-1));
    let html = dir.path().join("o.html");
    ok(&db, &["export", "report", "demo__calc-2", "demo__mini-1", "-o", &html.to_string_lossy()]);
    let page = chromium::dump_dom(&html).unwrap_or_else(|e| panic!("{e}"));
    assert!(page.console.is_empty(), "console messages:\n{}", page.console.join("\n"));
    let calc_page = section(&page.dom, calc);
    let named = format!(
        "<dt>onset</dt><dd class=\"onset\"><a href=\"#r{calc}-s4\">step 4</a>/7 · blame agent <span class=\"muted\">(adjudication &lt;i onmouseover=alert(1)&gt;cat&lt;/i&gt;)</span></dd>"
    );
    assert!(calc_page.contains(&named), "the onset among the facts, linked:\n{calc_page}");
    assert!(calc_page.contains(&format!("<a href=\"#r{calc}-s4\" class=\"test onset\">4</a>")), "the index marks it");
    assert!(calc_page.contains(&format!("<article class=\"step test onset\" id=\"r{calc}-s4\">")), "{calc_page}");
    assert_eq!(calc_page.matches("class=\"flag onset\"").count(), 1, "one step is the onset");
    // Each label says its own: the heuristic's onset is still there, in its label.
    assert!(calc_page.contains(&format!("onset <a href=\"#r{calc}-s2\">step 2</a> · blame agent")), "{calc_page}");
    let mini_page = section(&page.dom, mini);
    assert!(mini_page.contains("<dt>onset</dt><dd class=\"onset\">none · blame task"), "{mini_page}");
    assert!(!mini_page.contains("class=\"flag onset\""), "no step of the task's failure is an onset");
    assert!(!tags(&page.dom).iter().any(|(t, _)| t == "i"), "the rater's name is text");
}

/// On a machine without Chromium (an empty PATH) the report's page tests pass, skipped, say so and
/// are recorded for the list at the end of `cargo test`; under `TRAJAN_REQUIRE_TOOLS=1`
/// (`.ci/run`) they fail instead. (Needs no Chromium itself.)
#[test]
fn without_chromium_a_page_test_is_skipped_and_said_unless_required() {
    common::tools::assert_skipped_then_required(
        common::tools::Tool::Chromium,
        "report::a_runs_page_names_its_onset_and_blame_and_links_the_onset_step",
    );
}

/// What a probe script measures of a report's layout (written into `data-probe` on `<body>`).
const PROBE: &str = r##"<script>
window.addEventListener("load", function () { setTimeout(function () {
  var out = {};
  var target = document.getElementById(decodeURIComponent(location.hash.slice(1)));
  var h2 = target.querySelector("h2");
  var r = h2.getBoundingClientRect();
  out.h2Top = r.top;
  out.headerBottom = document.querySelector("header.top").getBoundingClientRect().bottom;
  var at = document.elementFromPoint(r.left + 4, r.top + r.height / 2);
  out.h2Seen = !!(at && h2.contains(at));
  var wide = document.querySelector("#stats .wide");
  out.statsCut = wide.scrollWidth - wide.clientWidth;
  var spans = document.querySelectorAll("pre.diff > span");
  out.diffGap = spans.length > 1 ? spans[1].getBoundingClientRect().top - spans[0].getBoundingClientRect().bottom : -1;
  document.body.setAttribute("data-probe", JSON.stringify(out));
}, 1000); });
</script>"##;

/// The corpus's report as a reader sees it at 1280x900 (Chromium's layout, measured by a probe
/// added to a copy of the page, its Content-Security-Policy removed for it): opened at a run late
/// in the page (`#rN`: it was blank) the run's heading is in view, below the sticky header, not
/// under it; the statistics table fits the page (it was cut at 1280 pixels: the mode names now
/// wrap); a diff's lines follow each other without an empty line between them (they were
/// double-spaced). A screenshot of the top is not blank.
#[test]
fn the_report_at_1280_pixels_opens_at_a_run_fits_its_statistics_and_diffs_are_single_spaced() {
    if !common::tools::have(common::tools::Tool::Chromium) {
        return;
    }
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("c.db");
    ok(&db, &["ingest", &fixture("corpus").to_string_lossy()]);
    ok(&db, &["classify"]);
    let html = dir.path().join("corpus.html");
    ok(&db, &["export", "report", "-o", &html.to_string_lossy()]);
    let page = std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{e}"));
    let last = sections(&page).last().map(|s| s.0).unwrap_or_else(|| panic!("no run"));
    let start = page.find("<meta http-equiv=\"Content-Security-Policy\"").unwrap_or_else(|| panic!("no CSP"));
    let end = start + page[start..].find('>').unwrap_or(0) + 1;
    let probed = format!("{}{}", &page[..start], &page[end..]).replace("</body>", &format!("{PROBE}</body>"));
    let probe_file = dir.path().join("probed.html");
    std::fs::write(&probe_file, probed).unwrap_or_else(|e| panic!("{e}"));
    let loaded = chromium::dump_dom_at(&probe_file, &format!("r{last}"), 1280, 900).unwrap_or_else(|e| panic!("{e}"));
    let attr = loaded.dom.split("data-probe=\"").nth(1).and_then(|s| s.split('"').next()).unwrap_or("");
    let probe: Value = serde_json::from_str(&attr.replace("&quot;", "\""))
        .unwrap_or_else(|e| panic!("no probe in the page ({e}): {}", &loaded.dom[..loaded.dom.len().min(300)]));
    let (top, header) = (probe["h2Top"].as_f64().unwrap_or(-1.0), probe["headerBottom"].as_f64().unwrap_or(0.0));
    assert!(top >= header - 1.0 && top < 900.0, "run {last}'s heading at {top}, the header ends at {header}: {probe}");
    assert_eq!(probe["h2Seen"], true, "run {last}'s heading is drawn where it is, not covered: {probe}");
    assert!(probe["statsCut"].as_f64().is_some_and(|c| c <= 0.0), "the statistics table is cut: {probe}");
    assert!(probe["diffGap"].as_f64().is_some_and(|g| g.abs() < 1.0), "a diff's lines are spaced apart: {probe}");
    let shot = dir.path().join("top-1280.png");
    chromium::screenshot(&html, &shot, 1280, 900).unwrap_or_else(|e| panic!("{e}"));
    assert_not_blank(&shot);
    if let Some(keep) = std::env::var_os("TRAJAN_KEEP_SCREENSHOTS") {
        let _ = std::fs::copy(&shot, std::path::Path::new(&keep).join("report-top-1280.png"));
    }
}
