//! The page's views, by the ids a link's `view` key names.
//!
//! Its own file: the ids are the tabs', not input fields, and one of them (`quant`) is spelled
//! as an input's URL key is; `share.rs` itself spells no URL key (tests/architecture.rs).

/// The views a `view` value names, as the page's tabs do (src/state.rs `View::id`, checked
/// against this list by the page's tests).
pub const VIEW_IDS: [&str; 7] = [
    "size", "quant", "budget", "scaling", "oom", "catalog", "accuracy",
];
