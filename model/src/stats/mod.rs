//! When a change in a share is a change and not noise: the one significance rule
//! ([`significance`]) and its form over a fleet's processes ([`strata`]). A leaf layer, so the
//! contract's *What grew* ranking, the summaries' `diff` gate and the service's alerts all
//! judge by the same rule (`summary::significance` re-exports it).

pub mod significance;
pub mod strata;
