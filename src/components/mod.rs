//! One component per file; the file name is the component's name in snake_case.

pub mod accuracy_view;
pub mod app;
pub mod budget_view;
pub mod catalog_view;
pub mod choice;
pub mod command_view;
pub mod controls;
pub mod explained;
pub mod features_panel;
pub mod inputs_panel;
pub mod later;
pub mod memory_chart;
pub mod model_source;
pub mod number_field;
pub mod oom_view;
pub mod quant_view;
pub mod scaling_view;
pub mod size_view;
pub mod switch;
