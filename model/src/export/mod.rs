//! Writing profiles out: the ProfileTracing result shapes ([`encode`], for the service's answers
//! and saved responses), folded stacks ([`folded`]), pprof ([`pprof`]) and a standalone interactive SVG ([`svg`]).

pub mod encode;
pub mod folded;
pub mod pprof;
pub mod pprof_lines;
#[cfg(feature = "openapi")]
mod schema;
pub mod svg;
