//! `perf script` text → batches ([`embers_model::wire::perf`] reads it): one batch per process,
//! named after it, with `[t] thread` under it as DeepFlow's agent writes; or, when the app is
//! given, every process's stacks under it (`Total` keeps a `[p] process` layer, DeepFlow's
//! whole-host form). A clock event with its period is stored as DeepFlow's agent stores its own
//! data (`eBPF`, `on-cpu`, microseconds); other events as `cpu`, counted in samples.
//!
//! Every sample keeps its own time to the millisecond ([`super::timed`]: the heatmap, the
//! samples and millisecond windows answer for it) and, when `perf script` printed `srcline`,
//! each frame's source line. perf's clock is time since boot unless the capture was recorded
//! with `-k CLOCK_REALTIME`: the capture is placed where the user says (its first sample at
//! `time`), else at its own Unix times, else so that its last sample is now; the distances
//! between samples are always perf's own.

use embers_model::contract::event::{unit_of, TOTAL_APP_SERVICE};
use embers_model::wire::perf::{parse_perf_script, PerfSample, PerfScript};

use super::timed::Timed;
use super::{batch_of_timed, FormatError};
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
    /// The Unix second of the first sample (the others follow at perf's distances); else the
    /// capture's own times when they are Unix time, else its last sample is now.
    pub time: Option<i64>,
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
    let unix_ms = clock(script, target.time);
    // One batch per process, in order of first appearance; or all under the app given.
    let mut by: Vec<(u32, Timed)> = Vec::new();
    for s in &script.samples {
        let key = if target.app_service.is_some() {
            0
        } else {
            s.process
        };
        let at = match by.iter().position(|(p, _)| *p == key) {
            Some(at) => at,
            None => {
                by.push((key, Timed::default()));
                by.len() - 1
            }
        };
        let whole_host = target.app_service == Some(TOTAL_APP_SERVICE);
        let (stack, lines) = stack_of(script, s, whole_host);
        let timed = &mut by[at].1;
        let stack = timed.stack(stack, lines)?;
        // Linux thread ids are below 2^22 (pid_max).
        let tid = u32::try_from(s.tid).unwrap_or(u32::MAX);
        timed.add(stack, unix_ms(s), tid, s.value);
    }
    by.into_iter()
        .map(|(process, timed)| {
            let app = match target.app_service {
                Some(app) => app,
                None => script.names[process as usize].as_str(),
            };
            batch_of_timed(meta(app), timed.finish()?, limits)
        })
        .collect()
}

/// A sample's stack and lines as stored: under `[p] process` for a whole host.
fn stack_of(
    script: &PerfScript,
    s: &PerfSample,
    whole_host: bool,
) -> (
    String,
    Vec<Option<embers_model::contract::detail::SourceLine>>,
) {
    let (stack, mut lines) = (script.stack_of(s), script.lines_of(s));
    if !whole_host {
        return (stack, lines);
    }
    if !lines.is_empty() {
        lines.insert(0, None);
    }
    let process = &script.names[s.process as usize];
    (format!("[p] {process};{stack}"), lines)
}

/// Each sample's Unix millisecond: see the module docs.
fn clock(script: &PerfScript, time: Option<i64>) -> impl Fn(&PerfSample) -> i64 {
    let first = script.samples.iter().map(|s| s.time_ns).min().unwrap_or(0);
    let last = script.samples.iter().map(|s| s.time_ns).max().unwrap_or(0);
    // (Unix ms of `anchor`, the sample time it stands for).
    let (base, anchor) = match time {
        Some(t) => (t.saturating_mul(1000), first),
        None if script.realtime() => (0, 0),
        None => (super::now_seconds().saturating_mul(1000), last),
    };
    move |s: &PerfSample| {
        let since = i128::from(s.time_ns) - i128::from(anchor);
        let ms = i64::try_from(since.div_euclid(1_000_000)).unwrap_or(0);
        base.saturating_add(ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two samples 1.5005 s apart on perf's default clock (time since boot).
    const SINCE_BOOT: &str = "\
hot 7/7 100.250000: 1000 cpu-clock:
\t 1158 hot

hot 7/8 101.750500: 1000 cpu-clock:
\t 1158 hot
";

    #[test]
    fn samples_keep_perf_s_distances_where_the_user_places_them_or_end_now() {
        let script = parse_perf_script(SINCE_BOOT).expect("perf script");
        let placed = clock(&script, Some(1_700_000_000));
        let ms: Vec<i64> = script.samples.iter().map(&placed).collect();
        assert_eq!(ms, [1_700_000_000_000, 1_700_000_001_500]);
        let before = super::super::now_seconds() * 1000;
        let ended = clock(&script, None);
        let after = super::super::now_seconds() * 1000;
        let ms: Vec<i64> = script.samples.iter().map(&ended).collect();
        assert!(
            (before..=after).contains(&ms[1]),
            "the last sample now: {ms:?}"
        );
        // 1500.5 ms apart, each rounded down from its anchor.
        assert!((1500..=1501).contains(&(ms[1] - ms[0])), "{ms:?}");

        let tags = Tags::new();
        let target = Target {
            app_service: None,
            language: None,
            event_type: None,
            time: Some(1_700_000_000),
            tags: &tags,
        };
        let batches = batches(SINCE_BOOT, &target, &StackLimits::default()).expect("batches");
        let times: Vec<(i64, Vec<(u16, u32)>)> = batches[0]
            .samples
            .iter()
            .map(|s| {
                let d = s.detail.as_deref().expect("events");
                (
                    s.time,
                    d.events.iter().map(|e| (e.offset_ms, e.tid)).collect(),
                )
            })
            .collect();
        assert_eq!(
            times,
            [
                (1_700_000_000, vec![(0, 7)]),
                (1_700_000_001, vec![(500, 8)])
            ]
        );
    }
}
