#![allow(clippy::disallowed_methods)]
//! Fits the serving model's constants and prints the held-out errors (development aid).
#![allow(clippy::print_stdout)]
use vramfit_core::accuracy::speed::{cases, fit, held_out, predict, Case};
use vramfit_core::accuracy::{Summary, CALIBRATION_CSV};
use vramfit_core::serving::FITTED;

fn main() {
    if std::env::args().any(|a| a == "--validation") {
        let r = vramfit_core::accuracy::speed_report::SpeedReport::of(CALIBRATION_CSV, &FITTED);
        print!(
            "{}",
            vramfit_core::accuracy::speed_report::validation_source(&r)
        );
        for p in vramfit_core::accuracy::speed_report::check(&r, &FITTED) {
            println!("CHECK: {p}");
        }
        return;
    }
    let (cs, skipped) = cases(CALIBRATION_CSV);
    println!("{} cases, {} skipped", cs.len(), skipped.len());
    let all: Vec<&Case> = cs.iter().collect();
    let k = fit(&all, FITTED);
    println!("{k:?}");
    let errs = |p: &[f64], g: Option<&str>| {
        let e: Vec<f64> = cs
            .iter()
            .zip(p)
            .filter(|(c, _)| !c.caveat && g.is_none_or(|g| c.gpu == g))
            .map(|(c, p)| (p - c.measured) / c.measured)
            .collect();
        Summary::of(&e)
    };
    let ins: Vec<f64> = cs.iter().map(|c| predict(c, &k)).collect();
    println!("in-sample {}", errs(&ins, None));
    if let Some(p) = std::env::args().skip_while(|a| a != "--debug").nth(1) {
        debug(&cs, &k, &p);
    }
    if std::env::args().any(|a| a == "--rows") {
        for (c, p) in cs.iter().zip(&ins) {
            println!(
                "{:>7.1}% {} {} {} {} {}tp{} pp{} {} meas {:.0} pred {:.0}",
                (p - c.measured) / c.measured * 100.0,
                c.gpu,
                c.model,
                c.engine.id(),
                c.precision,
                if c.dep { "DEP " } else { "" },
                c.tp,
                c.pp,
                c.workload(),
                c.measured,
                p
            );
        }
    }
    if std::env::args().any(|a| a == "--logo") {
        let lo = held_out(&cs, k, |c| c.gpu.as_str());
        println!("LOGO {}", errs(&lo, None));
        let mut g: Vec<&str> = cs.iter().map(|c| c.gpu.as_str()).collect();
        g.sort_unstable();
        g.dedup();
        for g in g {
            println!(
                "  {g}: in {} | held-out {}",
                errs(&ins, Some(g)),
                errs(&lo, Some(g))
            );
        }
        let lm = held_out(&cs, k, |c| c.model.as_str());
        println!("LOMO {}", errs(&lm, None));
    }
}

#[allow(dead_code)]
fn debug(cs: &[Case], k: &vramfit_core::serving::Constants, pat: &str) {
    for c in cs
        .iter()
        .filter(|c| format!("{} {} {}", c.gpu, c.model, c.workload()).contains(pat))
        .take(6)
    {
        let t = vramfit_core::serving::Traffic {
            input: c.input,
            output: c.output,
            load: c.load,
            prefix_hit: 0.0,
        };
        let s = vramfit_core::serving::serve(&c.replica, k, &t);
        println!("{} {} {} tp{}: meas {:.0} pred {:.0} conc {:.0} itl {:.2}ms limit {:?} step {:?}\n   replica {:?}", c.gpu, c.model, c.workload(), c.tp, c.measured, s.tokens_per_s_total, s.concurrency, s.itl_ms, s.limited_by, s.step, c.replica);
    }
}
