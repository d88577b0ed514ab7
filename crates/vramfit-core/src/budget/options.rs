//! The options of [`budget`]: a GPU in a platform, planned, priced and checked against the
//! buyer's constraints (the rules are in [`super`]'s module docs).

use super::money::{Money, Terms, Unit};
use crate::catalog::platform::{Platform, PlatformKind};
use crate::catalog::{Catalog, Gpu, ScaleOut};
use crate::engine::Engine;
use crate::inputs::{Buyer, Inputs};
use crate::serving::{ALPHA_RDMA_S, ALPHA_SOCKET_S};
use crate::units::{fmt_num, fmt_usd, real as f};
use serde::Serialize;

/// Rack units of a standard rack.
pub const RACK_UNITS: u64 = 42;

/// One way to serve the workload: a GPU in a platform.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BuyOption {
    /// Catalog GPU id.
    pub gpu: String,
    /// GPU name.
    pub gpu_name: String,
    /// GPU vendor.
    pub vendor: String,
    /// Catalog platform id.
    pub platform: String,
    /// Platform name.
    pub platform_name: String,
    /// What the platform is (`baseboard`, `pcie-server`, `workstation`, `rack`, `system`).
    pub platform_kind: &'static str,
    /// The engine planned on it (`vllm-0.19`, `llama.cpp`).
    pub engine: String,
    /// GPUs bought.
    pub gpus: u64,
    /// GPUs the plan uses (the rest are spare).
    pub gpus_used: u64,
    /// Nodes (servers, racks for NVL72, devices).
    pub nodes: u64,
    /// Racks (`None`: stands on a desk, or the platform's rack units are not known).
    pub racks: Option<u64>,
    /// `TP×PP×replicas`, e.g. `TP8×PP2×1`.
    pub layout: String,
    /// TP.
    pub tensor_parallel_size: u64,
    /// PP.
    pub pipeline_parallel_size: u64,
    /// Replicas.
    pub replicas: u64,
    /// Whether a replica spans nodes (its pipeline crosses the network).
    pub spans_nodes: bool,
    /// The GPUs' share of the purchase, USD.
    pub gpus_usd: Option<f64>,
    /// Servers (or whole systems) and network, USD.
    pub servers_usd: Option<f64>,
    /// The network's share, USD.
    pub network_usd: f64,
    /// Everything bought, USD (the sticker price).
    pub purchase_usd: Option<f64>,
    /// Power at load at the wall, kW.
    pub power_kw: Option<f64>,
    /// Energy, TCO (the ranking key), USD per million output tokens bought, renting, the
    /// API, and the crossovers; `None` money when nothing runs.
    #[serde(flatten)]
    pub money: Money,
    /// On-demand cloud price of the GPUs used, USD per hour.
    pub cloud_usd_per_hour: Option<f64>,
    /// Reserved cloud price of the GPUs used, USD per hour.
    pub cloud_reserved_usd_per_hour: Option<f64>,
    /// Output tokens/s at the planned load.
    pub tokens_per_s: f64,
    /// Decode tokens/s each user sees.
    pub tokens_per_s_per_user: f64,
    /// Time to first token, ms.
    pub ttft_ms: Option<f64>,
    /// What bounds the speed (`bandwidth`, `compute`, `memory`, `interconnect`, ...).
    pub limited_by: String,
    /// Whether the speed targets, if any, are met.
    pub meets_target: bool,
    /// Whether the speed model is validated for the engine (else "not validated").
    pub speed_validated: bool,
    /// Whether it breaks a constraint (or cannot be planned or priced).
    pub excluded: bool,
    /// Why, one reason per constraint, joined by "; " (empty when kept).
    pub excluded_because: String,
    /// The oldest date among the prices used (`YYYY-MM`).
    pub prices_dated: Option<String>,
    /// What the money was worked out from (for [`BuyOption::curve`]).
    #[serde(skip)]
    pub unit: Unit,
}

impl BuyOption {
    /// The crossover chart's points: monthly costs from no tokens to twice what one unit
    /// serves (or past the farthest crossover), `n` + 1 volumes.
    #[must_use]
    pub fn curve(&self, t: &Terms, n: u32) -> Vec<super::Monthly> {
        let m = &self.money;
        let far = [
            m.buy_beats_api_above_tokens_per_month,
            m.buy_beats_on_demand_above_tokens_per_month,
        ]
        .into_iter()
        .flatten()
        .fold(0.0, f64::max);
        let max = (2.0 * self.unit.capacity_per_month()).max(1.25 * far);
        (0..=n)
            .map(|k| {
                self.unit
                    .monthly(t, max * f64::from(k) / f64::from(n.max(1)))
            })
            .collect()
    }
}

