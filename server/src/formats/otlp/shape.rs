//! What an OTLP request will cost once decoded, charged to the request's budget *before* prost
//! builds it. A message of two bytes (`0a 00`, an empty `ResourceProfiles`) becomes a struct of
//! a hundred or more: 30M of them in 60 MB (59 KB gzipped) cost 3.2 GB before any check after
//! decoding could run. So the bytes are walked first, guided by the request's descriptors:
//! every sub-message is charged [`MESSAGE_BYTES`], every string its length, every repeated
//! scalar eight bytes an element; nesting past prost's own limit is refused too.
//!
//! JSON is bounded alike by [`crate::formats::charge_json`] (every object, array and string a
//! [`JSON_VALUE_BYTES`] dynamic value).

use embers_model::budget::Budget;
use embers_model::wire::protobuf::{Reader, Value};
use prost_reflect::{Kind, MessageDescriptor};

use super::OtlpError;

/// What one decoded message may take: the largest generated struct of the profiles signal
/// (`Profile`, ~250 bytes) with room for its vector's growth. A test holds every type to it.
pub const MESSAGE_BYTES: usize = 512;
/// What a repeated scalar's element takes (an `i64` or `u64`, doubled for growth; a packed
/// element is at least a byte, so this bounds every packed run by 16× its bytes).
const ELEMENT_BYTES: usize = 16;
/// What a string or bytes field takes beside its text (the `String` itself).
const STRING_BYTES: usize = 24;
/// Nesting prost itself refuses past (its recursion limit).
const MAX_DEPTH: usize = 100;
/// What one JSON value may take once decoded into a dynamic message and transcoded.
pub const JSON_VALUE_BYTES: usize = 1024;

/// Charge what the protobuf `body` (a message of `desc`) decodes into to `budget`, or refuse
/// it before it is decoded.
pub fn charge_protobuf(
    body: &[u8],
    desc: &MessageDescriptor,
    budget: &Budget,
) -> Result<(), OtlpError> {
    walk(body, desc, 0, 0, budget)
}

fn walk(
    bytes: &[u8],
    desc: &MessageDescriptor,
    at: usize,
    depth: usize,
    budget: &Budget,
) -> Result<(), OtlpError> {
    if depth > MAX_DEPTH {
        return Err(OtlpError::Decode(format!(
            "messages nested over {MAX_DEPTH} deep"
        )));
    }
    charge(budget, MESSAGE_BYTES)?;
    let mut r = Reader::nested(bytes, at);
    while let Some((number, value)) = r.field().map_err(|e| OtlpError::Decode(e.to_string()))? {
        let Some(field) = desc.get_field(number) else {
            continue;
        };
        let here = r.position();
        match (field.kind(), value) {
            (Kind::Message(inner), Value::Bytes(b)) => walk(b, &inner, here, depth + 1, budget)?,
            (Kind::String | Kind::Bytes, Value::Bytes(b)) => {
                charge(budget, b.len().saturating_add(STRING_BYTES))?;
            }
            // A packed run of scalars: at most one element a byte.
            (_, Value::Bytes(b)) => charge(budget, b.len().saturating_mul(ELEMENT_BYTES))?,
            _ if field.is_list() => charge(budget, ELEMENT_BYTES)?,
            _ => {}
        }
    }
    Ok(())
}

