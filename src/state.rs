//! The view-model: the URL query is the single source of truth; everything shown is a
//! `Memo` over it that calls the core. Effects only sync with the outside world.

use leptos::prelude::*;
use std::sync::OnceLock;
use vramfit_core::catalog::Catalog;
use vramfit_core::inputs::Field;
use vramfit_core::model::ModelArch;
use vramfit_core::plan::{custom_plan, plan, resolve_gpu, Inputs, Plan};
use vramfit_core::share::{self, Notice};
use vramfit_core::units::Units;
use vramfit_protocol::Imported;
#[cfg(target_arch = "wasm32")]
use wasm_bindgen::{closure::Closure, JsCast};

/// The catalog: read once from its file beside the page's code ([`load_catalog`]), before
/// anything is mounted; the views chunk reads the page's (one memory).
pub static CATALOG: Loaded = Loaded(OnceLock::new());

/// The catalog once loaded ([`CATALOG`]); before that, an empty one (nothing reads it then:
/// the page mounts after the load). The web crate's native unit tests read the embedded
/// catalog; any other native use (an integration test, a doctest) would get the empty one.
pub struct Loaded(OnceLock<Catalog>);

impl std::ops::Deref for Loaded {
    type Target = Catalog;
    fn deref(&self) -> &Catalog {
        #[cfg(test)]
        return self.0.get_or_init(Catalog::bundled);
        #[cfg(not(test))]
        {
            static EMPTY: std::sync::LazyLock<Catalog> = std::sync::LazyLock::new(Catalog::default);
            self.0.get().unwrap_or(&EMPTY)
        }
    }
}

/// GETs a file of the app's own (through the service worker when offline), as bytes: they
/// come into the wasm's memory in one copy (a JS string came through wasm-bindgen's
/// character-by-character loop, ~5 ms for the catalog; docs/PERFORMANCE.md, "Issue 19, step
/// 11"), and the core checks that they are UTF-8. `force_cache`: any cached copy will do (for
/// files named by their content).
pub async fn fetch_bytes(url: &str, force_cache: bool) -> Result<Vec<u8>, String> {
    use wasm_bindgen_futures::JsFuture;
    let failed = |e: wasm_bindgen::JsValue| format!("could not fetch {url}: {e:?}");
    let window = web_sys::window().ok_or("no window")?;
    let init = web_sys::RequestInit::new();
    if force_cache {
        init.set_cache(web_sys::RequestCache::ForceCache);
    }
    let res: web_sys::Response = wasm_bindgen::JsCast::unchecked_into(
        JsFuture::from(window.fetch_with_str_and_init(url, &init))
            .await
            .map_err(failed)?,
    );
    if !res.ok() {
        return Err(format!("{url}: the server answered {}", res.status()));
    }
    let bytes = JsFuture::from(res.array_buffer().map_err(failed)?)
        .await
        .map_err(failed)?;
    Ok(js_sys::Uint8Array::new(&bytes).to_vec())
}

/// Marks a step of the page's start on the page's timeline (a User Timing mark: DevTools'
/// performance panel shows it, and tests/e2e/startup.mjs reads it): `vf-start` (the main
/// chunk runs), `vf-catalog-text` (the catalog file's bytes are in; the name predates bytes,
/// and startup.mjs compares builds by it), `vf-catalog-read` (parsed),
/// `vf-first-shown` (a shared link's first result is in the DOM, or there is none to show),
/// `vf-mounted` (the calculator).
pub fn mark(name: &str) {
    if let Some(p) = performance() {
        let _ = p.mark(name);
    }
}

/// The page's `performance` (its timeline and clock), if it has one.
fn performance() -> Option<web_sys::Performance> {
    web_sys::window().and_then(|w| w.performance())
}

