//! The scenario inputs. Every change goes to the URL (the single source of truth).

use crate::components::choice::Choice;
use crate::components::controls::{controls, Control};
use crate::components::features_panel::FeaturesPanel;
use crate::components::later::painted;
use crate::components::model_source::ModelSource;
use crate::components::switch::Switch;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::decimal::parse_f64;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::inputs::Field;

/// Model, GPU, engine, precision, context and workload inputs.
#[component]
pub fn InputsPanel() -> impl IntoView {
    let st = expect_context::<AppState>();
    let (filter, set_filter) = signal(String::new());
    // Memos of the ids alone, so the long option lists rebuild only when the choice changes.
    let model_id = Memo::new(move |_| {
        st.plan
            .with(|p| p.as_ref().map(|p| p.model_id.clone()).unwrap_or_default())
    });
    let gpu_id = Memo::new(move |_| {
        st.plan
            .with(|p| p.as_ref().map(|p| p.gpu_id.clone()).unwrap_or_default())
    });

    let model_options = move || {
        let f = filter.get().to_ascii_lowercase();
        // The choice matters only to a filtered list (it stays listed), so an unfiltered
        // list is not built again when the model changes.
        let current = if f.is_empty() {
            String::new()
        } else {
            model_id.get()
        };
        // Until the first paint, the chosen model alone (all a closed select shows); the
        // whole list after it (`later.rs`). The chosen option of a new list is marked, so
        // the select keeps showing it.
        let whole = painted();
        let chosen = model_id.get_untracked();
        CATALOG
            .families()
            .into_iter()
            .filter_map(|(family, models)| {
                let opts: Vec<_> = models
                    .into_iter()
                    .filter(|m| {
                        if !whole {
                            return m.id == chosen;
                        }
                        f.is_empty()
                            || m.id == current
                            || m.name.to_ascii_lowercase().contains(&f)
                            || m.family.to_ascii_lowercase().contains(&f)
                            || m.vendor.to_ascii_lowercase().contains(&f)
                            || m.hf_repo_ids
                                .iter()
                                .any(|r| r.to_ascii_lowercase().contains(&f))
                    })
                    .map(|m| view! { <option value=m.id.clone() selected=m.id == chosen>{m.name.clone()}</option> })
                    .collect();
                (!opts.is_empty())
                    .then(|| view! { <optgroup label=family.to_string()>{opts}</optgroup> })
            })
            .collect_view()
    };
    let (gpu_filter, set_gpu_filter) = signal(String::new());
    let (max_price, set_max_price) = signal(Option::<f64>::None);
    // A cap at or below $0 lists no GPU: it is refused in words, and the list is not cut.
    let (price_error, set_price_error) = signal(Option::<String>::None);
    let gpu_options = move || {
        let q = gpu_filter.get().to_ascii_lowercase();
        let cap = max_price.get();
        let current = if q.is_empty() && cap.is_none() {
            String::new()
        } else {
            gpu_id.get()
        };
        // As the models: the chosen GPU alone until the first paint.
        let whole = painted();
        let chosen = gpu_id.get_untracked();
        let mut vendors: Vec<&str> = CATALOG.gpus.iter().map(|g| g.vendor.as_str()).collect();
        vendors.dedup();
        vendors
            .into_iter()
            .map(|v| {
                let opts = CATALOG
                    .gpus
                    .iter()
                    .filter(|g| g.vendor == v)
                    .filter(|g| {
                        if !whole {
                            return g.id == chosen;
                        }
                        let mem = format!("{} gb", g.memory_marketed_gb);
                        g.id == current
                            || ((q.is_empty()
                                || g.name.to_ascii_lowercase().contains(&q)
                                || g.vendor.contains(&q)
                                || mem.contains(&q)
                                || g.segment.contains(&q))
                                && cap.is_none_or(|c| g.price.purchase_usd.is_some_and(|p| p <= c)))
                    })
                    .map(|g| {
                        let label = format!("{} ({} GB)", g.name, g.memory_marketed_gb);
                        view! { <option value=g.id.clone() selected=g.id == chosen>{label}</option> }
                    })
                    .collect_view();
                view! { <optgroup label=v.to_ascii_uppercase()>{opts}</optgroup> }
            })
            .collect_view()
    };
    let format_options: Vec<_> = [("auto", "as published")]
        .into_iter()
        .chain(WeightFormat::ALL.into_iter().map(|f| (f.id(), f.id())))
        .collect();

    view! {
        <form class="vf-inputs" on:submit=|ev| ev.prevent_default() aria-label="Scenario">
            <label class="vf-field" title="Search the catalog by name, family, vendor or Hugging Face repo id">
                <span>"Find a model"</span>
                <input
                    type="search"
                    data-testid="model-search"
                    placeholder="llama, qwen3, deepseek…"
                    on:input=move |ev| set_filter.set(event_target_value(&ev))
                />
            </label>
            <label class="vf-field" title="The model's architecture comes from its config.json">
                <span>"Model"</span>
                <select
                    data-testid="model"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.custom.set(None);
                        st.choose(Field::Model, &v);
                    }
                    prop:value=move || model_id.get()
                >
                    {model_options}
                </select>
            </label>
            <ModelSource/>
            <div class="vf-row">
                <label class="vf-field" title="Filter GPUs by name, vendor, memory (e.g. 80 gb) or segment">
                    <span>"Filter GPUs"</span>
                    <input type="search" data-testid="gpu-filter" placeholder="nvidia, 80 gb, consumer…" on:input=move |ev| set_gpu_filter.set(event_target_value(&ev))/>
                </label>
                <label class="vf-field" title="Only GPUs with a purchase price at or below this">
                    <span>"Max price ($)"</span>
                    <input
                        type="number"
                        min="0"
                        data-testid="gpu-max-price"
                        aria-invalid=move || price_error.with(Option::is_some).to_string()
                        on:input=move |ev| {
                            let v = event_target_value(&ev);
                            let cap = parse_f64(v.trim()).filter(|x| x.is_finite());
                            set_price_error.set(
                                cap.filter(|x| *x <= 0.0)
                                    .map(|_| format!("a price cap must be above $0; got {}", v.trim())),
                            );
                            set_max_price.set(cap.filter(|x| *x > 0.0));
                        }
                    />
                    {move || price_error.get().map(|e| view! { <span class="vf-field-error" role="alert" data-testid="gpu-max-price-error">{e}</span> })}
                </label>
            </div>
            <label class="vf-field" title="Memory is what CUDA reports on this GPU">
                <span>"GPU"</span>
                <select
                    data-testid="gpu"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.choose(Field::Gpu, &v);
                    }
                    prop:value=move || gpu_id.get()
                >
                    {gpu_options}
                </select>
            </label>
            <Choice field=Field::Format id="format" help="Weight format: bf16/fp16 16-bit, fp8 8-bit float with scales, int4 AWQ/GPTQ 4-bit with group scales, MXFP4/NVFP4 4-bit float" options=format_options/>
            <Choice field=Field::KvDtype id="kv-dtype" help="--kv-cache-dtype: fp8 halves the KV cache" options=vec![("auto", "auto (model dtype)"), ("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8")]/>
            <Choice
                field=Field::Engine
                id="engine"
                help="Whose memory accounting to follow"
                options=vec![
                    ("vllm-0.19", "vLLM 0.19 (V1)"),
                    ("vllm-0.16", "vLLM 0.11–0.16"),
                    ("sglang", "SGLang"),
                    ("trtllm", "TensorRT-LLM"),
                    ("transformers", "HF transformers"),
                    ("llama.cpp", "llama.cpp (llama-server)"),
                ]
            />
            {controls(&NUMBERS)}
            <Choice
                field=Field::TensorParallelSize
                id="tp"
                help="--tensor-parallel-size: split each layer across GPUs. Auto picks the fewest GPUs that fit."
                options=vec![("auto", "auto (fewest GPUs)"), ("1", "1"), ("2", "2"), ("4", "4"), ("8", "8"), ("16", "16")]
            />
            <Choice
                field=Field::PipelineParallelSize
                id="pp"
                help="--pipeline-parallel-size: split the layers into stages on different GPUs"
                options=vec![("auto", "auto"), ("1", "1"), ("2", "2"), ("4", "4"), ("8", "8")]
            />
            <Switch field=Field::ExpertParallel id="expert-parallel" help="--enable-expert-parallel: MoE experts are split by expert over the GPUs (the expert count must divide)"/>
            <FeaturesPanel/>
        </form>
    }
}

