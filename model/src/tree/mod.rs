//! The call tree: the decoders' flat [`table::NodeTable`], the immutable [`profile::Profile`]
//! built from it (or from stacks, [`build`]), and what is derived from a profile — transforms,
//! search and per-function statistics. Trees only: no wire formats, no pixels.

pub mod build;
pub mod diff;
pub mod lines;
pub mod matches;
pub mod order;
pub mod profile;
pub mod search;
pub mod stats;
pub mod symbol;
pub mod table;
pub mod transform;
pub mod truncate;
