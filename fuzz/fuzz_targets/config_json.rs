//! `config.json` → `ModelArch` on arbitrary text; on success the parameter count, the KV
//! bytes per token and full memory estimates (the default scenario, plus the widest
//! format unsharded and a 4-bit TP×PP layout) must not panic or overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::model::ModelArch;
use vramfit_core::sizing::{estimate_bytes, Scenario};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(arch) = ModelArch::from_config_str(&text) {
        let p = arch.params();
        let _ = (p.total(), p.active());
        let _ = arch.kv_bytes_per_token_layer(2, 8);
        let _ = estimate_bytes(&Scenario::new(arch.clone()), 80 << 30);
        for (format, tp, pp) in [(WeightFormat::Fp32, 1, 1), (WeightFormat::Int4Awq, 8, 4)] {
            let mut s = Scenario::new(arch.clone());
            s.format = format;
            s.tensor_parallel_size = tp;
            s.pipeline_parallel_size = pp;
            let _ = estimate_bytes(&s, 80 << 30);
        }
    }
});
