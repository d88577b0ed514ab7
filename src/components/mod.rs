//! One component per file; the file name is the component's name in snake_case.

pub mod app;
pub mod inputs_panel;
pub mod size_view;