/// The month of a catalog date: `YYYY`, `YYYY-MM`, `YYYY-MM-DD` or `YYYY-Qn` (a quarter
/// reads as its first month), as a month count `year × 12 + month − 1`.
#[must_use]
pub fn month_of(date: &str) -> Option<i64> {
    let mut parts = date.trim().split('-');
    let y: i64 = parts.next()?.trim().parse().ok()?;
    let m: i64 = match parts.next().map(str::trim) {
        None => 1,
        Some(q) if q.starts_with(['Q', 'q']) => (q[1..].parse::<i64>().ok()? - 1) * 3 + 1,
        Some(m) => m.get(..2.min(m.len()))?.parse().ok()?,
    };
    ((1..=12).contains(&m) && (1900..=9999).contains(&y)).then_some(y * 12 + m - 1)
}

/// Whole months from `date` ([`month_of`]) to the month `year`-`month`; `None` when the
/// date does not read.
#[must_use]
pub fn age_months(date: &str, year: i64, month: i64) -> Option<i64> {
    Some(year * 12 + month - 1 - month_of(date)?)
}

/// The answer: every option, ranked, and what the comparison assumed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budget {
    /// Options, kept first, then by TCO.
    pub options: Vec<BuyOption>,
    /// The terms the money was worked out on.
    pub years: f64,
    /// USD per kWh.
    pub kwh_price_usd: f64,
    /// PUE.
    pub pue: f64,
    /// Utilisation.
    pub utilization: f64,
    /// Idle power fraction (catalog).
    pub idle_power_fraction: f64,
    /// Resale fraction.
    pub resale_fraction: f64,
    /// The API's USD per million input and output tokens, when given.
    pub api_usd_per_million: Option<(f64, f64)>,
    /// The oldest and newest dates among the prices used.
    pub prices_oldest: Option<String>,
    /// See [`Budget::prices_oldest`].
    pub prices_newest: Option<String>,
}

impl Budget {
    /// The buyer's terms.
    #[must_use]
    pub fn terms(&self, inputs: &Inputs) -> Terms {
        terms(&inputs.buyer, self.idle_power_fraction, inputs)
    }
}

fn terms(b: &Buyer, idle: f64, inputs: &Inputs) -> Terms {
    let w = &inputs.workload;
    let api = b
        .api_output_usd_per_million
        .or(b.api_input_usd_per_million.map(|_| 0.0))
        .map(|out| {
            let input = b.api_input_usd_per_million.unwrap_or(0.0);
            (out + input * f(w.prompt_tokens) / f(w.output_tokens.max(1))) / 1e6
        });
    Terms {
        years: b.years,
        kwh_price_usd: b.kwh_price_usd,
        pue: b.pue,
        utilization: b.utilization,
        idle_power_fraction: idle,
        resale_fraction: b.resale_fraction.unwrap_or(0.0),
        api_usd_per_output_token: api,
    }
}

/// The engine the platform runs for the asked one: the asked engine where it runs there,
/// else the first of the platform's engines the core models.
fn engine_for(p: &Platform, asked: Engine) -> Result<Engine, String> {
    let runs = |id: &str| p.engines.iter().any(|e| e == id);
    let asked_runs = match asked {
        Engine::Vllm { .. } => runs("vllm"),
        Engine::Sglang => runs("sglang"),
        Engine::TrtLlm => runs("trtllm"),
        _ => true,
    };
    if asked_runs {
        return Ok(asked);
    }
    p.engines
        .iter()
        .find_map(|e| match e.as_str() {
            "vllm" => Some(Engine::DEFAULT),
            "sglang" => Some(Engine::Sglang),
            "trtllm" => Some(Engine::TrtLlm),
            other => Engine::parse(other),
        })
        .ok_or_else(|| {
            format!(
                "runs {}, whose memory vramfit does not model",
                p.engines.join(" / ")
            )
        })
}