/// The catalog file's bytes as the page's head asked for them, as soon as the HTML parser
/// reached it (`window.vfCatalog`, a promise of an `ArrayBuffer` or `null`, written by
/// scripts/catalog_file.py beside the file's preload): by the time the wasm has started, they
/// are usually there already (docs/PERFORMANCE.md, "Issue 19, step 8"). The promise is taken
/// off `window`, so that the file is not kept twice. `None` when the page has no such promise
/// or it came to nothing; [`load_catalog`] then fetches the file itself, and says why that
/// failed.
#[cfg(target_arch = "wasm32")]
async fn early_catalog() -> Option<Vec<u8>> {
    let window = js_sys::global();
    let key = wasm_bindgen::JsValue::from_str("vfCatalog");
    let p = js_sys::Reflect::get(&window, &key).ok()?;
    let _ = js_sys::Reflect::delete_property(&window, &key);
    let p: js_sys::Promise = wasm_bindgen::JsCast::dyn_into(p).ok()?;
    let bytes: js_sys::ArrayBuffer =
        wasm_bindgen::JsCast::dyn_into(wasm_bindgen_futures::JsFuture::from(p).await.ok()?).ok()?;
    Some(js_sys::Uint8Array::new(&bytes).to_vec())
}
#[cfg(not(target_arch = "wasm32"))]
async fn early_catalog() -> Option<Vec<u8>> {
    None
}

/// Fetches and reads the catalog ([`vramfit_core::catalog::WEB_FILE`], which index.html
/// preloads beside the page's code and asks for at once: [`early_catalog`]), once.
///
/// # Errors
/// Why it could not be fetched or read, for the page to show.
pub async fn load_catalog() -> Result<(), String> {
    if CATALOG.0.get().is_none() {
        let bytes = match early_catalog().await {
            Some(b) => b,
            None => fetch_bytes(vramfit_core::catalog::WEB_FILE, false).await?,
        };
        mark("vf-catalog-text");
        let _ = CATALOG.0.set(Catalog::from_web_file(&bytes)?);
        mark("vf-catalog-read");
    }
    Ok(())
}

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

    /// The view a URL id names: an unknown or missing one is "Size it".
    pub fn parse(s: &str) -> View {
        View::ALL
            .into_iter()
            .find(|v| v.id() == s)
            .unwrap_or(View::Size)
    }
}

impl View {
    /// The view of an address's query (without `?`): its `view` key ([`View::parse`]).
    pub fn of_query(query: &str) -> View {
        View::parse(&share::ui_param(query, "view").unwrap_or_default())
    }
}

/// The units of an address's query (without `?`): its `units` key, else the default; read
/// so by the live page ([`AppState`]) and a shared link's first result (src/first.rs).
pub fn units_of_query(query: &str) -> Units {
    share::ui_param(query, "units")
        .and_then(|u| Units::parse(&u))
        .unwrap_or_default()
}

/// What a link's notice says above the parameters the page ignored (an unknown model or
/// GPU), on the live page (src/components/app.rs `Notices`) and in a shared link's first
/// result (src/first.rs).
pub const IGNORED_PARAMETERS: &str = "Some link parameters were ignored:";

/// A model the user brought (files or a Hugging Face repo). Not in the URL: files cannot be.
#[derive(Debug, Clone, PartialEq)]
pub struct Custom {
    /// What the import worker read.
    pub model: Imported,
    /// From its config.json (`model.config`), read on the page.
    pub arch: Option<ModelArch>,
}

impl Custom {
    /// The model the worker read (`vramfit-protocol`), as the page uses it: its config read.
    pub fn from_imported(mut model: Imported) -> Result<Custom, String> {
        if let Some(r) = &mut model.report {
            r.refresh_ratios();
        }
        let file = model.config_file.as_deref().unwrap_or("config.json");
        let arch = match &model.config {
            Some(t) => Some(ModelArch::from_config_str(t).map_err(|e| e.in_file(file))?),
            None => None,
        };
        Ok(Custom { model, arch })
    }
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
    /// The service worker has cached every file of this build: all views work offline.
    pub offline: RwSignal<bool>,
    /// What holds text the page could not use (a field's label, or the dropped files): the
    /// results are then the last accepted values', and "Size it" says so.
    pub refused: RwSignal<Vec<&'static str>>,
    raw_query: RwSignal<String>,
}

