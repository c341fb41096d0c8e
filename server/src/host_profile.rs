//! `serve --profile-host`: run the collector (`embers-agent`'s library) inside the service and
//! write its windows straight to the store, through the same batch checks and stack limits as
//! `POST /v1/profile/ingest`. Built only with the cargo feature `profile-host` (it needs clang
//! and libelf to build); without it the option explains how to get it. `/healthz` reports the
//! collector through [`HostStatus`]: running or why not, and what its windows held.

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use clap::Args;
use serde::Serialize;

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
    /// With --profile-host: give kernel threads (kworker, ksoftirqd, ...) graphs of their own
    /// too; by default they are only in `Total`, each being a process of its own.
    #[arg(long)]
    pub profile_host_kernel_threads: bool,
    /// With --profile-host: also profile C allocations (event types mem-alloc and mem-inuse)
    /// with uprobes on malloc, calloc, realloc and free; every allocation call of a traced
    /// process traps into the kernel (docs/collector.md says what it costs).
    #[arg(long)]
    pub profile_host_memory: bool,
    /// With --profile-host-memory: trace only processes whose name matches (default: every
    /// process but the service).
    #[arg(long, value_name = "REGEX")]
    pub profile_host_memory_comm: Option<String>,
}

/// The collector as `/healthz` shows it (member `collector`, only with `--profile-host`):
/// counts since it started. Members alphabetical, as the rest of the answer.
#[derive(Clone, Debug, Default, Serialize, utoipa::ToSchema)]
pub struct CollectorHealth {
    /// Why the last window could not be stored, if one could not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
    /// When the last window ended (Unix seconds); absent before the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_window: Option<i64>,
    /// fp-mode samples dropped in the kernel: a counts map was full.
    pub lost_counts: u64,
    /// Samples dropped in the kernel: its ring buffer was full.
    pub lost_events: u64,
    /// Stacks lost in the kernel (stack map full); their samples were kept without them.
    pub lost_stacks: u64,
    /// Off-CPU waits recorded.
    pub off_cpu_waits: u64,
    /// Why the collector is not running (`status` `not running` or `stopped`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// On-CPU samples taken.
    pub samples: u64,
    /// User stacks that ended before a root frame (deeper than the copied stack, or through
    /// code without unwind information).
    pub stacks_cut_short: u64,
    /// `running`; `not running` (it could not start); `stopped` (it failed while running).
    pub status: &'static str,
    /// Windows that could not be stored (`last_error` says why).
    pub store_errors: u64,
    /// Windows ended and handed to the store.
    pub windows: u64,
}

/// The collector's health, shared by its thread and `/healthz`.
#[derive(Debug, Default)]
pub struct HostStatus(Mutex<CollectorHealth>);

impl HostStatus {
    fn new(status: &'static str, reason: Option<String>) -> Arc<HostStatus> {
        Arc::new(HostStatus(Mutex::new(CollectorHealth {
            status,
            reason,
            ..CollectorHealth::default()
        })))
    }

    // A panic while holding the lock leaves plain counters behind: still worth showing.
    fn lock(&self) -> MutexGuard<'_, CollectorHealth> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The health now.
    pub fn snapshot(&self) -> CollectorHealth {
        self.lock().clone()
    }

    /// Count one window's report in.
    #[cfg(feature = "profile-host")]
    fn window(&self, r: &embers_agent::WindowReport) {
        let mut h = self.lock();
        h.windows += 1;
        h.last_window = Some(r.time);
        h.samples += r.kernel.samples;
        h.off_cpu_waits += r.kernel.blocks;
        h.lost_events += r.kernel.lost_events;
        h.lost_counts += r.kernel.lost_counts;
        h.lost_stacks += r.kernel.lost_stacks;
        h.stacks_cut_short += r.intake.cut_short;
    }

    #[cfg(feature = "profile-host")]
    fn store_failed(&self, error: String) {
        let mut h = self.lock();
        h.store_errors += 1;
        h.last_error = Some(error);
    }

    #[cfg(feature = "profile-host")]
    fn stopped(&self, reason: String) {
        let mut h = self.lock();
        h.status = "stopped";
        h.reason = Some(reason);
    }
}

/// The collector asked for: running, or not (its status says why). Dropping it stops the
/// collector after storing the window in progress.
pub struct HostProfiler {
    status: Arc<HostStatus>,
    #[cfg(feature = "profile-host")]
    _running: Option<embers_agent::Running>,
}

impl HostProfiler {
    /// Its health, for `/healthz`.
    pub fn status(&self) -> Arc<HostStatus> {
        self.status.clone()
    }

