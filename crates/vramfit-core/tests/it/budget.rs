//! The buyer's budget: platforms in the catalog, options worked out by hand, constraints.

use vramfit_core::budget::{budget, BuyOption, HOURS_PER_YEAR};
use vramfit_core::catalog::platform::PlatformKind;
use vramfit_core::catalog::Catalog;
use vramfit_core::inputs::{Buyer, Field, Inputs};

fn cat() -> Catalog {
    Catalog::load().unwrap()
}

fn inputs(model: &str) -> Inputs {
    Inputs {
        model: model.into(),
        ..Inputs::default()
    }
}

fn find<'a>(b: &'a [BuyOption], gpu: &str, platform: &str) -> &'a BuyOption {
    b.iter()
        .find(|o| o.gpu == gpu && o.platform == platform)
        .unwrap_or_else(|| panic!("no option {gpu} in {platform}"))
}

#[test]
fn every_platform_names_catalog_gpus_and_sources_its_numbers() {
    let c = cat();
    assert!(c.platforms.len() >= 30, "{}", c.platforms.len());
    for p in &c.platforms {
        assert!(p.kind.is_some(), "{}", p.id);
        assert!(!p.gpus.is_empty(), "{}", p.id);
        for g in &p.gpus {
            let gpu = c.gpus.iter().find(|x| &x.id == g);
            let gpu = gpu.unwrap_or_else(|| panic!("{}: unknown GPU {g}", p.id));
            assert_eq!(gpu.vendor, p.vendor, "{}: {g}", p.id);
        }
        assert!(!p.gpu_counts.is_empty(), "{}", p.id);
        assert!(p.gpu_counts.windows(2).all(|w| w[0] < w[1]), "{}", p.id);
        assert!(
            p.gpu_counts
                .iter()
                .all(|n| *n >= 1 && *n <= p.gpus_per_node),
            "{}",
            p.id
        );
        if p.price.usd_without_gpus.is_some() || p.price.system_usd.is_some() {
            assert!(p.price.date.is_some(), "{}: a price without a date", p.id);
            assert!(
                p.price.source.len() > 20,
                "{}: a price without a source",
                p.id
            );
            let d = p.price.date.as_deref().unwrap_or("");
            assert!(
                vramfit_core::budget::month_of(d).is_some(),
                "{}: date {d}",
                p.id
            );
        }
        if p.power.host_w.is_some() || p.power.system_w.is_some() {
            assert!(
                p.power.source.len() > 10,
                "{}: a wattage without a source",
                p.id
            );
        }
        if let Some(l) = &p.inter_node_link {
            if l.network_usd_per_node.is_some() {
                assert!(
                    l.source.len() > 10,
                    "{}: a network price without a source",
                    p.id
                );
            }
        }
        for e in &p.engines {
            assert!(
                ["vllm", "sglang", "trtllm", "llama.cpp", "mlx"].contains(&e.as_str()),
                "{}: engine {e}",
                p.id
            );
        }
        // Engines matched to hardware: no vLLM-class engine on Apple silicon, no
        // TensorRT-LLM off NVIDIA.
        if p.vendor == "apple" {
            assert!(!p.runs_vllm(), "{}", p.id);
        }
        if p.vendor != "nvidia" {
            assert!(!p.engines.iter().any(|e| e == "trtllm"), "{}", p.id);
        }
    }
    // Every GPU can be placed somewhere.
    for g in &c.gpus {
        assert!(
            c.platforms.iter().any(|p| p.gpus.contains(&g.id)),
            "{} is in no platform",
            g.id
        );
    }
    // The platform families are there.
    for id in [
        "hgx-h100-8gpu",
        "hgx-h200-8gpu",
        "hgx-b200-8gpu",
        "hgx-b300-8gpu",
        "mi300x-8gpu-oam",
        "mi325x-8gpu-oam",
        "mi355x-8gpu-oam",
        "gaudi3-8oam-ubb",
        "gb200-nvl72",
        "gb300-nvl72",
        "pcie-4u-8gpu-gen5",
        "pcie-2u-4gpu-gen4",
        "workstation-pro-4gpu",
    ] {
        assert!(c.platforms.iter().any(|p| p.id == id), "{id}");
    }
    let nvl = c.platforms.iter().find(|p| p.id == "gb200-nvl72").unwrap();
    assert_eq!(
        (nvl.kind, nvl.gpus_per_node),
        (Some(PlatformKind::Rack), 72)
    );
}

