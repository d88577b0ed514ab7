//! The deployment features of a `vllm serve` line (multimodal limits, LoRA, speculative
//! decoding, eager mode, CPU offload, prefix caching, a set KV size): each control is one
//! row of the core's input table, and the link carries it.

use crate::components::choice::Choice;
use crate::components::controls::{controls, Control};
use crate::components::later::Later;
use crate::components::switch::Switch;
use crate::state::AppState;
use leptos::prelude::*;
use vramfit_core::inputs::{key, Field, SpecMethod};
use vramfit_core::units::{fmt_bytes, fmt_count};

/// The features' inputs, folded under one summary, and the note on what the multimodal
/// reservation costs.
#[component]
pub fn FeaturesPanel() -> impl IntoView {
    let st = expect_context::<AppState>();
    let inputs = Memo::new(move |_| st.decoded.get().0);
    let (draft, set_draft) = signal(Option::<String>::None);
    let (modules, set_modules) = signal(Option::<String>::None);
    let (modules_error, set_modules_error) = signal(Option::<String>::None);
    let units = st.units;
    // What the multimodal reservation costs in KV, said where the images are chosen.
    let mm_note = move || {
        st.plan.with(|p| {
            let p = p.as_ref().ok()?;
            let e = &p.estimate;
            let r = e.features.mm_reserved_bytes;
            (r > 0).then(|| {
                let tokens = r.checked_div(e.kv_bytes_per_token).unwrap_or(0);
                format!(
                    "The multimodal profiling reservation takes {} of the KV pool ({} tokens) on each GPU; setting images and videos to 0 runs the model text-only and frees it, with the encoder's weights ({}). Not validated.",
                    fmt_bytes(r, units.get()),
                    fmt_count(tokens),
                    fmt_bytes(e.features.encoder_weights_bytes, units.get())
                )
            })
        })
    };
    view! {
        <details class="vf-features" data-testid="features">
            <summary>"Deployment features (multimodal, LoRA, speculative decoding, …)"</summary>
            // Folded at first: its controls are built after the first paint (`later.rs`).
            <Later>
            <fieldset>
                <legend>"Multimodal (--limit-mm-per-prompt, --mm-processor-kwargs)"</legend>
                {controls(&MULTIMODAL)}
                <Choice
                    field=Field::MmEncoderTpMode
                    id="mm-encoder-tp-mode"
                    help="--mm-encoder-tp-mode: weights shards the encoder over the TP ranks (vLLM's default); data keeps it whole on every rank"
                    options=vec![("weights", "weights (sharded)"), ("data", "data (whole on every GPU)")]
                />
                <Switch field=Field::SkipMmProfiling id="skip-mm-profiling" help="--skip-mm-profiling: vLLM leaves the encoder out of its profiling run, so nothing is reserved for it (leave the headroom yourself)"/>
                <p class="vf-note" data-testid="mm-note">{mm_note}</p>
            </fieldset>
            <fieldset>
                <legend>"LoRA"</legend>
                {controls(&LORA)}
                <label class="vf-field" title="--lora-target-modules (vLLM 0.19): only these modules get slots, e.g. q_proj,v_proj; empty: every module vLLM supports for the model">
                    <span>{key(Field::LoraTargetModules).label}</span>
                    <input
                        type="text"
                        data-testid="lora-target-modules"
                        placeholder="all"
                        prop:value=move || modules.get().unwrap_or_else(|| inputs.get().text(Field::LoraTargetModules).unwrap_or_default())
                        aria-invalid=move || modules_error.with(Option::is_some).to_string()
                        on:input=move |ev| {
                            let v = event_target_value(&ev);
                            set_modules.set(Some(v.clone()));
                            let mut i = st.decoded.get_untracked().0;
                            match i.set(Field::LoraTargetModules, &v) {
                                Ok(()) => {
                                    set_modules_error.set(None);
                                    st.choose(Field::LoraTargetModules, &v);
                                }
                                Err(e) => set_modules_error.set(Some(e)),
                            }
                        }
                    />
                    {move || modules_error.get().map(|e| view! { <span class="vf-field-error" role="alert">{e}</span> })}
                </label>
            </fieldset>
            <fieldset>
                <legend>"Speculative decoding (--speculative-config)"</legend>
                <Choice
                    field=Field::SpecMethod
                    id="spec-method"
                    help="The drafter: n-gram (no GPU memory), an EAGLE / EAGLE-3 head, the model's MTP layers, or a draft model"
                    options=[("off", "off")].into_iter().chain(SpecMethod::ALL.into_iter().map(|m| (m.id(), m.id()))).collect()
                />
                {controls(&SPEC)}
                <label class="vf-field" title="The draft model (a catalog id or Hugging Face repo id): its weights and KV are counted when the catalog has it">
                    <span>{key(Field::SpecModel).label}</span>
                    <input
                        type="text"
                        data-testid="spec-model"
                        prop:value=move || draft.get().unwrap_or_else(|| inputs.get().spec_model)
                        on:input=move |ev| {
                            let v = event_target_value(&ev);
                            set_draft.set(Some(v.clone()));
                            st.choose(Field::SpecModel, &v);
                        }
                    />
                </label>
            </fieldset>
            <fieldset>
                <legend>"Smaller flags"</legend>
                {controls(&SMALL)}
            </fieldset>
            </Later>
        </details>
    }
}

