//! The views chunk's charts (scaling, latency, crossover), drawn with plotters into SVG
//! strings; the memory chart of "Size it" is Leptos SVG elements of its own
//! (`src/components/memory_chart.rs`, same shape and palette), so the first load carries no
//! chart library. Drawing functions are generic over the
//! backend; the SVG backend escapes text, so the string can be injected as markup.
//! Numbers come from the core; this module only places them.
//!
//! Every chart has the same shape, to stay readable from a phone (375 px) to a desktop: a
//! narrow drawing (the page scales it with its `viewBox` to the column's width) with large
//! text, every bar or line named on the chart, and the legend in its own strip under the
//! axes, never over data. Colours follow the page's theme: text and axes are drawn black and
//! written out as `currentColor` ([`finish`]), so on the page they take the theme's text
//! colour (the background is the page's, `style/main.css`) and a downloaded file stays
//! black on white; the series colours are mid-tones that read on light and dark.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Lines of the scaling and latency charts (each ≥ 3:1 against both themes' backgrounds).
const LINES: [RGBColor; 4] = [
    RGBColor(59, 130, 246),
    RGBColor(234, 88, 12),
    RGBColor(22, 163, 74),
    RGBColor(168, 85, 247),
];
/// Text and axes (written out as `currentColor`).
const INK: RGBColor = BLACK;
/// The legend's text: `currentColor` as well, and the mark where the legend starts.
const KEY_INK: RGBColor = RGBColor(0, 0, 1);
/// Width of every chart, in SVG units.
const WIDTH: u32 = 440;
/// Text size (plotters' units; the SVG's font-size is this / 1.24).
const TEXT: u32 = 17;
/// Height of one legend row.
const KEY_ROW: u32 = 24;

/// A part of an SVG drawing.
type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;

/// One legend entry: its text, its colour, and whether it marks a line (else an area).
type Key = (String, RGBColor, bool);

fn err(e: impl std::fmt::Display) -> String {
    e.to_string()
}

/// Height of the legend strip for `n` entries, `cols` to a row.
fn legend_height(n: usize, cols: usize) -> u32 {
    n.div_ceil(cols) as u32 * KEY_ROW + 8
}

/// Draws the legend in its own strip (under the axes): `cols` entries to a row. It is a
/// chart of its own (one unit per entry), so it shares the charts' drawing code.
fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    keys: &[Key],
    cols: usize,
) -> Result<(), String> {
    let rows = keys.len().div_ceil(cols) as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_left(12)
        .build_cartesian_2d(0.0..cols as f64, 0.0..rows)
        .map_err(err)?;
    // One pixel, in units: across (the strip less its margins) and up (a row is KEY_ROW).
    let (px, py) = (
        cols as f64 / f64::from(WIDTH - 16),
        1.0 / f64::from(KEY_ROW),
    );
    let font = ("sans-serif", TEXT)
        .into_font()
        .color(&KEY_INK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (label, color, line)) in keys.iter().enumerate() {
        let x = (i % cols) as f64;
        let y = rows - 0.5 - (i / cols) as f64;
        chart
            .draw_series([Text::new(label.clone(), (x + 20.0 * px, y), font.clone())])
            .map_err(err)?;
        let h = if *line { 2.0 } else { 6.0 } * py;
        chart
            .draw_series([Rectangle::new(
                [(x, y - h), (x + 14.0 * px, y + h)],
                color.filled(),
            )])
            .map_err(err)?;
    }
    Ok(())
}

/// An SVG drawing of `height` × [`WIDTH`]: `draw` fills its chart area, the legend strip of
/// `keys.len()` entries (`cols` to a row) goes under it; `legend` is the `data-testid` of
/// the legend's group. An SVG with the error message on failure.
fn svg<F>(height: u32, keys: usize, cols: usize, legend: &str, draw: F) -> String
where
    F: for<'b> FnOnce(&Area<'b>, &Area<'b>) -> Result<(), String>,
{
    let mut s = String::new();
    let h = height + legend_height(keys, cols);
    {
        let root = SVGBackend::with_string(&mut s, (WIDTH, h)).into_drawing_area();
        let (chart, key) = root.split_vertically(height);
        if let Err(e) = draw(&chart, &key).and_then(|()| root.present().map_err(err)) {
            drop(root);
            return format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text y=\"20\">chart unavailable: {}</text></svg>", e.replace('<', "&lt;"));
        }
    }
    finish(s, legend)
}