/// The GPU as the platform seats it: its node size (the platform's), its link's domain
/// within it, and its network.
fn seat(g: &Gpu, p: &Platform) -> Gpu {
    let mut g = g.clone();
    let per = p.gpus_per_node.max(1);
    g.interconnect.gpus_per_node = Some(g.link_domain().min(per));
    g.server_gpus = Some(per);
    g.interconnect.scale_out = p.inter_node_link.as_ref().and_then(|l| {
        let gb = l.gb_per_s_per_direction.filter(|x| *x > 0.0)?;
        let rdma = ["infiniband", "roce", "ethernet", "nvlink"]
            .iter()
            .any(|k| l.kind.contains(k));
        Some(ScaleOut {
            gb_per_s: gb,
            alpha_s: if rdma { ALPHA_RDMA_S } else { ALPHA_SOCKET_S },
        })
    });
    g
}

/// Nodes and GPUs bought for `used` GPUs: full nodes, and the last with the smallest count
/// the platform is sold with that holds the rest.
fn nodes_for(p: &Platform, used: u64) -> (u64, u64) {
    let per = p.gpus_per_node.max(1);
    let nodes = used.div_ceil(per).max(1);
    let rest = used - (nodes - 1) * per;
    let last = p
        .gpu_counts
        .iter()
        .copied()
        .filter(|c| *c >= rest && *c <= per)
        .min()
        .unwrap_or(per);
    (nodes, (nodes - 1) * per + last)
}

/// The earlier and the later of two optional dates (`YYYY-MM…` texts sort as dates).
fn span(
    a: (Option<String>, Option<String>),
    d: Option<&String>,
) -> (Option<String>, Option<String>) {
    let Some((d, m)) = d.and_then(|d| Some((d, month_of(d)?))) else {
        return a;
    };
    let keep = |x: Option<String>, older: bool| match x.as_deref().and_then(month_of) {
        Some(k) if (k <= m) == older => x,
        _ => Some(d.clone()),
    };
    (keep(a.0, true), keep(a.1, false))
}

/// Every option for the workload of `inputs`, ranked (module docs of [`super`]).
#[must_use]
pub fn budget(cat: &Catalog, inputs: &Inputs) -> Budget {
    let idle = cat.tco.idle_power_fraction.value;
    let t = terms(&inputs.buyer, idle, inputs);
    let mut options = Vec::new();
    let mut dates = (None, None);
    for p in &cat.platforms {
        for id in &p.gpus {
            let Some(g) = cat.gpus.iter().find(|g| &g.id == id) else {
                continue;
            };
            let o = option(cat, inputs, &t, g, p);
            for d in [
                g.price.purchase_date.as_ref(),
                g.price.cloud_date.as_ref(),
                p.price.date.as_ref(),
            ] {
                dates = span(dates, d);
            }
            options.push(o);
        }
    }
    crate::order::sort_by(&mut options, |a, b| {
        let inf = f64::INFINITY;
        a.excluded
            .cmp(&b.excluded)
            .then(
                a.money
                    .tco_usd
                    .unwrap_or(inf)
                    .total_cmp(&b.money.tco_usd.unwrap_or(inf)),
            )
            .then(
                a.purchase_usd
                    .unwrap_or(inf)
                    .total_cmp(&b.purchase_usd.unwrap_or(inf)),
            )
    });
    let b = &inputs.buyer;
    Budget {
        options,
        years: t.years,
        kwh_price_usd: t.kwh_price_usd,
        pue: t.pue,
        utilization: t.utilization,
        idle_power_fraction: idle,
        resale_fraction: t.resale_fraction,
        api_usd_per_million: t.api_usd_per_output_token.map(|_| {
            (
                b.api_input_usd_per_million.unwrap_or(0.0),
                b.api_output_usd_per_million.unwrap_or(0.0),
            )
        }),
        prices_oldest: dates.0,
        prices_newest: dates.1,
    }
}

/// The money side of an option: purchase, its parts, and power.
struct Bought {
    gpus_usd: Option<f64>,
    servers_usd: Option<f64>,
    network_usd: f64,
    purchase_usd: Option<f64>,
    node_kw: Option<f64>,
    power_kw: Option<f64>,
}

