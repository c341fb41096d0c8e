//! Embers' web-free core, shared by the viewer, the decode worker and the service.
//!
//! The folders follow the data, one way:
//!
//! - [`contract`]: the ProfileTracing interface itself — the request, the result shapes, the
//!   tag field table and `tag_filter` grammar, the kernel-depth and event-type rules, the
//!   response envelope. Both the viewer and the service speak through these types.
//! - [`wire`]: bytes → [`tree::table::NodeTable`], one reader per result shape (and folded
//!   stacks for imports).
//! - [`tree`]: the immutable call tree ([`Profile`], struct-of-arrays) and everything derived from
//!   one: transforms, search, per-function stats.
//! - [`view`]: pure presentation decisions — layout (profile + viewport → bars), paint (bars →
//!   draw list), colours and number formatting.
//! - [`export`]: writing a profile out again — shapes A/B, folded stacks, SVG, pprof.
//! - [`formats`]: the profile formats Embers reads, named and detected in one place.
//! - [`budget`]: one request's memory budget, charged by every reader before it allocates.
//! - [`stats`]: when a change in a share is a change and not noise (What grew, `diff`, alerts).
//! - [`summary`]: profiles and comparisons as text (the MCP tools and the viewer's titles).
//! - [`synth`]: deterministic generated profiles (demo data, benchmarks).
//! - `testkit` (feature `testkit`): the fixtures and snapshot files the model's and the service's
//!   tests share.
//!
//! Nothing here depends on web-sys, so it is tested natively and benchmarked with criterion.

pub mod budget;
pub mod contract;
pub mod export;
pub mod formats;
pub mod stats;
pub mod summary;
pub mod synth;
#[cfg(feature = "testkit")]
pub mod testkit;
pub mod tree;
pub mod view;
pub mod wire;

pub use contract::kind::FrameKind;
pub use tree::profile::{NodeId, Profile, ProfileParts, Warnings};
pub use wire::{decode_response, DecodeError, Decoded};