    fn not_running(reason: String) -> HostProfiler {
        HostProfiler {
            status: HostStatus::new("not running", Some(reason)),
            #[cfg(feature = "profile-host")]
            _running: None,
        }
    }
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

/// [`start`], saying why not in the log (and on `/healthz`) when the collector cannot run: the
/// service serves on without it.
pub fn start_or_say_why(
    args: &HostProfileArgs,
    store: Arc<Store>,
    limits: StackLimits,
) -> Option<HostProfiler> {
    start(args, store, limits).unwrap_or_else(|e| {
        tracing::warn!("--profile-host: not profiling this host: {e}");
        Some(HostProfiler::not_running(e))
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
    let comm = args
        .profile_host_memory_comm
        .as_deref()
        .map(embers_agent::options::comm_filter)
        .transpose()?;
    let options = embers_agent::Options {
        interval: args.profile_host_interval,
        off_cpu: args.profile_host_off_cpu,
        include_kernel_threads: args.profile_host_kernel_threads,
        memory: embers_agent::MemoryOptions {
            enabled: args.profile_host_memory,
            comm,
            ..Default::default()
        },
        ..embers_agent::Options::default()
    };
    let status = HostStatus::new("running", None);
    let sink = Box::new(StoreSink {
        store,
        limits,
        status: status.clone(),
    });
    let running = embers_agent::spawn(options, sink).map_err(|e| e.to_string())?;
    Ok(HostProfiler {
        status,
        _running: Some(running),
    })
}

/// Writes each window to the store in one transaction, and its report to the status.
#[cfg(feature = "profile-host")]
pub struct StoreSink {
    /// Where.
    pub store: Arc<Store>,
    /// The same limits as ingest.
    pub limits: StackLimits,
    /// What `/healthz` shows.
    pub status: Arc<HostStatus>,
}

#[cfg(feature = "profile-host")]
impl embers_agent::Sink for StoreSink {
    fn accept(&mut self, time: i64, inputs: Vec<embers_model::contract::ingest::BatchInput>) {
        let batches: Result<Vec<_>, _> = inputs
            .iter()
            .map(|b| crate::input::to_batch(b, time, &self.limits))
            .collect();
        // (detail for the log, what /healthz may say: a store error can name paths or URLs)
        let written = batches
            .map_err(|e| (e.to_string(), e.to_string()))
            .and_then(|b| {
                self.store.insert(&b).map_err(|e| {
                    let public = e.outage().map_or_else(
                        || "the store fails (see the server log)".to_owned(),
                        |o| o.describe(),
                    );
                    (e.to_string(), public)
                })
            });
        if let Err((detail, public)) = written {
            tracing::warn!("this host's profile window {time} was not stored: {detail}");
            self.status
                .store_failed(format!("window {time} was not stored: {public}"));
        }
    }

    fn window(&mut self, report: &embers_agent::WindowReport) {
        self.status.window(report);
    }

    fn failed(&mut self, error: &embers_agent::AgentError) {
        self.status.stopped(error.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_running_says_why_and_leaves_counts_out_of_nothing() {
        let p = HostProfiler::not_running("no CAP_BPF".into());
        let json = serde_json::to_value(p.status().snapshot()).expect("json");
        assert_eq!(json["status"], "not running");
        assert_eq!(json["reason"], "no CAP_BPF");
        assert_eq!(json["windows"], 0);
        assert!(json.get("last_window").is_none() && json.get("last_error").is_none());
        let members: Vec<&String> = json.as_object().expect("object").keys().collect();
        let mut sorted = members.clone();
        sorted.sort();
        assert_eq!(members, sorted, "alphabetical, as the rest of /healthz");
    }

    #[cfg(feature = "profile-host")]
    #[test]
    fn windows_add_up_and_a_store_error_is_kept() {
        let status = HostStatus::new("running", None);
        let mut report = embers_agent::WindowReport {
            time: 100,
            ..Default::default()
        };
        report.kernel.samples = 40;
        report.kernel.lost_events = 2;
        report.intake.cut_short = 3;
        status.window(&report);
        report.time = 110;
        status.window(&report);
        status.store_failed("window 110 was not stored: the store is full".into());
        let h = status.snapshot();
        assert_eq!((h.windows, h.samples, h.lost_events), (2, 80, 4));
        assert_eq!((h.stacks_cut_short, h.last_window), (6, Some(110)));
        assert_eq!(h.store_errors, 1);
        assert!(h.last_error.is_some_and(|e| e.contains("store is full")));
        status.stopped("ring buffer read failed".into());
        assert_eq!(status.snapshot().status, "stopped");
    }
}