/// The features' runs of number fields and switches, in order (`controls`).
static MULTIMODAL: [Control; 4] = [
    Control::Number(
        Field::MmImages,
        "mm-images",
        "Images per prompt: vLLM profiles the largest item the limits allow; 0 with videos 0 runs the model text-only",
        "1",
        "999 (vLLM)",
    ),
    Control::Number(
        Field::MmVideos,
        "mm-videos",
        "Videos per prompt (Qwen-VL): a video is profiled at the most frames that fit the context",
        "1",
        "999 (vLLM)",
    ),
    Control::Number(
        Field::MmFrames,
        "mm-frames",
        "Frames sampled per video (num_frames)",
        "1",
        "most that fit",
    ),
    Control::Number(
        Field::MmMaxPixels,
        "mm-max-pixels",
        "max_pixels of the Qwen-VL processor: tokens per image = max_pixels ÷ 28²",
        "1",
        "processor default",
    ),
];

static LORA: [Control; 5] = [
    Control::Switch(
        Field::EnableLora,
        "lora",
        "--enable-lora: adapter slots are pre-allocated on every GPU, counted in the weights",
    ),
    Control::Number(
        Field::MaxLoras,
        "max-loras",
        "--max-loras: adapters in one batch (slots per GPU)",
        "1",
        "",
    ),
    Control::Number(
        Field::MaxLoraRank,
        "max-lora-rank",
        "--max-lora-rank: every slot is this rank",
        "1",
        "",
    ),
    Control::Number(
        Field::MaxCpuLoras,
        "max-cpu-loras",
        "--max-cpu-loras: adapters cached in host memory",
        "1",
        "= max loras",
    ),
    Control::Switch(
        Field::FullyShardedLoras,
        "fully-sharded-loras",
        "--fully-sharded-loras: shard the A matrices over TP too",
    ),
];

static SPEC: [Control; 2] = [
    Control::Number(
        Field::SpecTokens,
        "spec-tokens",
        "num_speculative_tokens: tokens drafted per step",
        "1",
        "3 (MTP: its layers)",
    ),
    Control::Number(
        Field::SpecAcceptance,
        "spec-acceptance",
        "Chance each drafted token is accepted; the default is the method's published figure (EAGLE-3 0.75, EAGLE 0.62, MTP 0.81; draft model 0.7 and n-gram 0.3 are estimates)",
        "any",
        "method default",
    ),
];

static SMALL: [Control; 4] = [
    Control::Switch(
        Field::EnforceEager,
        "enforce-eager",
        "--enforce-eager: no CUDA graphs (no graph memory, every kernel launched each step)",
    ),
    Control::Number(
        Field::CpuOffloadGb,
        "cpu-offload-gb",
        "--cpu-offload-gb: GiB of weights per GPU kept in host memory and read over PCIe every step",
        "any",
        "0",
    ),
    Control::Switch(
        Field::NoPrefixCaching,
        "no-prefix-caching",
        "--no-enable-prefix-caching: the prefix-cache hit rate then counts for nothing",
    ),
    Control::Number(
        Field::KvCacheMemoryBytes,
        "kv-cache-memory-bytes",
        "--kv-cache-memory-bytes: the KV pool per GPU, set directly (the memory fraction then does not size it)",
        "1",
        "profiled",
    ),
];
