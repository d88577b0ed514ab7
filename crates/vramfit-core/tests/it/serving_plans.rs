//! The fewest GPUs for a user base or a request rate, through the serving model: more load
//! never needs fewer GPUs, and each answer meets its targets and names what limits it.

use vramfit_core::catalog::Catalog;
use vramfit_core::plan::{operating_point, plan, serves, Inputs, Plan};

fn inputs(model: &str, gpu: &str, f: impl Fn(&mut Inputs)) -> Inputs {
    let mut i = Inputs {
        model: model.into(),
        gpu: gpu.into(),
        ..Inputs::default()
    };
    f(&mut i);
    i
}

fn at(model: &str, gpu: &str, f: impl Fn(&mut Inputs)) -> Plan {
    plan(&Catalog::bundled(), &inputs(model, gpu, f)).unwrap()
}

const LIMITS: [&str; 7] = [
    "memory",
    "bandwidth",
    "compute",
    "interconnect",
    "scheduler",
    "overhead",
    "queue",
];

#[test]
fn more_users_with_a_speed_target_never_need_fewer_gpus() {
    for (model, gpu) in [("llama-3.1-8b", "h100-sxm"), ("llama-3.1-70b", "h100-sxm")] {
        let mut last = 0;
        for users in [1, 8, 64, 256, 1024, 4096] {
            let i = inputs(model, gpu, |i| {
                i.workload.users = users;
                i.workload.target_tokens_per_s = Some(30.0);
            });
            let p = plan(&Catalog::bundled(), &i).unwrap();
            assert!(
                p.gpus_needed >= last,
                "{model}: {users} users need {} GPUs, fewer users needed {last}",
                p.gpus_needed
            );
            last = p.gpus_needed;
            let r = p.run.as_ref().expect("starts");
            assert!(serves(&i.workload, &r.serving, true), "{model} at {users}");
            assert!(r.serving.tokens_per_s_per_user >= 30.0);
            assert!(LIMITS.contains(&r.limited_by), "{}", r.limited_by);
        }
        assert!(last > 1, "{model}: 4096 users fit on one GPU");
    }
}

#[test]
fn a_rate_twice_as_high_needs_at_least_as_many_replicas() {
    let mut last = (0, 0);
    for rate in [0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0] {
        let fixed = at("llama-3.1-8b", "l4", |i| {
            i.tensor_parallel_size = Some(1);
            i.workload.request_rate = Some(rate);
            i.workload.target_tokens_per_s = Some(10.0);
        });
        let auto = at("llama-3.1-8b", "l4", |i| {
            i.workload.request_rate = Some(rate);
            i.workload.target_tokens_per_s = Some(10.0);
        });
        assert!(
            fixed.replicas >= last.0,
            "{rate} req/s: {} < {}",
            fixed.replicas,
            last.0
        );
        assert!(
            auto.gpus_needed >= last.1,
            "{rate} req/s: {} < {}",
            auto.gpus_needed,
            last.1
        );
        last = (fixed.replicas, auto.gpus_needed);
        for p in [&fixed, &auto] {
            let r = p.run.as_ref().expect("starts");
            assert_ne!(r.limited_by, "queue", "{rate} req/s");
            assert!(r.serving.ttft_ms.is_some());
            assert!(r.serving.tokens_per_s_per_user >= 10.0);
        }
    }
    assert!(last.0 > 1, "256 req/s on one L4");
}

#[test]
fn the_fewest_replicas_for_a_rate_are_the_fewest() {
    let cat = Catalog::bundled();
    let i = inputs("llama-3.1-8b", "h100-sxm", |i| {
        i.tensor_parallel_size = Some(1);
        i.workload.request_rate = Some(200.0);
    });
    let p = plan(&cat, &i).unwrap();
    assert!(p.replicas > 1, "{}", p.replicas);
    assert_ne!(p.run.as_ref().expect("starts").limited_by, "queue");
    // One replica fewer each carry more than they complete: the queue grows.
    let m = cat.model("llama-3.1-8b").unwrap().model;
    let s = vramfit_core::plan::scenario(m.arch().unwrap(), &i, p.format, 128);
    let gpu = cat.gpu("h100-sxm").unwrap();
    let fewer = operating_point(&s, gpu, p.replicas - 1);
    assert!(
        !serves(&i.workload, &fewer, false),
        "{} replicas keep up too",
        p.replicas - 1
    );
    assert_eq!(fewer.limited_by.id(), "queue");
    assert!(fewer.ttft_ms.is_none());
    assert!(serves(
        &i.workload,
        &operating_point(&s, gpu, p.replicas),
        false
    ));
}

