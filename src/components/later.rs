//! What the first paint does without: [`Later`] builds its children in the task after the
//! page's first paint, so that the first result (the verdict and the headline figures) is
//! built, laid out and painted before the rest of the page is (issue 19).
//!
//! The start profile in docs/PERFORMANCE.md ("Issue 19, step 4") found the first result
//! waiting for the whole page: Leptos builds the mounted tree before it is attached, so
//! the verdict was in the document only after all ~580 elements of the shell, the inputs
//! and "Size it" had been created, and painted only after all of them had been laid out.
//! What goes under [`Later`] is what the first view shows below or behind the first result:
//! the contents of a folded `<details>`, and the tables, commands and actions below the
//! memory chart. Nothing above it moves when it arrives. It is built once, after the first
//! paint, and then kept like any other part of the page (a recompute updates it in place).

use leptos::prelude::*;

thread_local! {
    /// Set once by [`first_paint_done`]; off the browser (native tests) everything is built
    /// at once. Reference-counted, not owned by the component that first read it.
    static PAINTED: ArcRwSignal<bool> = ArcRwSignal::new(!cfg!(target_arch = "wasm32"));
}

/// Whether the page has painted once since it was mounted (reactive).
pub fn painted() -> bool {
    PAINTED.with(|p| p.get())
}

/// Called after the page's mount (`start`): builds every [`Later`] after the next paint.
pub fn first_paint_done() {
    #[cfg(target_arch = "wasm32")]
    crate::state::after_paint(|| PAINTED.with(|p| p.set(true)));
}

/// Its children, built after the page's first paint ([`first_paint_done`]); nothing before.
#[component]
pub fn Later(children: ChildrenFn) -> impl IntoView {
    move || painted().then(|| children())
}
