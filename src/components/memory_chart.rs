//! The per-GPU memory chart of "Size it", drawn as SVG elements that Leptos keeps: a changed
//! input moves the bars (their `x` and `width`), the line and the labels; it does not draw
//! the chart again, and a row is added or removed only when a format is (rows are keyed by
//! format id). No chart library: the first load carries none (issue 19; plotters draws the
//! other views' charts, in the views chunk). Where each mark goes is
//! `src/memory_layout.rs`; this component only binds it to the elements.

use crate::memory_layout::{
    legend_height, Geometry, Row, CAPTION, COLORS, FONT, LEFT, RED, RIGHT, TOP, WIDTH,
};
use crate::state::AppState;
use leptos::prelude::*;

/// A reactive value of row `id` (0 while the row is gone).
fn row_value(
    geo: Memo<Option<Geometry>>,
    id: &'static str,
    f: impl Fn(&Row) -> f64 + Copy + Send + Sync + 'static,
) -> impl Fn() -> f64 + Copy + Send + Sync + 'static {
    move || {
        geo.with(|g| {
            g.as_ref()
                .and_then(|g| g.rows.iter().find(|r| r.id == id))
                .map_or(0.0, f)
        })
    }
}

/// The chart, or nothing while the plan does not compute. [`markup`] gives its SVG file.
#[component]
pub fn MemoryChart() -> impl IntoView {
    let st = expect_context::<AppState>();
    let geo = Memo::new(move |_| {
        let u = st.units.get();
        st.plan.with(|p| {
            p.as_ref()
                .ok()
                .map(|p| crate::memory_layout::geometry(p, u))
        })
    });
    // Each value through its own memo: an attribute is written only when it changed.
    let pick =
        move |f: fn(&Geometry) -> f64| Memo::new(move |_| geo.with(|g| g.as_ref().map_or(0.0, f)));
    let (chart_h, bottom, bar_h, gpu_x, gpu_top) = (
        pick(|g| g.chart_height),
        pick(|g| g.bottom),
        pick(|g| g.bar_height),
        pick(|g| g.gpu_x),
        pick(|g| g.gpu_top),
    );
    let left = Memo::new(move |_| geo.with(|g| g.as_ref().is_some_and(|g| g.gpu_label_left)));
    let keys =
        Memo::new(move |_| geo.with(|g| g.as_ref().map(|g| g.keys.clone()).unwrap_or_default()));
    let text = move |f: fn(&Geometry) -> String| {
        Memo::new(move |_| geo.with(|g| g.as_ref().map(f).unwrap_or_default()))
    };
    let (caption, gpu_label) = (text(|g| g.caption.clone()), text(|g| g.gpu_label.clone()));
    let height = move || chart_h.get() + legend_height(keys.with(Vec::len));
    let rows = Memo::new(move |_| {
        geo.with(|g| {
            g.as_ref()
                .map(|g| g.rows.iter().map(|r| r.id).collect::<Vec<_>>())
                .unwrap_or_default()
        })
    });
    // Ticks and legend entries keyed by position: a new scale moves and relabels them.
    let tick_count = Memo::new(move |_| geo.with(|g| g.as_ref().map_or(0, |g| g.ticks.len())));
    let tick = move |i: usize| {
        move || geo.with(|g| g.as_ref().and_then(|g| g.ticks.get(i)).map_or(0.0, |t| t.0))
    };
    let tick_label = move |i: usize| {
        move || {
            geo.with(|g| {
                g.as_ref()
                    .and_then(|g| g.ticks.get(i))
                    .map(|t| t.1.clone())
                    .unwrap_or_default()
            })
        }
    };
    let key_count = Memo::new(move |_| keys.with(Vec::len));
    let key = move |i: usize| {
        let at = move || crate::memory_layout::key_at(i, chart_h.get());
        let (color, h) = COLORS.get(i).map_or((RED, 2.0), |c| (*c, 6.0));
        let label = move || keys.with(|k| k.get(i).copied().unwrap_or_default());
        view! {
            <rect x=move || at().0 y=move || at().1 - h width="14" height={2.0 * h} fill=color/>
            <text x=move || at().0 + 20.0 y=move || at().1 font-size=FONT dominant-baseline="central" fill="currentColor">{label}</text>
        }
    };
    let bar = move |id: &'static str| {
        let bars = (0..6)
            .map(|k| {
                view! {
                    <rect x={row_value(geo, id, move |r| r.segments[k].0)} y={row_value(geo, id, |r| r.bar_y)}
                        width={row_value(geo, id, move |r| r.segments[k].1)} height=bar_h fill={COLORS[k]}/>
                }
            })
            .collect_view();
        let name = move || {
            geo.with(|g| {
                g.as_ref()
                    .and_then(|g| g.rows.iter().find(|r| r.id == id))
                    .map(|r| r.name.clone())
            })
        };
        view! {
            {bars}
            <text x=LEFT y={row_value(geo, id, |r| r.name_y)} font-size=FONT fill="currentColor">{name}</text>
        }
    };
    let grid = move |i: usize| {
        view! {
            <line x1=tick(i) y1=TOP x2=tick(i) y2=bottom stroke="currentColor" stroke-opacity="0.15"/>
            <text x=tick(i) y={move || bottom.get() + 4.0 + FONT} font-size=FONT text-anchor="middle" fill="currentColor">{tick_label(i)}</text>
        }
    };
    // Built once while a plan computes: a recompute only moves what is inside.
    let drawn = Memo::new(move |_| geo.with(Option::is_some));
    let svg = move || {
        drawn.get().then(|| {
            view! {
                <svg xmlns="http://www.w3.org/2000/svg" width=WIDTH height=height
                    viewBox={move || format!("0 0 {WIDTH} {}", height())}
                    font-family="sans-serif" role="img" aria-label="Per-GPU memory of each format">
                    <text x={WIDTH / 2.0} y={10.0 + CAPTION} font-size=CAPTION text-anchor="middle" fill="currentColor">{caption}</text>
                    <For each={move || 0..tick_count.get()} key={|i| *i} children=grid/>
                    <line x1=LEFT y1=bottom x2=RIGHT y2=bottom stroke="currentColor"/>
                    <For each={move || rows.get()} key={|id| *id} children=bar/>
                    <polyline points={move || format!("{0},{1} {0},{2}", gpu_x.get(), bottom.get(), gpu_top.get())}
                        fill="none" stroke=RED stroke-width="2"/>
                    <text x={move || gpu_x.get() + if left.get() { -4.0 } else { 4.0 }} y={move || gpu_top.get() - 3.0}
                        font-size=FONT fill="currentColor" text-anchor={move || if left.get() { "end" } else { "start" }}>
                        {gpu_label}
                    </text>
                    <g data-testid="memory-legend"><For each={move || 0..key_count.get()} key={|i| *i} children=key/></g>
                </svg>
            }
        })
    };
    view! { <div class="vf-chart" data-testid="memory-chart">{svg}</div> }
}

/// The chart's SVG file: the drawing as the page shows it (`currentColor` is black in a file).
pub fn markup() -> Option<String> {
    let svg = web_sys::window()?
        .document()?
        .query_selector("[data-testid=\"memory-chart\"] svg")
        .ok()??;
    Some(svg.outer_html())
}
