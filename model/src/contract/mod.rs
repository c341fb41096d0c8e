//! The ProfileTracing contract, written once for the viewer, the decode worker and the service:
//! the request and its validation ([`request`]), how the service reads bodies ([`body`]) and
//! which samples they select ([`selection`]), the result shapes ([`shape`]), the tag field
//! table ([`fields`]) and the `tag_filter` grammar ([`tag_filter`]), the frame kinds DeepFlow's name
//! prefixes and `function_types` letters mark ([`kind`]), the rules for
//! `max_kernel_stack_depth` ([`kernel`]) and event types ([`event`]), the response envelope
//! ([`envelope`]), who may embed the page ([`embed`]), the ingest body ([`ingest`]) and the detail
//! below a sample (source lines, event times: [`detail`]), time inside a range ([`fine`]: millisecond
//! bounds, the heatmap and the samples in time order), the source text beside lines ([`source`]). Facts about the interface live here and nowhere else.

pub mod body;
pub mod detail;
pub mod embed;
pub mod envelope;
pub mod event;
pub mod explore;
pub mod fields;
pub mod fine;
pub mod ingest;
pub mod kernel;
pub mod kind;
pub mod request;
#[cfg(feature = "openapi")]
pub mod schema;
pub mod selection;
pub mod shape;
pub mod snapshot;
pub mod source;
pub mod tag_filter;
