//! Money over the years: total cost of ownership, renting the same GPUs, an API, and the
//! monthly token volume at which buying overtakes each.
//!
//! # Formulas
//! With `P` the option's power at load (kW, at the wall), `u` the utilisation (share of the
//! hours at the planned load), `i` the idle power fraction, `Y` the years and `h = 8766`
//! hours a year (365.25 days):
//! - energy per year = `P × PUE × h × (u + (1 − u) × i) × $/kWh`: the servers draw their
//!   load power while busy and `i` of it while idle, and the facility adds PUE (The Green
//!   Grid, *PUE: a comprehensive examination of the metric*, WP#49, 2012);
//! - TCO = purchase + Y × energy per year − resale (a fraction of the purchase);
//! - output tokens over the years = tokens/s × 3600 × h × u × Y; buying costs TCO ÷ tokens;
//! - renting on demand pays for the busy GPU-hours only (an elastic deployment that scales
//!   to zero): on-demand $/GPU-hour × GPUs × h × u × Y; reserved capacity is committed for
//!   the whole term: reserved $/GPU-hour × GPUs × h × Y;
//! - an API bills every request's prompt and output:
//!   `(input $/M × prompt ÷ output + output $/M) × output tokens ÷ 10^6`.
//!
//! # The crossover
//! One *unit* is the option as planned: it serves the workload's per-user speed up to `C`
//! output tokens a month (its tokens/s at the planned load × seconds per month); more
//! volume takes more units. A unit bought costs `F + e·x` a month at volume `x ≤ C`: `F` is
//! the purchase less resale spread over the months plus the idle energy, `e` the energy per
//! token above idle. Renting on demand and the API are linear, `k·x`; reserved capacity is
//! `R` a unit. Buying overtakes a linear price where `F + e·x = k·x`, at
//! `x* = F ÷ (k − e)`, when `x* ≤ C` (otherwise a fully used unit still costs more than the
//! same tokens rented, and buying never overtakes: more units repeat the same comparison).
//! Against reserved capacity buying is cheaper wherever `F + e·x < R`.

use serde::Serialize;

/// Hours in a year (365.25 days).
pub const HOURS_PER_YEAR: f64 = 8766.0;
/// Hours in a month.
pub const HOURS_PER_MONTH: f64 = HOURS_PER_YEAR / 12.0;

/// What one option costs to run: the inputs of [`Money::of`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Unit {
    /// Purchase, USD (`None`: not priced).
    pub purchase_usd: Option<f64>,
    /// Power at load at the wall, kW (`None`: not known).
    pub power_kw: Option<f64>,
    /// Output tokens/s at the planned load.
    pub tokens_per_s: f64,
    /// GPUs rented for the same layout.
    pub gpus: u64,
    /// On-demand $/GPU-hour.
    pub on_demand_usd_per_gpu_hour: Option<f64>,
    /// Reserved $/GPU-hour.
    pub reserved_usd_per_gpu_hour: Option<f64>,
}

/// The buyer's terms: [`crate::inputs::Buyer`] and the catalog's idle fraction.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Terms {
    /// Years.
    pub years: f64,
    /// USD per kWh.
    pub kwh_price_usd: f64,
    /// PUE.
    pub pue: f64,
    /// Utilisation.
    pub utilization: f64,
    /// Idle power fraction.
    pub idle_power_fraction: f64,
    /// Resale fraction.
    pub resale_fraction: f64,
    /// API price per output token including its prompt, USD (`None`: no API given).
    pub api_usd_per_output_token: Option<f64>,
}

/// What an option costs over the years, bought, rented and through an API.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Money {
    /// Energy per year, USD.
    pub energy_usd_per_year: Option<f64>,
    /// Resale at the end, USD.
    pub resale_usd: Option<f64>,
    /// Total cost of ownership, USD.
    pub tco_usd: Option<f64>,
    /// Output tokens over the years.
    pub tokens: f64,
    /// Output tokens a month at the utilisation.
    pub tokens_per_month: f64,
    /// Buying: USD per million output tokens.
    pub usd_per_million_tokens: Option<f64>,
    /// Renting on demand for the same tokens, USD over the years.
    pub on_demand_usd: Option<f64>,
    /// Renting reserved capacity for the term, USD.
    pub reserved_usd: Option<f64>,
    /// The API for the same tokens, USD.
    pub api_usd: Option<f64>,
    /// Monthly output tokens above which buying costs less than renting on demand.
    pub buy_beats_on_demand_above_tokens_per_month: Option<f64>,
    /// Monthly output tokens above which buying costs less than the API.
    pub buy_beats_api_above_tokens_per_month: Option<f64>,
    /// Whether buying costs less than reserved capacity at the planned volume.
    pub buy_beats_reserved: Option<bool>,
}

