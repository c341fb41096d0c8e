//! The gRPC `opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export` on
//! `--otlp-grpc-listen` (what a Collector's `otlp` exporter sends; off unless given).
//!
//! - **Token first**: with `--token-file`, a client sends the metadata `authorization: Bearer
//!   <token>` (the Collector: `headers: {authorization: "Bearer <token>"}` on the exporter);
//!   without it, UNAUTHENTICATED, answered from the headers alone: not a byte of the message
//!   is read or decoded. No browser can speak gRPC to this port, so the page's rules (host,
//!   cross-site) do not apply.
//! - **Size**: a message may be `--max-ingest-bytes`, compressed or not (tonic stops inflating
//!   a gzip message at that size and answers RESOURCE_EXHAUSTED); what it decodes into is
//!   charged to the request's budget before prost builds it ([`super::codec`]), as on HTTP.
//! - **Write gate**: a call reserves `--max-ingest-bytes` of `--max-ingest-in-flight-bytes`
//!   before its message is read, until it is stored; past it UNAVAILABLE (exporters retry).
//! - **Bad input**: INVALID_ARGUMENT with the same message the HTTP route gives; nothing of the
//!   request is stored.
//!
//! The service is written out here rather than generated (`ProfilesServiceServer`), because the
//! generated one reads the body before any code of ours runs and decodes with plain prost.

use std::convert::Infallible;
use std::future::Future;
use std::task::{Context, Poll};

use axum::http;
use futures_util::future::BoxFuture;
use tonic::codec::CompressionEncoding;
use tonic::server::{NamedService, UnaryService};
use tonic::Status;

use super::codec::{Bounded, BoundedCodec};
use super::{refused, store, Failure};
use crate::formats::otlp::{to_batches, Bounds, ExportProfilesServiceResponse};
use crate::http::guard::rules::Access;
use crate::http::state::AppState;
use crate::limits::writes::InFlight;
use crate::listen::{self, ConnLimits, Limited};

/// The path of the one method.
pub const EXPORT_PATH: &str =
    "/opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export";

/// The service: checks the token, then decodes within the budget and stores what it is sent,
/// as the HTTP route does.
#[derive(Debug, Clone)]
pub struct Receiver {
    state: AppState,
}

impl NamedService for Receiver {
    const NAME: &'static str =
        "opentelemetry.proto.collector.profiles.v1development.ProfilesService";
}

impl<B> tower::Service<http::Request<B>> for Receiver
where
    B: http_body::Body + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>> + Send,
{
    type Response = http::Response<tonic::body::Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let state = self.state.clone();
        Box::pin(async move {
            if request.uri().path() != EXPORT_PATH {
                let path = request.uri().path().to_owned();
                return Ok(Status::unimplemented(format!("no method {path}")).into_http());
            }
            // From the headers alone, before a byte of the message is read.
            if let Err(e) = state.guard.check_token(Access::Write, request.headers()) {
                return Ok(Status::unauthenticated(e.description()).into_http());
            }
            // The write gate, as on every ingest route: the message's bytes are reserved before
            // it is read, until it is stored (a gRPC message announces no length: the most it
            // may be); past the gate, UNAVAILABLE, which exporters retry.
            let in_flight = match state.writes.reserve_ingest(state.limits.ingest as u64) {
                Ok(reserved) => reserved,
                Err(e) => return Ok(Status::unavailable(e.description()).into_http()),
            };
            let codec = BoundedCodec {
                max_request_memory: state.limits.request_memory,
            };
            let mut grpc = tonic::server::Grpc::new(codec)
                .accept_compressed(CompressionEncoding::Gzip)
                .max_decoding_message_size(state.limits.ingest);
            let export = Export {
                state,
                _in_flight: in_flight,
            };
            Ok(grpc.unary(export, request).await)
        })
    }
}

/// The method, once its message is decoded.
struct Export {
    state: AppState,
    /// Held until the message is stored (dropped with the call).
    _in_flight: InFlight,
}

impl UnaryService<Bounded> for Export {
    type Response = ExportProfilesServiceResponse;
    type Future = BoxFuture<'static, Result<tonic::Response<Self::Response>, Status>>;

    fn call(&mut self, request: tonic::Request<Bounded>) -> Self::Future {
        let state = self.state.clone();
        Box::pin(async move {
            let Bounded { request, remaining } = request.into_inner();
            store(&state, move |now, intake| {
                let bounds = Bounds {
                    stacks: intake.stacks,
                    max_text: remaining,
                };
                to_batches(&request, now, &bounds).map_err(refused)
            })
            .await
            .map_err(status)?;
            Ok(tonic::Response::new(
                ExportProfilesServiceResponse::default(),
            ))
        })
    }
}

/// The gRPC status of a failure; internal details are only logged.
fn status(failure: Failure) -> Status {
    match failure {
        Failure::Invalid(m) => {
            tracing::info!("OTLP profiles (gRPC) refused: {m}");
            Status::invalid_argument(m)
        }
        Failure::TooLarge(m) => Status::resource_exhausted(m),
        Failure::Unsupported(m) => Status::unimplemented(m),
        Failure::Unavailable { message, .. } => Status::unavailable(message),
        Failure::Internal(detail) => {
            tracing::error!(detail, "OTLP profiles (gRPC) could not be stored");
            Status::internal("internal error while storing the profiles; see the server log")
        }
    }
}

/// The service as tonic serves it.
pub fn service(state: AppState) -> Receiver {
    Receiver { state }
}

/// Serve the gRPC receiver on `listener` until `shutdown` resolves, within the HTTP
/// listener's bounds (a plain `TcpListener` gets the default ones): connection caps,
/// header, idle, body and write timeouts, and a call deadline.
pub async fn serve(
    listener: impl Into<Limited>,
    state: AppState,
    shutdown: impl Future<Output = ()>,
) -> Result<(), String> {
    let listener = listener.into();
    let mut server = tonic::transport::Server::builder();
    if let Some(deadline) = listen::grpc::call_deadline(&listener.limits()) {
        server = server.timeout(deadline);
    }
    server
        .layer(listen::grpc::TrackLayer)
        .serve_with_incoming_shutdown(service(state), listen::grpc::incoming(listener), shutdown)
        .await
        .map_err(|e| format!("OTLP gRPC server error: {e}"))
}

/// The gRPC receiver of `--otlp-grpc-listen`, running beside the HTTP server.
#[derive(Debug)]
pub struct Running {
    addr: std::net::SocketAddr,
    stop: tokio::sync::oneshot::Sender<()>,
    task: tokio::task::JoinHandle<Result<(), String>>,
}

impl Running {
    /// Listen on `at` and serve within `limits`.
    pub async fn start(at: &str, state: AppState, limits: ConnLimits) -> Result<Running, String> {
        let listener = tokio::net::TcpListener::bind(at)
            .await
            .map_err(|e| format!("cannot listen on {at} (--otlp-grpc-listen): {e}"))?;
        let addr = listener
            .local_addr()
            .map_err(|e| format!("no local address: {e}"))?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(serve(Limited::new(listener, limits), state, async {
            let _ = stopped.await;
        }));
        Ok(Running { addr, stop, task })
    }

    /// The address it listens on (the port chosen for port 0).
    pub fn addr(&self) -> std::net::SocketAddr {
        self.addr
    }

    /// Stop accepting, let the calls in progress finish, and wait.
    pub async fn stop(self) -> Result<(), String> {
        let _ = self.stop.send(());
        self.task
            .await
            .map_err(|e| format!("OTLP gRPC task failed: {e}"))?
    }
}
