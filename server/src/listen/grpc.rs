//! The same bounds for the OTLP gRPC listener (`--otlp-grpc-listen`): tonic serves the
//! connections [`incoming`] yields — accepted by [`Limited`] within `--max-connections` and
//! `--max-connections-per-ip`, each a [`Watched`] socket with the header, idle and write
//! deadlines — and [`TrackLayer`] does for each call what [`super::track::track`] does for
//! an HTTP request: marks the connection busy until the answer ends and gives the request's
//! body `--body-read-timeout` (a late body fails the call). A call as a whole has
//! [`call_deadline`].

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::Stream;
use tonic::transport::server::{Connected, TcpConnectInfo};

use super::track::{Busy, Timed, Tracked};
use super::{Conn, ConnLimits, Limited, Watched};

/// What a gRPC call learns of its connection: the bounds' view, and the addresses tonic's own
/// `remote_addr` reads (put back into the call by [`TrackLayer`]).
#[derive(Clone, Debug)]
pub struct GrpcConn {
    conn: Conn,
    tcp: TcpConnectInfo,
}

impl Connected for Watched {
    type ConnectInfo = GrpcConn;

    fn connect_info(&self) -> GrpcConn {
        GrpcConn {
            conn: Conn::of(self),
            tcp: self.tcp().connect_info(),
        }
    }
}

/// A call's deadline (tonic's `Server::timeout`): its body's time, and as much again to store
/// and answer it. `None` when bodies have no bound.
pub fn call_deadline(limits: &ConnLimits) -> Option<Duration> {
    limits.body_read_timeout.map(|t| t.saturating_mul(2))
}

/// The connections `listener` accepts within its bounds, as tonic's `incoming` stream.
pub fn incoming(listener: Limited) -> impl Stream<Item = io::Result<Watched>> + Send {
    futures_util::stream::unfold(listener, |mut listener| async move {
        let (io, _) = listener.next().await;
        // As tonic's own listener: a call's small frames go out at once.
        if let Err(e) = io.tcp().set_nodelay(true) {
            tracing::debug!("TCP_NODELAY not set on a gRPC connection: {e}");
        }
        Some((Ok(io), listener))
    })
}

/// The tower layer tonic's server is built with.
#[derive(Debug, Clone, Copy, Default)]
pub struct TrackLayer;

impl<S> tower::Layer<S> for TrackLayer {
    type Service = TrackService<S>;

    fn layer(&self, inner: S) -> TrackService<S> {
        TrackService { inner }
    }
}

/// [`TrackLayer`]'s service around tonic's routes.
#[derive(Debug, Clone)]
pub struct TrackService<S> {
    inner: S,
}

type GrpcRequest = axum::http::Request<tonic::body::Body>;

impl<S, B> tower::Service<GrpcRequest> for TrackService<S>
where
    S: tower::Service<GrpcRequest, Response = axum::http::Response<B>>,
    S::Future: Send + 'static,
{
    type Response = axum::http::Response<Tracked<B>>;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: GrpcRequest) -> Self::Future {
        let busy = match request.extensions().get::<GrpcConn>().cloned() {
            Some(GrpcConn { conn, tcp }) => {
                request.extensions_mut().insert(tcp);
                let busy = Busy::new(conn.activity.clone());
                let (parts, body) = request.into_parts();
                let (body, _) = Timed::new(body, conn.body_read_timeout);
                request = axum::http::Request::from_parts(parts, tonic::body::Body::new(body));
                Some(busy)
            }
            // Not from `incoming`: nothing to watch.
            None => None,
        };
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(response.map(|inner| Tracked { inner, _busy: busy }))
        })
    }
}
