//! `GET /healthz`: liveness (the process answers; with `--profile-host`, how its collector
//! does), and `GET /readyz`: readiness (the store can serve now), both as JSON. A load balancer or Kubernetes sends traffic only while `/readyz`
//! says 200; an agent that got a 503 can watch it to know when to send again.

use std::time::Duration;

use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Serialize;

use crate::error::json_response;
use crate::host_profile::CollectorHealth;
use crate::http::state::AppState;
use crate::store::{Backend, Outage};

/// How long the store may take to answer the readiness probe.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(5);

/// `{"mode": "local" | "upstream", "status": "ok", "version": ...}` (alphabetical, as answered
/// since the first release), and `collector` when the service profiles its host.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Health {
    /// This host's collector (`serve --profile-host`): running or why not, and what its
    /// windows held. Absent when the service does not profile its host.
    #[serde(skip_serializing_if = "Option::is_none")]
    collector: Option<CollectorHealth>,
    /// `local` (own store) or `upstream` (a DeepFlow querier answers).
    mode: &'static str,
    /// Always `ok`.
    status: &'static str,
    /// The service's version.
    version: &'static str,
}

fn mode(state: &AppState) -> &'static str {
    if state.upstream.is_some() {
        "upstream"
    } else {
        "local"
    }
}

/// The liveness handler.
#[utoipa::path(
    get,
    path = "/healthz",
    tag = "health",
    summary = "Liveness: the process answers",
    responses((status = 200, description = "Always, while the process runs.", body = Health)),
)]
pub async fn handle(State(state): State<AppState>) -> Response {
    let health = Health {
        collector: state.collector.as_ref().map(|c| c.snapshot()),
        mode: mode(&state),
        status: "ok",
        version: env!("CARGO_PKG_VERSION"),
    };
    // Strings, integers and options of them always serialise.
    json_response(
        StatusCode::OK,
        serde_json::to_string(&health).unwrap_or_default(),
    )
}

/// The readiness answer (members alphabetical, as `/healthz`'s): `status` is `ready` or
/// `unavailable`; `reason` and `retry_after` only when unavailable.
#[derive(Serialize, utoipa::ToSchema)]
pub struct Readiness {
    /// `local` or `upstream`.
    mode: &'static str,
    /// Why the store cannot serve (names the store; no paths or URLs).
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    /// Seconds to wait, as the `Retry-After` header.
    #[serde(skip_serializing_if = "Option::is_none")]
    retry_after: Option<u32>,
    /// `ready` or `unavailable`.
    status: &'static str,
    /// `sqlite` or `clickhouse`.
    store: &'static str,
    /// The service's version.
    version: &'static str,
}

/// The readiness handler: 200 when the store answered the probe, else 503 with
/// `Retry-After` and the reason (the detail goes to the log).
#[utoipa::path(
    get,
    path = "/readyz",
    tag = "health",
    summary = "Readiness: the store can serve now",
    responses(
        (status = 200, description = "The store answered the probe.", body = Readiness),
        (status = 503, description = "The store cannot serve now; `reason` says why.", body = Readiness,
         headers(("Retry-After" = u32, description = "Seconds to wait before sending again."))),
    ),
)]
pub async fn ready(State(state): State<AppState>) -> Response {
    let backend = state.store.backend();
    let store = state.store.clone();
    let probe = crate::blocking::run("readiness probe", move || store.probe());
    let outage = match tokio::time::timeout(PROBE_TIMEOUT, probe).await {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(e))) => {
            let outage = e.outage().unwrap_or(Outage {
                backend,
                cause: "the store fails (see the server log)",
                retry_after: 5,
            });
            tracing::warn!(detail = %e, "not ready: {}", outage.cause);
            Some(outage)
        }
        Ok(Err(failed)) => {
            tracing::error!("{failed}");
            Some(Outage {
                backend,
                cause: "the readiness probe failed (see the server log)",
                retry_after: 5,
            })
        }
        Err(_) => Some(Outage {
            backend,
            cause: "the store did not answer the readiness probe within 5 s",
            retry_after: 5,
        }),
    };
    let readiness = Readiness {
        mode: mode(&state),
        reason: outage.as_ref().map(Outage::describe),
        retry_after: outage.as_ref().map(|o| o.retry_after),
        status: if outage.is_some() {
            "unavailable"
        } else {
            "ready"
        },
        store: match backend {
            Backend::Sqlite => "sqlite",
            Backend::ClickHouse => "clickhouse",
        },
        version: env!("CARGO_PKG_VERSION"),
    };
    let status = match outage {
        Some(_) => StatusCode::SERVICE_UNAVAILABLE,
        None => StatusCode::OK,
    };
    let mut response = json_response(
        status,
        serde_json::to_string(&readiness).unwrap_or_default(),
    );
    if let Some(seconds) = readiness.retry_after {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
    }
    response
}
