//! A number input bound to one row of the core's input table.

use crate::components::explained::Explained;
use crate::state::AppState;
use leptos::prelude::*;
use vramfit_core::inputs::{key, Field};

/// A labelled number input bound to one row of the core's input table
/// (`vramfit_core::inputs::KEYS`): its label, unit and limits come from the row, and every
/// value goes through `Inputs::set`, so a refused value shows the message a link would give.
/// What the user typed stays in the field.
#[component]
pub fn NumberField(
    /// The input's row.
    field: Field,
    /// `data-testid` and id.
    id: &'static str,
    /// Tooltip explaining the term.
    help: &'static str,
    /// Step between values (`1` for whole numbers).
    #[prop(default = "1")]
    step: &'static str,
    /// Placeholder while empty.
    #[prop(default = "")]
    placeholder: &'static str,
) -> impl IntoView {
    let st = expect_context::<AppState>();
    let k = key(field);
    let label = if k.unit.is_empty() || k.unit == "fraction" {
        k.label.to_string()
    } else {
        format!("{} ({})", k.label, k.unit)
    };
    let (error, set_error) = signal(Option::<String>::None);
    let value = move || {
        st.decoded
            .with(|(i, _)| i.text(field))
            .filter(|t| t != "auto")
            .unwrap_or_default()
    };
    view! {
        <label class="vf-field" title=help>
            <span>{label}</span>
            <input
                type="number"
                id=id
                data-testid=id
                min=k.min_text()
                max=k.max_text()
                step=step
                placeholder=placeholder
                inputmode=if step == "1" { "numeric" } else { "decimal" }
                aria-invalid=move || error.with(Option::is_some).to_string()
                prop:value=value
                on:input=move |ev| {
                    let raw = event_target_value(&ev);
                    let mut next = st.decoded.get_untracked().0;
                    match next.set(field, &raw) {
                        Ok(()) => {
                            set_error.set(None);
                            st.update(true, |i| *i = next);
                        }
                        Err(e) => set_error.set(Some(e)),
                    }
                }
            />
            {move || error.get().map(|e| view! { <span class="vf-field-error" role="alert"><Explained text=e/></span> })}
        </label>
    }
}
