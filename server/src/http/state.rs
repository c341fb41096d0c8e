//! [`AppState`]: what every handler is given, built by `serve` and `mcp` from their options
//! (or by [`AppState::new`] with the defaults).

use std::path::PathBuf;
use std::sync::Arc;

use embers_model::contract::shape::ResultShape;

use super::guard::Guard;
use super::upstream::Upstream;
use crate::host_profile::HostStatus;
use crate::limits::sizes::Limits;
use crate::limits::writes::WriteGate;
use crate::limits::{Caps, Limiter};
use crate::store::Store;

/// Everything a request handler needs; cheap to clone.
#[derive(Debug, Clone)]
pub struct AppState {
    /// The local profile store.
    pub store: Arc<Store>,
    /// Shape of `result` when the request does not ask for one (`--result-shape`).
    pub default_shape: ResultShape,
    /// When set, ProfileTracing requests go to this querier instead of the local store.
    pub upstream: Option<Arc<Upstream>>,
    /// Directory of the built viewer (`--static-dir`); `None`: the one built into the binary.
    pub static_dir: Option<PathBuf>,
    /// Body size limits.
    pub limits: Limits,
    /// Cost limits and the query gate.
    pub limiter: Arc<Limiter>,
    /// Who may use the service and the headers every answer gets.
    pub guard: Arc<Guard>,
    /// This host's collector (`--profile-host`), for `/healthz`.
    pub collector: Option<Arc<HostStatus>>,
    /// The write gate: ingest bytes in flight, save and delete turns, snapshot caps.
    pub writes: Arc<WriteGate>,
    /// Whether `"debug": true` is honoured (`--allow-debug`): else it is neither answered
    /// with internal detail nor forwarded upstream.
    pub allow_debug: bool,
    /// The alert rules and their state (`serve --alert-rule`), for the dry run; `None`
    /// without rules.
    pub alerts: Option<Arc<crate::alerts::Alerts>>,
    /// Source roots and the link template (`--source-dir`, `--source-url`).
    pub sources: Arc<super::source::find::Sources>,
}

impl AppState {
    /// A state serving `store` locally with shape B, the viewer built into the binary, default
    /// limits (body sizes, [`Caps`], [`crate::limits::writes::WriteCaps`]), the default guard
    /// (loopback, same origin, no tokens) and `debug` off.
    pub fn new(store: Arc<Store>) -> AppState {
        AppState {
            store,
            default_shape: ResultShape::B,
            upstream: None,
            static_dir: None,
            limits: Limits::default(),
            limiter: Arc::new(Limiter::new(Caps::default())),
            guard: Arc::new(Guard::default()),
            collector: None,
            writes: Arc::new(WriteGate::new(Default::default())),
            allow_debug: false,
            alerts: None,
            sources: Arc::default(),
        }
    }
}
