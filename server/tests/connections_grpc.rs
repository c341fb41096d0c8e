//! The OTLP gRPC listener (`--otlp-grpc-listen`) within the HTTP listener's bounds: calls are
//! served through the bounded accept loop, a connection that sends nothing is closed at the
//! header timeout, one kept between calls outlives it, one address holds at most its share
//! of connections while others are served, and a call whose message does not arrive within
//! `--body-read-timeout` fails.

use std::sync::Arc;
use std::time::Duration;

use embers_server::formats::otlp::ExportProfilesServiceRequest;
use embers_server::http::otlp::grpc;
use embers_server::listen::{ConnLimits, Limited};
use embers_server::store::Store;
use embers_server::AppState;
use opentelemetry_proto::tonic::collector::profiles::v1development::profiles_service_client::ProfilesServiceClient;
use tonic::transport::Channel;

use super::common::grpc::Raw;
use super::common::TempDb;
use super::connections::{limits, read_to_close, timed};
use super::connections_bounds::connect_from;

/// The gRPC receiver within `bounds` on a free port; its address (and the store's directory,
/// kept while it runs).
async fn start(bounds: ConnLimits) -> (String, TempDb) {
    let db = TempDb::new();
    let store = Arc::new(Store::open(&db.path()).expect("open store"));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr").to_string();
    let state = AppState::new(store);
    tokio::spawn(grpc::serve(
        Limited::new(listener, bounds),
        state,
        std::future::pending(),
    ));
    (addr, db)
}

async fn export(client: &mut ProfilesServiceClient<Channel>) -> Result<(), tonic::Status> {
    client
        .export(ExportProfilesServiceRequest::default())
        .await
        .map(|_| ())
}

#[tokio::test]
async fn the_grpc_listener_keeps_the_connection_bounds() {
    let bounds = ConnLimits {
        body_read_timeout: Some(Duration::from_secs(1)),
        max_connections_per_ip: 2,
        ..limits(600, 3000, 8)
    };
    let (addr, _db) = start(bounds).await;
    let mut client = ProfilesServiceClient::connect(format!("http://{addr}"))
        .await
        .expect("connect");
    export(&mut client).await.expect("a call");
    // Between calls the idle bound applies, not the header one.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    export(&mut client).await.expect("a call after a pause");
    // A connection that sends nothing is closed at the header timeout.
    let mut silent = connect_from([127, 0, 0, 3], &addr).await;
    let (closed, took) = timed(read_to_close(&mut silent, Duration::from_secs(5))).await;
    assert!(closed.is_some(), "still open after 5 s");
    assert!(took < Duration::from_millis(1500), "closed after {took:?}");
    // One address at its share: its next connection is closed at once...
    let _holders = [
        connect_from([127, 0, 0, 2], &addr).await,
        connect_from([127, 0, 0, 2], &addr).await,
    ];
    tokio::time::sleep(Duration::from_millis(100)).await;
    let mut over = connect_from([127, 0, 0, 2], &addr).await;
    let (closed, took) = timed(read_to_close(&mut over, Duration::from_secs(5))).await;
    assert!(closed.is_some(), "still open after 5 s");
    assert!(took < Duration::from_millis(400), "closed after {took:?}");
    // ...while another address is served.
    export(&mut client).await.expect("served beside them");
}

#[tokio::test]
async fn a_grpc_message_that_does_not_arrive_in_time_fails_the_call() {
    let bounds = ConnLimits {
        body_read_timeout: Some(Duration::from_millis(800)),
        ..limits(5000, 5000, 8)
    };
    let (addr, _db) = start(bounds).await;
    let channel = Channel::from_shared(format!("http://{addr}"))
        .expect("uri")
        .connect()
        .await
        .expect("connect");
    let mut raw = tonic::client::Grpc::new(channel.clone());
    raw.ready().await.expect("ready");
    let path = axum::http::uri::PathAndQuery::from_static(
        "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export",
    );
    // The call's stream stays open and its message never comes.
    let never = futures_util::stream::pending::<Vec<u8>>();
    let call = raw.client_streaming(tonic::Request::new(never), path, Raw);
    let (outcome, took) = timed(tokio::time::timeout(Duration::from_secs(10), call)).await;
    let e = outcome.expect("ended within 10 s").expect_err("cut");
    assert!(took < Duration::from_secs(3), "ended after {took:?}");
    assert!(e.message().contains("--body-read-timeout"), "{e}");
    // The connection goes on serving other calls.
    let mut client = ProfilesServiceClient::new(channel);
    export(&mut client).await.expect("a call after the cut one");
}
