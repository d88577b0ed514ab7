//! The weight format a `config.json`'s `quantization_config` names, for a model sized from
//! its config alone (no safetensors headers to read the tensors from).
//!
//! vLLM picks the quantization method from `quantization_config.quant_method`
//! (`vllm/config/model.py` `_verify_quantization`) and each method reads its own keys
//! (`vllm/model_executor/layers/quantization/`):
//! - `awq` (`awq.py`: `w_bit`/`bits`, `q_group_size`/`group_size`), `gptq` (`gptq.py`:
//!   `bits`, `group_size`, −1 for one group per output channel): 4-bit only here;
//! - `fp8` (`fp8.py`): `weight_block_size` makes it block-scaled (DeepSeek, Qwen3 FP8);
//! - `compressed-tensors` (`compressed_tensors.py`): the first `config_groups` entry's
//!   `weights` (`num_bits`, `type` int or float, `group_size`, `strategy`) and
//!   `input_activations`: int 4-bit weights only (W4A16), int 8-bit weights and activations
//!   (W8A8), float 8-bit (FP8), float 4-bit (NVFP4: `format` `nvfp4-pack-quantized`);
//! - `mxfp4` (gpt-oss: experts only), `modelopt` (`quant_algo` FP8 or NVFP4),
//!   `modelopt_fp4`; `bitsandbytes` with `load_in_4bit` (sized as INT4-AWQ at group 64, as
//!   the headers' reader sizes it: its compute-capability floor is then AWQ's 7.5, not
//!   bitsandbytes' 7.0, so a V100 is refused it).
//!
//! Anything else (8-bit GPTQ/AWQ, bitsandbytes 8-bit, an unknown method) is not read: the
//! weights are sized at 16 bits and an assumption says so.

use super::read::{get_bool, get_str, get_u64};
use super::{Assumption, Value};
use crate::dtype::WeightFormat;

/// The checkpoint's format from its `quantization_config`, with the INT4 group size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ConfigQuantization {
    /// The weight format the checkpoint is stored in.
    pub format: WeightFormat,
    /// INT4 group size (128 where the config gives none, or −1: one group per channel).
    pub group_size: u64,
}

/// The `quantization_config` of `root` (or of its `text_config`), read: the format, or an
/// assumption when the method is not one of those above. `(None, None)` without one.
pub(super) fn read(root: &Value) -> (Option<ConfigQuantization>, Option<Assumption>) {
    let Some(q) = root
        .get("quantization_config")
        .or_else(|| root.get("text_config")?.get("quantization_config"))
        .filter(|q| q.is_object())
    else {
        return (None, None);
    };
    let method = get_str(q, "quant_method")
        .unwrap_or("")
        .to_ascii_lowercase();
    let group = |g: Option<u64>| g.filter(|g| *g > 0).unwrap_or(128);
    let bits = get_u64(q, "bits").or_else(|| get_u64(q, "w_bit"));
    let format = match method.as_str() {
        "awq" if bits.unwrap_or(4) == 4 => Some((
            WeightFormat::Int4Awq,
            group(get_u64(q, "group_size").or_else(|| get_u64(q, "q_group_size"))),
        )),
        "gptq" if bits.unwrap_or(4) == 4 => {
            Some((WeightFormat::Int4Gptq, group(get_u64(q, "group_size"))))
        }
        "fp8" if q.get("weight_block_size").is_some_and(|b| !b.is_null()) => {
            Some((WeightFormat::Fp8Block, 128))
        }
        "fp8" => Some((WeightFormat::Fp8, 128)),
        "compressed-tensors" => compressed_tensors(q),
        "mxfp4" => Some((WeightFormat::Mxfp4Experts, 128)),
        "modelopt" => match get_str(q, "quant_algo")
            .map(str::to_ascii_uppercase)
            .as_deref()
        {
            Some("FP8") => Some((WeightFormat::Fp8, 128)),
            Some("NVFP4") => Some((WeightFormat::Nvfp4, 16)),
            _ => None,
        },
        "modelopt_fp4" => Some((WeightFormat::Nvfp4, 16)),
        "bitsandbytes" if get_bool(q, "load_in_4bit") == Some(true) => {
            Some((WeightFormat::Int4Awq, 64))
        }
        _ => None,
    };
    match format {
        Some((format, group_size)) => (Some(ConfigQuantization { format, group_size }), None),
        None => {
            let named = if method.is_empty() {
                "no `quant_method`".to_string()
            } else {
                format!("`quant_method` \"{method}\"")
            };
            let bits = bits.map_or_else(String::new, |b| format!(" ({b}-bit)"));
            (
                None,
                Some(Assumption {
                    field: "quantization_config".into(),
                    value: "16-bit weights".into(),
                    why: format!(
                        "its {named}{bits} is not a format vramfit sizes from a config; drop the safetensors files (or pick the format) to size the checkpoint as stored"
                    ),
                }),
            )
        }
    }
}

