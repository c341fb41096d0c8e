//! Secondary views as on-demand wasm modules: a view the first screen does not need is built
//! as a wasm-bindgen module of its own (a bin of this package, `src/bin/<name>.rs`, built by
//! Trunk with `data-type="worker" data-bindgen-target="web"`: an ES module the page does not
//! load), and the page `import()`s it the first time the view opens. The page's bundle then
//! carries only the view's host, not the view (see `docs/design/on-demand-views.md`).
//!
//! The two sides talk through a narrow typed interface: JSON in (the view's input, a serde
//! type of the view's own; the page sends it again whenever it changes) and JSON events out
//! (a serde enum the page turns into its own actions). Each module runs its own Leptos runtime
//! inside a host element the page gives it; nothing else is shared.
//!
//! - [`host`]: the page's side — loads a module, shows its loading and error states, mounts
//!   the view into a host element, sends input, receives events, unmounts.
//! - [`guest`]: the module's side — mounts a view, keeps its input in a signal, sends its
//!   events; [`crate::on_demand_view!`] writes a module's three exports.

pub mod guest;
pub mod host;

/// One on-demand module: the stem of its files next to the page (`<stem>.js`,
/// `<stem>_bg.wasm`, Trunk's names for the bin `<stem>`) and what the page calls it in its
/// loading and error notes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ViewModule {
    /// The bin's name (`src/bin/<stem>.rs`).
    pub stem: &'static str,
    /// The view's name as a user reads it ("Functions").
    pub label: &'static str,
}

impl ViewModule {
    /// The module's script, relative to the page.
    pub fn script(&self) -> String {
        format!("./{}.js", self.stem)
    }
}
