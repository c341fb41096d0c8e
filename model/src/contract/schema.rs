//! OpenAPI schemas (feature `openapi`, built by the service only) of the contract types whose
//! JSON form is not what a derive would see: rows written as arrays (`#[serde(into = ...)]`),
//! the shape letter, and the ProfileTracing body, whose service-only members `result_shape` and
//! `debug` are read by [`crate::contract::body`] beside the [`ProfileRequest`] ones. The
//! service's OpenAPI test validates examples made by serialising real values of these types
//! against these schemas, so a change of the JSON form that is not made here fails it.

use std::borrow::Cow;

use serde_json::{json, Value};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::explore::{FunctionPoint, FunctionRow, PlaceValue, ServiceRow, TimelineRow, ValueCount};
use super::request::ProfileRequest;
use super::shape::ResultShape;

/// A schema written as JSON (a constant of this file; a unit test checks each one reads).
pub fn from_json(schema: Value) -> RefOr<Schema> {
    serde_json::from_value(schema).unwrap_or_default()
}

/// The body of `POST /v1/profile/ProfileTracing`: the request, and how to answer it.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct TracingBody {
    /// The request.
    #[serde(flatten)]
    pub request: ProfileRequest,
    /// `time_start_ms` / `time_end_ms`: a millisecond window inside the seconds.
    #[serde(flatten)]
    pub bounds: super::fine::MsBounds,
    /// The answer's shape; the service's `--result-shape` (default B) when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<ResultShape>)]
    pub result_shape: Option<&'static str>,
    /// Answer the querier-shaped `debug` member (statements, times).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub debug: Option<bool>,
}