/// compressed-tensors: the first config group's weights and input activations.
fn compressed_tensors(q: &Value) -> Option<(WeightFormat, u64)> {
    let groups = q.get("config_groups")?.as_object()?;
    let g = groups.values().next()?;
    let w = g.get("weights")?;
    let bits = get_u64(w, "num_bits")?;
    let float = get_str(w, "type") == Some("float");
    let acts = g
        .get("input_activations")
        .and_then(|a| get_u64(a, "num_bits"));
    let group = get_u64(w, "group_size").filter(|g| *g > 0);
    match (float, bits, acts) {
        (false, 4, None) => Some((WeightFormat::Int4Gptq, group.unwrap_or(128))),
        (false, 8, Some(8)) => Some((WeightFormat::Int8W8a8, 128)),
        (true, 8, _) if get_str(w, "strategy") == Some("block") => {
            Some((WeightFormat::Fp8Block, 128))
        }
        (true, 8, _) => Some((WeightFormat::Fp8, 128)),
        (true, 4, _) => Some((WeightFormat::Nvfp4, group.unwrap_or(16))),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(q: &str) -> (Option<ConfigQuantization>, Option<Assumption>) {
        read(&serde_json::from_str(&format!("{{\"quantization_config\": {q}}}")).unwrap())
    }

    fn format(q: &str) -> Option<(WeightFormat, u64)> {
        of(q).0.map(|c| (c.format, c.group_size))
    }

    /// The `quantization_config`s of real checkpoints (hugging-quants Llama 3.1 AWQ/GPTQ,
    /// Qwen3 FP8, RedHatAI W4A16/W8A8/FP8-dynamic, nvidia NVFP4, gpt-oss).
    #[test]
    fn real_quantization_configs_name_their_format() {
        assert_eq!(
            format(
                r#"{"quant_method": "awq", "bits": 4, "group_size": 128, "version": "gemm", "zero_point": true}"#
            ),
            Some((WeightFormat::Int4Awq, 128))
        );
        assert_eq!(
            format(r#"{"quant_method": "gptq", "bits": 4, "group_size": 128, "desc_act": true}"#),
            Some((WeightFormat::Int4Gptq, 128))
        );
        assert_eq!(
            format(r#"{"quant_method": "gptq", "bits": 4, "group_size": -1}"#),
            Some((WeightFormat::Int4Gptq, 128))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "fp8", "activation_scheme": "dynamic", "weight_block_size": [128, 128]}"#
            ),
            Some((WeightFormat::Fp8Block, 128))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "compressed-tensors", "format": "pack-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "int", "group_size": 128, "strategy": "group"}, "input_activations": null}}}"#
            ),
            Some((WeightFormat::Int4Gptq, 128))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "compressed-tensors", "format": "int-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "int", "strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "int", "dynamic": true}}}}"#
            ),
            Some((WeightFormat::Int8W8a8, 128))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "compressed-tensors", "format": "float-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 8, "type": "float", "strategy": "channel"}, "input_activations": {"num_bits": 8, "type": "float", "dynamic": true}}}}"#
            ),
            Some((WeightFormat::Fp8, 128))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "compressed-tensors", "format": "nvfp4-pack-quantized", "config_groups": {"group_0": {"weights": {"num_bits": 4, "type": "float", "group_size": 16, "strategy": "tensor_group"}}}}"#
            ),
            Some((WeightFormat::Nvfp4, 16))
        );
        assert_eq!(
            format(
                r#"{"quant_method": "mxfp4", "modules_to_not_convert": ["model.layers.*.self_attn"]}"#
            ),
            Some((WeightFormat::Mxfp4Experts, 128))
        );
        assert_eq!(
            format(r#"{"quant_method": "modelopt", "quant_algo": "NVFP4"}"#),
            Some((WeightFormat::Nvfp4, 16))
        );
        // No quantization_config: nothing to say.
        assert_eq!(
            read(&serde_json::json!({"hidden_size": 4096})),
            (None, None)
        );
    }

    /// Methods vramfit does not size from a config: 16 bits, and an assumption naming them.
    #[test]
    fn an_unread_method_is_named_in_an_assumption() {
        for (q, named) in [
            (r#"{"quant_method": "gptq", "bits": 8}"#, "\"gptq\" (8-bit)"),
            (r#"{"quant_method": "weird"}"#, "\"weird\""),
            (r#"{"bits": 3}"#, "no `quant_method` (3-bit)"),
            (
                r#"{"quant_method": "bitsandbytes", "load_in_8bit": true}"#,
                "\"bitsandbytes\"",
            ),
        ] {
            let (c, a) = of(q);
            assert_eq!(c, None, "{q}");
            let a = a.unwrap_or_else(|| panic!("{q}"));
            assert!(a.why.contains(named), "{q}: {}", a.why);
            assert_eq!(a.value, "16-bit weights");
        }
    }
}
