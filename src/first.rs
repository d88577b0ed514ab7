//! A shared link's first result, before the calculator (issue 19).
//!
//! The page's wasm is cut in two (src/lib.rs, scripts/page_wasm.py): the main chunk holds the
//! core, this module and the figures' table (src/figures.rs), and nothing of Leptos; the
//! calculator (the app split: the Leptos runtime, the shell, the inputs, "Size it") is a chunk
//! of its own, which a shared link fetches once this first result is shown. Until it comes, a
//! link with a scenario in its query shows that scenario's verdict and headline figures,
//! computed by the same core call the live page makes (`plan(&CATALOG,
//! &decode_checked(..).0)`, as `AppState::from_query`). The verdict is written with the same
//! class and spans as "Size it"'s ([`fit_class`], `vramfit_core::text::spans`), the figures
//! from the table the live page's figures read ([`FIGURES`]), under a line naming the model and
//! GPU (the inputs panel, which shows them, is not there yet). It sits in `#vf-first`, inert,
//! beside the "Loading the calculator…" note, and goes when the calculator mounts.
//!
//! The home page has its first result already: the build's copy in index.html
//! (scripts/prerender.mjs), which holds the whole first view. This one has no inputs panel
//! and no memory chart (their code is Leptos's): a link can name any scenario, so no copy of
//! its view can be made ahead.
//!
//! Nothing here is markup: the verdict can quote a model or GPU name from the URL, and each of
//! its parts becomes a text node, or the text of a `<code>` element.

use crate::figures::{fit_class, FIGURES};

/// What the first result of the scenario in `query` (an address's query, without `?`)
/// shows.
#[derive(Debug, PartialEq, Eq)]
pub struct First {
    /// The verdict's classes ([`fit_class`]).
    pub class: &'static str,
    /// The verdict, as the core wrote it (`Plan::verdict`).
    pub verdict: String,
    /// What it is the verdict on, since the inputs are not shown yet: "<model> on <GPU>",
    /// the catalog's names, as the inputs panel will show them.
    pub scenario: String,
    /// The headline figures' value and detail texts, in [`FIGURES`]' order, in the link's
    /// units.
    pub figures: Vec<[String; 2]>,
    /// What the link asked that the page ignored (an unknown model or GPU: the defaults are
    /// shown instead), as the live page's notice says it.
    pub notices: Vec<vramfit_core::share::Notice>,
}

/// Whether the first result of the address with this query comes from the main chunk
/// ([`show`]): a shared link that opens "Size it". The home page's is in the HTML; another
/// view has none, and waits for the calculator.
pub fn from_main_chunk(query: &str) -> bool {
    !query.is_empty() && crate::state::View::of_query(query) == crate::state::View::Size
}

/// The first result of the scenario in `query`. `None` when the link opens another view than
/// "Size it" (which has no verdict), or the scenario does not plan (the live page says why).
pub fn verdict(cat: &vramfit_core::catalog::Catalog, query: &str) -> Option<First> {
    use vramfit_core::share;
    // As the live page reads the view (an unknown id is "Size it").
    if crate::state::View::of_query(query) != crate::state::View::Size {
        return None;
    }
    let (inputs, notices) = share::decode_checked(cat, query);
    let p = vramfit_core::plan::plan(cat, &inputs).ok()?;
    let units = crate::state::units_of_query(query);
    Some(First {
        class: fit_class(p.estimate.fit),
        scenario: format!("{} on {}", p.model_name, p.gpu_name),
        figures: FIGURES
            .iter()
            .map(|f| [(f.value)(&p, units), (f.detail)(&p, units)])
            .collect(),
        verdict: p.verdict,
        notices,
    })
}

