//! The service's answers as the OpenAPI document describes them (`GET /openapi.json`): the
//! success envelope around each endpoint's `result` and the failure envelope. The handlers
//! write these forms through [`crate::error`]'s functions; the OpenAPI test validates answers
//! written by those functions (and schemathesis the live service's) against these schemas.

use embers_model::contract::snapshot::SnapshotMeta;
use serde_json::Value;
use utoipa::ToSchema;

/// `OPT_STATUS` of a success.
#[derive(ToSchema)]
pub enum Success {
    /// The request was answered.
    #[serde(rename = "SUCCESS")]
    Success,
}

/// `OPT_STATUS` of a failure.
#[derive(ToSchema)]
pub enum FailStatus {
    /// 400: the request is wrong; `DESCRIPTION` says which member or rule and how to fix it.
    #[serde(rename = "INVALID_POST_DATA")]
    InvalidPostData,
    /// Any other failure (401, 403, 404, 405, 409, 413, 500, 502, 503).
    #[serde(rename = "FAIL")]
    Fail,
}

/// The envelope of a successful answer (`{"OPT_STATUS", "DESCRIPTION", "result", "debug"}`,
/// in this order).
#[derive(ToSchema)]
pub struct Answer<R: ToSchema> {
    /// Always `SUCCESS`.
    #[serde(rename = "OPT_STATUS")]
    pub opt_status: Success,
    /// Empty, or a notice such as `truncated: N of M nodes`.
    #[serde(rename = "DESCRIPTION")]
    pub description: String,
    /// The answer itself.
    pub result: R,
    /// Diagnostics when the request asked for them (`"debug": true`), else null.
    pub debug: Value,
}

/// The envelope of a failed request. `DESCRIPTION` names the problem (the member, the limit and
/// its option, the rule) and what to do; server failures never carry internal detail there.
#[derive(ToSchema)]
pub struct Failure {
    /// `INVALID_POST_DATA` for a 400, `FAIL` otherwise.
    #[serde(rename = "OPT_STATUS")]
    pub opt_status: FailStatus,
    /// What went wrong.
    #[serde(rename = "DESCRIPTION")]
    #[schema(min_length = 1)]
    pub description: String,
    /// Null; for ProfileTracing's server failures (5xx), the empty tree of the requested shape.
    pub result: Value,
    /// The querier-shaped diagnostics when the request asked for them, else null.
    pub debug: Value,
}

/// A fetched snapshot: the stored ProfileTracing answer exactly as it was saved (from Embers or
/// a DeepFlow querier, either shape), with its metadata spliced in as the first member.
#[derive(ToSchema)]
pub struct StoredAnswer {
    /// The snapshot's metadata.
    pub snapshot: SnapshotMeta,
    /// `SUCCESS` (only successful answers are saved).
    #[serde(rename = "OPT_STATUS")]
    pub opt_status: Success,
    /// As saved.
    #[serde(rename = "DESCRIPTION")]
    pub description: Value,
    /// The saved `result`, shape A or B.
    pub result: Value,
    /// As saved.
    pub debug: Value,
}