fn bought(g: &Gpu, p: &Platform, nodes: u64, gpus: u64) -> Bought {
    let network_usd = if nodes > 1 {
        p.inter_node_link
            .as_ref()
            .and_then(|l| l.network_usd_per_node)
            .unwrap_or(0.0)
            * f(nodes)
    } else {
        0.0
    };
    let gpu_price = g.price.purchase_usd.map(|x| x * f(gpus));
    let (gpus_usd, servers_usd) = match (p.price.system_usd, p.price.usd_without_gpus) {
        (Some(sys), _) if gpus == nodes * p.gpus_per_node => {
            let all = sys * f(nodes);
            let share = gpu_price.map_or(0.0, |x| x.min(all));
            (Some(share), Some(all - share + network_usd))
        }
        (_, Some(chassis)) => (gpu_price, Some(chassis * f(nodes) + network_usd)),
        _ => (gpu_price, None),
    };
    let purchase_usd = gpus_usd.zip(servers_usd).map(|(a, b)| a + b);
    let board = g.tdp_w.unwrap_or(0.0);
    let per_node = f(gpus) / f(nodes);
    let node_w = match (p.power.host_w, p.power.system_w) {
        (Some(h), _) if g.tdp_w.is_some() => Some(h + board * per_node),
        (_, Some(s)) => Some(s),
        (Some(h), None) => Some(h),
        (None, None) => None,
    };
    Bought {
        gpus_usd,
        servers_usd,
        network_usd,
        purchase_usd,
        node_kw: node_w.map(|w| w / 1e3),
        power_kw: node_w.map(|w| w / 1e3 * f(nodes)),
    }
}

fn racks(
    p: &Platform,
    b: &Buyer,
    nodes: u64,
    node_kw: Option<f64>,
) -> (Option<u64>, Option<String>) {
    if matches!(
        p.kind,
        Some(PlatformKind::Workstation | PlatformKind::System)
    ) {
        return (None, None);
    }
    let by_power = match (b.max_rack_kw, node_kw) {
        (Some(cap), Some(kw)) if kw > cap => {
            let (kw, cap) = kw_against(kw, cap);
            return (
                None,
                Some(format!("one node draws {kw}; the rack cap is {cap}")),
            );
        }
        // OK because: both positive and finite; the quotient is at most 10^4 nodes.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        (Some(cap), Some(kw)) if kw > 0.0 => Some((cap / kw).floor() as u64),
        _ => None,
    };
    let by_space = p
        .rack_units
        .filter(|u| *u > 0)
        .map(|u| (RACK_UNITS / u).max(1));
    let per_rack = match (by_power, by_space) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    };
    (per_rack.map(|n| nodes.div_ceil(n.max(1))), None)
}

