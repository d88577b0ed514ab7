//! `oom`: explain an out-of-memory message (the text is read in [`crate::files`]).

use crate::args::OomArgs;
use crate::json::oom_json;
use crate::out::{pretty_line, usage, Failure, Output, Res};
use std::fmt::Write as _;
use vramfit_core::catalog::Catalog;
use vramfit_core::plan;

/// `oom` on the pasted `text` (an ambiguous `--gpu`'s notice on stderr).
pub fn run(cat: &Catalog, a: &OomArgs, text: &str) -> Res<Output> {
    explain(cat, a, text).map(|o| crate::cmd::plan::with_gpu_note(o, cat, a.gpu.as_deref()))
}

fn explain(cat: &Catalog, a: &OomArgs, text: &str) -> Res<Output> {
    let model = match &a.model {
        Some(m) => Some(plan::resolve_model(cat, m).map_err(usage)?),
        None => None,
    };
    let gpu = match &a.gpu {
        Some(g) => Some(plan::resolve_gpu(cat, g).map_err(usage)?),
        None => None,
    };
    let report = vramfit_core::oom::parse(text).map_err(|e| Failure::Rejected(e.to_string()))?;
    let hints = vramfit_core::oom::Hints {
        model_parameters: model.map(|m| m.0.parameters_total),
        catalog: Some(cat),
        model: model.map(|m| m.0),
        format: model.and_then(|m| m.1),
        gpu,
        gpu_count: a.gpus,
        max_model_len: None,
    };
    let findings = vramfit_core::oom::diagnose_with(&report, &hints);
    let check = vramfit_core::oom::check_model(&report, &hints);
    if a.json {
        return Ok(Output::ok(pretty_line(&oom_json(
            &report,
            &findings,
            check.as_ref(),
        ))));
    }
    let mut s = String::new();
    for f in &findings {
        let _ = writeln!(s, "{}\n  {}", f.headline, f.detail);
        for x in &f.fixes {
            let _ = writeln!(s, "  - {x}");
        }
    }
    Ok(Output::ok(s))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::args::Cmd;
    use crate::testing::{cat, parse};

    const MSG: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1234 has 23.64 GiB memory in use. Of the allocated memory 16.97 GiB is allocated by PyTorch, and 6.27 GiB is reserved by PyTorch but unallocated.";

    fn oom_args(args: &[&str]) -> OomArgs {
        let mut argv = vec!["oom"];
        argv.extend(args);
        match parse(&argv) {
            Cmd::Oom(a) => a,
            _ => unreachable!(),
        }
    }

    #[test]
    fn oom_json_is_the_cores_report_and_findings() {
        let o = run(&cat(), &oom_args(&["--json"]), MSG).unwrap();
        assert_eq!(o.code, 0);
        let j = o.json();
        let r = vramfit_core::oom::parse(MSG).unwrap();
        let f = vramfit_core::oom::diagnose(&r);
        assert_eq!(j["report"], serde_json::to_value(&r).unwrap());
        assert_eq!(j["findings"], serde_json::to_value(&f).unwrap());
        // 20.00 MiB = 20 × 2^20 B.
        assert_eq!(j["report"]["tried_to_allocate_bytes"], 20_971_520);
        assert!(!f.is_empty());
    }

    #[test]
    fn oom_text_lists_each_finding_with_its_fixes() {
        let o = run(&cat(), &oom_args(&[]), MSG).unwrap();
        let r = vramfit_core::oom::parse(MSG).unwrap();
        let mut want = String::new();
        for f in vramfit_core::oom::diagnose(&r) {
            want += &format!("{}\n  {}\n", f.headline, f.detail);
            for x in &f.fixes {
                want += &format!("  - {x}\n");
            }
        }
        assert_eq!(o.stdout, want);
    }

    #[test]
    fn oom_model_hint_is_the_catalog_parameter_count() {
        // 30 GiB allocated by PyTorch ≈ 4 B × 8.03 B parameters: fp32 weights of an 8 B model.
        let msg = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 500.00 MiB is free. Process 1 has 78.60 GiB memory in use. Of the allocated memory 30.00 GiB is allocated by PyTorch, and 200.00 MiB is reserved by PyTorch but unallocated.";
        let c = cat();
        let params = c
            .models
            .iter()
            .find(|m| m.id == "llama-3.1-8b")
            .unwrap()
            .parameters_total;
        let r = vramfit_core::oom::parse(msg).unwrap();
        let f = vramfit_core::oom::diagnose_with(
            &r,
            &vramfit_core::oom::Hints {
                model_parameters: Some(params),
                catalog: Some(&c),
                model: c.model("llama-3.1-8b").map(|m| m.model),
                ..vramfit_core::oom::Hints::default()
            },
        );
        // The hint matters here: without it there is no fp32 finding.
        let fp32 = |f: &[vramfit_core::oom::Finding]| {
            f.iter()
                .any(|x| x.cause == vramfit_core::oom::Cause::Fp32Suspected)
        };
        assert!(fp32(&f) && !fp32(&vramfit_core::oom::diagnose(&r)));
        let o = run(&c, &oom_args(&["--model", "llama-3.1-8b", "--json"]), msg).unwrap();
        assert_eq!(o.json()["findings"], serde_json::to_value(&f).unwrap());
        let o = run(&c, &oom_args(&["--model", "llama-3.1-8b"]), msg).unwrap();
        assert!(o
            .stdout
            .contains("The weights look like they are loaded in fp32\n"));
    }

    #[test]
    fn oom_rejects_text_without_a_message_and_unknown_models() {
        match run(&cat(), &oom_args(&[]), "all good here") {
            Err(f @ Failure::Rejected(_)) => assert_eq!(f.code(), 1),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
        match run(&cat(), &oom_args(&["--model", "no-such-model"]), MSG) {
            Err(f @ Failure::Usage(_)) => assert_eq!(f.code(), 2),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
        match run(&cat(), &oom_args(&["--gpu", "no-such-gpu"]), MSG) {
            Err(f @ Failure::Usage(_)) => assert_eq!(f.code(), 2),
            other => panic!("{:?}", other.map(|o| o.stdout)),
        }
    }

    // The seed's short messages (issue 15). Llama 3.1 70B in bf16: 70,553,706,496 × 2 B
    // + vLLM's 131,072 × 128 × 2 B rotary cache = 141,140,967,424 B (131.45 GiB), more than
    // the message's 79.15 GiB (84,986,665,370 B).
    const SHORT: &str = "RuntimeError: CUDA out of memory. Tried to allocate 4.50 GiB (GPU 0; 79.15 GiB total capacity)";
    const LOAD: &str =
        "OSError: Can't load the model for 'meta-llama/Llama-3.1-70B'. CUDA out of memory";

    #[test]
    fn oom_short_message_with_model_gives_the_weights_and_planned_fixes() {
        let o = run(
            &cat(),
            &oom_args(&["--model", "meta-llama/Llama-3.1-70B", "--json"]),
            SHORT,
        )
        .unwrap();
        let j = o.json();
        assert_eq!(j["weights_bytes"], 141_140_967_424u64);
        assert_eq!(j["weights_fit"], false);
        assert_eq!(j["model"]["model_id"], "llama-3.1-70b");
        assert_eq!(j["model"]["capacity_bytes"], 84_986_665_370u64);
        assert_eq!(j["findings"][0]["cause"], "WeightsDoNotFit");
        assert_eq!(j["model"]["fixes"][0]["tensor_parallel_size"], 2);
        // Existing fields stay.
        assert_eq!(j["report"]["tried_to_allocate_bytes"], 4_831_838_208u64);
        let o = run(
            &cat(),
            &oom_args(&["--model", "meta-llama/Llama-3.1-70B"]),
            SHORT,
        )
        .unwrap();
        assert!(o.stdout.starts_with(
            "Llama 3.1 70B needs 131.45 GiB in bf16: the weights alone do not fit in 79.15 GiB\n"
        ));
        assert!(o
            .stdout
            .contains("  - `--tensor-parallel-size 2 --max-model-len "));
        // Without the model: the generic answer, and no model in the JSON.
        let j = run(&cat(), &oom_args(&["--json"]), SHORT).unwrap().json();
        assert!(j["model"].is_null() && j["weights_fit"].is_null());
        assert_eq!(j["findings"][0]["headline"], "The GPU ran out of memory");
    }

    #[test]
    fn oom_load_message_names_its_model_with_and_without_a_gpu() {
        let j = run(&cat(), &oom_args(&["--json"]), LOAD).unwrap().json();
        assert_eq!(j["model"]["model_from"], "message");
        assert_eq!(j["model"]["loaded_bytes"], 282_248_380_416u64); // 70,553,706,496 × 4 + 33,554,432
        assert!(j["weights_fit"].is_null());
        assert_eq!(j["findings"][0]["cause"], "Fp32Suspected");
        let j = run(
            &cat(),
            &oom_args(&["--gpu", "a100-80gb-sxm", "--gpus", "4", "--json"]),
            LOAD,
        )
        .unwrap()
        .json();
        assert_eq!(j["weights_fit"], false);
        assert_eq!(j["model"]["capacity_from"], "chosen");
        assert_eq!(j["model"]["gpus_chosen"], 4);
        assert_eq!(j["findings"][0]["cause"], "WeightsDoNotFit");
        assert_eq!(j["findings"][1]["cause"], "Fp32Suspected");
    }
}
