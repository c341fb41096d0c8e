//! The time views (the Heatmap and the Stack chart) as an on-demand module (see
//! `crate::on_demand` and `docs/design/on-demand-views.md`): Trunk builds this bin as its own
//! wasm-bindgen module (`time_view.js`, `time_view_bg.wasm`), which the page imports the first
//! time a user opens one of them.

embers::on_demand_view!(embers::components::time_panel::module::render);

/// Nothing runs at load: the page calls `mount`.
fn main() {}
