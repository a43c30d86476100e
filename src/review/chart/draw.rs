//! A [`Figure`] drawn with plotters as SVG, and that SVG rendered to a PNG image by resvg (one
//! picture in both). The layout is computed here in pixels (label column, bars, value labels,
//! axis). Text is measured and rendered with DejaVu Sans (bundled: no system font is read), and
//! an SVG names it first, then `sans-serif`.

use super::{Bar, Bars, Body, Boxes, Figure, PALETTE, Scale};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::OnceLock;

/// The font as plotters knows it (and as an SVG names it).
const FAMILY: &str = "DejaVu Sans, sans-serif";
const WIDTH: u32 = 960;
/// A PNG's pixels per SVG unit.
const SCALE: f32 = 2.0;
const PAD: i32 = 16;
const BAR: i32 = 16;
const BAR_GAP: i32 = 2;
const GROUP_GAP: i32 = 12;
const BOX_ROW: i32 = 24;
const MAX_NAME: u32 = 300;
const MAX_LABEL: u32 = 340;
const INK: RGBColor = RGBColor(40, 40, 40);
const MUTED: RGBColor = RGBColor(100, 100, 100);
const GRID: RGBColor = RGBColor(225, 225, 225);

#[derive(Debug, thiserror::Error)]
#[error("cannot draw the chart: {0}")]
pub struct DrawError(String);

fn fonts() -> Result<(), DrawError> {
    static DONE: OnceLock<Result<(), String>> = OnceLock::new();
    DONE.get_or_init(|| {
        let bad = |_| "the bundled font cannot be read".to_string();
        plotters::style::register_font(FAMILY, FontStyle::Normal, dejavu::sans::regular()).map_err(bad)?;
        plotters::style::register_font(FAMILY, FontStyle::Bold, dejavu::sans::bold()).map_err(bad)
    })
    .clone()
    .map_err(DrawError)
}

fn font(size: f64) -> FontDesc<'static> {
    (FAMILY, size).into_font()
}

fn width_of(text: &str, size: f64) -> u32 {
    font(size).box_size(text).map_or(text.chars().count() as u32 * 8, |(w, _)| w)
}

/// `text` cut (with `…`) to at most `max` pixels: the longest start that fits, found by halving
/// (a long name is measured a few times, not once per character).
fn fit(text: &str, size: f64, max: u32) -> String {
    if width_of(text, size) <= max {
        return text.to_string();
    }
    // No character is narrower than a pixel: more than `max` of them never fit.
    let chars: Vec<char> = text.chars().take(max as usize + 1).collect();
    let cut = |n: usize| chars[..n].iter().collect::<String>() + "…";
    let (mut fits, mut over) = (0, chars.len());
    while over - fits > 1 {
        let mid = (fits + over) / 2;
        if width_of(&cut(mid), size) <= max { fits = mid } else { over = mid }
    }
    cut(fits)
}

/// Where everything goes, in pixels.
pub(super) struct Layout {
    pub(super) height: u32,
    legend: Vec<(i32, i32, usize, String)>,
    plot_top: i32,
    plot_bottom: i32,
    x0: i32,
    x1: i32,
    names: Vec<(i32, String)>,
    lo: f64,
    hi: f64,
}

impl Layout {
    fn x(&self, v: f64) -> i32 {
        let t = if self.hi > self.lo { (v - self.lo) / (self.hi - self.lo) } else { 0.0 };
        self.x0 + (t.clamp(0.0, 1.0) * f64::from(self.x1 - self.x0)).round() as i32
    }
}

/// The rows' names (each with its height in pixels) and the labels drawn beside the marks.
fn rows(fig: &Figure) -> (Vec<(String, i32)>, Vec<String>) {
    match &fig.body {
        Body::Bars(b) => {
            let h = b.series.len() as i32 * (BAR + BAR_GAP) - BAR_GAP + GROUP_GAP;
            let labels = b.series.iter().flat_map(|s| s.bars.iter().map(|bar| bar_label(b, s, bar))).collect();
            (b.categories.iter().map(|c| (c.clone(), h)).collect(), labels)
        }
        Body::Boxes(b) => (
            b.rows.iter().map(|r| (r.name.clone(), BOX_ROW)).collect(),
            b.rows.iter().map(|r| r.label.clone()).collect(),
        ),
        Body::Empty(why) => (vec![(why.clone(), BOX_ROW)], Vec::new()),
    }
}

