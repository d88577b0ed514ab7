//! Runs of number fields and switches from a table: one call site renders them all, so the
//! page's wasm holds their view code once (issue 19: Leptos compiles a view per call site's
//! types), and each row stays one row of the core's input table.

use crate::components::number_field::NumberField;
use crate::components::switch::Switch;
use leptos::prelude::*;
use vramfit_core::inputs::Field;

/// One control: a row of the input table, its `data-testid` and its tooltip.
pub enum Control {
    /// A [`NumberField`] with its arrow keys' step and placeholder.
    Number(
        Field,
        &'static str,
        &'static str,
        &'static str,
        &'static str,
    ),
    /// A [`Switch`].
    Switch(Field, &'static str, &'static str),
}

/// The controls of `rows`, in order.
pub fn controls(rows: &'static [Control]) -> impl IntoView {
    rows.iter()
        .map(|row| match *row {
            Control::Number(field, id, help, step, placeholder) => {
                view! { <NumberField field id help step placeholder/> }.into_any()
            }
            Control::Switch(field, id, help) => view! { <Switch field id help/> }.into_any(),
        })
        .collect_view()
}