/// The one post-processing of a chart: the legend (everything from its first text, drawn
/// last) into a group named `legend`, and the ink into `currentColor`. The colours are
/// [`KEY_INK`] and [`INK`] as plotters' SVG backend writes them.
fn finish(mut s: String, legend: &str) -> String {
    if let (Some(at), Some(end)) = (
        s.find("fill=\"#000001\"").and_then(|i| s[..i].rfind('<')),
        s.rfind("</svg>"),
    ) {
        s.insert_str(end, "</g>");
        s.insert_str(at, &format!("<g data-testid=\"{legend}\">"));
    }
    s.replace("#000001", "currentColor")
        .replace("#000000", "currentColor")
}

/// Draws total and per-GPU throughput against TP (own link and PCIe) with the ideal line;
/// the legend goes in `key`.
pub fn draw_scaling<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    key: &DrawingArea<DB, Shift>,
    d: &vramfit_core::plan::Scaling,
) -> Result<(), String> {
    let pts: Vec<_> = d
        .own_link
        .iter()
        .filter(|p| p.pipeline_parallel_size == 1)
        .collect();
    let pcie: Vec<_> = d
        .pcie
        .iter()
        .filter(|p| p.pipeline_parallel_size == 1)
        .collect();
    let base = pts.iter().find(|p| p.fits);
    let max_y = pts
        .iter()
        .chain(pcie.iter())
        .map(|p| p.tokens_per_s_total)
        .fold(1.0, f64::max)
        .max(base.map_or(0.0, |b| b.tokens_per_s_per_gpu * 8.0))
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .caption(
            "Output tokens/s vs tensor-parallel size",
            ("sans-serif", 19),
        )
        // x is log2(TP) on a linear axis, labelled 2^x: the same picture as a log-scale axis,
        // with the other charts' coordinate type (f64 × f64: plotters' generic drawing code
        // once, not twice: -3.1 KB gzipped).
        .build_cartesian_2d(0.8f64.log2()..9.0f64.log2(), 0.0..max_y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(5)
        .y_labels(5)
        .label_style(("sans-serif", TEXT))
        .x_desc("GPUs (TP)")
        .y_desc("tokens/s")
        .x_label_formatter(&|x| format!("{}", x.exp2().round()))
        .draw()
        .map_err(err)?;
    let series = |v: &[&vramfit_core::throughput::ScalePoint]| -> Vec<(f64, f64)> {
        v.iter()
            .filter(|p| p.fits)
            .map(|p| ((p.tensor_parallel_size as f64).log2(), p.tokens_per_s_total))
            .collect()
    };
    let mut keys: Vec<Key> = vec![
        (format!("total, {}", d.link_name), LINES[0], true),
        ("total, PCIe".to_owned(), LINES[1], true),
    ];
    chart
        .draw_series(LineSeries::new(series(&pts), LINES[0].stroke_width(3)).point_size(4))
        .map_err(err)?;
    chart
        .draw_series(LineSeries::new(series(&pcie), LINES[1].stroke_width(2)).point_size(3))
        .map_err(err)?;
    if let Some(b) = base {
        let per = b.tokens_per_s_per_gpu;
        let ideal: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .filter(|&&x| x >= b.tensor_parallel_size as f64)
            .map(|&x| (f64::log2(x), per * x))
            .collect();
        chart
            .draw_series(LineSeries::new(ideal, INK.mix(0.5).stroke_width(1)))
            .map_err(err)?;
        keys.push(("ideal linear".to_owned(), INK, true));
    }
    draw_legend(key, &keys, 2)
}

/// The scaling chart as an SVG string; its legend is the group `scaling-legend`.
pub fn scaling_svg(d: &vramfit_core::plan::Scaling) -> String {
    svg(300, 3, 2, "scaling-legend", |a, k| draw_scaling(a, k, d))
}

/// Draws tokens/s per GPU against tokens/s per user, one line per layout, one point per
/// concurrency (1, 2, 4, … up to maximum load), the last point named with its concurrency
/// and what limits it; the legend goes in `key`.
pub fn draw_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    key: &DrawingArea<DB, Shift>,
    curves: &[vramfit_core::plan::LatencyCurve],
) -> Result<(), String> {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let max_x = all().map(|p| p.tokens_per_s_per_user).fold(1.0, f64::max) * 1.1;
    let max_y = all().map(|p| p.tokens_per_s_per_gpu).fold(1.0, f64::max) * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .caption("Throughput per GPU vs speed per user", ("sans-serif", 19))
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(5)
        .y_labels(5)
        .label_style(("sans-serif", TEXT))
        .x_desc("tokens/s per user (1 / ITL)")
        .y_desc("tokens/s per GPU")
        .draw()
        .map_err(err)?;
    let mut keys: Vec<Key> = Vec::new();
    for (k, c) in curves.iter().enumerate() {
        let color = LINES[k % LINES.len()];
        let line: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|p| (p.tokens_per_s_per_user, p.tokens_per_s_per_gpu))
            .collect();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)).point_size(3))
            .map_err(err)?;
        keys.push((format!("TP {}", c.tensor_parallel_size), color, true));
        // The last point is maximum load: name what limits it.
        if let Some(p) = c.points.last() {
            chart
                .draw_series([Text::new(
                    format!("{} ({})", p.concurrency, p.limited_by.id()),
                    (p.tokens_per_s_per_user, p.tokens_per_s_per_gpu),
                    ("sans-serif", TEXT).into_font().color(&INK),
                )])
                .map_err(err)?;
        }
    }
    draw_legend(key, &keys, 4)
}