/// The current `location.search` without the `?` (empty off the browser).
pub fn location_query() -> String {
    #[cfg(target_arch = "wasm32")]
    {
        web_sys::window()
            .and_then(|w| w.location().search().ok())
            .map(|s| s.trim_start_matches('?').to_string())
            .unwrap_or_default()
    }
    #[cfg(not(target_arch = "wasm32"))]
    String::new()
}

/// The address writes that wait, and when the last one went (issue 19, step 13).
///
/// A write waits for a paint after the changes it carries, so that the page shows the new
/// numbers first: `history.replaceState`/`pushState` cost more than the recompute they follow
/// (a fifth of a length change's time in Chromium's profiler), and in a burst of changes the
/// browser's side of each same-document navigation competes with the next recompute for the
/// cores (docs/PERFORMANCE.md, "Issue 19, step 13"). After that, the History API is called at
/// most once every [`UrlWrites::INTERVAL_MS`] (but for the share link's and leaving's
/// [`flush_url`]), because browsers rate-limit it and then ignore or refuse every call for a
/// while, and a held arrow key fires ~30 changes a second (the browsers' limits, with their
/// sources, are in that section). Writes that wait merge:
/// - a replace merges into the last write that waits (the same URL and history as writing
///   both);
/// - a new entry merges into the last write that waits if that is a new entry too: choices
///   made before the last one was written (in one frame, or in one burst of a held key) are
///   one history entry, the way the address bar shows them;
/// - otherwise it queues behind it (a typed length, then a choice: back returns to the typed
///   length).
///
/// At most two writes wait (a replace, then a new entry), so `remove(0)` is cheap. Pure, so
/// that its rules are tested natively; `push_url` and [`write_next`] drive it with the page's
/// clock, as one chain of timers at a time (`armed`).
#[derive(Debug, Default)]
#[cfg(any(target_arch = "wasm32", test))] // the page's; natively, its tests
pub(crate) struct UrlWrites {
    /// The queries that wait, in order, and whether each replaces the current entry.
    waiting: Vec<(String, bool)>,
    /// When the History API was last called (ms on the page's clock).
    last: Option<f64>,
    /// Whether a chain of [`write_next`] calls is scheduled: from the [`ask`](Self::ask) that
    /// starts it to the [`rest`](Self::rest) that finds nothing waiting. [`all`](Self::all)
    /// and [`drop_waiting`](Self::drop_waiting) leave it, so that a chain still scheduled
    /// after them stays the only one.
    armed: bool,
}

#[cfg(any(target_arch = "wasm32", test))]
impl UrlWrites {
    /// The least time between two History API calls: under Safari 17's 100 per 10 s with a
    /// margin, and well under Chromium's 20 per second (see above).
    pub(crate) const INTERVAL_MS: f64 = 120.0;

    /// Asks for a write of `query`; true when no chain of writes is scheduled (the caller
    /// then schedules one).
    pub(crate) fn ask(&mut self, query: &str, replace: bool) -> bool {
        match self.waiting.last_mut() {
            Some(last) if replace || !last.1 => last.0 = query.to_string(),
            _ => self.waiting.push((query.to_string(), replace)),
        }
        !std::mem::replace(&mut self.armed, true)
    }

    /// How long (ms) the next write must still wait at `now`.
    pub(crate) fn wait(&self, now: f64) -> f64 {
        self.last
            .map_or(0.0, |t| (t + Self::INTERVAL_MS - now).max(0.0))
    }

    /// The next write, if one waits and may go at `now`; it counts as made.
    pub(crate) fn next(&mut self, now: f64) -> Option<(String, bool)> {
        if self.waiting.is_empty() || self.wait(now) > 0.0 {
            return None;
        }
        self.last = Some(now);
        Some(self.waiting.remove(0))
    }

    /// After the chain's step at `now`: how long (ms) until the next write may go, or `None`
    /// when nothing waits, which ends the chain.
    pub(crate) fn rest(&mut self, now: f64) -> Option<f64> {
        self.armed = !self.waiting.is_empty();
        self.armed.then(|| self.wait(now))
    }

