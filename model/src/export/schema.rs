//! The OpenAPI schema (feature `openapi`, built by the service only) of a ProfileTracing
//! `result` as [`super::encode`] writes it: shape A's node array (null for an empty match) or
//! shape B's tables (every member null for an empty match). Written by hand because the
//! encoder's types borrow and write tuples; the service's OpenAPI test validates encoded
//! profiles of both shapes against it.

use std::borrow::Cow;

use serde_json::json;
use utoipa::openapi::{RefOr, Schema};
use utoipa::{PartialSchema, ToSchema};

use super::encode::EncodedResult;
use crate::contract::schema::from_json;

impl PartialSchema for EncodedResult<'_> {
    fn schema() -> RefOr<Schema> {
        let count = json!({"type": "integer", "format": "int64", "minimum": 0});
        let nullable_table = |row: serde_json::Value| {
            json!({
                "type": "object",
                "required": ["columns", "values"],
                "properties": {
                    "columns": {"type": ["array", "null"], "items": {"type": "string"}},
                    "values": {"type": ["array", "null"], "items": row}
                }
            })
        };
        from_json(json!({
            "description": "The profile: shape A or B (the request's result_shape, else the service's --result-shape).",
            "oneOf": [
                {
                    "title": "shape A",
                    "description": "One object per node, the root first (an empty match: null).",
                    "type": ["array", "null"],
                    "items": {
                        "type": "object",
                        "required": ["profile_location_str", "node_id", "parent_node_id", "self_value", "total_value"],
                        "properties": {
                            "profile_location_str": {"type": "string", "description": "The frame's name."},
                            "node_id": {"type": "string", "description": "A UUID-like id derived from the node's path (empty for the root)."},
                            "parent_node_id": {"type": "string", "description": "The parent's node_id (\"-1\" for the root)."},
                            "self_value": count,
                            "total_value": count
                        }
                    }
                },
                {
                    "title": "shape B",
                    "description": "Function and node tables (an empty match: every member null).",
                    "type": "object",
                    "required": ["functions", "function_types", "function_values", "node_values"],
                    "properties": {
                        "functions": {"type": ["array", "null"], "items": {"type": "string"}, "description": "Function names; the index is the function id, 0 the root."},
                        "function_types": {"type": ["array", "null"], "items": {"type": "string"}, "description": "One type letter per function."},
                        "function_values": nullable_table(json!({
                            "type": "array", "prefixItems": [count, count], "items": false, "minItems": 2,
                            "description": "[self_value, total_value] per function."
                        })),
                        "node_values": nullable_table(json!({
                            "type": "array",
                            "prefixItems": [
                                {"type": "integer", "minimum": 0},
                                {"type": "integer", "minimum": -1},
                                count,
                                count
                            ],
                            "items": false,
                            "minItems": 4,
                            "description": "[function_id, parent_row (-1 for the root), self_value, total_value] per node, in preorder."
                        }))
                    }
                }
            ]
        }))
    }
}

impl ToSchema for EncodedResult<'_> {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("ProfileResult")
    }
}
