//! The Functions and What grew lists as an on-demand module (see `crate::on_demand` and
//! `docs/design/on-demand-views.md`): Trunk builds this bin as its own wasm-bindgen module
//! (`functions_view.js`, `functions_view_bg.wasm`), which the page imports the first time a
//! user opens one of those tabs.

embers::on_demand_view!(embers::components::functions::module::render);

/// Nothing runs at load: the page calls `mount`.
fn main() {}
