//! The write side of `backends_bench`: the synthetic fleet day's batches, the ingest of the
//! whole day from concurrent writers, the steady-state ingest rate and the cost of making the
//! samples.

pub mod functions;

use std::time::Instant;

use embers_server::demo::Rng;
use embers_server::store::{Batch, BatchMeta, Sample, Store, Tags};

/// Start of the synthetic day.
pub const T0: i64 = 1_700_000_000;
/// Its length in seconds.
pub const DAY: i64 = 86_400;
/// Processes.
pub const APPS: usize = 20;
/// Hosts.
pub const HOSTS: usize = 8;

/// The tag set of process `app` on `host`.
fn meta(app: usize, host: usize) -> BatchMeta {
    let tags = Tags::new()
        .with("host", &format!("node-{host}"))
        .and_then(|t| t.with("k8s.label.app", &format!("app-{app}")))
        .unwrap_or_default();
    BatchMeta {
        app_service: format!("app-{app}"),
        language: "eBPF".into(),
        event_type: "on-cpu".into(),
        unit: "microseconds".into(),
        tags,
    }
}

/// The samples `from..to` of the day, in time order, grouped in batches per (app, host).
pub fn chunk(rng: &mut Rng, stacks: &[String], from: usize, to: usize, n: usize) -> Vec<Batch> {
    let mut batches: Vec<Batch> = (0..APPS * HOSTS)
        .map(|i| Batch {
            meta: meta(i / HOSTS, i % HOSTS),
            samples: Vec::new(),
        })
        .collect();
    for i in from..to {
        let u = rng.below(1 << 20) as f64 / f64::from(1 << 20);
        let stack = if i < stacks.len() {
            i
        } else {
            ((u * u * u) * stacks.len() as f64) as usize
        };
        // Process 0 is the hot one: a third of all samples.
        let app = if rng.chance(3) {
            0
        } else {
            rng.below(APPS as u64) as usize
        };
        let host = rng.below(HOSTS as u64) as usize;
        batches[app * HOSTS + host].samples.push(Sample {
            time: T0 + (i as i64 * DAY) / n as i64,
            stack: stacks[stack.min(stacks.len() - 1)].clone(),
            value: 10_101,
            detail: None,
        });
    }
    batches.retain(|b| !b.samples.is_empty());
    batches
}

/// Ingest the day in calls of `per_call` samples from `writers` threads (as many agents post at
/// once), fed by one thread making the synthetic batches ahead; reports the wall time of the
/// whole ingest, generation included where it is not hidden behind the writes.
pub fn ingest(
    store: &Store,
    stacks: &[String],
    n: usize,
    per_call: usize,
    writers: usize,
) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Batch>>(writers);
    let rx = std::sync::Mutex::new(rx);
    let t = Instant::now();
    let outcome: Result<(), String> = std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut rng = Rng::new(7);
            let mut from = 0;
            while from < n {
                let to = (from + per_call).min(n);
                if tx.send(chunk(&mut rng, stacks, from, to, n)).is_err() {
                    return;
                }
                from = to;
            }
        });
        let handles: Vec<_> = (0..writers)
            .map(|_| {
                scope.spawn(|| loop {
                    let next = rx.lock().map_err(|e| e.to_string())?.recv();
                    let Ok(batches) = next else {
                        return Ok(());
                    };
                    store.insert(&batches).map_err(|e| e.to_string())?;
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|_| Err("writer panicked".into())))
    });
    outcome?;
    let took = t.elapsed().as_secs_f64();
    println!(
        "  ingest: {n} samples in {took:.1} s = {:.0} samples/s \
         ({writers} writers, calls of {per_call})",
        n as f64 / took
    );
    Ok(())
}

/// The store's own ingest rate once its stacks are known (the steady state of a fleet): 10 calls
/// made before the clock starts, written by `writers` threads. Adds their samples to the day.
pub fn steady_ingest(
    store: &Store,
    stacks: &[String],
    per_call: usize,
    writers: usize,
) -> Result<(), String> {
    let calls = 10;
    let n = calls * per_call;
    let mut rng = Rng::new(11);
    let mut ready: Vec<Vec<Batch>> = (0..calls)
        .map(|i| {
            chunk(
                &mut rng,
                stacks,
                stacks.len() + i * per_call,
                stacks.len() + (i + 1) * per_call,
                n,
            )
        })
        .collect();
    let work = std::sync::Mutex::new(&mut ready);
    let t = Instant::now();
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..writers)
            .map(|_| {
                scope.spawn(|| loop {
                    let next = work.lock().map_err(|e| e.to_string())?.pop();
                    let Some(batches) = next else {
                        return Ok::<(), String>(());
                    };
                    store.insert(&batches).map_err(|e| e.to_string())?;
                })
            })
            .collect();
        handles
            .into_iter()
            .try_for_each(|h| h.join().unwrap_or_else(|_| Err("writer panicked".into())))
    })?;
    let took = t.elapsed().as_secs_f64();
    println!(
        "  steady ingest (stacks known, batches made beforehand): {n} samples in {took:.2} s \
         = {:.0} samples/s",
        n as f64 / took
    );
    Ok(())
}

/// How long making `per_call` synthetic samples takes (the feeder's share of the ingest time).
pub fn generation_cost(stacks: &[String], n: usize, per_call: usize) {
    let t = Instant::now();
    let _ = chunk(&mut Rng::new(9), stacks, 0, per_call.min(n), n);
    println!(
        "  (making one call's {per_call} samples takes {})",
        crate::ms(t.elapsed())
    );
}
