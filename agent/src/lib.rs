//! Embers' collector (Linux only): samples every CPU with eBPF, unwinds user stacks from
//! `.eh_frame` (also in binaries built without frame pointers), names frames as DeepFlow's
//! agent does and sends each window to an Embers service — or, inside the service
//! (`embers-server serve --profile-host`), straight to its store.
//!
//! The pipeline, in module order: `bpf` (the kernel side: `profile.bpf.c`, perf events, ring
//! buffer, counters) → `intake` (each record unwound by `procs` against `modules` while the
//! process still exists, summed per stack as [`frame::Frame`]s) → at a window's end `symbols`
//! names the frames (`names` holds DeepFlow's name forms) and `window` folds them into ingest
//! batches → a [`sink::Sink`], with each window's [`report::WindowReport`]. `collector` runs
//! that loop; [`spawn`] runs it on a thread. With `--memory`, `memory` adds allocator uprobes
//! whose samples are unwound by the same intake and folded into the same windows.

pub mod bpf;
pub mod cli;
pub mod collector;
pub mod error;
pub mod files;
pub mod frame;
pub mod host;
pub mod intake;
pub mod maps;
pub mod memory;
pub mod modules;
pub mod names;
pub mod options;
pub mod preflight;
pub mod procs;
pub mod report;
pub mod seconds;
pub mod sink;
pub mod symbols;
pub mod window;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread::JoinHandle;

pub use collector::Collector;
pub use error::AgentError;
pub use options::{MemoryOptions, Options, Unwind};
pub use report::WindowReport;
pub use sink::Sink;

/// A collector running on its own thread.
pub struct Running {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<Result<(), AgentError>>>,
}

impl Running {
    /// Stop after sending the window in progress, and wait for that.
    pub fn stop(mut self) -> Result<(), AgentError> {
        self.finish()
    }

    fn finish(&mut self) -> Result<(), AgentError> {
        self.stop.store(true, Ordering::Relaxed);
        match self.thread.take().map(JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err(AgentError::Config("the collector thread panicked".into())),
            None => Ok(()),
        }
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.finish();
    }
}

/// Start a collector on a thread of its own (named `embers-agent`) sending to `sink`; returns
/// once it samples, or with the reason it cannot.
pub fn spawn(options: Options, mut sink: Box<dyn Sink + Send>) -> Result<Running, AgentError> {
    let stop = Arc::new(AtomicBool::new(false));
    let (started, outcome) = mpsc::channel();
    let flag = stop.clone();
    let thread = std::thread::Builder::new()
        .name("embers-agent".into())
        .spawn(move || {
            let mut collector = match Collector::start(options) {
                Ok(c) => {
                    let _ = started.send(Ok(()));
                    c
                }
                Err(e) => {
                    let _ = started.send(Err(e));
                    return Ok(());
                }
            };
            let result = collector.run(sink.as_mut(), &flag);
            if let Err(e) = &result {
                tracing::error!("the collector stopped: {e}");
                sink.failed(e);
            }
            result
        })
        .map_err(|e| AgentError::Config(format!("cannot start the collector thread: {e}")))?;
    let mut running = Running {
        stop,
        thread: Some(thread),
    };
    match outcome.recv() {
        Ok(Ok(())) => Ok(running),
        Ok(Err(e)) => {
            let _ = running.finish();
            Err(e)
        }
        Err(_) => running.finish().and(Err(AgentError::Config(
            "the collector thread ended before it started".into(),
        ))),
    }
}
