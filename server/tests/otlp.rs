//! The OTLP receivers' bounds and refusals over real HTTP and gRPC: gzip bombs and bodies over
//! `--max-ingest-bytes`, corrupt gzip, content types and encodings the route does not read,
//! cross-site browsers; each answered with OTLP's `google.rpc.Status` (or the guard's envelope)
//! naming the problem, and nothing stored. (The requests the official client builds are in
//! `otlp_python.rs`.)

use crate::common;

use std::io::Write;

use common::otlp::OtlpServer;
use embers_server::formats::otlp::ExportProfilesServiceRequest;
use embers_server::http::guard::args::GuardArgs;
use embers_server::http::otlp::RpcStatus;
use flate2::write::GzEncoder;
use flate2::Compression;
use opentelemetry_proto::tonic::collector::profiles::v1development::profiles_service_client::ProfilesServiceClient;
use opentelemetry_proto::tonic::profiles::v1development::{
    Function, Line, Location, Profile, ProfilesDictionary, ResourceProfiles, Sample, ScopeProfiles,
    Stack, ValueType,
};
use prost::Message;

const LIMIT: usize = 1 << 20;

fn gzip(data: &[u8]) -> Vec<u8> {
    let mut e = GzEncoder::new(Vec::new(), Compression::default());
    e.write_all(data).expect("write");
    e.finish().expect("finish")
}

/// A request whose string table holds one string of `len` bytes: large, and tiny gzipped.
fn big_request(len: usize) -> ExportProfilesServiceRequest {
    ExportProfilesServiceRequest {
        resource_profiles: vec![],
        dictionary: Some(ProfilesDictionary {
            string_table: vec![String::new(), "a".repeat(len)],
            ..ProfilesDictionary::default()
        }),
    }
}

/// POST `body` to the OTLP route with `headers`; status, content type and body.
async fn post(
    server: &OtlpServer,
    headers: &[(&str, &str)],
    body: Vec<u8>,
) -> (u16, String, Vec<u8>) {
    let mut request = server
        .http
        .client
        .post(format!("{}/v1development/profiles", server.http.base))
        .body(body);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.expect("request");
    let (status, ct) = (response.status().as_u16(), common::content_type(&response));
    (status, ct, response.bytes().await.expect("body").to_vec())
}

const PROTOBUF: (&str, &str) = ("content-type", "application/x-protobuf");
const GZIP: (&str, &str) = ("content-encoding", "gzip");

fn status_of(body: &[u8]) -> RpcStatus {
    RpcStatus::decode(body).expect("a google.rpc.Status")
}

#[tokio::test]
async fn gzip_bombs_and_bodies_over_the_limit_are_refused_and_store_nothing() {
    let server = OtlpServer::start(GuardArgs::default(), LIMIT).await;
    // 64 MiB of one letter gzip to ~64 KiB; the service stops inflating at the limit.
    let bomb = gzip(&big_request(64 << 20).encode_to_vec());
    assert!(bomb.len() < LIMIT / 8, "{}", bomb.len());
    let (status, ct, body) = post(&server, &[PROTOBUF, GZIP], bomb).await;
    assert_eq!((status, ct.as_str()), (413, "application/x-protobuf"));
    let s = status_of(&body);
    assert_eq!(s.code, 8);
    assert!(
        s.message
            .contains("decompresses to more than 1048576 bytes"),
        "{}",
        s.message
    );
    // Uncompressed, over the limit: refused before it is read whole.
    let (status, _, body) = post(&server, &[PROTOBUF], big_request(LIMIT).encode_to_vec()).await;
    assert_eq!(status, 413);
    assert!(status_of(&body).message.contains("--max-ingest-bytes"));
    // Just under the limit, gzipped: read, and (no profiles in it) nothing to store.
    let fits = gzip(&big_request(LIMIT - 100).encode_to_vec());
    let (status, _, body) = post(&server, &[PROTOBUF, GZIP], fits).await;
    assert_eq!(status, 200, "{:?}", status_of(&body));
    let (status, _, body) = post(&server, &[PROTOBUF, GZIP], b"\x1f\x8bnot really".to_vec()).await;
    assert_eq!(status, 400);
    assert!(status_of(&body).message.contains("gzip data is corrupt"));
    assert_eq!(server.store.sample_count().expect("count"), 0);
    server.stop().await;
}

