//! A select bound to one row of the core's input table.

use crate::state::AppState;
use leptos::prelude::*;
use vramfit_core::inputs::{key, Field};

/// A labelled select bound to one row of the core's input table
/// (`vramfit_core::inputs::KEYS`): its label comes from the row, its value is the row's text
/// (`Inputs::text`), and a choice goes through `Inputs::set` (`AppState::choose`).
///
/// - The first option is what the select shows when the row has no value (`auto`, `off`,
///   the engine's default).
/// - A value the list does not offer (TP 9 from `?tp=9`, a command's engine version) gets an
///   option of its own, selected, so that the select shows what the plan uses instead of
///   going blank.
///
/// Every select of the inputs is this one component, so that the page's wasm holds its view
/// code once instead of once per select (issue 19: a view's code is instantiated per
/// closure type).
#[component]
pub fn Choice(
    /// The input's row.
    field: Field,
    /// `data-testid`.
    id: &'static str,
    /// Tooltip explaining the term.
    help: &'static str,
    /// `(value, text)` of each option, the row's "no value" first.
    options: Vec<(&'static str, &'static str)>,
) -> impl IntoView {
    let st = expect_context::<AppState>();
    let none = options.first().map_or("", |o| o.0);
    let value = Memo::new(move |_| {
        st.decoded
            .with(|(i, _)| i.text(field))
            .unwrap_or_else(|| none.to_string())
    });
    let now = value.get_untracked();
    let listed: Vec<&'static str> = options.iter().map(|o| o.0).collect();
    let other = move || {
        let v = value.get();
        (!listed.contains(&v.as_str())).then(|| {
            let text = v.clone();
            view! { <option value=v selected=true>{text}</option> }
        })
    };
    let options = options
        .into_iter()
        .map(|(v, text)| view! { <option value=v selected=v == now>{text}</option> })
        .collect_view();
    view! {
        <label class="vf-field" title=help>
            <span>{key(field).label}</span>
            <select
                data-testid=id
                on:change=move |ev| st.choose(field, &event_target_value(&ev))
                prop:value=move || value.get()
            >
                {options}
                {other}
            </select>
        </label>
    }
}
