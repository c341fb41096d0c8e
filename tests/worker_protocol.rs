//! The decode worker's messages, in the browser: a request and its answer survive the trip
//! through JS values (what `postMessage` carries), the decoder answers bodies the way the page
//! expects, and malformed messages are errors.
#![cfg(target_arch = "wasm32")]

use embers_decode_worker::{answer, DecodeReply, DecodeRequest};
use embers_model::contract::shape::ResultShape;
use embers_model::{decode_response, Profile};
use js_sys::{Object, Uint8Array};
use wasm_bindgen::JsValue;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const ONCPU_B: &str = include_str!("../model/tests/data/fixtures/process-oncpu-b/response.json");
const ONCPU_A: &str = include_str!("../model/tests/data/fixtures/process-oncpu-a/response.json");
const ERROR_500: &str = include_str!("../model/tests/data/fixtures/error-500-fail/response.json");

/// A request for `body`, split into chunks of `chunk` bytes (as a stream delivers it).
fn request(id: u32, status: u16, body: &str, chunk: usize) -> DecodeRequest {
    DecodeRequest {
        id,
        status,
        chunks: body
            .as_bytes()
            .chunks(chunk)
            .map(Uint8Array::from)
            .collect(),
        format: None,
        name: None,
    }
}

fn decoded(reply: DecodeReply) -> (u32, Profile, Option<ResultShape>) {
    match reply {
        DecodeReply::Decoded {
            id, parts, shape, ..
        } => (id, Profile::from_parts(*parts).expect("valid parts"), shape),
        DecodeReply::Failed { message, .. } => panic!("decoding failed: {message}"),
    }
}

#[wasm_bindgen_test]
fn a_success_description_travels_as_the_notice() {
    let body = ONCPU_B.replacen(
        r#""DESCRIPTION": """#,
        r#""DESCRIPTION":"truncated: 5 of 99 nodes""#,
        1,
    );
    assert_ne!(body, ONCPU_B, "the fixture has a DESCRIPTION member");
    let (msg, _) = request(4, 200, &body, 4096).to_js();
    let (reply, _) = answer(&msg).expect("an answer");
    match DecodeReply::from_js(&reply).expect("a reply") {
        DecodeReply::Decoded { notice, .. } => {
            assert_eq!(notice.as_deref(), Some("truncated: 5 of 99 nodes"))
        }
        DecodeReply::Failed { message, .. } => panic!("decoding failed: {message}"),
    }
}

#[wasm_bindgen_test]
fn the_body_comes_back_with_the_profile_and_its_buffers_are_transferred() {
    let (msg, _) = request(5, 200, ONCPU_B, 1000).to_js();
    let (reply, transfer) = answer(&msg).expect("an answer");
    match DecodeReply::from_js(&reply).expect("a reply") {
        DecodeReply::Decoded { body, .. } => {
            let bytes: Vec<u8> = body.iter().flat_map(|c| c.to_vec()).collect();
            assert_eq!(bytes, ONCPU_B.as_bytes(), "the same bytes, in order");
            // The chunks' buffers travel in the transfer list (moved, not copied).
            for chunk in &body {
                assert!(
                    transfer.includes(&chunk.buffer(), 0),
                    "a chunk is transferred"
                );
            }
        }
        DecodeReply::Failed { message, .. } => panic!("decoding failed: {message}"),
    }
}

#[wasm_bindgen_test]
fn requests_survive_the_trip_and_rejoin_their_chunks() {
    let (msg, transfer) = request(7, 200, ONCPU_B, 1000).to_js();
    assert!(transfer.length() > 1);
    let back = DecodeRequest::from_js(&msg).expect("a request");
    assert_eq!((back.id, back.status), (7, 200));
    assert_eq!(back.body(), ONCPU_B.as_bytes());
}

#[wasm_bindgen_test]
fn answers_match_decoding_on_the_page_for_both_shapes() {
    for (body, shape) in [(ONCPU_B, ResultShape::B), (ONCPU_A, ResultShape::A)] {
        let (msg, _) = request(3, 200, body, 4096).to_js();
        let (reply, transfer) = answer(&msg).expect("an answer");
        assert!(transfer.length() >= 12, "the columns are transferred");
        let (id, profile, got_shape) = decoded(DecodeReply::from_js(&reply).expect("a reply"));
        assert_eq!((id, got_shape), (3, Some(shape)));
        let here = decode_response(200, body).expect("decodes").profile;
        assert_eq!(format!("{profile:?}"), format!("{here:?}"));
    }
}

#[wasm_bindgen_test]
fn server_errors_come_back_as_the_decoders_message() {
    let (msg, _) = request(9, 500, ERROR_500, 64).to_js();
    let (reply, _) = answer(&msg).expect("an answer");
    match DecodeReply::from_js(&reply).expect("a reply") {
        DecodeReply::Failed { id, message } => {
            assert_eq!(id, 9);
            let here = decode_response(500, ERROR_500).expect_err("a server error");
            assert_eq!(message, here.to_string());
        }
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[wasm_bindgen_test]
fn malformed_messages_are_errors() {
    assert!(DecodeRequest::from_js(&JsValue::from_str("hello")).is_err());
    assert!(DecodeRequest::from_js(&Object::new().into()).is_err());
    assert!(answer(&JsValue::NULL).is_err());
    let (msg, _) = request(1, 200, ONCPU_B, 4096).to_js();
    let (reply, _) = answer(&msg).expect("an answer");
    js_sys::Reflect::set(&reply, &"func".into(), &JsValue::from_f64(1.0)).unwrap();
    assert!(DecodeReply::from_js(&reply).is_err());
    let (reply, _) = answer(&msg).expect("an answer");
    js_sys::Reflect::set(
        &reply,
        &"end".into(),
        &Uint8Array::new_with_length(3).into(),
    )
    .unwrap();
    assert!(DecodeReply::from_js(&reply).is_err());
}