/// A bar's label; past the palette's colours, with its series' name.
fn bar_label(b: &Bars, s: &super::Series, bar: &Bar) -> String {
    if b.series.len() > PALETTE.len() { format!("{}: {}", s.name, bar.label) } else { bar.label.clone() }
}

pub(super) fn layout(fig: &Figure) -> Layout {
    let mut y = PAD + 24 + 22 + if fig.note.is_some() { 18 } else { 0 };
    let mut legend = Vec::new();
    if let Body::Bars(b) = &fig.body
        && b.series.len() > 1
    {
        let mut x = PAD;
        for (i, s) in b.series.iter().enumerate() {
            let name = fit(&s.name, 12.0, 400);
            let w = 16 + width_of(&name, 12.0) as i32 + 18;
            if x + w > WIDTH as i32 - PAD && x > PAD {
                x = PAD;
                y += 18;
            }
            legend.push((x, y, i, name));
            x += w;
        }
        y += 24;
    }
    let (names, labels) = rows(fig);
    let name_w = names.iter().map(|(n, _)| width_of(n, 13.0)).max().unwrap_or(0).min(MAX_NAME) as i32;
    let label_w = labels.iter().map(|l| width_of(l, 12.0)).max().unwrap_or(0).min(MAX_LABEL) as i32;
    let plot_top = y + 4;
    let mut at = plot_top;
    let mut placed = Vec::new();
    for (name, h) in names {
        placed.push((at, fit(&name, 13.0, MAX_NAME)));
        at += h;
    }
    let (lo, hi) = match &fig.body {
        Body::Bars(b) => b.scale.range(),
        Body::Boxes(b) => (0.0, b.max.max(f64::MIN_POSITIVE)),
        Body::Empty(_) => (0.0, 1.0),
    };
    Layout {
        height: (at + 64 + PAD) as u32,
        legend,
        plot_top,
        plot_bottom: at,
        x0: PAD + name_w + 10,
        x1: WIDTH as i32 - PAD - label_w - 10,
        names: placed,
        lo,
        hi,
    }
}

/// Axis ticks at 1, 2 or 5 times a power of ten.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(f64::MIN_POSITIVE);
    let raw = span / 5.0;
    let power = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * power).find(|s| span / s <= 6.0).unwrap_or(10.0 * power);
    let mut out = Vec::new();
    let mut v = (lo / step).ceil() * step;
    while v <= hi + step * 1e-9 && out.len() < 20 {
        out.push(v);
        v += step;
    }
    out
}

fn tick_label(scale: Option<Scale>, v: f64) -> String {
    match scale {
        Some(Scale::Share) => format!("{:.0}%", v * 100.0),
        Some(Scale::Coefficient) => format!("{v:.1}"),
        _ if v.fract() == 0.0 => format!("{v:.0}"),
        _ => format!("{}", (v * 1000.0).round() / 1000.0),
    }
}

fn colour(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

type Drawn<DB> = Result<(), DrawingAreaErrorKind<<DB as DrawingBackend>::ErrorType>>;

fn text<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, s: &str, at: (i32, i32), style: TextStyle) -> Drawn<DB> {
    root.draw(&Text::new(s.to_string(), at, style))
}

fn paint<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, fig: &Figure, l: &Layout) -> Drawn<DB> {
    root.fill(&WHITE)?;
    let title = FontDesc::new(FontFamily::Name(FAMILY), 20.0, FontStyle::Bold).color(&INK);
    text(root, &fit(&fig.title, 20.0, WIDTH - 2 * PAD as u32), (PAD, PAD), title)?;
    text(root, &fit(&fig.stamp, 12.0, WIDTH - 2 * PAD as u32), (PAD, PAD + 28), font(12.0).color(&MUTED))?;
    if let Some(note) = &fig.note {
        text(root, &fit(note, 12.0, WIDTH - 2 * PAD as u32), (PAD, PAD + 46), font(12.0).color(&INK))?;
    }
    for (x, y, i, name) in &l.legend {
        root.draw(&Rectangle::new([(*x, *y + 2), (*x + 11, *y + 13)], colour(*i).filled()))?;
        text(root, name, (*x + 16, *y), font(12.0).color(&INK))?;
    }
    let scale = match &fig.body {
        Body::Bars(b) => Some(b.scale),
        _ => None,
    };
    if !matches!(fig.body, Body::Empty(_)) {
        let below = font(11.0).color(&MUTED).pos(Pos::new(HPos::Center, VPos::Top));
        for t in ticks(l.lo, l.hi) {
            let x = l.x(t);
            root.draw(&PathElement::new(vec![(x, l.plot_top), (x, l.plot_bottom)], GRID.stroke_width(1)))?;
            text(root, &tick_label(scale, t), (x, l.plot_bottom + 6), below.clone())?;
        }
        let axis_x = l.x(if l.lo < 0.0 { 0.0 } else { l.lo });
        root.draw(&PathElement::new(vec![(axis_x, l.plot_top), (axis_x, l.plot_bottom)], INK.stroke_width(1)))?;
        let caption = font(12.0).color(&INK).pos(Pos::new(HPos::Center, VPos::Top));
        let mid = (l.x0 + l.x1) / 2;
        text(root, &fit(&fig.axis, 12.0, WIDTH - 2 * PAD as u32), (mid, l.plot_bottom + 26), caption)?;
    }
    let name_style = font(13.0).color(&INK).pos(Pos::new(HPos::Right, VPos::Center));
    match &fig.body {
        Body::Bars(b) => bars(root, b, l, name_style),
        Body::Boxes(b) => boxes(root, b, l, name_style),
        Body::Empty(_) => {
            let (y, why) = &l.names[0];
            text(root, why, (PAD, *y + 4), font(13.0).color(&MUTED))
        }
    }
}

