//! OTLP profiles: an `ExportProfilesServiceRequest` (protobuf or OTLP/JSON) turned into the
//! store's batches, as `POST /v1development/profiles` and the gRPC `ProfilesService/Export`
//! receive it.
//!
//! **Version.** The profiles signal is still `v1development` and has changed its wire format
//! between releases. This reads [`PROTO_VERSION`]: what the OpenTelemetry eBPF profiler, the
//! Collector (pdata) and the official SDK packages emit today. v1.10.0 moved `Sample`'s fields
//! (`attribute_indices` = 2, `link_index` = 3, `values` = 4) and v1.11.0 changed only comments,
//! so the generated types of the `opentelemetry-proto` crate (0.33, from v1.10.0) read both. A
//! body of another version decodes into indices that do not fit: every index is checked
//! ([`check`]) and the first that does not is answered with a 400 naming the field.
//!
//! **Mapping** (the full table is in `docs/otlp.md`): resource, scope, profile and sample
//! attributes, later levels winning, give `app_service` (`service.name`, else the executable's
//! name), tags (`host.name` → `host`, `k8s.pod.name` → `pod`, ...) and the `[t]` frame
//! (`thread.name`); a sample's link gives `trace_id` and `span_name`. Samples are stored like
//! DeepFlow's agent's: language `eBPF`, event `on-cpu` or `off-cpu`, values in microseconds
//! ([`measure`]), one row per second, thread and stack ([`convert`]); frames are named by
//! [`frames`].

mod attrs;
mod budget;
mod check;
mod convert;
mod frames;
mod measure;
pub mod shape;
mod sums;
mod wire;

#[cfg(test)]
mod tests;

pub use budget::Bounds;
pub use convert::to_batches;
pub use opentelemetry_proto::tonic::collector::profiles::v1development::{
    ExportProfilesServiceRequest, ExportProfilesServiceResponse,
};
pub use wire::{from_json, from_protobuf, request_descriptor};

use crate::limits::StackLimits;
use crate::store::Batch;
use embers_model::budget::Budget;

/// The version of `opentelemetry-proto` whose profiles this reads (its wire format).
pub const PROTO_VERSION: &str =
    "opentelemetry-proto v1.11.0 (profiles v1development; the same wire format as v1.10.0)";

/// Why a request was refused; the text names the field or the problem.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OtlpError {
    /// The bytes are not a request of this version at all.
    #[error("the body is not an OTLP ExportProfilesServiceRequest of {PROTO_VERSION}: {0}")]
    Decode(String),
    /// A field holds something this version does not allow (an index out of range, a negative
    /// value, an unknown sample type, ...).
    #[error("{field}: {problem}")]
    Field {
        /// Where, e.g. `resource_profiles[0].scope_profiles[0].profiles[2].samples[7].stack_index`.
        field: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The request names more text than [`Bounds::max_text`].
    #[error(
        "the request's stacks and tags take more than {limit} bytes once named, what is left \
         of its memory budget (--max-request-memory): send the profiles in smaller requests"
    )]
    Expands {
        /// The bound, in bytes.
        limit: usize,
    },
    /// The request's messages would take more than its memory budget once decoded.
    #[error("{0}")]
    OverBudget(embers_model::budget::OverBudget),
}

impl OtlpError {
    pub(crate) fn field(field: impl Into<String>, problem: impl Into<String>) -> OtlpError {
        OtlpError::Field {
            field: field.into(),
            problem: problem.into(),
        }
    }
}

/// How a body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Encoding {
    /// Binary protobuf (`application/x-protobuf`).
    Protobuf,
    /// OTLP/JSON (`application/json`).
    Json,
}

/// Decode an (already decompressed) body and turn it into batches; `now` (Unix seconds) times
/// profiles that carry no time. What the body decodes into is charged to `budget` before it
/// is decoded ([`shape`]), and the text it names may take what is left of it.
pub fn decode(
    body: &[u8],
    encoding: Encoding,
    now: i64,
    stacks: StackLimits,
    budget: &Budget,
) -> Result<Vec<Batch>, OtlpError> {
    let request = match encoding {
        Encoding::Protobuf => {
            shape::charge_protobuf(body, &wire::request_descriptor()?, budget)?;
            from_protobuf(body)?
        }
        Encoding::Json => {
            crate::formats::charge_json(body, shape::JSON_VALUE_BYTES, budget)
                .map_err(OtlpError::OverBudget)?;
            from_json(body)?
        }
    };
    let bounds = Bounds {
        stacks,
        max_text: budget.remaining(),
    };
    to_batches(&request, now, &bounds)
}
