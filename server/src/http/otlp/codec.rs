//! The gRPC codec of `ProfilesService/Export`: prost's, with the request's shape charged to its
//! memory budget *before* prost builds it ([`crate::formats::otlp::shape`]), exactly as the
//! HTTP route does. tonic hands the decoder the whole (decompressed) message; a message whose
//! decoded form would pass the budget is refused with RESOURCE_EXHAUSTED, having cost its bytes.

use axum::body::Bytes;
use embers_model::budget::Budget;
use prost::bytes::Buf;
use prost::Message;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::Status;

use crate::formats::otlp::{shape, ExportProfilesServiceRequest, ExportProfilesServiceResponse};

/// A request that fits its budget, with what is left of the budget for the text it names.
#[derive(Debug)]
pub struct Bounded {
    /// The decoded request.
    pub request: ExportProfilesServiceRequest,
    /// Bytes of the budget left after decoding.
    pub remaining: usize,
}

/// The codec: `max_request_memory` caps each request's budget (`--max-request-memory`).
#[derive(Debug, Clone, Copy)]
pub struct BoundedCodec {
    /// The cap.
    pub max_request_memory: usize,
}

impl Codec for BoundedCodec {
    type Encode = ExportProfilesServiceResponse;
    type Decode = Bounded;
    type Encoder = ResponseEncoder;
    type Decoder = BoundedDecoder;

    fn encoder(&mut self) -> ResponseEncoder {
        ResponseEncoder
    }

    fn decoder(&mut self) -> BoundedDecoder {
        BoundedDecoder {
            max_request_memory: self.max_request_memory,
        }
    }
}

/// Encodes the (empty) answer.
#[derive(Debug)]
pub struct ResponseEncoder;

impl Encoder for ResponseEncoder {
    type Item = ExportProfilesServiceResponse;
    type Error = Status;

    fn encode(&mut self, item: Self::Item, dst: &mut EncodeBuf<'_>) -> Result<(), Status> {
        item.encode(dst)
            .map_err(|e| Status::internal(format!("encoding the answer: {e}")))
    }
}

/// Charges, then decodes, one request.
#[derive(Debug)]
pub struct BoundedDecoder {
    max_request_memory: usize,
}

impl Decoder for BoundedDecoder {
    type Item = Bounded;
    type Error = Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Bounded>, Status> {
        // tonic's buffer holds the whole message contiguously.
        let bytes: Bytes = src.copy_to_bytes(src.remaining());
        let budget = Budget::for_input(bytes.len(), self.max_request_memory);
        let desc = crate::formats::otlp::request_descriptor()
            .map_err(|e| Status::internal(e.to_string()))?;
        shape::charge_protobuf(&bytes, &desc, &budget).map_err(|e| match e {
            crate::formats::otlp::OtlpError::OverBudget(over) => {
                Status::resource_exhausted(over.to_string())
            }
            other => Status::invalid_argument(other.to_string()),
        })?;
        let request = ExportProfilesServiceRequest::decode(bytes).map_err(|e| {
            Status::invalid_argument(format!(
                "the body is not an OTLP ExportProfilesServiceRequest: {e}"
            ))
        })?;
        Ok(Some(Bounded {
            request,
            remaining: budget.remaining(),
        }))
    }
}
