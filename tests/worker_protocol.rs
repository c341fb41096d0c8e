//! The workers' messages, in the browser: a request and its answer survive the trip through JS
//! values (what `postMessage` carries), the answer decoder and the file reader answer bodies
//! the way the page expects, each refuses the other's jobs, and malformed messages are errors.
#![cfg(target_arch = "wasm32")]

use embers_decode_worker::import::answer_file;
use embers_decode_worker::{answer, DecodeReply, DecodeRequest, Job, MessageError};
use embers_model::contract::shape::ResultShape;
use embers_model::formats::Format;
use embers_model::{decode_response, Profile};
use js_sys::{Object, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const ONCPU_B: &str = include_str!("../model/tests/data/fixtures/process-oncpu-b/response.json");
const ONCPU_A: &str = include_str!("../model/tests/data/fixtures/process-oncpu-a/response.json");
const ERROR_500: &str = include_str!("../model/tests/data/fixtures/error-500-fail/response.json");

/// A request for `body`, split into chunks of `chunk` bytes (as a stream delivers it).
fn request(id: u32, status: u16, body: &str, chunk: usize) -> DecodeRequest {
    DecodeRequest {
        id,
        job: Job::Answer { status },
        chunks: body
            .as_bytes()
            .chunks(chunk)
            .map(Uint8Array::from)
            .collect(),
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
    assert_eq!((back.id, &back.job), (7, &Job::Answer { status: 200 }));
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

const GO_CPU: &[u8] = include_bytes!("../model/tests/data/pprof/go-cpu.pb.gz");
const PERF: &str = include_str!("../server/tests/data/perf/workload-g.txt");

/// A file request: `bytes` in `format`, named `name`.
fn file(format: Format, name: &str, bytes: &[u8]) -> JsValue {
    let name = name.to_owned();
    job(Job::OpenFile { format, name }, bytes)
}

/// A request for `job` on `bytes`.
fn job(job: Job, bytes: &[u8]) -> JsValue {
    let request = DecodeRequest {
        id: 11,
        job,
        chunks: vec![Uint8Array::from(bytes)],
    };
    request.to_js().0
}

/// The reply to a file request: the profile, its event type and notice.
async fn read_file(format: Format, name: &str, bytes: &[u8]) -> (Profile, String, String) {
    let (reply, _) = answer_file(&file(format, name, bytes))
        .await
        .expect("an answer");
    match DecodeReply::from_js(&reply).expect("a reply") {
        DecodeReply::Decoded {
            parts,
            event_type,
            notice,
            ..
        } => (
            Profile::from_parts(*parts).expect("valid parts"),
            event_type.expect("an event type"),
            notice.unwrap_or_default(),
        ),
        DecodeReply::Failed { message, .. } => panic!("reading failed: {message}"),
    }
}

#[wasm_bindgen_test]
async fn a_gzipped_go_profile_is_gunzipped_by_the_browser_and_read() {
    let (profile, event_type, notice) = read_file(Format::Pprof, "hot", GO_CPU).await;
    assert_eq!(event_type, "cpu");
    assert_eq!(notice, "pprof sample type samples/count");
    assert_eq!(profile.name(0), "hot");
    assert!(profile.function_id("main.hotLoop").is_some());
    assert!(profile.root_total() > 0);
}

#[wasm_bindgen_test]
async fn perf_script_is_read_into_processes_and_threads() {
    let (profile, event_type, _) = read_file(Format::Perf, "w", PERF.as_bytes()).await;
    assert_eq!(event_type, "on-cpu");
    assert_eq!(profile.name(0), "Total");
    assert!(profile.function_id("[p] gzip").is_some());
}

#[wasm_bindgen_test]
async fn bad_files_come_back_as_messages() {
    let mut bomb_ish = GO_CPU.to_vec();
    bomb_ish.truncate(40);
    let (reply, _) = answer_file(&file(Format::Pprof, "x", &bomb_ish))
        .await
        .expect("an answer");
    match DecodeReply::from_js(&reply).expect("a reply") {
        DecodeReply::Failed { message, .. } => assert!(message.contains("gzip"), "{message}"),
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn the_page_folded_export_comes_back_as_pprof() {
    let folded = "# Embers folded stacks: profile_event_type=cpu\nmain;work 3\nmain 1\n";
    let root = "web".to_owned();
    let (reply, _) = answer_file(&job(Job::ExportPprof { root }, folded.as_bytes()))
        .await
        .expect("an answer");
    let DecodeReply::Decoded { body, .. } = DecodeReply::from_js(&reply).expect("a reply") else {
        panic!("no pprof");
    };
    let bytes: Vec<u8> = body.iter().flat_map(|c| c.to_vec()).collect();
    let read = embers_model::wire::pprof::read_profile(&bytes, "x").expect("pprof");
    assert_eq!(read.profile.name(0), "web");
    assert_eq!(read.sample_type, "cpu/count");
    assert_eq!(read.profile.root_total(), 4);
}

/// The failure message of a reply.
fn failure(reply: &JsValue) -> String {
    match DecodeReply::from_js(reply).expect("a reply") {
        DecodeReply::Failed { message, .. } => message,
        other => panic!("expected a failure, got {other:?}"),
    }
}

#[wasm_bindgen_test]
async fn each_worker_refuses_the_other_workers_jobs() {
    // The answer decoder carries no file readers: a file sent to it is refused, not read.
    let (reply, _) = answer(&file(Format::Pprof, "x", GO_CPU)).expect("an answer");
    assert_eq!(failure(&reply), "the answer decoder cannot do `open-file`");
    let (msg, _) = request(2, 200, ONCPU_B, 4096).to_js();
    let (reply, _) = answer_file(&msg).await.expect("an answer");
    assert_eq!(failure(&reply), "the file reader cannot do `answer`");
    // Folded stacks are read on the page.
    let (reply, _) = answer_file(&file(Format::Folded, "x", b"a;b 1\n"))
        .await
        .expect("an answer");
    assert_eq!(
        failure(&reply),
        "folded is read on the page, not in the file reader"
    );
}

#[wasm_bindgen_test]
fn jobs_are_typed_in_the_message() {
    let (msg, _) = request(1, 200, ONCPU_B, 4096).to_js();
    let set = |key: &str, value: JsValue| js_sys::Reflect::set(&msg, &key.into(), &value).unwrap();
    set("job", "pprof-export".into());
    assert_eq!(
        DecodeRequest::from_js(&msg).err(),
        Some(MessageError::UnknownJob("pprof-export".into()))
    );
    set("job", "answer".into());
    set("status", JsValue::from_f64(70_000.0));
    assert_eq!(
        DecodeRequest::from_js(&msg).err(),
        Some(MessageError::BadStatus(70_000))
    );
    let open = file(Format::Jfr, "x", b"FLR");
    js_sys::Reflect::set(&open, &"format".into(), &"word".into()).unwrap();
    assert_eq!(
        DecodeRequest::from_js(&open).err(),
        Some(MessageError::UnknownFormat("word".into()))
    );
    js_sys::Reflect::delete_property(open.unchecked_ref::<Object>(), &"name".into()).unwrap();
    js_sys::Reflect::set(&open, &"format".into(), &"jfr".into()).unwrap();
    assert_eq!(
        DecodeRequest::from_js(&open).err(),
        Some(MessageError::Missing("name"))
    );
}