/// Shows the first result of the page's address ([`verdict`]) in `#vf-first` when the page
/// has none yet (a shared link; the home page's is the build's). Quietly does nothing when there is no
/// `#vf-first`, or no verdict to show: the calculator follows either way.
#[cfg(target_arch = "wasm32")]
pub fn show(cat: &vramfit_core::catalog::Catalog, query: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    let Some(first) = doc.get_element_by_id(crate::FIRST_RESULT_ID) else {
        return;
    };
    if first
        .query_selector(".vf-first-page")
        .ok()
        .flatten()
        .is_some()
    {
        return;
    }
    let Some(First {
        class,
        verdict: text,
        scenario,
        figures,
        notices,
    }) = verdict(cat, query)
    else {
        return;
    };
    // <div class="vf-first-page" inert><header class="vf-header"><h1 class="vf-title">vramfit</h1>
    // </header><main class="vf-main"><section class="vf-results"><div class="vf-size">
    // <p class="vf-first-scenario">…</p><p class=… data-testid="verdict">…</p>
    // <div class="vf-figures"><div class="vf-figure" title=…>…</div>…</div></div></section>
    // </main></div>
    let el = |tag: &str, class: &str| -> Option<web_sys::Element> {
        let e = doc.create_element(tag).ok()?;
        if !class.is_empty() {
            e.set_class_name(class);
        }
        Some(e)
    };
    let built = (|| -> Option<web_sys::Element> {
        let page = el("div", "vf-first-page")?;
        page.set_attribute("inert", "").ok()?;
        let header = el("header", "vf-header")?;
        let title = el("h1", "vf-title")?;
        title.set_text_content(Some("vramfit"));
        header.append_child(&title).ok()?;
        // A message's spans: text nodes, and `<code>` for the parts between backticks.
        let spans = |into: &web_sys::Element, message: &str| -> Option<()> {
            for s in vramfit_core::text::spans(message) {
                match s {
                    vramfit_core::text::Span::Text(t) => {
                        into.append_child(&doc.create_text_node(t)).ok()?;
                    }
                    vramfit_core::text::Span::Code(c) => {
                        let code = el("code", "")?;
                        code.set_text_content(Some(c));
                        into.append_child(&code).ok()?;
                    }
                }
            }
            Some(())
        };
        let p = el("p", class)?;
        p.set_attribute("data-testid", "verdict").ok()?;
        spans(&p, &text)?;
        let what = el("p", "vf-first-scenario vf-caveat")?;
        what.set_text_content(Some(&scenario));
        // The figures as the live page's `Figure` writes them (src/components/size_view.rs).
        let all = el("div", "vf-figures")?;
        for (f, [value, detail]) in FIGURES.iter().zip(&figures) {
            let fig = el("div", "vf-figure")?;
            fig.set_attribute("title", f.help).ok()?;
            for (class, text) in [
                ("vf-figure-label", f.label),
                ("vf-figure-value", value.as_str()),
                ("vf-figure-detail", detail.as_str()),
            ] {
                let part = el("div", class)?;
                part.set_text_content(Some(text));
                if class == "vf-figure-value" {
                    part.set_attribute("data-testid", f.testid).ok()?;
                }
                fig.append_child(&part).ok()?;
            }
            all.append_child(&fig).ok()?;
        }
        let size = el("div", "vf-size")?;
        if !notices.is_empty() {
            // As the live page's notice (src/components/app.rs `Notices`).
            let notice = el("div", "vf-notice")?;
            notice
                .append_child(&doc.create_text_node(crate::state::IGNORED_PARAMETERS))
                .ok()?;
            let list = el("ul", "")?;
            for n in &notices {
                let li = el("li", "")?;
                let key = el("code", "")?;
                key.set_text_content(Some(&n.key));
                li.append_child(&key).ok()?;
                li.append_child(&doc.create_text_node(": ")).ok()?;
                spans(&li, &n.message)?;
                list.append_child(&li).ok()?;
            }
            notice.append_child(&list).ok()?;
            size.append_child(&notice).ok()?;
        }
        size.append_child(&what).ok()?;
        size.append_child(&p).ok()?;
        size.append_child(&all).ok()?;
        let results = el("section", "vf-results")?;
        results.append_child(&size).ok()?;
        let main = el("main", "vf-main")?;
        main.append_child(&results).ok()?;
        page.append_child(&header).ok()?;
        page.append_child(&main).ok()?;
        Some(page)
    })();
    if let Some(page) = built {
        let _ = first.append_child(&page);
    }
}

