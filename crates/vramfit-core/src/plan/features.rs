//! What the plan says about the deployment features (issue 18): what is not modelled or
//! not validated, and where vLLM ignores a flag.

use super::{Inputs, Scenario};

/// What the plan says about the deployment features of issue 18 (`sizing/features.rs`):
/// what is not modelled or not validated, and where vLLM ignores a flag.
pub(super) fn feature_warnings(s: &Scenario, inputs: &Inputs) -> Vec<String> {
    use crate::inputs::SpecMethod;
    use crate::model::VisionFamily;
    let x = &s.flags.features;
    let vllm = matches!(s.flags.engine, crate::engine::Engine::Vllm { .. });
    let mut w = Vec::new();
    let on = x.lora.enabled
        || x.spec.method.is_some()
        || x.cpu_offload_gib.is_some_and(|g| g > 0.0)
        || x.kv_cache_memory_bytes.is_some();
    if on && !vllm {
        w.push(format!(
            "LoRA, speculative decoding, `--cpu-offload-gb` and `--kv-cache-memory-bytes` are modelled for vLLM only: {} is sized without them",
            s.flags.engine.name()
        ));
    }
    if let Some(v) = s.model.vision.filter(|_| vllm) {
        match v.family {
            VisionFamily::Mllama => w.push(
                "vLLM removed `MllamaForConditionalGeneration` (Llama 3.2 Vision) after v0.10.2: the modelled versions refuse to load it".into(),
            ),
            VisionFamily::Other if !crate::sizing::mm::text_only(s) => w.push(format!(
                "the multimodal profiling of `{}` is not modelled: its encoder's reservation is not counted (set `--limit-mm-per-prompt` to 0 for every modality to size it text-only)",
                s.model.architecture
            )),
            _ if !crate::sizing::mm::text_only(s) => w.push(
                "the multimodal reservation follows vLLM's profiling code (the largest item the limits allow); not validated against a measurement".into(),
            ),
            _ => {}
        }
    }
    if vllm && x.spec.method == Some(SpecMethod::DraftModel) && s.draft_model.is_none() {
        w.push(if inputs.spec_model.trim().is_empty() {
            "speculative decoding with a draft model needs the draft (`--speculative-config` `model`): its weights and KV are not counted".into()
        } else {
            format!(
                "the draft model `{}` is not in the catalog: its weights and KV are not counted",
                inputs.spec_model.trim()
            )
        });
    }
    if vllm && x.spec.method == Some(SpecMethod::Mtp) && s.model.mtp_layers == 0 {
        w.push(
            "this model's config has no multi-token-prediction layers (`num_nextn_predict_layers`): vLLM refuses `mtp`; one layer of the model's shape is counted".into(),
        );
    }
    if s.flags.fit_max_model_len && !vllm {
        w.push(format!(
            "`--max-model-len -1` is vLLM's (the longest length that fits); {} is sized at the model's maximum",
            s.flags.engine.name()
        ));
    }
    if vllm && x.swap_space_gib.is_some() {
        w.push(
            "vLLM V1 allocates no swap blocks (preempted requests are recomputed) and v0.18 removed `--swap-space`: it takes no memory here".into(),
        );
    }
    let unchecked: Vec<&str> = [
        (x.lora.enabled, "LoRA slots"),
        (
            x.spec.method.is_some_and(|m| m != SpecMethod::Ngram),
            "the speculative draft's memory",
        ),
        (x.cpu_offload_gib.is_some_and(|g| g > 0.0), "CPU offload"),
        (x.kv_cache_memory_bytes.is_some(), "a set KV size"),
    ]
    .into_iter()
    .filter_map(|(on, what)| on.then_some(what))
    .collect();
    if vllm && !unchecked.is_empty() {
        w.push(format!(
            "{} follow vLLM's source (hand-worked tests); no published start-up log checks them: not validated",
            unchecked.join(", ")
        ));
    }
    if vllm && x.lora.enabled {
        w.push(
            "with LoRA, vLLM captures each CUDA graph twice (with and without adapters): graph memory outside the budget grows, not modelled".into(),
        );
    }
    w
}