#[allow(clippy::too_many_lines)] // one option's fields, each from its rule
fn option(cat: &Catalog, inputs: &Inputs, t: &Terms, g: &Gpu, p: &Platform) -> BuyOption {
    let b = &inputs.buyer;
    let mut why: Vec<String> = Vec::new();
    let seated = seat(g, p);
    let engine = engine_for(p, inputs.flags.engine);
    let mut i = inputs.clone();
    i.tensor_parallel_size = None;
    i.pipeline_parallel_size = None;
    i.gpu.clone_from(&g.id);
    if let Ok(e) = engine {
        i.flags.engine = e;
    }
    let plan = match &engine {
        Ok(_) => crate::plan::plan_on(cat, &i, &seated).map_err(|e| e.to_string()),
        Err(e) => Err(e.clone()),
    };
    let run = plan
        .as_ref()
        .ok()
        .and_then(|p| p.run.as_ref().map(|r| (p, r)));
    let (tp, pp, replicas, used) = plan.as_ref().map_or((0, 0, 0, 0), |p| {
        (
            p.tensor_parallel_size,
            p.pipeline_parallel_size,
            p.replicas,
            p.gpus_needed,
        )
    });
    match (&plan, run) {
        (Err(e), _) => why.push(format!("not planned: {e}")),
        (Ok(pl), None) => why.push(format!("does not fit: {}", pl.verdict)),
        _ => {}
    }
    let (nodes, gpus) = if used > 0 { nodes_for(p, used) } else { (0, 0) };
    let bo = bought(g, p, nodes.max(1), gpus.max(1));
    let (racks, rack_problem) = racks(p, b, nodes, bo.node_kw);
    why.extend(rack_problem);
    if nodes > 1 && p.inter_node_link.is_none() {
        why.push(format!(
            "{nodes} units would need a network between them; the {} has none",
            p.name
        ));
    }
    let (tokens_per_s, per_user, ttft, limited_by, meets) =
        run.map_or((0.0, 0.0, None, String::new(), false), |(_, r)| {
            (
                r.total_decode_tokens_per_s,
                r.speed.decode_tokens_per_s_per_user,
                r.serving.ttft_ms,
                r.limited_by.to_string(),
                crate::plan::meets_targets(&inputs.workload, &r.speed),
            )
        });
    if run.is_some() && !meets {
        why.push(format!(
            "misses the speed target: {} tok/s per user",
            fmt_num(per_user, 1)
        ));
    }
    if let Some(v) = b.vendor.filter(|v| !g.vendor.eq_ignore_ascii_case(v)) {
        why.push(format!("{} GPU; only {v} asked", g.vendor));
    }
    if b.on_prem && (!p.on_prem || bo.purchase_usd.is_none()) {
        why.push("not sold for on-prem use (no purchase price)".into());
    }
    match (b.max_budget_usd, bo.purchase_usd) {
        (Some(cap), Some(x)) if x > cap => why.push(format!(
            "costs {}; the budget is {}",
            fmt_usd(x),
            fmt_usd(cap)
        )),
        (Some(_), None) => why.push("no purchase price to check against the budget".into()),
        _ => {}
    }
    match (b.max_power_kw, bo.power_kw) {
        (Some(cap), Some(kw)) if kw > cap => {
            let (kw, cap) = kw_against(kw, cap);
            why.push(format!("draws {kw} at load; the cap is {cap}"));
        }
        (Some(_), None) => why.push("no power figure to check against the cap".into()),
        _ => {}
    }
    if run.is_some() && bo.purchase_usd.is_none() {
        why.push("no purchase price in the catalog".into());
    }
    let hourly = |x: Option<f64>| x.map(|h| h * f(used));
    let unit = Unit {
        purchase_usd: bo.purchase_usd,
        power_kw: bo.power_kw,
        tokens_per_s,
        gpus: used,
        on_demand_usd_per_gpu_hour: g.price.cloud_usd_per_hour,
        reserved_usd_per_gpu_hour: g.price.cloud_reserved_usd_per_hour,
    };
    let mut money = Money::of(&unit, t);
    if run.is_none() {
        money.tco_usd = None;
        money.usd_per_million_tokens = None;
    }
    let dated = [g.price.purchase_date.as_ref(), p.price.date.as_ref()]
        .into_iter()
        .flatten()
        .filter_map(|d| Some((month_of(d)?, d)))
        .min()
        .map(|(_, d)| d.clone());
    BuyOption {
        gpu: g.id.clone(),
        gpu_name: g.name.clone(),
        vendor: g.vendor.clone(),
        platform: p.id.clone(),
        platform_name: p.name.clone(),
        platform_kind: p.kind.map_or("", PlatformKind::id),
        engine: match (&plan, engine) {
            (Ok(pl), _) => pl.engine.clone(),
            (_, Ok(e)) => e.id(),
            _ => p.engines.join(" / "),
        },
        gpus,
        gpus_used: used,
        nodes,
        racks,
        layout: if used > 0 {
            format!("TP{tp}×PP{pp}×{replicas}")
        } else {
            "–".into()
        },
        tensor_parallel_size: tp,
        pipeline_parallel_size: pp,
        replicas,
        // The plan's node: the platform's, as `seat` gives it (`serving::spans_nodes`).
        spans_nodes: tp.saturating_mul(pp) > seated.gpus_per_node(),
        gpus_usd: bo.gpus_usd,
        servers_usd: bo.servers_usd,
        network_usd: bo.network_usd,
        purchase_usd: bo.purchase_usd,
        power_kw: bo.power_kw,
        money,
        cloud_usd_per_hour: hourly(g.price.cloud_usd_per_hour),
        cloud_reserved_usd_per_hour: hourly(g.price.cloud_reserved_usd_per_hour),
        tokens_per_s,
        tokens_per_s_per_user: per_user,
        ttft_ms: ttft,
        limited_by,
        meets_target: meets,
        speed_validated: plan.as_ref().is_ok_and(|p| p.speed_validated),
        excluded: !why.is_empty(),
        excluded_because: why.join("; "),
        prices_dated: dated,
        unit,
    }
}

