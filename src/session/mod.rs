//! The session layer: how results come to be — the query runner ([`runner`]), moving through
//! the workflow ([`navigator`]), the explore questions (services, timelines, tags:
//! [`explore`]), the fleet's functions (the home view's tabs, a function's timeline:
//! [`functions`]), saved profiles ([`files`]) and snapshots ([`snapshot_meta`]), time inside a range ([`fine`]), the query form's
//! state ([`form`]), the page URL ([`url`], [`history`]), the embedding API ([`embed`]) and the
//! browser clock ([`time`]). It uses the network layer and writes into the state layer;
//! components call it.

pub mod compare;
pub mod embed;
pub mod explore;
pub mod files;
pub mod fine;
pub mod form;
pub mod functions;
pub mod history;
pub mod navigator;
pub mod runner;
pub mod snapshot_meta;
pub mod source;
pub mod time;
pub mod url;
