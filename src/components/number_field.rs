//! A number input bound to one row of the core's input table.

use crate::components::explained::Explained;
use crate::state::AppState;
use leptos::prelude::*;
use vramfit_core::inputs::{key, step_text, Field, Inputs};

/// A labelled number input bound to one row of the core's input table
/// (`vramfit_core::inputs::KEYS`): its label, unit and limits come from the row, and every
/// value goes through `Inputs::set`, so a refused value shows the message a link would give.
///
/// What the user typed stays in the field, character for character:
/// - The input is `type="text"` (with `inputmode` for a numeric keyboard), not
///   `type="number"`: a number input reports text it cannot read (`-`, `0.`, `1e`, `0,15`) as
///   empty, which read as "clear the field" and erased what had been typed.
/// - The field shows the text typed in it while the input's value is the one that text gave
///   (or, when the text was refused, the one it had when the edit began, which it gets back).
///   Another field's change leaves it alone; a change of this input from elsewhere (a link,
///   back/forward, a suggested fix) shows the new value and drops the error.
#[component]
pub fn NumberField(
    /// The input's row.
    field: Field,
    /// `data-testid` and id.
    id: &'static str,
    /// Tooltip explaining the term.
    help: &'static str,
    /// The arrow keys' step (`1` for whole numbers, which also get a numeric keyboard on
    /// phones; `any` steps by 1).
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
    // The row's limits, where the tooltip explains the term.
    let title = match (k.min_text(), k.max_text()) {
        (min, max) if !min.is_empty() && !max.is_empty() => {
            let end = if help.ends_with('.') { "" } else { "." };
            format!("{help}{end} Allowed: {min} to {max}.")
        }
        _ => help.to_string(),
    };
    // What the state shows for the input.
    let shown = move || st.decoded.with(|(i, _)| shown_text(i, field));
    // The last text typed here, the state's text it belongs to, and its error if refused.
    let edit = RwSignal::new(Option::<(String, String, Option<String>)>::None);
    // A change of this input from elsewhere (a link, back/forward, a fix) ends the edit: the
    // field shows the new value, and an old error cannot come back with an old value.
    Effect::new(move |_| {
        let s = shown();
        if edit.with_untracked(|e| e.as_ref().is_some_and(|(_, at, _)| *at != s)) {
            edit.set(None);
        }
    });
    let mine = move || edit.get().filter(|(_, at, _)| *at == shown());
    let value = move || mine().map_or_else(shown, |(raw, _, _)| raw);
    let error = move || mine().and_then(|(_, _, e)| e);
    // While this field holds refused text, the results are the last accepted values': "Size
    // it" says so (`AppState::refused`); a field taken off the page holds nothing.
    Effect::new(move |_| st.mark_refused(k.label, error().is_some()));
    on_cleanup(move || st.mark_refused(k.label, false));
    // The input's value when this edit began (its first keystroke after the field was left or
    // changed from elsewhere). A refused text puts it back, so that the result and the link
    // never keep a prefix typed on the way (`9999999` on the way to a number out of range).
    let before = StoredValue::new(None::<String>);
    // One text from the user (typed, or stepped with an arrow key) through the input table.
    let take = move |raw: String| {
        let mut next = st.decoded.get_untracked().0;
        if edit.with_untracked(Option::is_none) {
            before.set_value(next.text(field));
        }
        // An emptied box of a field that takes `auto` is `auto`, which the box shows empty
        // (`shown_text`): clearing the context length to type another is no error.
        let value = if k.auto && raw.trim().is_empty() {
            "auto"
        } else {
            raw.as_str()
        };
        match next.set(field, value) {
            Ok(()) => {
                let at = shown_text(&next, field);
                edit.set(Some((raw, at, None)));
                st.update(true, |i| *i = next);
            }
            Err(e) => {
                let mut back = st.decoded.get_untracked().0;
                let now = back.text(field);
                let start = before.get_value();
                let restored = back.set(field, start.as_deref().unwrap_or("")).is_ok();
                if restored && back.text(field) != now {
                    let at = shown_text(&back, field);
                    edit.set(Some((raw, at, Some(e))));
                    st.update(true, |i| *i = back);
                } else {
                    edit.set(Some((raw, shown(), Some(e))));
                }
            }
        }
    };
    view! {
        <label class="vf-field" title=title>
            <span>{label}</span>
            <input
                type="text"
                id=id
                data-testid=id
                placeholder=placeholder
                inputmode=if step == "1" { "numeric" } else { "decimal" }
                autocomplete="off"
                spellcheck="false"
                aria-invalid=move || error().is_some().to_string()
                prop:value=value
                // Left with an accepted value: the edit is over (a refused one stays, with its
                // message, until it is mended).
                on:change=move |_| {
                    if edit.with_untracked(|e| e.as_ref().is_some_and(|(_, _, err)| err.is_none())) {
                        edit.set(None);
                    }
                }
                on:input=move |ev| take(event_target_value(&ev))
                // The arrow keys step the value, as they did when the field was a number input;
                // a step the input table refuses (past the range) changes nothing.
                on:keydown=move |ev| {
                    let up = match ev.key().as_str() {
                        "ArrowUp" => true,
                        "ArrowDown" => false,
                        _ => return,
                    };
                    ev.prevent_default();
                    let Some(t) = step_text(&event_target_value(&ev), step, up) else { return };
                    if st.decoded.get_untracked().0.set(field, &t).is_ok() {
                        take(t);
                    }
                }
            />
            {move || error().map(|e| view! { <span class="vf-field-error" role="alert"><Explained text=e/></span> })}
        </label>
    }
}

/// An input's text as the field shows it (`auto` shows as empty).
fn shown_text(i: &Inputs, field: Field) -> String {
    i.text(field).filter(|t| t != "auto").unwrap_or_default()
}
