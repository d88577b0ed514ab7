//! Charts drawn with plotters into SVG strings. Drawing functions are generic over the
//! backend; the SVG backend escapes text, so the string can be injected as markup.
//! Numbers come from the core; this module only places them.

use plotters::prelude::*;
use vramfit_core::plan::{FormatRow, Plan};
use vramfit_core::units::Units;

const COLORS: [RGBColor; 6] = [
    RGBColor(59, 130, 246),  // weights
    RGBColor(234, 179, 8),   // activation
    RGBColor(168, 85, 247),  // non-torch
    RGBColor(34, 197, 94),   // KV pool
    RGBColor(249, 115, 22),  // CUDA graphs
    RGBColor(148, 163, 184), // context
];

fn scale(units: Units) -> (f64, &'static str) {
    match units {
        Units::Binary => ((1u64 << 30) as f64, "GiB"),
        Units::Decimal => (1e9, "GB"),
    }
}

fn segments(r: &FormatRow) -> [u64; 6] {
    r.estimate.parts().map(|x| x.bytes)
}

/// Draws the per-GPU memory of each format as a stacked bar against the GPU's memory.
pub fn draw_memory_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    p: &Plan,
    units: Units,
) -> Result<(), String> {
    let (div, unit) = scale(units);
    let total = p.estimate.gpu_total_bytes as f64 / div;
    let rows: Vec<&FormatRow> = p.formats.iter().collect();
    let n = rows.len().max(1);
    let max_x = rows
        .iter()
        .map(|r| segments(r).iter().sum::<u64>() as f64 / div)
        .fold(total, f64::max)
        * 1.05;
    area.fill(&WHITE.mix(0.0)).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(area)
        .margin(8)
        .x_label_area_size(32)
        .y_label_area_size(70)
        .caption(
            format!("Per-GPU memory at each format's layout ({unit})"),
            ("sans-serif", 15),
        )
        .build_cartesian_2d(0.0..max_x, 0.0..n as f64)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(n)
        .y_label_formatter(&|y| {
            let i = (*y - 0.5).round() as usize;
            rows.get(i)
                .map(|r| format!("{} TP{}", r.format.id(), r.tensor_parallel_size))
                .unwrap_or_default()
        })
        .x_desc(unit)
        .draw()
        .map_err(|e| e.to_string())?;
    for (i, r) in rows.iter().enumerate() {
        let y0 = i as f64 + 0.2;
        let y1 = i as f64 + 0.8;
        let mut x = 0.0;
        for (k, v) in segments(r).iter().enumerate() {
            let w = *v as f64 / div;
            if w <= 0.0 {
                continue;
            }
            let rect = Rectangle::new([(x, y0), (x + w, y1)], COLORS[k].filled());
            let s = chart
                .draw_series(std::iter::once(rect))
                .map_err(|e| e.to_string())?;
            if i == 0 {
                s.label(p.estimate.parts()[k].short).legend(move |(a, b)| {
                    Rectangle::new([(a, b - 5), (a + 10, b + 5)], COLORS[k].filled())
                });
            }
            x += w;
        }
    }
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(total, 0.0), (total, n as f64)],
            RED.stroke_width(2),
        )))
        .map_err(|e| e.to_string())?
        .label("GPU memory")
        .legend(|(a, b)| PathElement::new(vec![(a, b), (a + 10, b)], RED.stroke_width(2)));
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(|e| e.to_string())?;
    area.present().map_err(|e| e.to_string())
}

/// The memory chart as an SVG string (an error message in an SVG on failure).
pub fn memory_bar_svg(p: &Plan, units: Units) -> String {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (720, 220)).into_drawing_area();
        if let Err(e) = draw_memory_bars(&root, p, units) {
            drop(root);
            return format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text y=\"20\">chart unavailable: {}</text></svg>", e.replace('<', "&lt;"));
        }
    }
    s
}

/// Draws total and per-GPU throughput against TP (own link and PCIe) with the ideal line.
pub fn draw_scaling<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
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
    area.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .caption(
            "Output tokens/s vs tensor-parallel size",
            ("sans-serif", 15),
        )
        // x is log2(TP) on a linear axis, labelled 2^x: the same picture as a log-scale axis,
        // with the memory chart's coordinate type (plotters' generic drawing code once, not
        // twice: -3.1 KB gzipped).
        .build_cartesian_2d(0.8f64.log2()..9.0f64.log2(), 0.0..max_y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_labels(5)
        .x_desc("GPUs (TP)")
        .y_desc("tokens/s")
        .x_label_formatter(&|x| format!("{}", x.exp2().round()))
        .draw()
        .map_err(|e| e.to_string())?;
    let series = |v: &[&vramfit_core::throughput::ScalePoint]| -> Vec<(f64, f64)> {
        v.iter()
            .filter(|p| p.fits)
            .map(|p| ((p.tensor_parallel_size as f64).log2(), p.tokens_per_s_total))
            .collect()
    };
    let blue = RGBColor(29, 78, 216);
    let orange = RGBColor(234, 88, 12);
    chart
        .draw_series(LineSeries::new(series(&pts), blue.stroke_width(3)).point_size(4))
        .map_err(|e| e.to_string())?
        .label(format!("total, {}", d.link_name))
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], blue.stroke_width(3)));
    chart
        .draw_series(LineSeries::new(series(&pcie), orange.stroke_width(2)).point_size(3))
        .map_err(|e| e.to_string())?
        .label("total, PCIe")
        .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], orange.stroke_width(2)));
    if let Some(b) = base {
        let per = b.tokens_per_s_per_gpu;
        let ideal: Vec<(f64, f64)> = [1.0, 2.0, 4.0, 8.0]
            .iter()
            .filter(|&&x| x >= b.tensor_parallel_size as f64)
            .map(|&x| (f64::log2(x), per * x))
            .collect();
        chart
            .draw_series(LineSeries::new(ideal, BLACK.mix(0.5).stroke_width(1)))
            .map_err(|e| e.to_string())?
            .label("ideal linear")
            .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 14, y)], BLACK.mix(0.5)));
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperLeft)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(|e| e.to_string())?;
    area.present().map_err(|e| e.to_string())
}

