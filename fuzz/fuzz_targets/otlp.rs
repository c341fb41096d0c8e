//! The OTLP profiles decoder (`server/src/formats/otlp`). The first byte picks the input:
//! 0, raw bytes as a protobuf body; 1, raw bytes as an OTLP/JSON body; 2, raw bytes through the
//! bounded gunzip, then as protobuf; anything else, a structured request (`gen::otlp`) encoded
//! with the generated types, whose OTLP/JSON rendering (proto3 JSON with hex ids) must decode
//! to the same request and the same batches. Never a panic; memory bounded by the input; what
//! is accepted is in range: positive times, values 1..=i64::MAX, non-empty stacks without
//! empty frames within the (small) stack limits, eBPF on-cpu/off-cpu microseconds, a non-blank
//! app_service.
#![no_main]

use std::sync::OnceLock;

use arbitrary::{Arbitrary, Unstructured};
use data_encoding::{BASE64, HEXLOWER};
use embers_fuzz::{alloc, check, gen::otlp::Request};
use embers_model::budget::Budget;
use embers_server::formats::gzip::maybe_gunzip_within;
use embers_server::formats::otlp::ExportProfilesServiceRequest;
use embers_server::formats::otlp::{decode, from_json, request_descriptor, shape, to_batches};
use embers_server::formats::otlp::{Bounds, Encoding};
use embers_server::limits::StackLimits;
use embers_server::store::Batch;
use libfuzzer_sys::fuzz_target;
use prost::Message;
use prost_reflect::{DescriptorPool, DynamicMessage};

const NOW: i64 = 1_700_000_000;

/// Stack limits small enough for short inputs to cross them.
const STACKS: StackLimits = StackLimits {
    max_frames: 16,
    max_frame_bytes: 32,
};

/// A request budget small enough for short inputs to cross it: its decoded messages (a
/// message per two bytes at most) and 16 bytes of text a byte.
fn budget(len: usize) -> Budget {
    let messages = len.saturating_mul(shape::MESSAGE_BYTES / 2);
    Budget::with_limit(messages + len.saturating_mul(16) + 4096)
}

fn in_range(batches: &[Batch]) {
    for b in batches {
        assert!(!b.meta.app_service.trim().is_empty(), "blank app_service");
        assert_eq!(b.meta.language, "eBPF");
        assert!(matches!(b.meta.event_type.as_str(), "on-cpu" | "off-cpu"));
        assert_eq!(b.meta.unit, "microseconds");
        assert!(!b.samples.is_empty(), "empty batch");
        for s in &b.samples {
            assert!(s.time > 0, "time {}", s.time);
            assert!(
                s.value > 0 && i64::try_from(s.value).is_ok(),
                "value {}",
                s.value
            );
            let frames: Vec<&str> = s.stack.split(';').collect();
            assert!(
                frames.iter().all(|f| !f.is_empty()),
                "empty frame: {:?}",
                s.stack
            );
            assert!(frames.len() <= 16, "too deep: {:?}", s.stack);
            assert!(
                frames.iter().all(|f| f.len() <= 32),
                "too long: {:?}",
                s.stack
            );
            assert!(
                !s.stack.contains(['\n', '\r']),
                "a line break: {:?}",
                s.stack
            );
        }
    }
}

/// The OTLP/JSON text of `bytes` (a request): proto3 JSON, with the ids in hex.
fn otlp_json(bytes: &[u8]) -> Option<String> {
    // Decoded once: decoding the descriptors took most of an input's time.
    static POOL: OnceLock<Option<DescriptorPool>> = OnceLock::new();
    let pool = POOL
        .get_or_init(|| DescriptorPool::decode(opentelemetry_proto::DESCRIPTORS).ok())
        .as_ref()?;
    let desc = pool.get_message_by_name(
        "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest",
    )?;
    let message = DynamicMessage::decode(desc, bytes).ok()?;
    let mut json = serde_json::to_value(&message).ok()?;
    let links = json["dictionary"]["linkTable"].as_array_mut();
    for link in links.into_iter().flatten() {
        for key in ["traceId", "spanId"] {
            let id = link.get(key).and_then(|v| v.as_str());
            if let Some(id) = id.and_then(|t| BASE64.decode(t.as_bytes()).ok()) {
                link[key] = HEXLOWER.encode(&id).into();
            }
        }
    }
    serde_json::to_string(&json).ok()
}

/// Whether every id has an even number of bytes: then its hex has a multiple of four digits
/// and reads back exactly (see `formats/otlp/wire.rs`); other lengths are refused anyway.
fn even_ids(request: &ExportProfilesServiceRequest) -> bool {
    let links = request.dictionary.iter().flat_map(|d| &d.link_table);
    links
        .flat_map(|l| [&l.trace_id, &l.span_id])
        .all(|id| id.len() % 2 == 0)
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let b = budget(body.len());
    let outcome = match mode {
        0 => alloc::bounded(body.len(), || {
            decode(body, Encoding::Protobuf, NOW, STACKS, &b)
        }),
        1 => alloc::bounded(body.len(), || decode(body, Encoding::Json, NOW, STACKS, &b)),
        2 => alloc::bounded(body.len(), || {
            let plain = maybe_gunzip_within(body, body.len().saturating_mul(8) + 1024, &b).ok()?;
            Some(decode(&plain, Encoding::Protobuf, NOW, STACKS, &b))
        })
        .unwrap_or(Ok(Vec::new())),
        _ => {
            let Ok(request) = Request::arbitrary_take_rest(Unstructured::new(body)) else {
                return;
            };
            let request = request.build();
            let bytes = request.encode_to_vec();
            check::show("request", format!("{request:?}").as_bytes());
            // The text bound `decode` gives the conversion: what the shape leaves of the budget.
            let shaped = budget(bytes.len());
            let desc = request_descriptor().expect("descriptors");
            let direct = match shape::charge_protobuf(&bytes, &desc, &shaped) {
                Ok(()) => to_batches(
                    &request,
                    NOW,
                    &Bounds {
                        stacks: STACKS,
                        max_text: shaped.remaining(),
                    },
                ),
                Err(e) => Err(e),
            };
            let b = budget(bytes.len());
            let decoded = alloc::bounded(bytes.len(), || {
                decode(&bytes, Encoding::Protobuf, NOW, STACKS, &b)
            });
            assert_eq!(direct, decoded, "the bytes decode to other batches");
            if let Some(json) = otlp_json(&bytes).filter(|_| even_ids(&request)) {
                let back = from_json(json.as_bytes()).expect("our own OTLP/JSON reads back");
                assert_eq!(back, request, "JSON read back differently: {json}");
            }
            decoded
        }
    };
    if let Ok(batches) = outcome {
        in_range(&batches);
    }
});
