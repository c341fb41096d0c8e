//! The JSON body of `POST /v1/profile/ingest`: what a sender (the collector, `embers-agent`)
//! writes and what the service reads, defined once.
//!
//! ```json
//! {"batches": [{"app_service": "redis-server", "profile_language_type": "eBPF",
//!   "profile_event_type": "on-cpu", "profile_value_unit": "microseconds",
//!   "time": 1700000000, "tags": {"host": "node-a"},
//!   "folded": "[t] main;main;work 10101\n"}]}
//! ```
//! A body may also be one batch object on its own. Defaults: language `eBPF`, event type
//! `on-cpu`, unit `microseconds`, time = when the service receives it.
//!
//! A batch may add `details`: the source lines and event times of some of its samples
//! ([`super::detail`]), each naming its sample by position in `folded`:
//! `"details": [{"sample": 0, "lines": [null, {"file": "work.c", "line": 12}],
//! "events": [{"offset_ms": 40, "tid": 4711, "weight": 10101}]}]`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::detail::{SampleDetail, SourceLine, TimedEvent};
use super::event::{DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE, DEFAULT_UNIT};

fn default_language() -> String {
    DEFAULT_LANGUAGE.to_owned()
}
fn default_event_type() -> String {
    DEFAULT_EVENT_TYPE.to_owned()
}
fn default_unit() -> String {
    DEFAULT_UNIT.to_owned()
}

/// One batch: samples of one process (or `Total`) sharing metadata and a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct BatchInput {
    /// Process name, or `Total` for per-host stacks.
    pub app_service: String,
    /// Language type.
    #[serde(default = "default_language")]
    pub profile_language_type: String,
    /// Event type.
    #[serde(default = "default_event_type")]
    pub profile_event_type: String,
    /// Unit label.
    #[serde(default = "default_unit")]
    pub profile_value_unit: String,
    /// Unix seconds of every sample; now when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<i64>,
    /// Tags: names from the seed's field table or open families; string or number values.
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(schema_with = tag_map))]
    pub tags: BTreeMap<String, Value>,
    /// Folded stacks, one `frame;frame;frame value` per line.
    pub folded: String,
    /// Lines and event times of samples of `folded`, at most one entry per sample.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub details: Vec<FoldedDetail>,
}

/// The detail of one sample of a batch's `folded` text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct FoldedDetail {
    /// Position of the sample in `folded`, from 0, blank lines not counted.
    pub sample: usize,
    /// One entry per frame, root first (`null` where unknown); see [`SampleDetail::lines`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<Option<SourceLine>>,
    /// Events folded into the sample, in time order; see [`SampleDetail::events`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<TimedEvent>,
}

impl FoldedDetail {
    /// The detail as the store keeps it.
    pub fn to_detail(&self) -> SampleDetail {
        SampleDetail {
            lines: self.lines.clone(),
            events: self.events.clone(),
        }
    }
}

/// `tags`: names from the field table or an open family (`k8s.label.*`, ...), values strings,
/// numbers or booleans (stored as text; `true` as 1).
#[cfg(feature = "openapi")]
fn tag_map() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
    super::schema::from_json(serde_json::json!({
        "type": "object",
        "description": "Tags of every sample of the batch: names from the field table (host, pod, region, ...) or an open family (k8s.label.*, k8s.annotation.*, k8s.env.*, cloud.tag.*); values strings or numbers.",
        "additionalProperties": {"type": ["string", "number", "boolean"]}
    }))
}

/// The `{"batches": [...]}` form of a body.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Batches {
    /// The batches, written in one transaction.
    pub batches: Vec<BatchInput>,
}

/// A JSON ingest body as the OpenAPI document shows it: one batch, or several (the service
/// reads bodies member by member, `server/src/input.rs`, not through this type).
#[cfg(feature = "openapi")]
#[derive(utoipa::ToSchema)]
#[serde(untagged)]
pub enum IngestBody {
    /// One batch.
    One(BatchInput),
    /// Several, all or none written.
    Many(Batches),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_written_body_reads_back_with_the_defaults_filled_in() {
        let batch = BatchInput {
            app_service: "web".into(),
            profile_language_type: DEFAULT_LANGUAGE.into(),
            profile_event_type: "off-cpu".into(),
            profile_value_unit: DEFAULT_UNIT.into(),
            time: None,
            tags: BTreeMap::from([("host".to_owned(), Value::from("a"))]),
            folded: "[t] web;main 3\n".into(),
            details: vec![],
        };
        let body = serde_json::to_string(&Batches {
            batches: vec![batch.clone()],
        })
        .expect("serialises");
        assert!(!body.contains("\"time\""), "{body}");
        assert!(!body.contains("details"), "{body}");
        let back: Batches = serde_json::from_str(&body).expect("reads");
        assert_eq!(back.batches, vec![batch]);
        let short: BatchInput =
            serde_json::from_str(r#"{"app_service":"a","folded":"x 1"}"#).expect("defaults");
        assert_eq!(short.profile_event_type, DEFAULT_EVENT_TYPE);
        assert_eq!(short.profile_value_unit, DEFAULT_UNIT);
    }
}
