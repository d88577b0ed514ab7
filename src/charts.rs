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
const LABELS: [&str; 6] = [
    "weights",
    "activation",
    "non-torch",
    "KV pool",
    "CUDA graphs",
    "context",
];

fn scale(units: Units) -> (f64, &'static str) {
    match units {
        Units::Binary => ((1u64 << 30) as f64, "GiB"),
        Units::Decimal => (1e9, "GB"),
    }
}

fn segments(r: &FormatRow) -> [u64; 6] {
    let e = &r.estimate;
    [
        e.weights_bytes,
        e.activation_bytes,
        e.non_torch_bytes,
        e.kv_pool_bytes,
        e.cuda_graph_bytes,
        e.cuda_context_bytes,
    ]
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
                s.label(LABELS[k]).legend(move |(a, b)| {
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
