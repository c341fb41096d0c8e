//! A stop asked for while the collector names a window (which takes seconds on a busy machine:
//! its first window names every module it met) still gets what ran meanwhile: the collector
//! ends one more window. Here the sink holds the first window until the workload has run to
//! its end, then asks to stop, so all but the first second of the run arrives while a window is
//! being handed over. Before the fix the loop saw the stop and left with those records unread:
//! the sleeper's off-CPU time was its first second only (CI's "no kernel thread in Total" and
//! "~60% of its sleep" came from this).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use embers_agent::{Collector, Sink, Unwind, WindowReport};
use embers_model::contract::ingest::BatchInput;

use super::workloads::{self, Program};
use super::{allowed, options, NAPS, SECONDS, SERIAL};

/// Keeps every batch; at its first window, waits for the workload and then asks to stop.
struct HoldFirst {
    batches: Vec<BatchInput>,
    workload: Option<std::process::Child>,
    slept_us: u64,
    stop: Arc<AtomicBool>,
    windows: usize,
}

impl Sink for HoldFirst {
    fn accept(&mut self, _time: i64, batches: Vec<BatchInput>) {
        self.batches.extend(batches);
    }

    fn window(&mut self, _report: &WindowReport) {
        self.windows += 1;
        if let Some(child) = self.workload.take() {
            self.slept_us = workloads::finish(child, "embers-fp");
            self.stop.store(true, Ordering::Relaxed);
        }
    }
}

/// The microseconds `thread` of `app` waited off-CPU in nanosleep in `batches` (what it
/// measured; its other waits, such as its exit's, it did not).
fn off_cpu_us(batches: &[BatchInput], app: &str, thread: &str) -> u64 {
    let prefix = format!("[t] {thread};");
    batches
        .iter()
        .filter(|b| b.app_service == app && b.profile_event_type == "off-cpu")
        .flat_map(|b| b.folded.lines())
        .filter(|l| l.starts_with(&prefix))
        .filter(|l| {
            l.split(';')
                .any(|f| f.starts_with("[k] ") && f.contains("nanosleep"))
        })
        .filter_map(|l| l.rsplit_once(' ')?.1.parse::<u64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stop_asked_while_a_window_is_handed_over_keeps_what_ran_meanwhile() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let fp: Program = workloads::c_fp(dir.path());
    let sink = tokio::task::spawn_blocking(move || {
        let stop = Arc::new(AtomicBool::new(false));
        let mut collector = Collector::start(options(Unwind::Fp)).expect("the collector starts");
        let mut sink = HoldFirst {
            batches: Vec::new(),
            workload: Some(fp.start(SECONDS, NAPS)),
            slept_us: 0,
            stop: stop.clone(),
            windows: 0,
        };
        collector.run(&mut sink, &stop).expect("runs");
        sink
    })
    .await
    .expect("join");
    assert!(
        sink.windows >= 2,
        "one more window after the stop: {}",
        sink.windows
    );
    let waited = off_cpu_us(&sink.batches, "embers-fp", "sleeper");
    let ratio = waited as f64 / sink.slept_us.max(1) as f64;
    assert!(
        (ratio - 1.0).abs() <= 0.15,
        "the sleeper waited {waited} µs off-CPU but slept {} µs",
        sink.slept_us
    );
}
