//! Embers: an interactive canvas flame-graph viewer for ProfileTracing services.
//!
//! The web-free work (the contract, decoding, the call-tree model, layout, paint, formatting)
//! lives in `embers-model`; this crate holds what touches the browser, in layers that data
//! flows through one way (see `docs/architecture.md`):
//!
//! - [`net`]: the HTTP client and the decode worker's client — bytes in, model types out;
//! - [`state`]: what is loaded and how it is looked at (signals, derived values as memos);
//! - [`session`]: how results come to be — the query runner, imports, the form, the URL, the
//!   embedding API; it uses `net` and writes into `state`;
//! - [`components`]: what the user sees; they read `state` and call `session`;
//! - [`on_demand`]: secondary views built as wasm modules of their own, loaded when opened
//!   (the page's host and the module's mount), used by `components`;
//! - [`app`]: the composition root.

pub mod app;
pub mod components;
pub mod net;
pub mod on_demand;
pub mod session;
pub mod state;

pub use app::App;
