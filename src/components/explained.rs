//! A message of the core with its quoted flags and names shown as code.

use leptos::prelude::*;
use vramfit_core::text::{spans, Span};

/// A verdict, warning, finding or fix: the parts between backticks become `<code>`, the rest
/// text nodes (never markup: the message can quote a name from a URL or a file).
#[component]
pub fn Explained(
    /// The message, as the core wrote it.
    #[prop(into)]
    text: String,
) -> impl IntoView {
    spans(&text)
        .into_iter()
        .map(|s| match s {
            Span::Text(t) => t.to_owned().into_any(),
            Span::Code(c) => view! { <code>{c.to_owned()}</code> }.into_any(),
        })
        .collect_view()
}