#[tokio::test]
async fn grpc_bombs_are_resource_exhausted() {
    let server = OtlpServer::start(GuardArgs::default(), LIMIT).await;
    let mut client = ProfilesServiceClient::connect(format!("http://{}", server.grpc))
        .await
        .expect("connect")
        .send_compressed(tonic::codec::CompressionEncoding::Gzip);
    let e = client
        .export(big_request(64 << 20))
        .await
        .expect_err("bomb");
    assert_eq!(e.code(), tonic::Code::ResourceExhausted, "{e}");
    assert!(e.message().contains("1048576"), "{e}");
    // The same connection goes on serving: a small request with a bad index is named.
    let mut bad = big_request(10);
    if let Some(d) = bad.dictionary.as_mut() {
        d.string_table[0] = "x".into();
    }
    let e = client.export(bad).await.expect_err("bad");
    assert_eq!(e.code(), tonic::Code::InvalidArgument);
    assert!(
        e.message()
            .starts_with("dictionary.string_table[0]: must be the empty string"),
        "{e}"
    );
    assert_eq!(server.store.sample_count().expect("count"), 0);
    server.stop().await;
}

#[tokio::test]
async fn other_types_encodings_methods_and_browsers_are_refused() {
    let server = OtlpServer::open().await;
    let body = big_request(10).encode_to_vec();
    let octet = ("content-type", "application/octet-stream");
    let (status, _, answer) = post(&server, &[octet], body.clone()).await;
    assert_eq!(status, 415);
    assert!(status_of(&answer)
        .message
        .contains("send application/x-protobuf or application/json"));
    let (status, _, answer) = post(
        &server,
        &[PROTOBUF, ("content-encoding", "br")],
        body.clone(),
    )
    .await;
    assert_eq!(status, 415);
    assert!(status_of(&answer)
        .message
        .contains("send gzip or no encoding"));
    // The guard answers these, as for every write: a type a browser sends anywhere, a
    // cross-site page.
    let (status, _, answer) = post(&server, &[("content-type", "text/plain")], body.clone()).await;
    assert_eq!(status, 403, "{}", String::from_utf8_lossy(&answer));
    let cross = ("sec-fetch-site", "cross-site");
    let (status, _, _) = post(&server, &[PROTOBUF, cross], body.clone()).await;
    assert_eq!(status, 403);
    // JSON that is not a request: 400 in JSON.
    let json = ("content-type", "application/json");
    let (status, ct, answer) = post(&server, &[json], b"[1,2]".to_vec()).await;
    assert_eq!((status, ct.as_str()), (400, "application/json"));
    let answer: serde_json::Value = serde_json::from_slice(&answer).expect("json");
    assert_eq!(answer["code"], 3);
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|m| m.contains("JSON")),
        "{answer}"
    );
    let (status, _, _) = server.http.get("/v1development/profiles").await;
    assert_eq!(status, 405);
    // A well-formed request answers an ExportProfilesServiceResponse of the same encoding.
    let (status, ct, answer) = post(&server, &[PROTOBUF], body).await;
    assert_eq!(
        (status, ct.as_str(), answer.len()),
        (200, "application/x-protobuf", 0)
    );
    let (status, _, answer) = post(&server, &[json], b"{}".to_vec()).await;
    assert_eq!((status, answer.as_slice()), (200, &b"{}"[..]));
    server.stop().await;
}

