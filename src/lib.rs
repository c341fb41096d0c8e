//! Embers: an interactive canvas flame-graph viewer for ProfileTracing services.
//!
//! The web-free work (decoding, the call-tree model, layout, formatting) lives in
//! `embers-model`; this crate holds only what touches the browser: the HTTP client ([`api`]),
//! view state ([`state`]), the canvas renderer ([`render`]) and Leptos components.

pub mod api;
pub mod app;
pub mod components;
pub mod decode_worker;
pub mod embed;
pub mod render;
pub mod runner;
pub mod state;
pub mod time;
pub mod url;
pub mod view;
pub mod view_state;

pub use app::App;