    /// Every write that waits, at once (before the share link reads the address, or when the
    /// page is left).
    pub(crate) fn all(&mut self, now: f64) -> Vec<(String, bool)> {
        if !self.waiting.is_empty() {
            self.last = Some(now);
        }
        std::mem::take(&mut self.waiting)
    }

    /// Whether a write waits.
    #[cfg(test)]
    fn waiting(&self) -> bool {
        !self.waiting.is_empty()
    }

    /// Drops the writes that wait (a back/forward move overtakes them).
    pub(crate) fn drop_waiting(&mut self) {
        self.waiting.clear();
    }
}

/// Writes the new query to the address bar (a history entry unless `replace`): after the
/// next paint, and at most once every [`UrlWrites::INTERVAL_MS`], merged as
/// [`UrlWrites`] says ([`flush_url`], for the share link and leaving, writes at once). The
/// only place the state touches the window; a no-op off the browser (native tests).
fn push_url(query: &str, replace: bool) {
    #[cfg(target_arch = "wasm32")]
    if WRITES.with_borrow_mut(|w| w.ask(query, replace)) {
        after_paint(write_next);
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = (query, replace);
}

#[cfg(target_arch = "wasm32")]
thread_local! {
    /// The page's address writes (see [`UrlWrites`]).
    static WRITES: std::cell::RefCell<UrlWrites> = std::cell::RefCell::new(UrlWrites::default());
}

/// The page's clock (ms), for the writes' spacing.
#[cfg(target_arch = "wasm32")]
fn now_ms() -> f64 {
    performance().map_or_else(js_sys::Date::now, |p| p.now())
}

/// Makes the next write if it may go now; then waits for the one after, if any: a timer for
/// the rest of the interval, then the next paint (so that a change made while a write waited
/// is shown before its address is written, as the first one was).
#[cfg(target_arch = "wasm32")]
fn write_next() {
    let now = now_ms();
    let (due, wait) = WRITES.with_borrow_mut(|w| (w.next(now), w.rest(now)));
    if let Some((q, replace)) = due {
        write_url(&q, replace);
    }
    if let Some(ms) = wait {
        after_ms(|| after_paint(write_next), ms.ceil() as i32);
    }
}

/// Writes every URL write that waits, in order, at once (before the share link reads the
/// address, and when the page is left).
pub fn flush_url() {
    #[cfg(target_arch = "wasm32")]
    for (q, replace) in WRITES.with_borrow_mut(|w| w.all(now_ms())) {
        write_url(&q, replace);
    }
}

#[cfg(target_arch = "wasm32")]
fn write_url(query: &str, replace: bool) {
    let url = if query.is_empty() {
        web_sys::window()
            .and_then(|w| w.location().pathname().ok())
            .unwrap_or_else(|| "/".into())
    } else {
        format!("?{query}")
    };
    if let Some(h) = web_sys::window().and_then(|w| w.history().ok()) {
        let _ = if replace {
            h.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        } else {
            h.push_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url))
        };
    }
}

/// Runs `f` in a task after the next animation frame: after the browser has painted.
#[cfg(target_arch = "wasm32")]
pub(crate) fn after_paint(f: fn()) {
    let Some(w) = web_sys::window() else {
        return f();
    };
    let later = Closure::once_into_js(move || after_ms(f, 0));
    if w.request_animation_frame(later.unchecked_ref()).is_err() {
        f();
    }
}

/// Runs `f` in a task `ms` milliseconds from now (a timer).
#[cfg(target_arch = "wasm32")]
fn after_ms(f: impl FnOnce() + 'static, ms: i32) {
    let task = Closure::once_into_js(f);
    if let Some(w) = web_sys::window() {
        let _ = w.set_timeout_with_callback_and_timeout_and_arguments_0(task.unchecked_ref(), ms);
    }
}

/// A URL move by back/forward: the writes that wait, which it overtakes, are dropped.
#[cfg(target_arch = "wasm32")]
fn drop_pending_write() {
    WRITES.with_borrow_mut(UrlWrites::drop_waiting);
}