#[test]
fn the_buyer_defaults_are_the_catalogs() {
    let t = cat().tco;
    let b = Buyer::default();
    assert_eq!(b.years, t.years.value);
    assert_eq!(b.kwh_price_usd, t.kwh_price_usd.value);
    assert_eq!(b.pue, t.pue.value);
    assert_eq!(b.utilization, t.utilization.value);
    assert_eq!(b.resale_fraction.unwrap_or(0.0), t.resale_fraction.value);
    for d in [
        &t.years,
        &t.kwh_price_usd,
        &t.pue,
        &t.utilization,
        &t.idle_power_fraction,
    ] {
        assert!(d.source.len() > 20, "{d:?}");
    }
    let c = cat();
    for a in &t.api_examples {
        assert!(c.models.iter().any(|m| m.id == a.model), "{}", a.model);
        assert!(a.date.is_some() && !a.source.is_empty(), "{a:?}");
    }
}

/// Llama 3.1 70B in bf16 for one user in an 8-GPU HGX H100 server, by hand from the catalog
/// entries: h100-sxm $25,000 and 700 W; hgx-h100-8gpu $60,000 without GPUs and 4,600 W of
/// host at load; the defaults 4 years, $0.146/kWh, PUE 1.56, 60 % busy, idle at 25 %.
#[test]
fn an_hgx_option_by_hand() {
    let c = cat();
    let b = budget(&c, &inputs("llama-3.1-70b"));
    let o = find(&b.options, "h100-sxm", "hgx-h100-8gpu");
    // 141 GB of bf16 weights take TP 2 at 8192 tokens; the baseboard is bought with 8.
    assert_eq!((o.tensor_parallel_size, o.pipeline_parallel_size), (2, 1));
    assert_eq!((o.gpus, o.gpus_used, o.nodes), (8, 2, 1));
    assert_eq!(o.purchase_usd, Some(8.0 * 25_000.0 + 60_000.0));
    assert_eq!(o.network_usd, 0.0);
    let kw = 4.6 + 8.0 * 0.7;
    assert!((o.power_kw.unwrap() - kw).abs() < 1e-9);
    let energy = kw * 1.56 * HOURS_PER_YEAR * (0.6 + 0.4 * 0.25) * 0.146;
    // 10.2 × 1.56 × 8766 × 0.7 × 0.146 = $14,255.33 a year.
    assert!((energy - 14_255.33).abs() < 0.01, "{energy}");
    let m = &o.money;
    assert!((m.energy_usd_per_year.unwrap() - energy).abs() < 1e-6);
    assert!((m.tco_usd.unwrap() - (260_000.0 + 4.0 * energy)).abs() < 1e-6);
    // Renting the two GPUs used, on demand ($2.99/GPU-hour), for the busy hours of 4 years.
    assert!((o.cloud_usd_per_hour.unwrap() - 2.0 * 2.99).abs() < 1e-9);
    let rent = 2.0 * 2.99 * HOURS_PER_YEAR * 0.6 * 4.0;
    assert!((m.on_demand_usd.unwrap() - rent).abs() < 1e-6);
    let tokens = o.tokens_per_s * 3600.0 * HOURS_PER_YEAR * 0.6 * 4.0;
    assert!((m.usd_per_million_tokens.unwrap() - m.tco_usd.unwrap() / tokens * 1e6).abs() < 1e-9);
    assert_eq!(o.engine, "vllm-0.19");
    assert!(!o.excluded, "{}", o.excluded_because);
}

/// The second-cheapest answer, 16 × V100 16 GB at TP 8 × PP 2: two 8-GPU servers,
/// the pipeline across the network between them, and the servers' power counted.
#[test]
fn a_layout_across_nodes_names_its_nodes_and_network() {
    let c = cat();
    let b = budget(&c, &inputs("llama-3.1-70b"));
    let o = find(&b.options, "v100-16gb", "dgx1-v100-8gpu");
    assert_eq!(o.gpus, 16);
    assert_eq!(o.nodes, 2);
    assert!(o.spans_nodes);
    // 2 × (800 W host + 8 × 300 W).
    assert!((o.power_kw.unwrap() - 6.4).abs() < 1e-9);
    // The network between the two servers carries the pipeline hand-off: the platform's
    // (one 50 Gb/s-class NIC per GPU), not the GPUs' NVLink (the serving model's test
    // `a_pipeline_across_nodes_hands_off_over_the_network` checks the arithmetic).
    let dgx1 = c
        .platforms
        .iter()
        .find(|p| p.id == "dgx1-v100-8gpu")
        .unwrap();
    assert!(dgx1.inter_node_link.is_some());
    assert!(
        o.excluded_because.contains("no purchase price"),
        "{}",
        o.excluded_because
    );
}

#[test]
fn apple_silicon_is_never_planned_as_vllm() {
    let b = budget(&cat(), &inputs("llama-3.1-8b"));
    let apple: Vec<_> = b.options.iter().filter(|o| o.vendor == "apple").collect();
    assert!(!apple.is_empty());
    for o in apple {
        assert!(
            !o.engine.starts_with("vllm"),
            "{}: {}",
            o.platform,
            o.engine
        );
    }
}