/// Monthly costs at one volume (a point of the crossover chart).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Monthly {
    /// Output tokens a month.
    pub tokens_per_month: f64,
    /// Buying, USD a month.
    pub buy: Option<f64>,
    /// On demand.
    pub on_demand: Option<f64>,
    /// Reserved.
    pub reserved: Option<f64>,
    /// API.
    pub api: Option<f64>,
}

fn finite(x: f64) -> Option<f64> {
    x.is_finite().then_some(x)
}

impl Unit {
    /// Output tokens a unit serves in a month at full use.
    #[must_use]
    pub fn capacity_per_month(&self) -> f64 {
        self.tokens_per_s.max(0.0) * 3600.0 * HOURS_PER_MONTH
    }

    /// `(F, e)` of the module docs: fixed USD a month, and USD per token above idle.
    fn buy_line(&self, t: &Terms) -> Option<(f64, f64)> {
        let purchase = self.purchase_usd?;
        let kw = self.power_kw?;
        let months = t.years * 12.0;
        let kwh_month = kw * t.pue * HOURS_PER_MONTH * t.kwh_price_usd;
        let cap = self.capacity_per_month();
        let fixed =
            purchase * (1.0 - t.resale_fraction) / months + kwh_month * t.idle_power_fraction;
        let per_token = if cap > 0.0 {
            kwh_month * (1.0 - t.idle_power_fraction) / cap
        } else {
            0.0
        };
        finite(fixed).zip(finite(per_token))
    }

    fn on_demand_per_token(&self) -> Option<f64> {
        let cap = self.capacity_per_month();
        (cap > 0.0)
            .then(|| {
                self.on_demand_usd_per_gpu_hour
                    .map(|p| p * crate::units::real(self.gpus) * HOURS_PER_MONTH / cap)
            })
            .flatten()
    }

    fn reserved_per_month(&self) -> Option<f64> {
        self.reserved_usd_per_gpu_hour
            .map(|p| p * crate::units::real(self.gpus) * HOURS_PER_MONTH)
    }

    /// Monthly costs at `x` output tokens a month (`⌈x ÷ C⌉` units bought or reserved).
    #[must_use]
    pub fn monthly(&self, t: &Terms, x: f64) -> Monthly {
        let cap = self.capacity_per_month();
        let units = if cap > 0.0 {
            (x / cap).ceil().max(1.0)
        } else {
            1.0
        };
        Monthly {
            tokens_per_month: x,
            buy: self.buy_line(t).map(|(f, e)| units * f + e * x),
            on_demand: self.on_demand_per_token().map(|k| k * x),
            reserved: self.reserved_per_month().map(|r| units * r),
            api: t.api_usd_per_output_token.map(|k| k * x),
        }
    }
}

/// `x* = F ÷ (k − e)` when it is within one unit's capacity.
fn crossover(line: Option<(f64, f64)>, k: Option<f64>, cap: f64) -> Option<f64> {
    let (f, e) = line?;
    let k = k?;
    (k > e)
        .then(|| f / (k - e))
        .filter(|x| x.is_finite() && *x <= cap)
}