/// The number fields of the inputs panel, in order.
static NUMBERS: [Control; 7] = [
    Control::Number(
        Field::MaxModelLen,
        "context-length",
        "--max-model-len: the longest prompt + output one request may have; empty (auto) is the model's maximum, vLLM's default; -1 the longest that fits",
        "1",
        "auto",
    ),
    Control::Number(Field::Users, "users", "Requests in flight at once", "1", ""),
    Control::Number(Field::PromptTokens, "prompt-tokens", "Input tokens per request", "1", ""),
    Control::Number(Field::OutputTokens, "output-tokens", "Generated tokens per request", "1", ""),
    Control::Number(
        Field::RequestRate,
        "request-rate",
        "Requests per second arriving (Poisson); when set, replicas are sized to keep up with it and the users count for nothing",
        "any",
        "",
    ),
    Control::Number(
        Field::PrefixCacheHitRate,
        "prefix-cache-hit-rate",
        "Fraction of each prompt already in the engine's prefix cache (shared system prompts): that part is not prefilled again",
        "any",
        "",
    ),
    Control::Number(
        Field::GpuMemoryUtilization,
        "gpu-util",
        "--gpu-memory-utilization: the fraction of GPU memory vLLM may use (weights + activations + KV cache)",
        "0.01",
        "engine default",
    ),
];