fn charge(budget: &Budget, bytes: usize) -> Result<(), OtlpError> {
    budget
        .charge(bytes, "OTLP messages")
        .map_err(OtlpError::OverBudget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use opentelemetry_proto::tonic::collector::profiles::v1development::ExportProfilesServiceRequest;
    use opentelemetry_proto::tonic::common::v1::{AnyValue, KeyValue};
    use opentelemetry_proto::tonic::profiles::v1development as p;
    use prost::Message;

    fn desc() -> MessageDescriptor {
        super::super::wire::request_descriptor().expect("descriptor")
    }

    #[test]
    fn every_generated_type_fits_the_charge_with_room_to_grow() {
        let sizes = [
            std::mem::size_of::<ExportProfilesServiceRequest>(),
            std::mem::size_of::<p::ResourceProfiles>(),
            std::mem::size_of::<p::ScopeProfiles>(),
            std::mem::size_of::<p::Profile>(),
            std::mem::size_of::<p::Sample>(),
            std::mem::size_of::<p::ProfilesDictionary>(),
            std::mem::size_of::<p::Location>(),
            std::mem::size_of::<p::Mapping>(),
            std::mem::size_of::<p::Function>(),
            std::mem::size_of::<p::Stack>(),
            std::mem::size_of::<p::KeyValueAndUnit>(),
            std::mem::size_of::<KeyValue>(),
            std::mem::size_of::<AnyValue>(),
        ];
        for size in sizes {
            assert!(2 * size <= MESSAGE_BYTES, "{size}");
        }
    }

    #[test]
    fn empty_messages_by_the_million_are_refused_before_decoding() {
        // 1M empty ResourceProfiles: 2 MB on the wire, ~180 MB once decoded.
        let body = [0x0a, 0x00].repeat(1_000_000);
        let budget = Budget::with_limit(64 << 20);
        let e = charge_protobuf(&body, &desc(), &budget).expect_err("refused");
        assert!(matches!(e, OtlpError::OverBudget(_)), "{e}");
    }

    #[test]
    fn a_real_request_costs_a_bounded_multiple_of_its_size() {
        let request = ExportProfilesServiceRequest {
            resource_profiles: vec![p::ResourceProfiles {
                scope_profiles: vec![p::ScopeProfiles {
                    profiles: vec![p::Profile {
                        samples: (0..1000)
                            .map(|i| p::Sample {
                                stack_index: i % 7,
                                values: vec![1],
                                timestamps_unix_nano: vec![1_700_000_000_000_000_000 + i as u64],
                                ..p::Sample::default()
                            })
                            .collect(),
                        ..p::Profile::default()
                    }],
                    ..p::ScopeProfiles::default()
                }],
                ..p::ResourceProfiles::default()
            }],
            ..ExportProfilesServiceRequest::default()
        };
        let body = request.encode_to_vec();
        let budget = Budget::unlimited();
        charge_protobuf(&body, &desc(), &budget).expect("charged");
        // A sample of ~16 bytes is charged one message and its elements.
        assert!(budget.used() > 1000 * MESSAGE_BYTES, "{}", budget.used());
        assert!(budget.used() < 1004 * MESSAGE_BYTES + 64 * body.len());
    }

    #[test]
    fn nesting_past_prosts_limit_is_refused() {
        // AnyValue.array_value (5) → ArrayValue.values (1) → AnyValue ..., 120 deep, inside a
        // resource attribute.
        let mut any: Vec<u8> = Vec::new();
        for _ in 0..120 {
            let mut array = vec![0x0a];
            array.extend(varint(any.len()));
            array.extend(&any);
            any = vec![0x2a];
            any.extend(varint(array.len()));
            any.extend(array);
        }
        let mut kv = vec![0x12];
        kv.extend(varint(any.len()));
        kv.extend(any);
        let mut resource = vec![0x0a];
        resource.extend(varint(kv.len()));
        resource.extend(kv);
        let mut rp = vec![0x0a];
        rp.extend(varint(resource.len()));
        rp.extend(resource);
        let mut body = vec![0x0a];
        body.extend(varint(rp.len()));
        body.extend(rp);
        let e = charge_protobuf(&body, &desc(), &Budget::unlimited()).expect_err("deep");
        assert!(e.to_string().contains("nested"), "{e}");
    }

    fn varint(mut n: usize) -> Vec<u8> {
        let mut out = Vec::new();
        while n >= 0x80 {
            out.push((n as u8) | 0x80);
            n >>= 7;
        }
        out.push(n as u8);
        out
    }
}