/// Calls `f` on each of `events` at `window`, for the page's lifetime.
#[cfg(target_arch = "wasm32")]
fn listen(events: &[&str], f: impl Fn() + 'static) {
    if let Some(w) = web_sys::window() {
        let cb = Closure::<dyn Fn()>::new(f);
        for e in events {
            let _ = w.add_event_listener_with_callback(e, cb.as_ref().unchecked_ref());
        }
        cb.forget(); // lives as long as the page
    }
}

/// The query string for inputs, a view and units: the inputs' keys, then `view`, `units`
/// when they are not the defaults.
pub fn query_for(inputs: &Inputs, view: View, units: Units) -> String {
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
    q
}

impl AppState {
    /// Builds the page's state from its URL, and follows back/forward.
    pub fn new() -> Self {
        let st = Self::from_query(&location_query());
        #[cfg(target_arch = "wasm32")]
        {
            let raw_query = st.raw_query;
            listen(&["popstate"], move || {
                drop_pending_write();
                raw_query.set(location_query());
            });
            // Leaving before a change's write has gone still leaves its URL behind.
            listen(&["pagehide"], flush_url);
        }
        st
    }

    /// Builds the state from a query string (without `?`): the URL is the single source of
    /// truth, and everything shown is a `Memo` over it. Touches no window.
    pub fn from_query(query: &str) -> Self {
        let raw_query = RwSignal::new(query.to_string());
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
        let view = Memo::new(move |_| View::of_query(&query.get()));
        let units = Memo::new(move |_| units_of_query(&query.get()));
        Self {
            query,
            decoded,
            plan,
            view,
            units,
            custom,
            oom_text: RwSignal::new(String::new()),
            offline: RwSignal::new(false),
            refused: RwSignal::new(Vec::new()),
            raw_query,
        }
    }

    /// Marks `what` as holding text the page refused (`on`), or no longer.
    pub fn mark_refused(&self, what: &'static str, on: bool) {
        let has = self.refused.with_untracked(|v| v.contains(&what));
        if on && !has {
            self.refused.update(|v| v.push(what));
        } else if !on && has {
            self.refused.update(|v| v.retain(|w| *w != what));
        }
    }

