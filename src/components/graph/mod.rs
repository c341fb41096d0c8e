//! The flame graph: a component that lays out a profile ([`embers_model::view::layout`]),
//! paints it ([`embers_model::view::paint`]) and replays the draw list on a canvas
//! ([`canvas`]); pointer, keyboard, tooltip and size tracking around it.

pub mod canvas;
pub mod flame_graph;
mod tooltip;
pub mod warm_up;
