//! Who may use the service, and how browsers may use its answers: a middleware in front of
//! every route.
//!
//! 1. `Host` must be one of ours ([`rules::Hosts`]): a DNS-rebinding page arrives with its own
//!    name (`/healthz` and `/readyz` are exempt, for probes that address the pod by IP or name).
//! 2. API requests that are not `GET`/`HEAD`/`OPTIONS` must come from the page's own origin,
//!    an `--allow-origin` page, or a program ([`rules::cross_site`]).
//! 3. Writes ([`rules::Access::Write`]) with a body need a content type no browser sends
//!    cross-site without a CORS preflight ([`rules::write_content_type`]), except on the
//!    paths other profilers post to ([`rules::SENDER_PATHS`]), which take what they send.
//! 4. API requests need the configured token ([`token::Tokens`]); the page and its files never
//!    do, so the viewer always loads.
//!
//! Every answer gets the security headers of [`page`]; `--allow-origin` pages get CORS.

pub mod args;
pub mod page;
pub mod rules;
pub mod token;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::error::Error;
pub use args::exposure_warning;
use rules::{Access, Hosts};
use token::{TokenError, Tokens};

/// The liveness and readiness paths, answered whatever the `Host`.
const PROBE_PATHS: [&str; 2] = ["/healthz", "/readyz"];

/// The guard's configuration, built once at start.
#[derive(Debug)]
pub struct Guard {
    hosts: Hosts,
    allow_origins: Vec<String>,
    embed_origins: Vec<String>,
    tokens: Tokens,
    csp: HeaderValue,
}

impl Default for Guard {
    /// Loopback names (and every IP address), no foreign origins, no tokens.
    fn default() -> Guard {
        Guard::new(
            Hosts::Names(vec!["localhost".to_owned()]),
            Vec::new(),
            Vec::new(),
            Tokens::default(),
        )
    }
}

impl Guard {
    /// A guard from checked parts (origins normalised, host names from [`rules::host_name`]).
    pub fn new(
        hosts: Hosts,
        allow_origins: Vec<String>,
        embed_origins: Vec<String>,
        tokens: Tokens,
    ) -> Guard {
        let csp = page::content_security_policy(&embed_origins);
        Guard {
            hosts,
            allow_origins,
            embed_origins,
            tokens,
            csp: HeaderValue::from_str(&csp)
                .unwrap_or_else(|_| HeaderValue::from_static("frame-ancestors 'self'")),
        }
    }

    /// Origins whose pages may frame the viewer.
    pub fn embed_origins(&self) -> &[String] {
        &self.embed_origins
    }

    /// The CORS layer for `--allow-origin` pages, when there are any.
    pub fn cors(&self) -> Option<CorsLayer> {
        if self.allow_origins.is_empty() {
            return None;
        }
        let origins = self
            .allow_origins
            .iter()
            .filter_map(|o| HeaderValue::from_str(o).ok());
        Some(
            CorsLayer::new()
                .allow_origin(AllowOrigin::list(origins))
                .allow_methods([Method::GET, Method::POST, Method::DELETE])
                .allow_headers([
                    header::CONTENT_TYPE,
                    header::AUTHORIZATION,
                    header::HeaderName::from_static(crate::http::upstream::ORG_HEADER),
                ]),
        )
    }

    /// Whether the request may go on; `Err` is the answer when not.
    fn admit(&self, request: &Request) -> Result<(), Error> {
        let path = request.uri().path();
        if PROBE_PATHS.contains(&path) {
            return Ok(());
        }
        self.check_host(request)?;
        if !rules::is_api(path) {
            return Ok(());
        }
        let (method, headers) = (request.method(), request.headers());
        let access = rules::access(method, path);
        if !rules::is_safe(method) {
            rules::cross_site(headers, &self.allow_origins).map_err(Error::forbidden)?;
            let has_body = matches!(*method, Method::POST | Method::PUT | Method::PATCH);
            if access == Access::Write && has_body && !rules::SENDER_PATHS.contains(&path) {
                rules::write_content_type(headers)
                    .map_err(|e| Error::forbidden(format!("{method} {path}: {e}")))?;
            }
        }
        // A CORS preflight carries no credentials.
        if *method == Method::OPTIONS {
            return Ok(());
        }
        self.tokens
            .check(access, headers)
            .map_err(|e| token_error(e, access))
    }

    /// Whether `headers` carry the token `access` needs (for requests that do not pass the
    /// middleware: the OTLP gRPC listener).
    pub fn check_token(
        &self,
        access: Access,
        headers: &axum::http::HeaderMap,
    ) -> Result<(), Error> {
        self.tokens
            .check(access, headers)
            .map_err(|e| token_error(e, access))
    }

    fn check_host(&self, request: &Request) -> Result<(), Error> {
        let given = rules::header_text(request.headers(), header::HOST)
            .map(str::to_owned)
            .or_else(|| request.uri().authority().map(|a| a.to_string()));
        // HTTP/1.0 clients may send no Host; browsers always do.
        let Some(given) = given else {
            return Ok(());
        };
        match rules::host_name(&given) {
            Some(name) if self.hosts.allows(&name) => Ok(()),
            _ => Err(Error::forbidden(format!(
                "requests for host '{given}' are refused: this service answers only to the \
                 names it was given (start it with --allowed-host NAME for each name clients \
                 use); this protects it from pages that rebind their own name to its address"
            ))),
        }
    }
}

fn token_error(e: TokenError, access: Access) -> Error {
    let which = match access {
        Access::Write => "writes need the --token-file token",
        Access::Read => "queries need the --query-token-file (or --token-file) token",
    };
    Error::unauthorized(match e {
        TokenError::Missing => format!(
            "this request needs an access token ({which}): send Authorization: Bearer <token>; \
             in the viewer, open its address with #token=<token> at the end"
        ),
        TokenError::Wrong => format!("the access token is not valid here ({which})"),
    })
}

/// The middleware: refuses what the guard refuses, adds the security headers to every answer.
pub async fn check(State(guard): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    // The push call is a Connect call: its client reads Connect's error JSON, not an envelope.
    let connect = request.uri().path() == crate::http::connect::PATH;
    let mut response = match guard.admit(&request) {
        Ok(()) => next.run(request).await,
        Err(e) => {
            let unauthorized = e.status() == axum::http::StatusCode::UNAUTHORIZED;
            let mut response = match connect {
                true => crate::http::connect::connect_error(&e),
                false => e.into_response(),
            };
            if unauthorized {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"embers\""),
                );
            }
            response
        }
    };
    page::add_headers(response.headers_mut(), &guard.csp);
    response
}
