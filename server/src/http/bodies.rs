//! The write gate's body extractors read from the state: an ingest body under a reservation
//! of its bytes ([`IngestBytes`]), a snapshot's in a save turn ([`SaveBytes`]), and a refusal
//! of either as the envelope error. They are here rather than in `limits` because they read
//! [`AppState`], which the handlers' layer owns.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};

use super::state::AppState;
use crate::error::Error;
use crate::limits::writes::{announced, IngestBytes, Refused, SaveBytes};

impl FromRequest<AppState> for IngestBytes {
    type Rejection = std::convert::Infallible;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let want = announced(request.headers(), state.limits.ingest as u64);
        let reserved = match state.writes.reserve_ingest(want) {
            Ok(reserved) => reserved,
            Err(e) => return Ok(IngestBytes(Err(Refused::Busy(e)))),
        };
        let body = Bytes::from_request(request, state).await;
        Ok(IngestBytes(
            body.map(|b| (reserved, b)).map_err(Refused::Body),
        ))
    }
}

impl FromRequest<AppState> for SaveBytes {
    type Rejection = std::convert::Infallible;

    async fn from_request(request: Request, state: &AppState) -> Result<Self, Self::Rejection> {
        let turn = match state.writes.save_turn() {
            Ok(turn) => turn,
            Err(e) => return Ok(SaveBytes(Err(Refused::Busy(e)))),
        };
        let body = Bytes::from_request(request, state).await;
        Ok(SaveBytes(body.map(|b| (turn, b)).map_err(Refused::Body)))
    }
}

impl Refused {
    /// As the envelope error: the gate's 503, or the body's 413 (over `limit`) or 400.
    pub fn into_error(self, limit: usize) -> Error {
        match self {
            Refused::Busy(e) => e,
            Refused::Body(r) => match super::read_body(Err(r), limit) {
                Err(e) => e,
                Ok(_) => Error::internal("a refused body was read"),
            },
        }
    }
}
