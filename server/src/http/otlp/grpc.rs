//! The gRPC `opentelemetry.proto.collector.profiles.v1development.ProfilesService/Export` on
//! `--otlp-grpc-listen` (what a Collector's `otlp` exporter sends; off unless given).
//!
//! - **Token**: with `--token-file`, a client sends the metadata `authorization: Bearer
//!   <token>` (the Collector: `headers: {authorization: "Bearer <token>"}` on the exporter);
//!   without it, UNAUTHENTICATED. No browser can speak gRPC to this port, so the page's rules
//!   (host, cross-site) do not apply.
//! - **Size**: a message may be `--max-ingest-bytes`, compressed or not (tonic stops inflating
//!   a gzip message at that size and answers RESOURCE_EXHAUSTED).
//! - **Bad input**: INVALID_ARGUMENT with the same message the HTTP route gives; nothing of the
//!   request is stored.

use std::future::Future;

use opentelemetry_proto::tonic::collector::profiles::v1development::profiles_service_server::{
    ProfilesService, ProfilesServiceServer,
};
use tonic::codec::CompressionEncoding;
use tonic::{Request, Response, Status};

use super::{refused, store, Failure};
use crate::formats::otlp::{
    to_batches, ExportProfilesServiceRequest, ExportProfilesServiceResponse,
};
use crate::http::guard::rules::Access;
use crate::listen::{self, ConnLimits, Limited};
use crate::AppState;

/// The service: stores what it is sent, as the HTTP route does.
#[derive(Debug, Clone)]
pub struct Receiver {
    state: AppState,
}

#[tonic::async_trait]
impl ProfilesService for Receiver {
    async fn export(
        &self,
        request: Request<ExportProfilesServiceRequest>,
    ) -> Result<Response<ExportProfilesServiceResponse>, Status> {
        let headers = request.metadata().clone().into_headers();
        self.state
            .guard
            .check_token(Access::Write, &headers)
            .map_err(|e| Status::unauthenticated(e.description()))?;
        let request = request.into_inner();
        store(&self.state, move |now, bounds| {
            to_batches(&request, now, bounds).map_err(refused)
        })
        .await
        .map_err(status)?;
        Ok(Response::new(ExportProfilesServiceResponse::default()))
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

/// The service as tonic serves it: gzip accepted, messages up to `--max-ingest-bytes`.
pub fn service(state: AppState) -> ProfilesServiceServer<Receiver> {
    let limit = state.limits.ingest;
    ProfilesServiceServer::new(Receiver { state })
        .accept_compressed(CompressionEncoding::Gzip)
        .max_decoding_message_size(limit)
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