fn bars<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &Bars, l: &Layout, names: TextStyle) -> Drawn<DB> {
    let value_style = font(12.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
    let zero = l.x(0.0_f64.max(l.lo));
    for (c, (top, name)) in l.names.iter().enumerate() {
        let height = b.series.len() as i32 * (BAR + BAR_GAP) - BAR_GAP;
        text(root, name, (l.x0 - 10, top + height / 2), names.clone())?;
        for (i, s) in b.series.iter().enumerate() {
            let Some(bar) = s.bars.get(c) else { continue };
            let y = top + i as i32 * (BAR + BAR_GAP);
            let mut end = zero;
            if let Some(v) = bar.value {
                let x = l.x(v);
                root.draw(&Rectangle::new(
                    [(zero.min(x), y), (zero.max(x).max(zero.min(x) + 1), y + BAR)],
                    colour(i).filled(),
                ))?;
                end = end.max(x);
            }
            if let Some((lo, hi)) = bar.interval {
                let (a, z, mid) = (l.x(lo), l.x(hi), y + BAR / 2);
                root.draw(&PathElement::new(vec![(a, mid), (z, mid)], INK.stroke_width(2)))?;
                for x in [a, z] {
                    root.draw(&PathElement::new(vec![(x, y + 2), (x, y + BAR - 2)], INK.stroke_width(2)))?;
                }
                end = end.max(z);
            }
            text(root, &bar_label(b, s, bar), (end + 5, y + BAR / 2), value_style.clone())?;
        }
    }
    Ok(())
}

fn boxes<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, b: &Boxes, l: &Layout, names: TextStyle) -> Drawn<DB> {
    let value_style = font(12.0).color(&INK).pos(Pos::new(HPos::Left, VPos::Center));
    for (row, (top, name)) in b.rows.iter().zip(&l.names) {
        let mid = top + BOX_ROW / 2;
        text(root, name, (l.x0 - 10, mid), names.clone())?;
        let mut end = l.x0;
        if let Some(s) = row.spread {
            let fill = colour(if row.side == 0 { 3 } else { 0 });
            let (min, q1, med, q3, max) = (l.x(s.min), l.x(s.q1), l.x(s.median), l.x(s.q3), l.x(s.max));
            root.draw(&PathElement::new(vec![(min, mid), (max, mid)], INK.stroke_width(1)))?;
            for x in [min, max] {
                root.draw(&PathElement::new(vec![(x, mid - 5), (x, mid + 5)], INK.stroke_width(1)))?;
            }
            root.draw(&Rectangle::new([(q1, top + 4), (q3.max(q1 + 1), top + BOX_ROW - 4)], fill.filled()))?;
            root.draw(&PathElement::new(vec![(med, top + 2), (med, top + BOX_ROW - 2)], INK.stroke_width(2)))?;
            end = max;
        }
        text(root, &row.label, (end + 6, mid), value_style.clone())?;
    }
    Ok(())
}

fn failed<E: std::error::Error + Send + Sync>(e: DrawingAreaErrorKind<E>) -> DrawError {
    DrawError(e.to_string())
}

