//! The Source panel as an on-demand module (see `crate::on_demand` and
//! `docs/design/on-demand-views.md`): Trunk builds this bin as its own wasm-bindgen module
//! (`source_view.js`, `source_view_bg.wasm`), which the page imports the first time a user
//! opens the panel.

embers::on_demand_view!(embers::components::source::module::render);

/// Nothing runs at load: the page calls `mount`.
fn main() {}