/// A layout larger than a node (Llama 3.1 405B in bf16 at TP 8 × PP 2 on H100 SXM, 8 per
/// node) hands activations between nodes over a network no fitted measurement describes: its
/// speed is not validated and has no band, and the plan says why. The same model at TP 8 on
/// one node, in FP8, keeps its band.
#[test]
fn a_layout_across_nodes_is_not_validated() {
    let across = at("llama-3.1-405b", "h100-sxm", |i| {
        i.tensor_parallel_size = Some(8);
        i.pipeline_parallel_size = Some(2);
    });
    assert!(!across.speed_validated);
    let r = across.run.as_ref().expect("starts on 16 GPUs");
    assert_eq!(r.decode_band.low, r.decode_band.high);
    assert!(
        across
            .warnings
            .iter()
            .any(|w| w.contains("spans 2 nodes of 8 GPUs") && w.contains("not validated")),
        "{:?}",
        across.warnings
    );
    let one_node = at("llama-3.1-405b", "h100-sxm", |i| {
        i.format = Some(vramfit_core::dtype::WeightFormat::Fp8);
        i.tensor_parallel_size = Some(8);
    });
    assert!(one_node.speed_validated);
    let r = one_node.run.as_ref().expect("starts on 8 GPUs");
    assert!(r.decode_band.low < r.decode_band.high);
    assert!(!one_node.warnings.iter().any(|w| w.contains("nodes")));
}

/// A node is the server the catalog's platforms sell, not the fast link's domain: two RTX
/// 4090s share a desktop (`desktop-consumer-2gpu`), and H100 NVL cards, NVLink-bridged in
/// pairs, fill PCIe servers of 8 (`pcie-4u-8gpu-gen5`). TP 2 on two 4090s and TP 4 on H100
/// NVL are one node; past the pair, H100 NVL all-reduces over PCIe 5.0 x16 (64 GB/s per
/// direction), not its 300 GB/s bridge.
#[test]
fn a_node_is_the_server_its_platforms_hold() {
    use vramfit_core::serving::Replica;
    use vramfit_core::sizing::estimate_bytes;
    let cat = Catalog::bundled();
    let two = at("llama-3.1-8b", "rtx-4090", |i| {
        i.tensor_parallel_size = Some(2)
    });
    assert!(two.run.is_some(), "{}", two.verdict);
    assert!(two.speed_validated);
    let four = at("llama-3.1-8b", "rtx-4090", |i| {
        i.tensor_parallel_size = Some(4)
    });
    assert!(
        four.verdict.contains("exceeds the 2 GPUs of one node"),
        "{}",
        four.verdict
    );
    let nvl = cat.gpu("h100-nvl").unwrap();
    assert_eq!((nvl.link_domain(), nvl.gpus_per_node()), (2, 8));
    let link = |tp: u64| {
        let i = inputs("llama-3.1-70b", "h100-nvl", |i| {
            i.tensor_parallel_size = Some(tp)
        });
        let s = vramfit_core::plan::scenario(
            cat.model("llama-3.1-70b").unwrap().model.arch().unwrap(),
            &i,
            vramfit_core::dtype::WeightFormat::Bf16,
            128,
        );
        let e = estimate_bytes(&s, nvl.usable_bytes());
        Replica::of(&s, nvl, &e).link
    };
    assert_eq!(link(2), 300e9);
    assert_eq!(link(4), 64e9);
    let p = at("llama-3.1-70b", "h100-nvl", |i| {
        i.tensor_parallel_size = Some(4)
    });
    assert!(p.run.is_some() && p.speed_validated, "{}", p.verdict);
    // The scaling summary says where TP 8's all-reduce runs, with no "over PCIe it would
    // be" beside it (it is over PCIe).
    let sc = vramfit_core::plan::scaling(&cat, &inputs("llama-3.1-70b", "h100-nvl", |_| {}), None)
        .unwrap();
    assert!(
        sc.summary.contains("in groups of 2 and PCIe between them")
            && !sc.summary.contains("over PCIe it would be"),
        "{}",
        sc.summary
    );
}

/// Replicas added to hold the users share them: Llama 3.1 8B on one H100 holds 346.45
/// requests of 1,280 tokens (the default lengths), so 347 users take two replicas, each
/// holding at most 174, and nobody queues; one replica (`replicas_for` = 1) at 346 users.
#[test]
fn replicas_that_hold_the_users_leave_none_queued() {
    let p = at("llama-3.1-8b", "h100-sxm", |i| i.workload.users = 347);
    assert_eq!(p.replicas, 2);
    let conc = p.estimate.max_concurrency_workload;
    // 27,716 blocks of 16 tokens over 80 blocks a request: 346 fit, 347 do not.
    assert!(conc > 346.0 && conc < 347.0, "{conc}");
    assert_eq!(
        p.estimate.fit,
        vramfit_core::sizing::Fit::Fits,
        "{}",
        p.verdict
    );
    assert_eq!(p.estimate.verdict.users(), 174);
    assert!(
        p.verdict.starts_with("fits at TP 1 × PP 1 × 2 replicas"),
        "{}",
        p.verdict
    );
    let one = at("llama-3.1-8b", "h100-sxm", |i| i.workload.users = 346);
    assert_eq!(
        (one.replicas, one.estimate.fit),
        (1, vramfit_core::sizing::Fit::Fits)
    );
}
