//! Embers' web-free core.
//!
//! Data flows one way through these modules:
//! `wire` (HTTP body → typed tables, one module per result shape) → [`table::NodeTable`]
//! → [`Profile`] (immutable call tree, struct-of-arrays, totals computed once)
//! → [`layout`] (profile + viewport → bars; hit-testing reuses the same bars)
//! → the viewer's renderer. Nothing here depends on web-sys, so it is tested natively,
//! benchmarked with criterion, and shared with the service (`build`, `encode`, `folded`).

pub mod build;
pub mod color;
pub mod encode;
pub mod folded;
pub mod format;
pub mod fxhash;
pub mod kind;
pub mod layout;
pub mod profile;
pub mod request;
pub mod search;
pub mod stats;
pub mod svg;
pub mod synth;
pub mod table;
pub mod transform;
pub mod wire;

pub use kind::FrameKind;
pub use profile::{NodeId, Profile, ProfileParts, Warnings};
pub use wire::{decode_response, DecodeError, Decoded};