macro_rules! manual_schema {
    ($type:ty, $name:literal, $json:expr) => {
        impl PartialSchema for $type {
            fn schema() -> RefOr<Schema> {
                from_json($json)
            }
        }
        impl ToSchema for $type {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    };
}

manual_schema!(
    ResultShape,
    "ResultShape",
    json!({
        "type": "string",
        "enum": ["A", "B", "a", "b"],
        "description": "A: an array of node objects (DeepFlow up to v6.5); B: function and node tables (from v6.6)."
    })
);

manual_schema!(
    ServiceRow,
    "ServiceRow",
    json!({
        "type": "array",
        "description": "[app_service, profile_language_type, profile_event_type, value]: the value summed over the range.",
        "prefixItems": [
            {"type": "string"}, {"type": "string"}, {"type": "string"},
            {"type": "integer", "format": "int64", "minimum": 0}
        ],
        "items": false,
        "minItems": 4
    })
);

manual_schema!(
    super::fine::samples::SampleRow,
    "SampleRow",
    json!({
        "type": "array",
        "description": "[time_ms, thread, stack, value]: Unix milliseconds (the second's start when stored without event times), the thread id (null when unknown), the index into `stacks`, the value in the profile's unit.",
        "prefixItems": [
            {"type": "integer", "format": "int64"},
            {"type": ["integer", "null"], "format": "int32", "minimum": 0},
            {"type": "integer", "format": "int32", "minimum": 0},
            {"type": "integer", "format": "int64", "minimum": 0}
        ],
        "items": false,
        "minItems": 4
    })
);

manual_schema!(
    ValueCount,
    "ValueCount",
    json!({
        "type": "array",
        "description": "[value, count]: a tag name or value and the samples carrying it.",
        "prefixItems": [{"type": "string"}, {"type": "integer", "format": "int64", "minimum": 0}],
        "items": false,
        "minItems": 2
    })
);

manual_schema!(
    TimelineRow,
    "TimelineRow",
    json!({
        "oneOf": [
            {
                "type": "array",
                "description": "[time, value]: the bucket's start (Unix seconds) and its summed value.",
                "prefixItems": [{"type": "integer", "format": "int64"}, {"type": "integer", "format": "int64", "minimum": 0}],
                "items": false,
                "minItems": 2
            },
            {
                "type": "array",
                "description": "[time, group, value] when grouped (group_by).",
                "prefixItems": [
                    {"type": "integer", "format": "int64"},
                    {"type": "string"},
                    {"type": "integer", "format": "int64", "minimum": 0}
                ],
                "items": false,
                "minItems": 3
            }
        ]
    })
);

manual_schema!(
    FunctionRow,
    "FunctionRow",
    json!({
        "type": "array",
        "description": "[function, self, total, self_share, total_share, baseline_self, baseline_total, change, ratio, place_change, place_count, places, z, significant]: shares in percent of every selected sample; change in percentage points (against a baseline of the same samples at another time: the change inside each process present on both sides, weighed by its share of them; null for a function only of new or vanished processes); z and significant: how sure the change is (the significance rule: |z| >= 3 and 20 samples); the baseline's members null when not comparing. Services before z and significant wrote the first twelve.",
        "prefixItems": [
            {"type": "string"},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": "number"}, {"type": "number"},
            {"type": ["integer", "null"], "format": "int64", "minimum": 0},
            {"type": ["integer", "null"], "format": "int64", "minimum": 0},
            {"type": ["number", "null"]}, {"type": ["number", "null"]}, {"type": ["number", "null"]},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": "array", "items": {"$ref": "#/components/schemas/PlaceValue"}},
            {"type": ["number", "null"]},
            {"type": ["boolean", "null"]}
        ],
        "items": false,
        "minItems": 12
    })
);

manual_schema!(
    PlaceValue,
    "PlaceValue",
    json!({
        "type": "array",
        "description": "[app_service, group, self, total, baseline_self, baseline_total, change]: one place a function ran in; group null when not grouped, the baseline's members null when not comparing, change in percentage points of that place's own samples.",
        "prefixItems": [
            {"type": "string"},
            {"type": ["string", "null"]},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": ["integer", "null"], "format": "int64", "minimum": 0},
            {"type": ["integer", "null"], "format": "int64", "minimum": 0},
            {"type": ["number", "null"]}
        ],
        "items": false,
        "minItems": 7
    })
);

manual_schema!(
    FunctionPoint,
    "FunctionPoint",
    json!({
        "type": "array",
        "description": "[time, group, self, total]: the bucket's start (Unix seconds), the group (null when not grouped), the function's self and total there.",
        "prefixItems": [
            {"type": "integer", "format": "int64"},
            {"type": ["string", "null"]},
            {"type": "integer", "format": "int64", "minimum": 0},
            {"type": "integer", "format": "int64", "minimum": 0}
        ],
        "items": false,
        "minItems": 4
    })
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_manual_schema_reads() {
        for (name, schema) in [
            (ResultShape::name(), ResultShape::schema()),
            (ServiceRow::name(), ServiceRow::schema()),
            (ValueCount::name(), ValueCount::schema()),
            (TimelineRow::name(), TimelineRow::schema()),
            (FunctionRow::name(), FunctionRow::schema()),
            (PlaceValue::name(), PlaceValue::schema()),
            (FunctionPoint::name(), FunctionPoint::schema()),
        ] {
            let written = serde_json::to_value(&schema).expect("serialise");
            assert_ne!(written, json!({}), "{name} did not read");
        }
    }

    /// The limits written as literals in the request types' schema attributes are the ones the
    /// parsers apply.
    #[test]
    fn schema_limits_are_the_parsers_limits() {
        use crate::contract::explore::{
            FunctionsRequest, TagValuesRequest, TimelineRequest, MAX_FUNCTIONS_LIMIT,
            MAX_GROUP_LIMIT, MAX_VALUES_LIMIT,
        };
        let timeline = serde_json::to_value(TimelineRequest::schema()).expect("schema");
        let limit = timeline.pointer("/allOf/1/properties/group_limit/maximum");
        assert_eq!(limit, Some(&json!(MAX_GROUP_LIMIT)), "{timeline}");
        let values = serde_json::to_value(TagValuesRequest::schema()).expect("schema");
        let limit = values.pointer("/properties/limit/maximum");
        assert_eq!(limit, Some(&json!(MAX_VALUES_LIMIT)), "{values}");
        let functions = serde_json::to_value(FunctionsRequest::schema()).expect("schema");
        let limit = functions.pointer("/properties/limit/maximum");
        assert_eq!(limit, Some(&json!(MAX_FUNCTIONS_LIMIT)), "{functions}");
    }
}
