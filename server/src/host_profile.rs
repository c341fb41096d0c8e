//! `serve --profile-host`: run the collector (`embers-agent`'s library) inside the service and
//! write its windows straight to the store, through the same batch checks and stack limits as
//! `POST /v1/profile/ingest`. Built only with the cargo feature `profile-host` (it needs clang
//! and libelf to build); without it the option explains how to get it.

use std::sync::Arc;
use std::time::Duration;

use clap::Args;

use crate::limits::StackLimits;
use crate::store::Store;

/// Options of `serve` for profiling this host.
#[derive(Debug, Clone, Args)]
pub struct HostProfileArgs {
    /// Profile this host with eBPF (every CPU, every process) and store its profiles next to
    /// the others; needs root or CAP_BPF and CAP_PERFMON, and a build with
    /// `--features profile-host`. When the collector cannot start, the service says why and
    /// serves without it.
    #[arg(long)]
    pub profile_host: bool,
    /// With --profile-host: how often a window of samples is stored.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub profile_host_interval: Duration,
    /// With --profile-host: also record off-CPU time.
    #[arg(long)]
    pub profile_host_off_cpu: bool,
}

/// The running collector; dropping it stops it after storing the window in progress.
pub struct HostProfiler {
    #[cfg(feature = "profile-host")]
    _running: embers_agent::Running,
}

/// Start the collector when asked; `Err` says why it cannot run here.
pub fn start(
    args: &HostProfileArgs,
    store: Arc<Store>,
    limits: StackLimits,
) -> Result<Option<HostProfiler>, String> {
    if !args.profile_host {
        return Ok(None);
    }
    run(args, store, limits).map(Some)
}

/// [`start`], saying in the log why not when the collector cannot run: the service serves on
/// without it.
pub fn start_or_say_why(
    args: &HostProfileArgs,
    store: Arc<Store>,
    limits: StackLimits,
) -> Option<HostProfiler> {
    start(args, store, limits).unwrap_or_else(|e| {
        tracing::warn!("--profile-host: not profiling this host: {e}");
        None
    })
}

#[cfg(not(feature = "profile-host"))]
fn run(_: &HostProfileArgs, _: Arc<Store>, _: StackLimits) -> Result<HostProfiler, String> {
    Err(
        "this embers-server was built without the collector: build it with \
         `cargo build -p embers-server --features profile-host` (needs clang, libelf-dev, \
         zlib1g-dev; scripts/setup.sh installs them)"
            .to_owned(),
    )
}

#[cfg(feature = "profile-host")]
fn run(
    args: &HostProfileArgs,
    store: Arc<Store>,
    limits: StackLimits,
) -> Result<HostProfiler, String> {
    let options = embers_agent::Options {
        interval: args.profile_host_interval,
        off_cpu: args.profile_host_off_cpu,
        ..embers_agent::Options::default()
    };
    let sink = Box::new(StoreSink { store, limits });
    let running = embers_agent::spawn(options, sink).map_err(|e| e.to_string())?;
    Ok(HostProfiler { _running: running })
}

/// Writes each window to the store in one transaction.
#[cfg(feature = "profile-host")]
pub struct StoreSink {
    /// Where.
    pub store: Arc<Store>,
    /// The same limits as ingest.
    pub limits: StackLimits,
}

#[cfg(feature = "profile-host")]
impl embers_agent::Sink for StoreSink {
    fn accept(&mut self, time: i64, inputs: Vec<embers_model::contract::ingest::BatchInput>) {
        let batches: Result<Vec<_>, _> = inputs
            .iter()
            .map(|b| crate::input::to_batch(b, time, &self.limits))
            .collect();
        let written = batches
            .map_err(|e| e.to_string())
            .and_then(|b| self.store.insert(&b).map_err(|e| e.to_string()));
        if let Err(e) = written {
            tracing::warn!("this host's profile window {time} was not stored: {e}");
        }
    }
}
