//! Native benchmarks of vramfit-core (no criterion: `std::time::Instant`, medians).
//!
//! ```text
//! cargo run --release -p vramfit-core --example bench                 # the table
//! cargo run --release -p vramfit-core --example bench -- --compare-file F
//!     # also checks that F (written by scripts/bench_safetensors.py) holds the same header
//! bench --parse-only F    # child mode: parses F's header, prints `peak_delta_kib=<n>`
//! ```
//!
//! Lines starting with `RESULT ` are `key=value` pairs for `scripts/bench.sh`.
//! Results: docs/PERFORMANCE.md ("Native benchmarks").

// Outside the core library: the benchmark reads headers from disk and prints its table.
// Timings and ratios cast small, known values.
#![allow(
    clippy::cast_possible_truncation,
    clippy::cast_possible_wrap,
    clippy::cast_precision_loss,
    clippy::cast_sign_loss,
    clippy::cast_lossless,
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::print_stdout,
    clippy::print_stderr
)]

use std::fmt::Write as _;
use std::hint::black_box;
use std::io::Read as _;
use std::time::{Duration, Instant};

use vramfit_core::catalog::Catalog;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::plan::{plan, Inputs};
use vramfit_core::safetensors::{header_len, parse_header, Report};
use vramfit_core::serving::{serve, Load, FITTED};
use vramfit_core::sizing::{estimate_bytes, Scenario};
use vramfit_core::throughput::Link;

/// Tensors in the synthetic checkpoint header.
const TENSORS: u64 = 200_000;
/// Decoder layers × experts per layer = [`TENSORS`].
const LAYERS: u64 = 800;
const EXPERTS: u64 = 250;
/// Every tensor is BF16 [64, 64].
const TENSOR_BYTES: u64 = 64 * 64 * 2;
/// Target for the whole catalog sweep.
const SWEEP_TARGET: Duration = Duration::from_millis(50);
/// Issue 14: a whole-catalog serving sweep natively under a second.
const SERVING_SWEEP_TARGET: Duration = Duration::from_millis(1000);
/// Issue 14: one scenario's operating point within a frame.
const FRAME: Duration = Duration::from_millis(16);
/// Target for the parser's peak memory, as a multiple of the header size.
const MEMORY_TARGET_X: f64 = 3.0;

type Res<T> = Result<T, Box<dyn std::error::Error>>;

fn main() {
    if let Err(e) = run() {
        eprintln!("bench: {e}");
        std::process::exit(1);
    }
}

fn run() -> Res<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("--parse-only") => {
            let path = args.get(1).ok_or("--parse-only needs a file")?;
            parse_only(path)
        }
        Some("--compare-file") => {
            let path = args.get(1).ok_or("--compare-file needs a file")?;
            all(Some(path))
        }
        None => all(None),
        Some(other) => Err(format!("unknown argument `{other}`").into()),
    }
}