#[test]
fn constraints_grey_options_out_and_say_why() {
    let c = cat();
    let mut i = inputs("llama-3.1-70b");
    i.set(Field::MaxPowerKw, "5").unwrap();
    i.set(Field::MaxBudgetUsd, "100000").unwrap();
    i.set(Field::Vendor, "nvidia").unwrap();
    let b = budget(&c, &i);
    let hgx = find(&b.options, "h100-sxm", "hgx-h100-8gpu");
    assert!(hgx.excluded);
    assert!(
        hgx.excluded_because
            .contains("draws 10.2 kW at load; the cap is 5.0 kW"),
        "{}",
        hgx.excluded_because
    );
    assert!(
        hgx.excluded_because
            .contains("costs $260,000; the budget is $100,000"),
        "{}",
        hgx.excluded_because
    );
    // A cap is said with the decimals it was set with (before, 0.01 read "the cap is 0.0
    // kW", and a 10.15 kW cap read "draws 10.2 kW; the cap is 10.2 kW").
    for (cap, said) in [
        ("0.01", "draws 10.20 kW at load; the cap is 0.01 kW"),
        ("10.15", "draws 10.20 kW at load; the cap is 10.15 kW"),
    ] {
        i.set(Field::MaxPowerKw, cap).unwrap();
        let b = budget(&c, &i);
        let hgx = find(&b.options, "h100-sxm", "hgx-h100-8gpu");
        assert!(
            hgx.excluded_because.contains(said),
            "{}",
            hgx.excluded_because
        );
    }
    let mi = find(&b.options, "mi300x", "mi300x-8gpu-oam");
    assert!(
        mi.excluded_because.contains("amd GPU; only nvidia asked"),
        "{}",
        mi.excluded_because
    );
    // Kept options keep every constraint, and come first, by TCO.
    let kept: Vec<_> = b.options.iter().take_while(|o| !o.excluded).collect();
    assert!(!kept.is_empty());
    assert!(b.options.iter().skip(kept.len()).all(|o| o.excluded));
    for o in &kept {
        assert!(o.power_kw.unwrap() <= 5.0 && o.purchase_usd.unwrap() <= 100_000.0);
        assert_eq!(o.vendor, "nvidia");
    }
    assert!(kept
        .windows(2)
        .all(|w| w[0].money.tco_usd <= w[1].money.tco_usd));
    // A rack cap below one node's draw.
    let mut i = inputs("llama-3.1-70b");
    i.set(Field::MaxRackKw, "8").unwrap();
    let b = budget(&c, &i);
    let hgx = find(&b.options, "h100-sxm", "hgx-h100-8gpu");
    assert!(hgx
        .excluded_because
        .contains("one node draws 10.2 kW; the rack cap is 8.0 kW"));
    // On-prem only: a cloud-only platform is greyed.
    let mut i = inputs("llama-3.1-8b");
    i.set(Field::OnPrem, "1").unwrap();
    let b = budget(&c, &i);
    let aws = find(&b.options, "a10g", "aws-g5-a10g");
    assert!(
        aws.excluded_because.contains("not sold for on-prem"),
        "{}",
        aws.excluded_because
    );
}

#[test]
fn the_api_and_the_crossovers_follow_the_inputs() {
    let c = cat();
    let mut i = inputs("llama-3.1-70b");
    i.workload.users = 64;
    i.set(Field::ApiInputPrice, "0.23").unwrap();
    i.set(Field::ApiOutputPrice, "0.40").unwrap();
    let b = budget(&c, &i);
    let o = find(&b.options, "h100-sxm", "hgx-h100-8gpu");
    let m = &o.money;
    // (0.23 × 1024 / 256 + 0.40) $/M per output token, over the years' output tokens.
    let per = (0.23 * 1024.0 / 256.0 + 0.40) / 1e6;
    assert!((m.api_usd.unwrap() - per * m.tokens).abs() < 1e-6 * m.api_usd.unwrap());
    // Where buying overtakes the API, the chart's two monthly costs meet.
    let t = b.terms(&i);
    if let Some(x) = m.buy_beats_api_above_tokens_per_month {
        let at = o.unit.monthly(&t, x);
        assert!((at.buy.unwrap() - at.api.unwrap()).abs() < 1e-6 * at.api.unwrap());
    }
    let pts = o.curve(&t, 40);
    assert_eq!(pts.len(), 41);
    assert!(pts.iter().all(|p| p.buy.is_some_and(f64::is_finite)));
    assert!(pts
        .windows(2)
        .all(|w| w[0].tokens_per_month < w[1].tokens_per_month));
}