/// A draw beside the cap it passes, with as many decimals as the cap was set with (one to
/// three), and more where the draw would round onto the cap: a cap of 0.01 kW is not
/// "0.0 kW", and 10.2 kW against 10.15 reads "10.20 kW" against "10.15 kW", not the same
/// figure twice (a draw within 0.0005 kW of its cap still reads as it at three decimals).
/// The caps' ranges start at 0.01 kW (`inputs/keys.rs`).
fn kw_against(kw: f64, cap: f64) -> (String, String) {
    let set = crate::inputs::short(cap);
    let mut decimals = set.split_once('.').map_or(0, |(_, d)| d.len()).clamp(1, 3);
    let kw_text = |x: f64, d: usize| format!("{} kW", fmt_num(x, d));
    // A draw that rounds onto its cap gets the decimals that tell them apart (up to three).
    while decimals < 3 && kw_text(kw, decimals) == kw_text(cap, decimals) {
        decimals += 1;
    }
    (kw_text(kw, decimals), kw_text(cap, decimals))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn platform(per: u64, counts: &[u64]) -> Platform {
        Platform {
            gpus_per_node: per,
            gpu_counts: counts.to_vec(),
            ..Platform::default()
        }
    }

    /// A platform seats the GPU in its node: H100 NVL (bridged pairs) in a 4-GPU PCIe server
    /// has a node of 4, whatever larger server the catalog also sells, and keeps its pairs;
    /// an H100 SXM's NVSwitch board is its 8-GPU node.
    #[test]
    #[cfg(feature = "bundled")] // reads the embedded catalog
    fn a_platform_seats_its_node_and_keeps_the_link_domain() {
        let cat = crate::catalog::Catalog::bundled();
        let seat_on = |gpu: &str, plat: &str| {
            let g = cat.gpu(gpu).unwrap();
            let p = cat.platforms.iter().find(|p| p.id == plat).unwrap();
            let s = seat(g, p);
            (s.gpus_per_node(), s.link_domain())
        };
        assert_eq!(seat_on("h100-nvl", "pcie-2u-4gpu-gen5"), (4, 2));
        assert_eq!(seat_on("h100-nvl", "pcie-4u-8gpu-gen5"), (8, 2));
        assert_eq!(seat_on("h100-sxm", "hgx-h100-8gpu"), (8, 8));
        assert_eq!(seat_on("rtx-4090", "desktop-consumer-1gpu"), (1, 1));
    }

    #[test]
    fn nodes_are_bought_whole() {
        let hgx = platform(8, &[8]);
        assert_eq!(nodes_for(&hgx, 2), (1, 8));
        assert_eq!(nodes_for(&hgx, 16), (2, 16));
        let a100 = platform(8, &[4, 8]);
        assert_eq!(nodes_for(&a100, 3), (1, 4));
        assert_eq!(nodes_for(&a100, 12), (2, 12));
        let pcie = platform(8, &[1, 2, 4, 8]);
        assert_eq!(nodes_for(&pcie, 3), (1, 4));
        assert_eq!(nodes_for(&pcie, 9), (2, 9));
    }

    #[test]
    fn a_draw_and_its_cap_read_apart() {
        let said = |kw, cap| {
            let (a, b) = kw_against(kw, cap);
            format!("{a} / {b}")
        };
        assert_eq!(said(10.2, 5.0), "10.2 kW / 5.0 kW");
        assert_eq!(said(10.2, 10.15), "10.20 kW / 10.15 kW");
        assert_eq!(said(10.24, 10.2), "10.24 kW / 10.20 kW");
        assert_eq!(said(10.2, 0.01), "10.20 kW / 0.01 kW");
    }

    #[test]
    fn catalog_dates_read_as_months() {
        assert_eq!(month_of("2026-05"), Some(2026 * 12 + 4));
        assert_eq!(month_of("2026-05-18"), month_of("2026-05"));
        assert_eq!(month_of("2026-Q2"), month_of("2026-04"));
        assert_eq!(month_of("2024"), month_of("2024-01"));
        assert_eq!(month_of("soon"), None);
        assert_eq!(month_of("2026-13"), None);
        assert_eq!(age_months("2026-05", 2026, 12), Some(7));
        let d = |x: &str| Some(x.to_string());
        let s = span((d("2026-05"), d("2026-05")), d("2026-Q1").as_ref());
        assert_eq!(s, (d("2026-Q1"), d("2026-05")));
        let s = span(s, d("2026-11").as_ref());
        assert_eq!(s, (d("2026-Q1"), d("2026-11")));
    }
}
