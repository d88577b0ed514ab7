//! Where the marks of the per-GPU memory chart go (`src/components/memory_chart.rs` binds
//! them to SVG elements). The drawing is the other charts' (`src/charts.rs`, plotters):
//! [`WIDTH`] units wide, scaled to the column by its `viewBox`; text of plotters' size 17
//! (its SVG backend writes 17 / 1.24); one row per format, its bar low and its name (format ·
//! layout · total) above it; the GPU's memory as a red line across the rows, labelled, on
//! the side with room; the legend in its own strip under the axes, never over data. The
//! numbers are the core's (`Estimate::parts`, `FormatRow`, `units::fmt_bytes`); this only
//! places them.

use vramfit_core::plan::{FormatRow, Plan};
use vramfit_core::units::{fmt_bytes, real, Units};

/// Width of the drawing, in SVG units (the other charts' width).
pub const WIDTH: f64 = 440.0;
/// Text size: plotters' 17, which its SVG backend writes as 17 / 1.24.
pub const FONT: f64 = 17.0 / 1.24;
/// The caption's size: plotters' 19.
pub const CAPTION: f64 = 19.0 / 1.24;
/// Height of one legend row.
pub const KEY_ROW: f64 = 24.0;
/// Left and right margins of the plot.
pub const LEFT: f64 = 10.0;
pub const RIGHT: f64 = WIDTH - 10.0;
/// Top of the plot (under the caption).
pub const TOP: f64 = 40.0;
/// From the plot's bottom to the drawing's: the axis labels and a margin.
pub const BELOW: f64 = 40.0;
/// The parts' colours, in `Estimate::parts` order (the other charts' palette: mid-tones that
/// read on the light and the dark theme).
pub const COLORS: [&str; 6] = [
    "#3B82F6", // weights
    "#EAB308", // activation
    "#A855F7", // non-torch
    "#22C55E", // KV pool
    "#F97316", // CUDA graphs
    "#94A3B8", // context
];
/// The GPU-memory line.
pub const RED: &str = "#FF0000";
/// Legend entries to a row.
pub const KEY_COLS: usize = 3;

/// One format's row: its name and where each part's bar segment starts and how wide it is.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Format id (the row's key).
    pub id: &'static str,
    /// "bf16 · TP1×PP1 · 74.2 GiB".
    pub name: String,
    /// The name's baseline.
    pub name_y: f64,
    /// Top of the bar.
    pub bar_y: f64,
    /// `(x, width)` of each part, in `Estimate::parts` order (width 0 where a part is 0).
    pub segments: [(f64, f64); 6],
}

/// Everything the chart places, in SVG units.
#[derive(Clone, Debug, PartialEq)]
pub struct Geometry {
    /// Height of the plot's area (caption, rows, axis labels), above the legend.
    pub chart_height: f64,
    /// Bottom of the plot (the x axis).
    pub bottom: f64,
    /// Height of a bar.
    pub bar_height: f64,
    /// "Per-GPU memory at each format's layout (GiB)".
    pub caption: String,
    /// The rows, top to bottom, in the plan's format order.
    pub rows: Vec<Row>,
    /// Axis ticks: x and label.
    pub ticks: Vec<(f64, String)>,
    /// x of the GPU-memory line and the y of its top.
    pub gpu_x: f64,
    pub gpu_top: f64,
    /// "GPU memory 80 GiB", and whether it is written to the left of the line.
    pub gpu_label: String,
    pub gpu_label_left: bool,
    /// Legend entries (the parts' short names, then "GPU memory").
    pub keys: Vec<&'static str>,
}

fn row_total(r: &FormatRow) -> u64 {
    r.estimate.parts().iter().map(|x| x.bytes).sum()
}

/// A step of 1, 2 or 5 × 10ⁿ giving at most `n` intervals over `0..max` (plotters' 5 labels).
fn tick_step(max: f64, n: f64) -> f64 {
    let raw = (max / n).max(f64::MIN_POSITIVE);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag)
}

/// Where everything goes for plan `p` in `units`.
pub fn geometry(p: &Plan, units: Units) -> Geometry {
    let div = match units {
        Units::Binary => real(1 << 30),
        Units::Decimal => 1e9,
    };
    let n = p.formats.len() as f64;
    let gpu = real(p.estimate.gpu_total_bytes) / div;
    let max_x = p
        .formats
        .iter()
        .map(|r| real(row_total(r)) / div)
        .fold(gpu, f64::max)
        .max(f64::MIN_POSITIVE)
        * 1.05;
    let chart_height = 100.0 + 44.0 * n;
    let bottom = chart_height - BELOW;
    // Row i (from the top) spans y ∈ [n−1−i, n−i] in value units: its bar in [+0.1, +0.5],
    // its name above; the strip above the rows holds the GPU line's label.
    let unit = (bottom - TOP) / (n + 0.5);
    let py = |y: f64| bottom - y * unit;
    let px = |x: f64| LEFT + x / max_x * (RIGHT - LEFT);
    let rows = p
        .formats
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let y = n - 1.0 - i as f64;
            let mut at = 0.0;
            let segments = r.estimate.parts().map(|part| {
                let w = real(part.bytes) / div;
                let seg = (px(at), px(at + w) - px(at));
                at += w;
                seg
            });
            Row {
                id: r.format.id(),
                name: format!(
                    "{} · TP{}×PP{} · {}",
                    r.format.id(),
                    r.tensor_parallel_size,
                    r.pipeline_parallel_size,
                    fmt_bytes(row_total(r), units)
                ),
                name_y: py(y + 0.58),
                bar_y: py(y + 0.5),
                segments,
            }
        })
        .collect();
    let step = tick_step(max_x, 5.0);
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10().floor()) as usize
    };
    let ticks = (0..)
        .map(|k| k as f64 * step)
        .take_while(|v| *v <= max_x)
        .map(|v| (px(v), format!("{v:.decimals$}")))
        .collect();
    let unit_name = match units {
        Units::Binary => "GiB",
        Units::Decimal => "GB",
    };
    let mut keys: Vec<&'static str> = p.estimate.parts().iter().map(|x| x.short).collect();
    keys.push("GPU memory");
    Geometry {
        chart_height,
        bottom,
        bar_height: 0.4 * unit,
        caption: format!("Per-GPU memory at each format's layout ({unit_name})"),
        rows,
        ticks,
        gpu_x: px(gpu),
        gpu_top: py(n + 0.1),
        gpu_label: format!(
            "GPU memory {}",
            fmt_bytes(p.estimate.gpu_total_bytes, units)
        ),
        gpu_label_left: gpu > max_x / 2.0,
        keys,
    }
}

/// The height of the legend strip for `keys` entries.
pub fn legend_height(keys: usize) -> f64 {
    keys.div_ceil(KEY_COLS) as f64 * KEY_ROW + 8.0
}

/// Where legend entry `i` goes (its swatch's left, its row's middle) under a plot `top` high.
pub fn key_at(i: usize, top: f64) -> (f64, f64) {
    let col = (WIDTH - 24.0) / KEY_COLS as f64;
    (
        12.0 + (i % KEY_COLS) as f64 * col,
        top + 4.0 + (i / KEY_COLS) as f64 * KEY_ROW + KEY_ROW / 2.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_step_by_one_two_or_five() {
        assert_eq!(tick_step(84.0, 5.0), 20.0);
        assert_eq!(tick_step(42.0, 5.0), 10.0);
        assert_eq!(tick_step(7.3, 5.0), 2.0);
        assert_eq!(tick_step(0.9, 5.0), 0.2);
        assert_eq!(tick_step(100.0, 5.0), 20.0);
    }
}
