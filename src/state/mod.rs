//! The state layer: what is loaded ([`loaded`]) and how it is looked at — as plain data that a
//! URL can carry ([`view_spec`]) and as live signals with derived values ([`view_state`]).
//! It imports only the model and Leptos: sessions write into it, components read it.

pub mod derived;
pub mod fetched;
pub mod loaded;
pub mod matcher;
pub mod summary;
pub mod transform;
pub mod view_spec;
pub mod view_state;