/// The scaling chart as an SVG string.
pub fn scaling_svg(d: &vramfit_core::plan::Scaling) -> String {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (720, 360)).into_drawing_area();
        if let Err(e) = draw_scaling(&root, d) {
            drop(root);
            return format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text y=\"20\">chart unavailable: {}</text></svg>", e.replace('<', "&lt;"));
        }
    }
    s
}

/// Draws tokens/s per GPU against tokens/s per user, one line per layout, one point per
/// concurrency (1, 2, 4, … up to maximum load), each point titled with its concurrency and
/// what limits it.
pub fn draw_latency<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    curves: &[vramfit_core::plan::LatencyCurve],
) -> Result<(), String> {
    let all = || curves.iter().flat_map(|c| c.points.iter());
    let max_x = all().map(|p| p.tokens_per_s_per_user).fold(1.0, f64::max) * 1.1;
    let max_y = all().map(|p| p.tokens_per_s_per_gpu).fold(1.0, f64::max) * 1.1;
    area.fill(&WHITE).map_err(|e| e.to_string())?;
    let mut chart = ChartBuilder::on(area)
        .margin(10)
        .x_label_area_size(36)
        .y_label_area_size(64)
        .caption("Throughput per GPU vs speed per user", ("sans-serif", 15))
        .build_cartesian_2d(0.0..max_x, 0.0..max_y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc("tokens/s per user (1 / ITL)")
        .y_desc("tokens/s per GPU")
        .draw()
        .map_err(|e| e.to_string())?;
    let colors = [
        RGBColor(29, 78, 216),
        RGBColor(234, 88, 12),
        RGBColor(22, 163, 74),
        RGBColor(147, 51, 234),
    ];
    for (k, c) in curves.iter().enumerate() {
        let color = colors[k % colors.len()];
        let line: Vec<(f64, f64)> = c
            .points
            .iter()
            .map(|p| (p.tokens_per_s_per_user, p.tokens_per_s_per_gpu))
            .collect();
        chart
            .draw_series(LineSeries::new(line, color.stroke_width(2)).point_size(3))
            .map_err(|e| e.to_string())?
            .label(format!("TP {}", c.tensor_parallel_size))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 14, y)], color.stroke_width(2))
            });
        // The last point is maximum load: name what limits it.
        if let Some(p) = c.points.last() {
            chart
                .draw_series(std::iter::once(Text::new(
                    format!("{} ({})", p.concurrency, p.limited_by.id()),
                    (p.tokens_per_s_per_user, p.tokens_per_s_per_gpu),
                    ("sans-serif", 11).into_font().color(&color),
                )))
                .map_err(|e| e.to_string())?;
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK.mix(0.3))
        .draw()
        .map_err(|e| e.to_string())?;
    area.present().map_err(|e| e.to_string())
}

/// The throughput-versus-latency chart as an SVG string.
pub fn latency_svg(curves: &[vramfit_core::plan::LatencyCurve]) -> String {
    let mut s = String::new();
    {
        let root = SVGBackend::with_string(&mut s, (720, 360)).into_drawing_area();
        if let Err(e) = draw_latency(&root, curves) {
            drop(root);
            return format!("<svg xmlns=\"http://www.w3.org/2000/svg\"><text y=\"20\">chart unavailable: {}</text></svg>", e.replace('<', "&lt;"));
        }
    }
    s
}

/// Renders an SVG string to PNG in a canvas and downloads it as `name`.
pub fn download_png(svg: &str, width: u32, height: u32, name: &str) {
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
        canvas.set_width(width);
        canvas.set_height(height);
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .map(|c| c.unchecked_into::<web_sys::CanvasRenderingContext2d>())
        else {
            return;
        };
        ctx.set_fill_style_str("white");
        ctx.fill_rect(0.0, 0.0, f64::from(width), f64::from(height));
        let _ = ctx.draw_image_with_html_image_element(&img2, 0.0, 0.0);
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
