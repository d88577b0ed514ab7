//! Fits the serving model's constants and prints the held-out errors (development aid).
#![allow(clippy::print_stdout)]
use vramfit_core::accuracy::speed::{cases, fit, held_out, predict, Case};
use vramfit_core::accuracy::{Summary, CALIBRATION_CSV};
use vramfit_core::serving::FITTED;

fn main() {
    let (cs, skipped) = cases(CALIBRATION_CSV);
    println!("{} cases, {} skipped", cs.len(), skipped.len());
    let all: Vec<&Case> = cs.iter().collect();
    let k = fit(&all, FITTED);
    println!("{k:?}");
    let errs = |p: &[f64], g: Option<&str>| {
        let e: Vec<f64> = cs.iter().zip(p).filter(|(c, _)| !c.caveat && g.is_none_or(|g| c.gpu == g)).map(|(c, p)| (p - c.measured) / c.measured).collect();
        Summary::of(&e)
    };
    let ins: Vec<f64> = cs.iter().map(|c| predict(c, &k)).collect();
    println!("in-sample {}", errs(&ins, None));
    if std::env::args().any(|a| a == "--rows") {
        for (c, p) in cs.iter().zip(&ins) {
            println!("{:>7.1}% {} {} {} {} tp{} pp{} {} meas {:.0} pred {:.0}", (p - c.measured) / c.measured * 100.0, c.gpu, c.model, c.engine.id(), c.precision, c.tp, c.pp, c.workload(), c.measured, p);
        }
    }
    if std::env::args().any(|a| a == "--logo") {
        let lo = held_out(&cs, k, |c| c.gpu.as_str());
        println!("LOGO {}", errs(&lo, None));
        let mut g: Vec<&str> = cs.iter().map(|c| c.gpu.as_str()).collect();
        g.sort_unstable(); g.dedup();
        for g in g { println!("  {g}: in {} | held-out {}", errs(&ins, Some(g)), errs(&lo, Some(g))); }
        let lm = held_out(&cs, k, |c| c.model.as_str());
        println!("LOMO {}", errs(&lm, None));
    }
}
