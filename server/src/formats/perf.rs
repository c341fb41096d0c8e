//! `perf script` text → batches ([`embers_model::wire::perf`] reads it): one batch per process,
//! named after it, with `[t] thread` under it as DeepFlow's agent writes; or, when the app is
//! given, every process's stacks under it (`Total` keeps a `[p] process` layer, DeepFlow's
//! whole-host form). A clock event with its period is stored as DeepFlow's agent stores its own
//! data (`eBPF`, `on-cpu`, microseconds); other events as `cpu`, counted in samples.

use embers_model::contract::event::{unit_of, TOTAL_APP_SERVICE};
use embers_model::wire::perf::{parse_perf_script, PerfScript};

use super::{batch_of, FormatError};
use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Tags};

/// Everything but the text.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// `app_service` for every stack (else each process's name).
    pub app_service: Option<&'a str>,
    /// `profile_language_type` (default `eBPF`).
    pub language: Option<&'a str>,
    /// `profile_event_type` instead of the one the event implies.
    pub event_type: Option<&'a str>,
    /// Unix seconds of every sample.
    pub time: i64,
    /// Tags of every batch.
    pub tags: &'a Tags,
}

/// What a capture was read into.
#[derive(Debug)]
pub struct Read {
    /// The batches to store.
    pub batches: Vec<Batch>,
    /// How many perf samples they hold (equal stacks are merged, so the batches have fewer).
    pub samples: usize,
    /// What the user should know about how processes were named.
    pub notes: Vec<String>,
}

/// The batches of `perf script` output.
pub fn batches(
    text: &str,
    target: &Target<'_>,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    read(text, target, limits).map(|r| r.batches)
}

/// The batches of `perf script` output, how many samples they hold, and notes on naming.
pub fn read(text: &str, target: &Target<'_>, limits: &StackLimits) -> Result<Read, FormatError> {
    let script = parse_perf_script(text)?;
    let notes = if target.app_service.is_none() {
        naming_notes(&script)
    } else {
        Vec::new()
    };
    let samples = script.samples.len();
    let batches = batches_of(&script, target, limits)?;
    Ok(Read {
        batches,
        samples,
        notes,
    })
}

/// Why some processes may not carry the names their users know.
fn naming_notes(script: &PerfScript) -> Vec<String> {
    const FIX: &str = "`perf script --show-task-events` prints the records that name processes";
    let mut notes = Vec::new();
    if script.without_pids {
        notes.push(format!(
            "perf script printed thread ids only, so each thread's name is taken as its              process's; {FIX} (or `perf script -F +pid` groups threads by process)"
        ));
    }
    for (pid, name) in &script.named_by_thread {
        notes.push(format!(
            "process {pid} is stored as {name:?}, the name of one of its threads (its main              thread was not sampled); {FIX}"
        ));
    }
    notes
}

/// The batches of a parsed capture.
fn batches_of(
    script: &PerfScript,
    target: &Target<'_>,
    limits: &StackLimits,
) -> Result<Vec<Batch>, FormatError> {
    let event = target.event_type.unwrap_or(script.event_type());
    let meta = |app: &str| BatchMeta {
        app_service: app.to_owned(),
        language: target.language.unwrap_or("eBPF").to_owned(),
        event_type: event.to_owned(),
        unit: unit_of(event).to_owned(),
        tags: target.tags.clone(),
    };
    let by_process = script.stacks_by_process();
    match target.app_service {
        None => by_process
            .into_iter()
            .map(|(process, stacks)| batch_of(meta(&process), stacks, target.time, limits))
            .collect(),
        Some(app) => {
            let whole_host = app == TOTAL_APP_SERVICE;
            let stacks = by_process.into_iter().flat_map(|(process, stacks)| {
                stacks.into_iter().map(move |(stack, v)| {
                    if whole_host {
                        (format!("[p] {process};{stack}"), v)
                    } else {
                        (stack, v)
                    }
                })
            });
            Ok(vec![batch_of(meta(app), stacks, target.time, limits)?])
        }
    }
}