/// A few hundred bytes naming 360 KB: one 200-byte function, 30 lines of it in a location, a
/// stack of 60 such locations.
fn expanding_request() -> ExportProfilesServiceRequest {
    let dictionary = ProfilesDictionary {
        string_table: vec![
            String::new(),
            "f".repeat(200),
            "cpu".into(),
            "nanoseconds".into(),
        ],
        function_table: vec![
            Function::default(),
            Function {
                name_strindex: 1,
                ..Function::default()
            },
        ],
        location_table: vec![
            Location::default(),
            Location {
                lines: vec![
                    Line {
                        function_index: 1,
                        ..Line::default()
                    };
                    30
                ],
                ..Location::default()
            },
        ],
        stack_table: vec![
            Stack::default(),
            Stack {
                location_indices: vec![1; 60],
            },
        ],
        ..ProfilesDictionary::default()
    };
    let profile = Profile {
        sample_type: Some(ValueType {
            type_strindex: 2,
            unit_strindex: 3,
        }),
        samples: vec![Sample {
            stack_index: 1,
            values: vec![1_000_000],
            ..Sample::default()
        }],
        ..Profile::default()
    };
    ExportProfilesServiceRequest {
        resource_profiles: vec![ResourceProfiles {
            scope_profiles: vec![ScopeProfiles {
                profiles: vec![profile],
                ..ScopeProfiles::default()
            }],
            ..ResourceProfiles::default()
        }],
        dictionary: Some(dictionary),
    }
}

#[tokio::test]
async fn requests_that_expand_past_their_memory_budget_once_named_are_413() {
    // A budget of 64 KiB: the request's messages take a third of it, its 1,800 frames' names
    // more than the rest.
    let server = OtlpServer::start_limits(GuardArgs::default(), 16 << 10, 64 << 10).await;
    let body = expanding_request().encode_to_vec();
    assert!(body.len() < 1024, "{}", body.len());
    let (status, _, answer) = post(&server, &[PROTOBUF], body).await;
    assert_eq!(status, 413);
    let s = status_of(&answer);
    assert_eq!(s.code, 8);
    assert!(
        s.message.contains("bytes once named") && s.message.contains("--max-request-memory"),
        "{}",
        s.message
    );
    assert_eq!(server.store.sample_count().expect("count"), 0);
    // With the default limit it is one sample of 1,800 frames.
    let roomy = OtlpServer::open().await;
    let (status, _, _) = post(&roomy, &[PROTOBUF], expanding_request().encode_to_vec()).await;
    assert_eq!(status, 200);
    assert_eq!(roomy.store.sample_count().expect("count"), 1);
    roomy.stop().await;
    server.stop().await;
}

#[tokio::test]
async fn the_binary_serves_grpc_on_otlp_grpc_listen() {
    let db = common::TempDb::new();
    let extra = ["--otlp-grpc-listen", "127.0.0.1:0"];
    let (mut child, base, lines) =
        common::process::spawn_serve_reading(&db.path(), &extra, 1).await;
    let addr = lines[0]
        .strip_prefix(embers_server::cli::OTLP_GRPC_PREFIX)
        .unwrap_or_else(|| panic!("{lines:?}"));
    let mut client = ProfilesServiceClient::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    client.export(expanding_request()).await.expect("exported");
    let now = embers_server::store::ingest::now_micros() / 1_000_000;
    let query = serde_json::json!({
        "app_service": "unknown_service", "profile_language_type": "eBPF",
        "profile_event_type": "on-cpu", "time_start": now - 600, "time_end": now + 600,
    });
    let answer = common::query_at(&reqwest::Client::new(), &base, &query).await;
    // 1,000 µs at 1,800 frames deep: the root, then one node per frame.
    let values = &answer["result"]["node_values"]["values"];
    assert_eq!(values.as_array().map(Vec::len), Some(1801), "{answer}");
    assert_eq!(values[0][3], 1000, "{answer}");
    child.kill().await.expect("kill");
}