impl Money {
    /// The costs of `u` on the buyer's terms (module docs).
    #[must_use]
    pub fn of(u: &Unit, t: &Terms) -> Self {
        let busy = t.utilization.clamp(0.0, 1.0);
        let energy = u.power_kw.map(|kw| {
            kw * t.pue
                * HOURS_PER_YEAR
                * (busy + (1.0 - busy) * t.idle_power_fraction)
                * t.kwh_price_usd
        });
        let resale = u.purchase_usd.map(|p| p * t.resale_fraction);
        let tco = u
            .purchase_usd
            .zip(energy)
            .zip(resale)
            .map(|((p, e), r)| p + e * t.years - r);
        let tokens = u.tokens_per_s.max(0.0) * 3600.0 * HOURS_PER_YEAR * busy * t.years;
        let per_million = |usd: Option<f64>| {
            usd.filter(|_| tokens > 0.0)
                .and_then(|c| finite(c / tokens * 1e6))
        };
        let gpus = crate::units::real(u.gpus);
        let line = u.buy_line(t);
        let cap = u.capacity_per_month();
        let planned = cap * busy;
        Money {
            energy_usd_per_year: energy.and_then(finite),
            resale_usd: resale,
            tco_usd: tco.and_then(finite),
            tokens,
            tokens_per_month: planned,
            usd_per_million_tokens: per_million(tco),
            on_demand_usd: u
                .on_demand_usd_per_gpu_hour
                .map(|p| p * gpus * HOURS_PER_YEAR * busy * t.years),
            reserved_usd: u
                .reserved_usd_per_gpu_hour
                .map(|p| p * gpus * HOURS_PER_YEAR * t.years),
            api_usd: t.api_usd_per_output_token.map(|k| k * tokens),
            buy_beats_on_demand_above_tokens_per_month: crossover(
                line,
                u.on_demand_per_token(),
                cap,
            ),
            buy_beats_api_above_tokens_per_month: crossover(line, t.api_usd_per_output_token, cap),
            buy_beats_reserved: line
                .zip(u.reserved_per_month())
                .map(|((f, e), r)| f + e * planned < r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One 8-GPU H100 server: $250,000, 10.2 kW, 10,000 tokens/s; $0.10/kWh, PUE 1.5,
    /// 4 years, busy half the time, idle at 30 %, no resale.
    fn unit() -> (Unit, Terms) {
        (
            Unit {
                purchase_usd: Some(250_000.0),
                power_kw: Some(10.2),
                tokens_per_s: 10_000.0,
                gpus: 8,
                on_demand_usd_per_gpu_hour: Some(3.0),
                reserved_usd_per_gpu_hour: Some(2.0),
            },
            Terms {
                years: 4.0,
                kwh_price_usd: 0.10,
                pue: 1.5,
                utilization: 0.5,
                idle_power_fraction: 0.3,
                resale_fraction: 0.0,
                api_usd_per_output_token: Some(1.0e-6),
            },
        )
    }

    #[test]
    fn tco_by_hand() {
        let (u, t) = unit();
        let m = Money::of(&u, &t);
        // 10.2 kW × 1.5 × 8766 h × (0.5 + 0.5 × 0.3) × $0.10 = $8,717.79 a year.
        let energy = 10.2 * 1.5 * 8766.0 * 0.65 * 0.10;
        assert!(
            (m.energy_usd_per_year.unwrap() - 8_717.79).abs() < 0.01,
            "{m:?}"
        );
        assert!((m.tco_usd.unwrap() - (250_000.0 + 4.0 * energy)).abs() < 1e-6);
        // 10,000 tok/s × 3600 × 8766 × 0.5 × 4 = 631.152e9 tokens.
        assert!((m.tokens - 631.152e9).abs() < 1.0);
        // $284,871.15 over 631.152e9 tokens = $0.4514 per million.
        assert!((m.usd_per_million_tokens.unwrap() - 0.451_35).abs() < 1e-4);
        // On demand: $3 × 8 × 8766 × 0.5 × 4 = $420,768; reserved: $2 × 8 × 8766 × 4.
        assert!((m.on_demand_usd.unwrap() - 420_768.0).abs() < 1e-6);
        assert!((m.reserved_usd.unwrap() - 561_024.0).abs() < 1e-6);
        assert!((m.api_usd.unwrap() - 631_152.0).abs() < 1e-3);
    }

    #[test]
    fn the_crossover_is_where_the_monthly_costs_meet() {
        let (u, t) = unit();
        let m = Money::of(&u, &t);
        let x = m.buy_beats_api_above_tokens_per_month.unwrap();
        let at = u.monthly(&t, x);
        assert!((at.buy.unwrap() - at.api.unwrap()).abs() < 1e-6 * at.api.unwrap());
        // Below it the API is cheaper, above it buying is.
        let below = u.monthly(&t, 0.9 * x);
        let above = u.monthly(&t, 1.1 * x);
        assert!(below.api < below.buy && above.buy < above.api);
        // F = $250,000 / 48 + 10.2 × 1.5 × 730.5 × 0.10 × 0.3 = $5,543.63 a month;
        // e = $1,117.67 × 0.7 / 26.298e9 tokens = $2.975e-8; x* = F / (1e-6 − e) = 5.714e9.
        assert!((x - 5.714e9).abs() < 0.001e9, "{x}");
        let od = m.buy_beats_on_demand_above_tokens_per_month.unwrap();
        let at = u.monthly(&t, od);
        assert!((at.buy.unwrap() - at.on_demand.unwrap()).abs() < 1e-6 * at.buy.unwrap());
    }

    #[test]
    fn buying_never_overtakes_a_price_below_a_full_units_cost() {
        let (u, mut t) = unit();
        // $0.01 per million: a full unit (26.3e9 tokens) is $263 a month of API.
        t.api_usd_per_output_token = Some(1e-8);
        assert_eq!(Money::of(&u, &t).buy_beats_api_above_tokens_per_month, None);
    }

    #[test]
    fn missing_prices_give_none_not_nan() {
        let (mut u, t) = unit();
        u.purchase_usd = None;
        u.tokens_per_s = 0.0;
        let m = Money::of(&u, &t);
        assert_eq!(m.tco_usd, None);
        assert_eq!(m.usd_per_million_tokens, None);
        assert_eq!(m.buy_beats_api_above_tokens_per_month, None);
        let p = u.monthly(&t, 1e9);
        assert_eq!(p.buy, None);
        assert_eq!(p.on_demand, None);
    }
}