    fn go(&self, inputs: &Inputs, view: View, units: Units, replace: bool) {
        let q = query_for(inputs, view, units);
        push_url(&q, replace);
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

    /// Sets one input from a choice the page offers (a select, a checkbox), as a new history
    /// entry. A value the input table refuses changes nothing: the page's own options are
    /// all valid, so that would be a bug in the page, not the user's.
    pub fn choose(&self, field: Field, value: &str) {
        let mut i = self.decoded.get_untracked().0;
        if i.set(field, value).is_ok() {
            self.go(
                &i,
                self.view.get_untracked(),
                self.units.get_untracked(),
                false,
            );
        }
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

/// Registers the service worker that makes the app work offline, and asks it, after the
/// first result and a quiet moment ([`WARM_AFTER_MS`]), to cache what the first load did not
/// fetch (public/sw.js); `offline` turns true when it answers that everything is cached.
pub fn register_service_worker(offline: RwSignal<bool>) {
    #[cfg(target_arch = "wasm32")]
    {
        use wasm_bindgen::JsValue;
        let Some(w) = web_sys::window() else { return };
        let sw = w.navigator().service_worker();
        if JsValue::from(sw.clone()).is_undefined() {
            return; // no service workers here (an insecure origin, or blocked)
        }
        let on_message =
            Closure::<dyn Fn(web_sys::MessageEvent)>::new(move |ev: web_sys::MessageEvent| {
                if ev.data().as_string().as_deref() == Some("warmed") {
                    offline.set(true);
                }
            });
        sw.set_onmessage(Some(on_message.as_ref().unchecked_ref()));
        on_message.forget(); // lives as long as the page
        let _ = sw.register("./sw.js");
        let Ok(ready) = sw.ready() else { return };
        let warm = Closure::<dyn FnMut(JsValue)>::new(move |reg: JsValue| {
            let reg: web_sys::ServiceWorkerRegistration = reg.unchecked_into();
            after_ms(
                move || {
                    if let Some(active) = reg.active() {
                        let _ = active.post_message(&"warm".into());
                    }
                },
                WARM_AFTER_MS,
            );
        });
        let _ = ready.then(&warm);
        warm.forget(); // called once, when the worker is ready
    }
    #[cfg(not(target_arch = "wasm32"))]
    let _ = offline;
}

/// How long after the service worker is ready the page asks it to cache the rest, ms: the
/// first load's bytes go first on a slow link.
pub const WARM_AFTER_MS: i32 = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_core_knows_every_view_a_link_may_name() {
        // `share::decode` says an unknown `view`; its list is the tabs'.
        assert_eq!(View::ALL.map(View::id), vramfit_core::share::VIEW_IDS);
    }

    fn with_state(query: &str, f: impl FnOnce(AppState)) {
        let owner = Owner::new();
        owner.with(|| f(AppState::from_query(query)));
    }

    #[test]
    fn a_link_decodes_to_inputs_and_back() {
        with_state("len=32768&tp=2&view=quant&units=gb", |st| {
            let (i, notices) = st.decoded.get_untracked();
            assert!(notices.is_empty(), "{notices:?}");
            assert_eq!(i.flags.max_model_len, Some(32768));
            assert_eq!(i.tensor_parallel_size, Some(2));
            assert_eq!(st.view.get_untracked(), View::Quant);
            assert_eq!(st.units.get_untracked(), Units::Decimal);
            let p = st.plan.get_untracked().expect("the default model plans");
            assert_eq!(p.tensor_parallel_size, 2);
            // Re-encoding gives the same link.
            st.set_units(Units::Decimal);
            assert_eq!(
                st.query.get_untracked(),
                "len=32768&tp=2&view=quant&units=gb"
            );
        });
    }

    #[test]
    fn bad_values_become_notices_and_defaults() {
        with_state("util=0.03&block=0&model=no-such-model&zzz=1", |st| {
            let (i, notices) = st.decoded.get_untracked();
            let d = Inputs::default();
            assert_eq!(i, d);
            let keys: Vec<&str> = notices.iter().map(|n| n.key.as_str()).collect();
            assert_eq!(keys, ["util", "block", "zzz", "model"]);
            assert_eq!(
                notices[0].message,
                "`--gpu-memory-utilization` must be between 0.05 and 1; got 0.03"
            );
            assert!(notices[3].message.contains("no-such-model"));
        });
    }

    #[test]
    fn an_input_change_moves_the_url_and_the_plan() {
        with_state("", |st| {
            let before = st.plan.get_untracked().unwrap();
            st.update(true, |i| i.flags.max_model_len = Some(131_072));
            assert_eq!(st.query.get_untracked(), "len=131072");
            let after = st.plan.get_untracked().unwrap();
            assert!(after.estimate.max_model_len > before.estimate.max_model_len);
            st.choose(Field::TensorParallelSize, "4");
            assert_eq!(st.query.get_untracked(), "len=131072&tp=4");
            // A refused choice changes nothing.
            st.choose(Field::TensorParallelSize, "0");
            assert_eq!(st.query.get_untracked(), "len=131072&tp=4");
            st.set_view(View::Scaling);
            assert_eq!(st.query.get_untracked(), "len=131072&tp=4&view=scaling");
            // Back to the defaults: an empty query.
            st.set_view(View::Size);
            st.update(false, |i| *i = Inputs::default());
            assert_eq!(st.query.get_untracked(), "");
        });
    }

    #[test]
    fn a_brought_model_without_config_asks_for_it() {
        with_state("", |st| {
            st.custom.set(Some(Custom {
                model: Imported {
                    name: "mine".into(),
                    config: None,
                    config_file: None,
                    report: None,
                    shards: 1,
                    index_problems: Vec::new(),
                    source: "files".into(),
                    header_bytes_read: 8,
                },
                arch: None,
            }));
            let e = st.plan.get_untracked().unwrap_err();
            assert!(e.contains("config.json"), "{e}");
            st.custom.set(None);
            assert!(st.plan.get_untracked().is_ok());
        });
    }

    /// The address writes' rules (`UrlWrites`): merged as the history should read, and the
    /// History API called at most once every 120 ms.
    #[test]
    fn address_writes_merge_and_keep_their_distance() {
        let mut w = UrlWrites::default();
        let i = UrlWrites::INTERVAL_MS;
        // The first write after a quiet spell goes at once (the caller waits for the paint).
        assert!(w.ask("len=16384", true));
        assert!(
            !w.ask("len=20480", true),
            "a second write rides on the first's schedule"
        );
        assert_eq!(w.wait(0.0), 0.0);
        assert_eq!(w.next(16.0), Some(("len=20480".into(), true)));
        assert_eq!(w.next(16.0), None);
        assert_eq!(w.rest(16.0), None, "nothing waits: the chain ends");
        // A choice after it: a new entry, which waits out the interval.
        assert!(w.ask("kv=fp8&len=20480", false));
        assert_eq!(w.wait(40.0), 16.0 + i - 40.0);
        assert_eq!(w.next(40.0), None, "too soon after the last call");
        // Another choice and a keystroke before it went: one entry, the latest query.
        w.ask("model=qwen3-8b&kv=fp8&len=20480", false);
        w.ask("model=qwen3-8b&kv=fp8&len=24576", true);
        assert_eq!(
            w.next(16.0 + i),
            Some(("model=qwen3-8b&kv=fp8&len=24576".into(), false))
        );
        assert!(!w.waiting());
        // A typed length, then a choice: two writes, in order, a full interval apart, so that
        // back from the choice returns to the typed length.
        let t = 16.0 + i;
        w.ask("len=8192", true);
        w.ask("model=llama-3.1-8b&len=8192", false);
        assert_eq!(w.next(t + i - 1.0), None);
        assert_eq!(w.next(t + i), Some(("len=8192".into(), true)));
        assert_eq!(w.wait(t + i), i);
        assert_eq!(
            w.next(t + 2.0 * i),
            Some(("model=llama-3.1-8b&len=8192".into(), false))
        );
        // A replace while a replace and a new entry wait merges into the new entry.
        w.ask("len=1024", true);
        w.ask("model=qwen3-8b&len=1024", false);
        w.ask("model=qwen3-8b&len=2048", true);
        assert_eq!(
            w.all(t + 2.0 * i),
            vec![
                ("len=1024".to_string(), true),
                ("model=qwen3-8b&len=2048".to_string(), false)
            ]
        );
        // A new entry after a replace that waits queues behind it.
        w.ask("len=4096", true);
        w.ask("gpu=a100-80g&len=4096", false);
        // The share link and leaving take every write that waits, at once, in order.
        assert_eq!(
            w.all(t + 2.0 * i + 1.0),
            vec![
                ("len=4096".to_string(), true),
                ("gpu=a100-80g&len=4096".to_string(), false)
            ]
        );
        assert_eq!(w.wait(t + 2.0 * i + 1.0), i, "they count as the last call");
        // Back/forward drops what waits.
        w.ask("len=2048", true);
        w.drop_waiting();
        assert!(!w.waiting());
        assert_eq!(w.next(1e9), None);
        // The chain started by that last ask is still scheduled: a write asked for before its
        // step rides on it, and does not start a second chain (nor after a flush).
        assert!(!w.ask("len=3072", true), "one chain at a time");
        let u = 1e9;
        assert_eq!(w.next(u), Some(("len=3072".into(), true)));
        assert_eq!(w.rest(u), None);
        assert!(
            w.ask("len=4096", true),
            "after the chain ended, a new one starts"
        );
        w.all(u + 1.0);
        assert!(
            !w.ask("len=5120", true),
            "a flush leaves the scheduled chain the only one"
        );
        assert_eq!(w.next(u + 2.0), None, "the flush counts as the last call");
        assert_eq!(w.rest(u + 2.0), Some(i - 1.0));
        assert_eq!(w.next(u + 1.0 + i), Some(("len=5120".into(), true)));
        assert_eq!(w.rest(u + 1.0 + i), None);
    }
}
