//! Leptos components. They own view state; drawing and data work are delegated to
//! [`crate::render`] and `embers-model`.

pub mod analysis;
pub mod export;
pub mod flame_graph;
pub mod panels;
pub mod query_form;
pub mod table;
pub mod theme;
pub mod toolbar;