/// Says on the page, as text, at its top, that the calculator did not start
/// (`data-testid="start-failed"`, as `vfStartFailed` in the page's head says a wasm that did
/// not start, scripts/page_wasm.py). The first result stays: it is still the scenario's answer. It is no
/// longer loading, so its "Loading…" note goes, it stops being inert (it can be read aloud and
/// copied; its controls stay disabled), and `vf-stopped` ends the progress cursor.
#[cfg(target_arch = "wasm32")]
pub fn failed(why: &str) {
    let Some(doc) = web_sys::window().and_then(|w| w.document()) else {
        return;
    };
    if let Some(first) = doc.get_element_by_id(crate::FIRST_RESULT_ID) {
        let _ = first.class_list().add_1("vf-stopped");
        if let Ok(Some(note)) = first.query_selector(".vf-first-status") {
            note.remove();
        }
        if let Ok(Some(page)) = first.query_selector(".vf-first-page") {
            let _ = page.remove_attribute("inert");
        }
    }
    let (Ok(p), Some(body)) = (doc.create_element("p"), doc.body()) else {
        return;
    };
    p.set_class_name("vf-verdict vf-bad");
    let _ = p.set_attribute("role", "alert");
    let _ = p.set_attribute("data-testid", "start-failed");
    p.set_text_content(Some(why));
    let _ = body.prepend_with_node_1(&p);
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests {
    use super::*;
    use crate::state::CATALOG;
    use leptos::prelude::*;

    /// The first result's verdict is the live page's: the same text and class as the plan of
    /// the page's state for the same address.
    #[test]
    fn the_first_verdict_is_the_live_pages() {
        // The defaults, a layout, a model that does not fit, and a stale link (an unknown GPU
        // and model fall back to the defaults, with a notice on the live page).
        for q in [
            "",
            "len=131072&tp=4",
            "model=llama-3.1-70b&gpu=rtx-4090&users=64&units=gb",
            "gpu=not-a-gpu&model=nope",
        ] {
            let st = crate::state::AppState::from_query(q);
            let live = st.plan.get_untracked().unwrap();
            let first = verdict(&CATALOG, q).unwrap();
            assert_eq!(first.verdict, live.verdict, "{q}");
            assert_eq!(first.class, fit_class(live.estimate.fit), "{q}");
            // The figures in the link's units, as the live page reads them.
            let units = st.units.get_untracked();
            let want: Vec<[String; 2]> = FIGURES
                .iter()
                .map(|f| [(f.value)(&live, units), (f.detail)(&live, units)])
                .collect();
            assert_eq!(first.figures, want, "{q}");
        }
    }

    /// It names the scenario as the inputs panel will: the catalog's model and GPU names.
    #[test]
    fn the_first_result_names_its_scenario() {
        let first = verdict(&CATALOG, "model=llama-3.1-70b&gpu=rtx-4090").unwrap();
        let model = CATALOG.model("llama-3.1-70b").unwrap();
        let gpu = CATALOG.gpu("rtx-4090").unwrap();
        assert_eq!(
            first.scenario,
            format!("{} on {}", model.model.name, gpu.name)
        );
    }

    /// Another view has no first verdict ("Size it" has the only one); an unknown view id is
    /// "Size it", as on the live page. Only a shared link's comes from the main chunk.
    #[test]
    fn other_views_have_none() {
        assert_eq!(verdict(&CATALOG, "view=budget"), None);
        assert_eq!(verdict(&CATALOG, "len=8192&view=scaling"), None);
        assert!(verdict(&CATALOG, "view=size").is_some());
        let stale = "view=no-such-view";
        assert_eq!(
            crate::state::AppState::from_query(stale)
                .view
                .get_untracked(),
            crate::state::View::Size
        );
        assert!(verdict(&CATALOG, stale).is_some());
        assert!(from_main_chunk("len=8192") && from_main_chunk(stale));
        assert!(!from_main_chunk("") && !from_main_chunk("view=oom"));
    }

    /// A stale link's first result says what it ignored, as the live page's notice does.
    #[test]
    fn a_stale_link_says_what_it_ignored() {
        let q = "model=no-such-model&gpu=h100-sxm";
        let st = crate::state::AppState::from_query(q);
        let first = verdict(&CATALOG, q).unwrap();
        assert_eq!(first.notices, st.decoded.get_untracked().1);
        assert_eq!(first.notices.len(), 1);
        assert_eq!(first.notices[0].key, "model");
        assert!(
            first.notices[0].message.contains("no-such-model"),
            "{:?}",
            first.notices
        );
        assert!(verdict(&CATALOG, "model=qwen2.5-7b")
            .unwrap()
            .notices
            .is_empty());
    }
}
