//! The view-model: the URL query is the single source of truth; everything shown is a
//! `Memo` over it that calls the core. Effects only sync with the outside world.

use crate::protocol::Imported;
use leptos::prelude::*;
use std::sync::LazyLock;
use vramfit_core::catalog::Catalog;
use vramfit_core::model::ModelArch;
use vramfit_core::plan::{custom_plan, plan, resolve_gpu, Inputs, Plan};
use vramfit_core::share::{self, Notice};
use vramfit_core::units::Units;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;

/// The bundled catalog, parsed once.
pub static CATALOG: LazyLock<Catalog> = LazyLock::new(Catalog::bundled);

/// Which calculator is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    /// Size it.
    Size,
    /// Quantization savings.
    Quant,
    /// Hardware budget.
    Budget,
    /// TP scaling.
    Scaling,
    /// Explain my OOM.
    Oom,
    /// Catalog browser.
    Catalog,
    /// Accuracy headline.
    Accuracy,
}

impl View {
    /// All views in tab order.
    pub const ALL: [View; 7] = [
        View::Size,
        View::Quant,
        View::Budget,
        View::Scaling,
        View::Oom,
        View::Catalog,
        View::Accuracy,
    ];

    /// URL id.
    pub fn id(self) -> &'static str {
        match self {
            View::Size => "size",
            View::Quant => "quant",
            View::Budget => "budget",
            View::Scaling => "scaling",
            View::Oom => "oom",
            View::Catalog => "catalog",
            View::Accuracy => "accuracy",
        }
    }

    /// Tab label.
    pub fn label(self) -> &'static str {
        match self {
            View::Size => "Size it",
            View::Quant => "Quantization",
            View::Budget => "Hardware budget",
            View::Scaling => "TP scaling",
            View::Oom => "Explain my OOM",
            View::Catalog => "Catalog",
            View::Accuracy => "Accuracy",
        }
    }

    fn parse(s: &str) -> View {
        View::ALL
            .into_iter()
            .find(|v| v.id() == s)
            .unwrap_or(View::Size)
    }
}

/// A model the user brought (files or a Hugging Face repo). Not in the URL: files cannot be.
#[derive(Debug, Clone, PartialEq)]
pub struct Custom {
    /// What the import worker read.
    pub model: Imported,
    /// From its config.json (`model.config`), read on the page.
    pub arch: Option<ModelArch>,
}

/// Shared state, provided as context.
#[derive(Clone, Copy)]
pub struct AppState {
    /// The raw query string (without `?`).
    pub query: Memo<String>,
    /// Inputs decoded from the query, with notices for ignored values.
    pub decoded: Memo<(Inputs, Vec<Notice>)>,
    /// The answer.
    pub plan: Memo<Result<Plan, String>>,
    /// Current view.
    pub view: Memo<View>,
    /// Display units.
    pub units: Memo<Units>,
    /// The model the user brought, when one is in use.
    pub custom: RwSignal<Option<Custom>>,
    /// Text pasted into the OOM explainer (kept across tab switches; never in the URL).
    pub oom_text: RwSignal<String>,
    raw_query: RwSignal<String>,
}

/// The current `location.search` without the `?`.
fn location_query() -> String {
    web_sys::window()
        .and_then(|w| w.location().search().ok())
        .map(|s| s.trim_start_matches('?').to_string())
        .unwrap_or_default()
}

impl AppState {
    /// Builds the state inside the router.
    pub fn new() -> Self {
        // The URL is the single source of truth: read it now and on every back/forward.
        let raw_query = RwSignal::new(location_query());
        if let Some(w) = web_sys::window() {
            let on_pop = Closure::<dyn Fn()>::new(move || raw_query.set(location_query()));
            let _ = w.add_event_listener_with_callback("popstate", on_pop.as_ref().unchecked_ref());
            on_pop.forget(); // lives as long as the page
        }
        let query = Memo::new(move |_| raw_query.get());
        let decoded = Memo::new(move |_| share::decode_checked(&CATALOG, &query.get()));
        let custom: RwSignal<Option<Custom>> = RwSignal::new(None);
        let plan = Memo::new(move |_| {
            let inputs = decoded.get().0;
            match custom.get() {
                Some(Custom {
                    model,
                    arch: Some(arch),
                }) => {
                    let gpu = resolve_gpu(&CATALOG, &inputs.gpu).map_err(|e| e.to_string())?;
                    Ok(custom_plan(
                        &CATALOG,
                        arch,
                        &model.name,
                        model.report.as_ref(),
                        gpu,
                        &inputs,
                    ))
                }
                Some(Custom { arch: None, .. }) => Err(
                    "add the model's config.json: the KV cache and the layout depend on it"
                        .to_string(),
                ),
                None => plan(&CATALOG, &inputs).map_err(|e| e.to_string()),
            }
        });
        let view = Memo::new(move |_| {
            View::parse(&share::ui_param(&query.get(), "view").unwrap_or_default())
        });
        let units = Memo::new(move |_| {
            share::ui_param(&query.get(), "units")
                .and_then(|u| Units::parse(&u))
                .unwrap_or_default()
        });
        Self {
            query,
            decoded,
            plan,
            view,
            units,
            custom,
            oom_text: RwSignal::new(String::new()),
            raw_query,
        }
    }

    fn go(&self, inputs: &Inputs, view: View, units: Units, replace: bool) {
        let mut q = share::encode(inputs);
        let mut extra = Vec::new();
        if view != View::Size {
            extra.push(format!("view={}", view.id()));
        }
        if units != Units::Binary {
            extra.push(format!("units={}", units.id()));
        }
        for e in extra {
            if !q.is_empty() {
                q.push('&');
            }
            q.push_str(&e);
        }
        let url = if q.is_empty() {
            web_sys::window()
                .and_then(|w| w.location().pathname().ok())
                .unwrap_or_else(|| "/".into())
        } else {
            format!("?{q}")
        };
        if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
            let _ = if replace {
                h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
            } else {
                h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
            };
        }
        self.raw_query.set(q);
    }

    /// Changes the inputs (a new history entry unless `replace`).
    pub fn update(&self, replace: bool, f: impl FnOnce(&mut Inputs)) {
        let mut i = self.decoded.get_untracked().0;
        f(&mut i);
        self.go(
            &i,
            self.view.get_untracked(),
            self.units.get_untracked(),
            replace,
        );
    }

    /// Switches the view.
    pub fn set_view(&self, v: View) {
        self.go(
            &self.decoded.get_untracked().0,
            v,
            self.units.get_untracked(),
            false,
        );
    }

    /// Switches units.
    pub fn set_units(&self, u: Units) {
        self.go(
            &self.decoded.get_untracked().0,
            self.view.get_untracked(),
            u,
            true,
        );
    }
}

impl Default for AppState {
    fn default() -> Self {
        Self::new()
    }
}

/// Registers the service worker that makes the app work offline.
pub fn register_service_worker() {
    if let Some(w) = web_sys::window() {
        let sw = w.navigator().service_worker();
        let _ = sw.register("./sw.js");
    }
}
