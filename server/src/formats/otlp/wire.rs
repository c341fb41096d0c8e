//! Bytes → `ExportProfilesServiceRequest`: binary protobuf through the generated prost types,
//! OTLP/JSON through the same crate's descriptors (`prost-reflect` reads proto3 JSON: names in
//! lowerCamelCase or as in the .proto, 64-bit integers as strings or numbers, enums as
//! numbers), then transcoded into the prost types, so both encodings meet the same checks.
//!
//! OTLP/JSON differs from proto3 JSON in one place: trace, span and profile ids are hex, not
//! base64. Hex digits are base64 digits too, so the JSON reader decodes such an id as base64;
//! [`fix_hex_ids`] encodes those bytes back into the text that was sent (for lengths that are
//! multiples of four — a trace id's 32 and a span id's 16 digits — base64 is a bijection) and
//! reads that as hex. Any other length or digit ends as an id of the wrong length or a "not
//! hex" error, which the checks report.

use std::sync::OnceLock;

use data_encoding::{BASE64_NOPAD, HEXLOWER_PERMISSIVE};
use prost::Message;
use prost_reflect::{DescriptorPool, DeserializeOptions, DynamicMessage, MessageDescriptor};

use super::{ExportProfilesServiceRequest, OtlpError};

/// The request message's full name in the descriptors.
const REQUEST: &str =
    "opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest";

/// Decode a binary protobuf request.
pub fn from_protobuf(body: &[u8]) -> Result<ExportProfilesServiceRequest, OtlpError> {
    ExportProfilesServiceRequest::decode(body).map_err(|e| OtlpError::Decode(e.to_string()))
}

/// Decode an OTLP/JSON request (unknown members are ignored, as OTLP/JSON receivers must).
pub fn from_json(body: &[u8]) -> Result<ExportProfilesServiceRequest, OtlpError> {
    let desc = request_descriptor()?;
    let mut reader = serde_json::Deserializer::from_slice(body);
    let options = DeserializeOptions::new().deny_unknown_fields(false);
    let message = DynamicMessage::deserialize_with_options(desc, &mut reader, &options)
        .map_err(|e| OtlpError::Decode(format!("JSON: {e}")))?;
    reader
        .end()
        .map_err(|e| OtlpError::Decode(format!("JSON: {e}")))?;
    let mut request: ExportProfilesServiceRequest = message
        .transcode_to()
        .map_err(|e| OtlpError::Decode(e.to_string()))?;
    fix_hex_ids(&mut request)?;
    Ok(request)
}

/// The request's descriptor, from the descriptor set the `opentelemetry-proto` crate ships
/// (decoded once).
pub fn request_descriptor() -> Result<MessageDescriptor, OtlpError> {
    static POOL: OnceLock<Result<DescriptorPool, String>> = OnceLock::new();
    let pool = POOL
        .get_or_init(|| {
            DescriptorPool::decode(opentelemetry_proto::DESCRIPTORS).map_err(|e| e.to_string())
        })
        .as_ref()
        .map_err(|e| OtlpError::Decode(format!("the OTLP descriptors do not load: {e}")))?;
    pool.get_message_by_name(REQUEST)
        .ok_or_else(|| OtlpError::Decode(format!("the OTLP descriptors lack {REQUEST}")))
}

/// Turn the ids the JSON reader took for base64 back into the hex they were sent as.
fn fix_hex_ids(request: &mut ExportProfilesServiceRequest) -> Result<(), OtlpError> {
    if let Some(dictionary) = request.dictionary.as_mut() {
        for (i, link) in dictionary.link_table.iter_mut().enumerate() {
            let at = |member: &str| format!("dictionary.linkTable[{i}].{member}");
            link.trace_id = hex_id(&link.trace_id, || at("traceId"))?;
            link.span_id = hex_id(&link.span_id, || at("spanId"))?;
        }
    }
    for (r, resource) in request.resource_profiles.iter_mut().enumerate() {
        for (s, scope) in resource.scope_profiles.iter_mut().enumerate() {
            for (p, profile) in scope.profiles.iter_mut().enumerate() {
                profile.profile_id = hex_id(&profile.profile_id, || {
                    format!("resourceProfiles[{r}].scopeProfiles[{s}].profiles[{p}].profileId")
                })?;
            }
        }
    }
    Ok(())
}

/// The bytes of the hex text that base64-decoded to `decoded`.
fn hex_id(decoded: &[u8], field: impl Fn() -> String) -> Result<Vec<u8>, OtlpError> {
    if decoded.is_empty() {
        return Ok(Vec::new());
    }
    let text = BASE64_NOPAD.encode(decoded);
    HEXLOWER_PERMISSIVE.decode(text.as_bytes()).map_err(|_| {
        OtlpError::field(
            field(),
            format!("'{text}' is not an id in hex (OTLP/JSON sends ids as hex digits)"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_come_back_as_the_hex_that_was_sent() {
        let body = br#"{"dictionary": {"linkTable": [{}, {
            "traceId": "5b8efff798038103d269b633813fc60c", "spanId": "EEE19B7EC3C1B174"}]}}"#;
        let request = from_json(body).expect("json");
        let link = &request.dictionary.expect("dictionary").link_table[1];
        assert_eq!(
            HEXLOWER_PERMISSIVE.encode(&link.trace_id),
            "5b8efff798038103d269b633813fc60c"
        );
        assert_eq!(
            HEXLOWER_PERMISSIVE.encode(&link.span_id),
            "eee19b7ec3c1b174"
        );
    }

    #[test]
    fn ids_that_are_not_hex_are_named() {
        // Base64 of 16 bytes (what a proto3-JSON writer would send) is not hex.
        let body = br#"{"dictionary": {"linkTable": [{"traceId": "AAECAwQFBgcICQoLDA0ODw=="}]}}"#;
        let e = from_json(body).expect_err("base64 id");
        assert!(
            e.to_string()
                .starts_with("dictionary.linkTable[0].traceId: 'AAECAwQFBgcICQoLDA0ODw' is not"),
            "{e}"
        );
    }

    #[test]
    fn json_reads_both_name_styles_and_string_integers() {
        let body = br#"{"resource_profiles": [{"scopeProfiles": [{"profiles": [{
            "samples": [{"stackIndex": 1, "values": ["7", 8], "timestamps_unix_nano": ["1700000000000000000"]}]
        }]}]}], "unknownMember": [1, 2]}"#;
        let request = from_json(body).expect("json");
        let sample = &request.resource_profiles[0].scope_profiles[0].profiles[0].samples[0];
        assert_eq!(sample.values, [7, 8]);
        assert_eq!(sample.timestamps_unix_nano, [1_700_000_000_000_000_000]);
        assert!(matches!(
            from_json(b"{\"dictionary\": 3}"),
            Err(OtlpError::Decode(_))
        ));
        assert!(matches!(
            from_json(b"{} trailing"),
            Err(OtlpError::Decode(_))
        ));
    }

    #[test]
    fn protobuf_that_does_not_decode_is_a_decode_error() {
        let e = from_protobuf(&[0x0a, 0xff, 0xff]).expect_err("truncated");
        assert!(e.to_string().contains("v1.11.0"), "{e}");
    }
}