/// The header JSON of the synthetic 200k-tensor checkpoint, padded with spaces to a multiple
/// of 8 bytes as the reference writer does. `scripts/bench_safetensors.py` writes the same
/// bytes.
fn synthetic_header() -> Vec<u8> {
    let mut s = String::with_capacity(26 << 20);
    s.push_str(r#"{"__metadata__":{"format":"pt"}"#);
    let mut offset = 0u64;
    for i in 0..LAYERS {
        for j in 0..EXPERTS {
            let end = offset + TENSOR_BYTES;
            let _ = write!(
                s,
                r#","model.layers.{i}.mlp.experts.{j}.up_proj.weight":{{"dtype":"BF16","shape":[64,64],"data_offsets":[{offset},{end}]}}"#
            );
            offset = end;
        }
    }
    s.push('}');
    while !s.len().is_multiple_of(8) {
        s.push(' ');
    }
    s.into_bytes()
}

/// File size of the synthetic checkpoint: prefix, header, data.
fn synthetic_file_size(header: &[u8]) -> u64 {
    8 + header.len() as u64 + TENSORS * TENSOR_BYTES
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> (Duration, Duration) {
    let mut v = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        black_box(f());
        v.push(t.elapsed());
    }
    let min = v.iter().min().copied().unwrap_or_default();
    (median(v), min)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn all(compare_file: Option<&str>) -> Res<()> {
    let cat = Catalog::bundled();
    if cat.models.is_empty() || cat.gpus.is_empty() {
        return Err("the bundled catalog is empty".into());
    }
    let mut rows: Vec<[String; 4]> = Vec::new();

    // 1. One scenario, end to end (the web app's work per input change).
    let inputs = Inputs::default();
    plan(&cat, &inputs).map_err(|e| format!("plan: {e}"))?;
    let (one, _) = time(201, || plan(&cat, &inputs));
    rows.push([
        "plan::plan, default inputs".into(),
        format!("{:.3} ms", ms(one)),
        "median of 201".into(),
        String::new(),
    ]);
    println!("RESULT plan_median_ms={:.4}", ms(one));
    // A plan that does not start: its fixes are searched and each planned again (issue 15).
    let stuck = Inputs {
        model: "llama-3.1-70b".into(),
        gpu: "a100-80gb-sxm".into(),
        tensor_parallel_size: Some(1),
        ..Inputs::default()
    };
    let p = plan(&cat, &stuck).map_err(|e| format!("plan: {e}"))?;
    let (fixes, _) = time(201, || plan(&cat, &stuck));
    rows.push([
        "plan::plan, Llama 3.1 70B on one A100 at TP 1 (does not start)".into(),
        format!("{:.3} ms", ms(fixes)),
        format!("median of 201; {} checked fixes", p.fixes.len()),
        String::new(),
    ]);
    println!("RESULT plan_fixes_median_ms={:.4}", ms(fixes));
    // The hardware budget: every GPU in every platform planned (the Budget view's work per
    // input change, issue 17).
    let buyer = Inputs {
        model: "llama-3.1-70b".into(),
        ..Inputs::default()
    };
    let b = vramfit_core::budget::budget(&cat, &buyer);
    let (budget, _) = time(21, || vramfit_core::budget::budget(&cat, &buyer));
    rows.push([
        "budget::budget, Llama 3.1 70B, every GPU in every platform".into(),
        format!("{:.3} ms", ms(budget)),
        format!("median of 21; {} options", b.options.len()),
        String::new(),
    ]);
    println!("RESULT budget_median_ms={:.4}", ms(budget));

    // 2. The whole catalog sweep.
    let formats = [WeightFormat::Bf16, WeightFormat::Fp8, WeightFormat::Int4Awq];
    let sweep = || -> Res<u64> {
        let mut n = 0u64;
        for m in &cat.models {
            let mut s = Scenario::new(m.arch()?);
            for gpu in &cat.gpus {
                let usable = gpu.usable_bytes();
                for &f in &formats {
                    s.format = f;
                    for tp in [1, 2, 4, 8] {
                        s.tensor_parallel_size = tp;
                        for pp in [1, 2, 4] {
                            s.pipeline_parallel_size = pp;
                            black_box(estimate_bytes(black_box(&s), usable));
                            n += 1;
                        }
                    }
                }
            }
        }
        Ok(n)
    };
    let t = Instant::now();
    let count = sweep()?;
    let cold = t.elapsed();
    let (warm, _) = time(5, sweep);
    let pass = if warm < SWEEP_TARGET { "PASS" } else { "FAIL" };
    rows.push([
        format!(
            "catalog sweep: {} models x {} GPUs x 3 formats x TP 1/2/4/8 x PP 1/2/4",
            cat.models.len(),
            cat.gpus.len()
        ),
        format!("{:.1} ms", ms(warm)),
        format!("{count} estimates, median of 5 (first {:.1} ms)", ms(cold)),
        format!("{pass} (< {} ms)", SWEEP_TARGET.as_millis()),
    ]);
    println!(
        "RESULT sweep_median_ms={:.3} sweep_first_ms={:.3} sweep_estimates={count} sweep_pass={pass}",
        ms(warm),
        ms(cold)
    );

    // 2b. The serving model: every catalog model x every GPU x TP 1/2/4/8 at four loads
    //     (max load, 1 and 64 requests in flight, 2 requests/s), 1024 -> 256 tokens.
    let loads = [
        Load::MaxLoad,
        Load::Concurrency(1),
        Load::Concurrency(64),
        Load::Rate(2.0),
    ];
    let serving_sweep = || -> Res<u64> {
        let mut n = 0u64;
        for m in &cat.models {
            let mut s = Scenario::new(m.arch()?);
            for gpu in &cat.gpus {
                for tp in [1, 2, 4, 8] {
                    s.tensor_parallel_size = tp;
                    let (e, r) = vramfit_core::throughput::replica(&s, gpu, Link::Own);
                    for &load in &loads {
                        let t = vramfit_core::throughput::traffic(&s, &e, load);
                        black_box(serve(black_box(&r), &FITTED, &t));
                        n += 1;
                    }
                }
            }
        }
        Ok(n)
    };
    let count = serving_sweep()?;
    let (warm, _) = time(5, serving_sweep);
    let pass = if warm < SERVING_SWEEP_TARGET {
        "PASS"
    } else {
        "FAIL"
    };
    rows.push([
        format!(
            "serving sweep: {} models x {} GPUs x TP 1/2/4/8 x 4 loads (memory estimate included)",
            cat.models.len(),
            cat.gpus.len()
        ),
        format!("{:.1} ms", ms(warm)),
        format!("{count} operating points, median of 5"),
        format!("{pass} (< {} ms)", SERVING_SWEEP_TARGET.as_millis()),
    ]);
    println!(
        "RESULT serving_sweep_median_ms={:.3} serving_points={count} serving_pass={pass}",
        ms(warm)
    );
    let r70 = {
        let m = cat.model("llama-3.1-70b").ok_or("llama-3.1-70b missing")?;
        let g = cat
            .gpus
            .iter()
            .find(|g| g.id == "h100-sxm")
            .ok_or("h100-sxm missing")?;
        let mut s = Scenario::new(m.model.arch()?);
        s.tensor_parallel_size = 4;
        (s, g)
    };
    let (one_serve, _) = time(201, || {
        vramfit_core::throughput::serve_scenario(&r70.0, r70.1, Load::Rate(5.0), Link::Own)
    });
    let pass = if one_serve < FRAME { "PASS" } else { "FAIL" };
    rows.push([
        "one operating point at a request rate: Llama 3.1 70B, 4 x H100, 5 req/s".into(),
        format!("{:.3} ms", ms(one_serve)),
        "median of 201 (estimate + serve)".into(),
        format!("{pass} (< one 60 Hz frame, {} ms)", FRAME.as_millis()),
    ]);
    println!("RESULT serve_one_ms={:.4}", ms(one_serve));

    // 3. The 200k-tensor header.
    let header = synthetic_header();
    let size = synthetic_file_size(&header);
    if let Some(path) = compare_file {
        let on_disk = read_header(path)?;
        if on_disk != header {
            return Err(format!("{path} does not hold the benchmark's header").into());
        }
        println!("RESULT same_header_as={path}");
    }
    let parsed = parse_header(&header, Some(size)).map_err(|e| format!("parse: {e}"))?;
    if parsed.tensor_count() as u64 != TENSORS {
        return Err("the synthetic header did not parse to 200k tensors".into());
    }
    let (parse, parse_min) = time(5, || parse_header(&header, Some(size)));
    let mib = header.len() as f64 / f64::from(1u32 << 20);
    rows.push([
        format!("safetensors::parse_header, {TENSORS} tensors"),
        format!("{:.1} ms", ms(parse)),
        format!(
            "header {mib:.1} MiB, median of 5 (min {:.1} ms), {:.0} MB/s",
            ms(parse_min),
            header.len() as f64 / parse.as_secs_f64() / 1e6
        ),
        String::new(),
    ]);
    println!(
        "RESULT parse_median_ms={:.3} header_bytes={}",
        ms(parse),
        header.len()
    );
    let (report, _) = time(5, || Report::from_headers(std::slice::from_ref(&parsed)));
    rows.push([
        format!("safetensors::Report::from_headers, {TENSORS} tensors"),
        format!("{:.1} ms", ms(report)),
        "median of 5".into(),
        String::new(),
    ]);
    drop(parsed);

    // Peak memory of the parse alone, in a fresh process.
    let tmp = std::env::temp_dir().join(format!("vramfit-bench-{}.hdr", std::process::id()));
    let mut file = (header.len() as u64).to_le_bytes().to_vec();
    file.extend_from_slice(&header);
    std::fs::write(&tmp, &file)?;
    drop(file);
    let child = std::process::Command::new(std::env::current_exe()?)
        .arg("--parse-only")
        .arg(&tmp)
        .output();
    let _ = std::fs::remove_file(&tmp);
    let child = child?;
    if !child.status.success() {
        return Err(format!(
            "--parse-only failed: {}",
            String::from_utf8_lossy(&child.stderr)
        )
        .into());
    }
    let out = String::from_utf8_lossy(&child.stdout);
    let delta_kib: u64 = out
        .split_whitespace()
        .find_map(|w| w.strip_prefix("peak_delta_kib="))
        .ok_or("--parse-only printed no peak")?
        .parse()?;
    let ratio = (delta_kib * 1024) as f64 / header.len() as f64;
    let pass = if ratio < MEMORY_TARGET_X {
        "PASS"
    } else {
        "FAIL"
    };
    rows.push([
        "parse_header peak RSS growth (child process)".into(),
        format!("{:.1} MiB", delta_kib as f64 / 1024.0),
        format!("{ratio:.2}x the header size"),
        format!("{pass} (< {MEMORY_TARGET_X}x)"),
    ]);
    println!(
        "RESULT parse_peak_delta_kib={delta_kib} parse_peak_x_header={ratio:.3} memory_pass={pass}"
    );

    print_table(&rows);
    Ok(())
}

/// The header bytes of a safetensors file (reads only the prefix and the header).
fn read_header(path: &str) -> Res<Vec<u8>> {
    let mut f = std::fs::File::open(path)?;
    let mut prefix = [0u8; 8];
    f.read_exact(&mut prefix)?;
    let n = usize::try_from(header_len(&prefix)?)?;
    let mut header = vec![0u8; n];
    f.read_exact(&mut header)?;
    Ok(header)
}

/// `VmHWM` (peak resident set) of this process, KiB.
fn vm_hwm_kib() -> Res<u64> {
    let status = std::fs::read_to_string("/proc/self/status")?;
    let line = status
        .lines()
        .find(|l| l.starts_with("VmHWM:"))
        .ok_or("no VmHWM in /proc/self/status")?;
    Ok(line
        .trim_start_matches("VmHWM:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()?)
}

/// Child mode: reads the file's header, then parses it; prints the growth of the peak
/// resident set over the parse (the header bytes themselves are already resident).
fn parse_only(path: &str) -> Res<()> {
    let header = read_header(path)?;
    let size = std::fs::metadata(path)?.len();
    // The header is all this file holds; the tensors' data would follow it.
    let file_size = size.max(synthetic_file_size(&header));
    let before = vm_hwm_kib()?;
    let h = parse_header(&header, Some(file_size)).map_err(|e| format!("parse: {e}"))?;
    let after = vm_hwm_kib()?;
    black_box(&h);
    println!(
        "peak_delta_kib={} tensors={} before_kib={before} after_kib={after}",
        after.saturating_sub(before),
        h.tensor_count()
    );
    Ok(())
}

fn print_table(rows: &[[String; 4]]) {
    let head = ["benchmark", "time / size", "detail", "target"];
    let mut w = [0usize; 4];
    for r in std::iter::once(&head.map(String::from)).chain(rows) {
        for (k, c) in r.iter().enumerate() {
            w[k] = w[k].max(c.chars().count());
        }
    }
    let line = |r: &[String; 4]| {
        let cells: Vec<String> = r
            .iter()
            .enumerate()
            .map(|(k, c)| format!("{c:<width$}", width = w[k]))
            .collect();
        println!("| {} |", cells.join(" | "));
    };
    println!();
    line(&head.map(String::from));
    println!(
        "|{}|",
        w.iter()
            .map(|n| "-".repeat(n + 2))
            .collect::<Vec<_>>()
            .join("|")
    );
    for r in rows {
        line(r);
    }
}