/// The figure as an SVG document.
pub fn svg(fig: &Figure) -> Result<String, DrawError> {
    fonts()?;
    let l = layout(fig);
    let mut out = String::new();
    {
        let root = SVGBackend::with_string(&mut out, (WIDTH, l.height)).into_drawing_area();
        paint(&root, fig, &l).map_err(failed)?;
        root.present().map_err(failed)?;
    }
    Ok(out)
}

/// Pixels a PNG may have (a figure within its bounds, `bound`, has far fewer): its image is
/// never allocated past them.
const MAX_PIXELS: u64 = 2 * WIDTH as u64 * 16_384;

/// The regular and bold faces of the bundled font, to ask which characters they draw.
fn faces() -> Option<&'static (ttf_parser::Face<'static>, ttf_parser::Face<'static>)> {
    static FACES: OnceLock<Option<(ttf_parser::Face<'static>, ttf_parser::Face<'static>)>> = OnceLock::new();
    FACES
        .get_or_init(|| {
            let regular = ttf_parser::Face::parse(dejavu::sans::regular(), 0).ok()?;
            Some((regular, ttf_parser::Face::parse(dejavu::sans::bold(), 0).ok()?))
        })
        .as_ref()
}

/// `text` as the bundled font draws it: a run of characters it has no glyph for (an emoji, with
/// the joiners and selectors of its sequence) as their code points, `[U+1F680]`, not as empty
/// boxes.
pub(super) fn drawable(text: &str) -> std::borrow::Cow<'_, str> {
    let Some((regular, bold)) = faces() else { return text.into() };
    let has = |c: char| regular.glyph_index(c).is_some() && bold.glyph_index(c).is_some();
    if text.chars().all(has) {
        return text.into();
    }
    let (mut out, mut run) = (String::new(), Vec::new());
    let flush = |run: &mut Vec<char>, out: &mut String| {
        if !run.is_empty() {
            let codes: Vec<String> = run.drain(..).map(|c| format!("U+{:04X}", c as u32)).collect();
            out.push_str(&format!("[{}]", codes.join(" ")));
        }
    };
    for c in text.chars() {
        let joins = !run.is_empty() && matches!(c, '\u{200d}' | '\u{fe00}'..='\u{fe0f}' | '\u{1f3fb}'..='\u{1f3ff}');
        if joins || !has(c) {
            run.push(c);
        } else {
            flush(&mut run, &mut out);
            out.push(c);
        }
    }
    flush(&mut run, &mut out);
    out.into()
}

/// The figure with every text as the bundled font draws it.
fn drawable_figure(fig: &Figure) -> Figure {
    let d = |s: &String| drawable(s).into_owned();
    let mut f = fig.clone();
    for s in [&mut f.title, &mut f.stamp, &mut f.axis].into_iter().chain(f.note.as_mut()) {
        *s = d(s);
    }
    match &mut f.body {
        Body::Bars(b) => {
            b.categories.iter_mut().for_each(|c| *c = d(c));
            for s in &mut b.series {
                s.name = d(&s.name);
                s.bars.iter_mut().for_each(|bar| bar.label = d(&bar.label));
            }
        }
        Body::Boxes(b) => b.rows.iter_mut().for_each(|r| (r.name, r.label) = (d(&r.name), d(&r.label))),
        Body::Empty(why) => *why = d(why),
    }
    f
}

/// The figure as a PNG image: its SVG rendered at twice its size (sharp on a dense screen), with
/// the bundled font only; a character it has no glyph for is written as its code point.
pub fn png(fig: &Figure) -> Result<Vec<u8>, DrawError> {
    let svg = svg(&drawable_figure(fig))?;
    let mut options = resvg::usvg::Options::default();
    let fonts = options.fontdb_mut();
    fonts.load_font_data(dejavu::sans::regular().to_vec());
    fonts.load_font_data(dejavu::sans::bold().to_vec());
    fonts.set_sans_serif_family("DejaVu Sans");
    let tree = resvg::usvg::Tree::from_str(&svg, &options).map_err(|e| DrawError(e.to_string()))?;
    let size = tree.size().to_int_size().scale_by(SCALE).ok_or_else(|| DrawError("the chart is too large".into()))?;
    if u64::from(size.width()) * u64::from(size.height()) > MAX_PIXELS {
        return Err(DrawError(format!("the chart is too large ({} x {} pixels)", size.width(), size.height())));
    }
    let mut pixmap = resvg::tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or_else(|| DrawError("the chart is too large".into()))?;
    resvg::render(&tree, resvg::tiny_skia::Transform::from_scale(SCALE, SCALE), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| DrawError(e.to_string()))
}
