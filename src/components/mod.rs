//! Leptos components: they read the state layer and call the session layer; drawing decisions
//! come from `embers_model::view`, and the graph's canvas only replays them.

pub mod analysis;
pub mod compare;
pub mod export_menu;
pub mod form;
pub mod function_strip;
pub mod functions;
pub mod graph;
pub mod heatmap;
pub mod home;
pub mod noise;
pub mod panels;
pub mod rows;
pub mod size;
pub mod source;
pub mod stack_chart;
pub mod table;
pub mod theme;
pub mod time_panel;
pub mod timeline;
pub mod timeline_chart;
pub mod toolbar;
pub mod viewer;
pub mod wall;
pub mod zoom_path;