/// A workload whose requests are longer than the context length: the serving engines refuse
/// such a request instead of running it, and the KV cache's figures count requests cut to
/// the context length (`sizing::estimate`'s `workload_len`).
/// - vLLM's OpenAI server, `vllm/entrypoints/openai/serving_engine.py` `_validate_input`:
///   "This model's maximum context length is {max_model_len} tokens. However, you requested
///   {max_tokens + token_num} tokens …" (HTTP 400) when prompt + output > the length.
/// - SGLang, `python/sglang/srt/managers/tokenizer_manager.py` `_validate_one_request`:
///   "Requested token count exceeds the model's maximum context length of … tokens" when
///   prompt + output ≥ the length.
/// - TensorRT-LLM, `tensorrt_llm/llmapi/llm.py` `_check_arguments`: the prompt length and
///   `max_tokens` "should not exceed max_seq_len".
/// - llama.cpp's server, with context shift off (its default since ggml-org/llama.cpp#15416),
///   holds each request within its slot's share of `-c` (the plan's length: the command
///   writes `-c` = length × `-np`), `tools/server/server-context.cpp`: a prompt (media
///   included) of at least the slot's tokens is refused ("request (… tokens) exceeds the
///   available context size (… tokens), try increasing it"); a shorter one runs, and its
///   output stops when the slot is full (`n_tokens + 1 >= n_ctx`, checked before the
///   sampled token joins the cache: `slot − prompt` output tokens at most;
///   `STOP_TYPE_LIMIT`, `truncated`). The slot is the estimate's `request_len` (the length
///   padded to 256 cells, at most the trained length).
///
/// transformers' `generate` runs such requests past the trained length: no warning.
pub(super) fn too_long(s: &Scenario, max_model_len: u64) -> Option<String> {
    // transformers runs past the length (`Estimate::request_len` is `u64::MAX`).
    if max_model_len == u64::MAX {
        return None;
    }
    use crate::engine::Engine;
    use crate::sizing::mm::Modality;
    use crate::units::fmt_count;
    let w = &s.workload;
    let asked = s.request_tokens();
    let engine = s.flags.engine;
    // SGLang refuses a request that reaches the length; the others one that passes it.
    let over = if engine == Engine::Sglang {
        asked >= max_model_len
    } else {
        asked > max_model_len
    };
    let prompt = asked.saturating_sub(w.output_tokens);
    // The tokens the images, videos and audio add (explicit multimodal limits).
    let media: String = crate::sizing::mm::sent(s)
        .iter()
        .map(|&(it, n)| {
            let what = match (it.modality, n) {
                (Modality::Image, 1) => "image",
                (Modality::Image, _) => "images",
                (Modality::Video, 1) => "video",
                (Modality::Video, _) => "videos",
                (Modality::Audio, 1) => "audio clip",
                (Modality::Audio, _) => "audio clips",
            };
            format!(
                " + {} from {n} {what}",
                fmt_count(n.saturating_mul(it.dummy_tokens))
            )
        })
        .collect();
    // SGLang's refusal at exactly the length.
    let how = if asked == max_model_len {
        "as long as"
    } else {
        "longer than"
    };
    let parts = format!(
        "{} prompt{media} + {} output",
        fmt_count(w.prompt_tokens),
        fmt_count(w.output_tokens)
    );
    let len = fmt_count(max_model_len);
    if engine == Engine::LlamaCpp {
        return if prompt >= max_model_len {
            Some(format!(
                "requests of {} tokens ({parts}): prompts of {} tokens fill a llama.cpp slot of {len} tokens, and llama.cpp refuses them (\"exceeds the available context size\"); the KV cache's figures and the speed count requests of {len} tokens",
                fmt_count(asked),
                fmt_count(prompt),
            ))
        } else if asked > max_model_len {
            Some(format!(
                "requests of {} tokens ({parts}) do not fit a llama.cpp slot of {len} tokens: llama.cpp stops each output when the slot is full, at {} tokens instead of {} (context shift is off by default)",
                fmt_count(asked),
                fmt_count(max_model_len - prompt),
                fmt_count(w.output_tokens),
            ))
        } else {
            None
        };
    }
    // vLLM, SGLang, TensorRT-LLM: refused.
    over.then(|| {
        format!(
            "requests of {} tokens ({parts}) are {how} the context length of {len} tokens: {} refuses them; the KV cache's figures and the speed count requests of {len} tokens",
            fmt_count(asked),
            engine.name(),
        )
    })
}