/// The throughput-versus-latency chart as an SVG string; its legend is the group
/// `latency-legend`.
pub fn latency_svg(curves: &[vramfit_core::plan::LatencyCurve]) -> String {
    svg(300, curves.len().max(1), 4, "latency-legend", |a, k| {
        draw_latency(a, k, curves)
    })
}

/// Renders an SVG string to a PNG `width` pixels wide in a canvas and downloads it as `name`.
/// The height follows the chart's own aspect (the memory chart's grows with its rows: `src/components/memory_chart.rs`), so
/// `_height` is not read.
pub fn download_png(svg: &str, width: u32, _height: u32, name: &str) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let url = format!(
        "data:image/svg+xml;charset=utf-8,{}",
        vramfit_core::share::enc(svg)
    );
    let name = name.to_string();
    let img2 = img.clone();
    let onload = Closure::once_into_js(move || {
        let Ok(canvas) = doc
            .create_element("canvas")
            .map(|c| c.unchecked_into::<web_sys::HtmlCanvasElement>())
        else {
            return;
        };
        let w = f64::from(width);
        let h = w * f64::from(img2.natural_height()) / f64::from(img2.natural_width().max(1));
        canvas.set_width(width);
        canvas.set_height(h as u32);
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .map(|c| c.unchecked_into::<web_sys::CanvasRenderingContext2d>())
        else {
            return;
        };
        ctx.set_fill_style_str("white");
        ctx.fill_rect(0.0, 0.0, w, h);
        let _ = ctx.draw_image_with_html_image_element_and_dw_and_dh(&img2, 0.0, 0.0, w, h);
        let Ok(data) = canvas.to_data_url_with_type("image/png") else {
            return;
        };
        if let Ok(a) = doc
            .create_element("a")
            .map(|a| a.unchecked_into::<web_sys::HtmlAnchorElement>())
        {
            a.set_href(&data);
            a.set_download(&name);
            a.click();
        }
    });
    img.set_onload(Some(onload.unchecked_ref()));
    img.set_src(&url);
}

/// Draws monthly cost against monthly output tokens for one option: buying, renting on
/// demand, reserved capacity and the API, the lines the core's `Unit::monthly` gives at each
/// volume (steps where another unit is needed); the legend goes in `key`.
pub fn draw_crossover<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    key: &DrawingArea<DB, Shift>,
    pts: &[vramfit_core::budget::Monthly],
) -> Result<(), String> {
    use vramfit_core::budget::Monthly;
    let max_x = pts.last().map_or(1.0, |p| p.tokens_per_month).max(1.0) / 1e6;
    let cost = |p: &Monthly| [p.buy, p.on_demand, p.reserved, p.api];
    let max_y = pts
        .iter()
        .flat_map(|p| cost(p).into_iter().flatten())
        .filter(|y| y.is_finite())
        .fold(1.0, f64::max)
        * 1.1;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(44)
        .y_label_area_size(84)
        .caption(
            "Cost per month vs output tokens per month",
            ("sans-serif", 19),
        )
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)
        .map_err(err)?;
    chart
        .configure_mesh()
        .x_labels(5)
        .y_labels(5)
        .label_style(("sans-serif", TEXT))
        .x_desc("million output tokens per month")
        .y_desc("USD per month")
        .draw()
        .map_err(err)?;
    let names = ["buy (TCO)", "rent on demand", "rent reserved", "API"];
    let mut keys: Vec<Key> = Vec::new();
    for (k, name) in names.iter().enumerate() {
        let line: Vec<(f64, f64)> = pts
            .iter()
            .filter_map(|p| cost(p)[k].map(|y| (p.tokens_per_month / 1e6, y)))
            .filter(|(_, y)| y.is_finite())
            .collect();
        if line.is_empty() {
            continue;
        }
        let color = LINES[k % LINES.len()];
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)))
            .map_err(err)?;
        keys.push(((*name).to_owned(), color, true));
    }
    draw_legend(key, &keys, 4)
}

/// The crossover chart as an SVG string; its legend is the group `crossover-legend`.
pub fn crossover_svg(pts: &[vramfit_core::budget::Monthly]) -> String {
    svg(300, 4, 4, "crossover-legend", |a, k| {
        draw_crossover(a, k, pts)
    })
}
