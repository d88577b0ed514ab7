//! The scenario inputs. Every change goes to the URL (the single source of truth).

use crate::components::features_panel::FeaturesPanel;
use crate::components::later::painted;
use crate::components::model_source::ModelSource;
use crate::components::number_field::NumberField;
use crate::state::{AppState, CATALOG};
use leptos::prelude::*;
use vramfit_core::decimal::parse_f64;
use vramfit_core::dtype::WeightFormat;
use vramfit_core::inputs::Field;

/// Model, GPU, engine, precision, context and workload inputs.
#[component]
pub fn InputsPanel() -> impl IntoView {
    let st = expect_context::<AppState>();
    let inputs = Memo::new(move |_| st.decoded.get().0);
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
    let format_options = WeightFormat::ALL
        .into_iter()
        .map(|f| view! { <option value=f.id()>{f.id()}</option> })
        .collect_view();

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
            <label class="vf-field" title="Weight format: bf16/fp16 16-bit, fp8 8-bit float with scales, int4 AWQ/GPTQ 4-bit with group scales, MXFP4/NVFP4 4-bit float">
                <span>"Weights"</span>
                <select
                    data-testid="format"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.choose(Field::Format, &v);
                    }
                    prop:value=move || inputs.get().format.map_or("auto", |f| f.id())
                >
                    <option value="auto">"as published"</option>
                    {format_options}
                </select>
            </label>
            <label class="vf-field" title="--kv-cache-dtype: fp8 halves the KV cache">
                <span>"KV cache"</span>
                <select
                    data-testid="kv-dtype"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.choose(Field::KvDtype, &v);
                    }
                    prop:value=move || inputs.get().flags.kv_dtype.id()
                >
                    <option value="auto">"auto (model dtype)"</option>
                    <option value="bf16">"bf16"</option>
                    <option value="fp16">"fp16"</option>
                    <option value="fp8">"fp8"</option>
                </select>
            </label>
            <label class="vf-field" title="Whose memory accounting to follow">
                <span>"Engine"</span>
                <select
                    data-testid="engine"
                    on:change=move |ev| {
                        let v = event_target_value(&ev);
                        st.choose(Field::Engine, &v);
                    }
                    prop:value=move || inputs.get().flags.engine.id()
                >
                    <option value="vllm-0.19">"vLLM 0.19 (V1)"</option>
                    <option value="vllm-0.16">"vLLM 0.11–0.16"</option>
                    <option value="sglang">"SGLang"</option>
                    <option value="trtllm">"TensorRT-LLM"</option>
                    <option value="transformers">"HF transformers"</option>
                    <option value="llama.cpp">"llama.cpp (llama-server)"</option>
                </select>
            </label>
            <NumberField
                field=Field::MaxModelLen
                id="context-length"
                help="--max-model-len: the longest prompt + output one request may have"
            />
            <NumberField field=Field::Users id="users" help="Requests in flight at once"/>
            <NumberField field=Field::PromptTokens id="prompt-tokens" help="Input tokens per request"/>
            <NumberField field=Field::OutputTokens id="output-tokens" help="Generated tokens per request"/>
            <NumberField
                field=Field::RequestRate
                id="request-rate"
                help="Requests per second arriving (Poisson); when set, replicas are sized to keep up with it and the users count for nothing"
                step="any"
            />
            <NumberField
                field=Field::PrefixCacheHitRate
                id="prefix-cache-hit-rate"
                help="Fraction of each prompt already in the engine's prefix cache (shared system prompts): that part is not prefilled again"
                step="any"
            />
            <NumberField
                field=Field::GpuMemoryUtilization
                id="gpu-util"
                help="--gpu-memory-utilization: the fraction of GPU memory vLLM may use (weights + activations + KV cache)"
                step="0.01"
                placeholder="engine default"
            />
            <label class="vf-field" title="--tensor-parallel-size: split each layer across GPUs. Auto picks the fewest GPUs that fit.">
                <span>"Tensor parallel"</span>
                <select
                    data-testid="tp"
                    on:change=move |ev| {
                        st.choose(Field::TensorParallelSize, &event_target_value(&ev));
                    }
                    prop:value=move || inputs.get().tensor_parallel_size.map_or("auto".to_string(), |x| x.to_string())
                >
                    <option value="auto">"auto (fewest GPUs)"</option>
                    <option value="1">"1"</option>
                    <option value="2">"2"</option>
                    <option value="4">"4"</option>
                    <option value="8">"8"</option>
                    <option value="16">"16"</option>
                    {move || other(inputs.get().tensor_parallel_size, &[1, 2, 4, 8, 16])}
                </select>
            </label>
            <label class="vf-field" title="--pipeline-parallel-size: split the layers into stages on different GPUs">
                <span>"Pipeline parallel"</span>
                <select
                    data-testid="pp"
                    on:change=move |ev| {
                        st.choose(Field::PipelineParallelSize, &event_target_value(&ev));
                    }
                    prop:value=move || inputs.get().pipeline_parallel_size.map_or("auto".to_string(), |x| x.to_string())
                >
                    <option value="auto">"auto"</option>
                    <option value="1">"1"</option>
                    <option value="2">"2"</option>
                    <option value="4">"4"</option>
                    <option value="8">"8"</option>
                    {move || other(inputs.get().pipeline_parallel_size, &[1, 2, 4, 8])}
                </select>
            </label>
            <label class="vf-check" title="--enable-expert-parallel: MoE experts are split by expert over the GPUs (the expert count must divide)">
                <input
                    type="checkbox"
                    data-testid="expert-parallel"
                    prop:checked=move || inputs.get().flags.expert_parallel
                    on:change=move |ev| {
                        let on = event_target_checked(&ev);
                        st.update(false, |i| i.flags.expert_parallel = on);
                    }
                />
                " Expert parallel (MoE)"
            </label>
            <FeaturesPanel/>
        </form>
    }
}

/// A size a link or a command set that the list does not offer (TP 9 from `?tp=9`): its own
/// option, selected, so that the list shows what the plan uses instead of going blank.
fn other(size: Option<u64>, listed: &[u64]) -> Option<impl IntoView> {
    size.filter(|x| !listed.contains(x)).map(|x| {
        let v = x.to_string();
        let text = v.clone();
        view! { <option value=v selected=true>{text}</option> }
    })
}
