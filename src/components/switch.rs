//! A checkbox bound to an on/off row of the core's input table.

use crate::state::AppState;
use leptos::prelude::*;
use vramfit_core::inputs::{key, Field};

/// A checkbox bound to an on/off row of the input table.
#[component]
pub fn Switch(field: Field, id: &'static str, help: &'static str) -> impl IntoView {
    let st = expect_context::<AppState>();
    let label = format!(" {}", key(field).label);
    view! {
        <label class="vf-check" title=help>
            <input
                type="checkbox"
                data-testid=id
                prop:checked=move || st.decoded.with(|(i, _)| i.text(field).is_some())
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    st.choose(field, if on { "1" } else { "0" });
                }
            />
            {label}
        </label>
    }
}
