//! Snapshots: saved ProfileTracing answers that outlive the querier's retention. What the
//! service lists and splices into a stored answer's front (`"snapshot": {...}`).

use serde::{Deserialize, Serialize};

use crate::contract::request::ProfileRequest;

/// What a snapshot is: its id, name, the request it answers, its size and when it was saved.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotMeta {
    /// URL-safe id.
    pub id: String,
    /// A readable name.
    pub name: String,
    /// The request the stored answer answers.
    pub request: ProfileRequest,
    /// Bytes of the stored answer.
    pub size: u64,
    /// Unix seconds.
    pub saved_at: i64,
}
