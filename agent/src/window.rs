//! One window of named samples folded into ingest batches: per process (`app_service` = the
//! process name, stacks `[t] <thread>;<frames root→leaf>`) for the processes the user asked
//! for, and the per-host `Total` graph of every process's on-CPU time (`[p] <process>;[t]
//! <thread>`, the main thread's samples `[p] <process>` alone, as DeepFlow's agent writes it).
//! A process's stacks may carry their frames' source lines ([`Fold::add_with_lines`]): a stack
//! seen at different lines is folded once per distinct set of lines, each line of the folded
//! text with its `details` entry, so the store can sum lines without new frames. Stacks whose
//! records were timed ([`Fold::add_timed`]) are split by wall-clock second, one batch per second,
//! their events' milliseconds and threads in `details` too (`crate::seconds`).

use std::collections::{BTreeMap, HashMap};

use embers_model::contract::detail::{SourceLine, TimedEvent};
use embers_model::contract::event::{DEFAULT_LANGUAGE, DEFAULT_UNIT, TOTAL_APP_SERVICE};
use embers_model::contract::ingest::{BatchInput, FoldedDetail};
use serde_json::Value;

use crate::names;
use crate::seconds::{by_second, Stamp, Tally};

/// What a sample measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Event {
    /// Time on the CPU, counted in samples.
    OnCpu,
    /// Time blocked, in nanoseconds.
    OffCpu,
    /// Bytes allocated (`--memory`).
    MemAlloc,
    /// Bytes in use at the window's end (`--memory`).
    MemInuse,
}

impl Event {
    /// The `profile_event_type`.
    pub fn name(self) -> &'static str {
        match self {
            Event::OnCpu => "on-cpu",
            Event::OffCpu => "off-cpu",
            Event::MemAlloc => "mem-alloc",
            Event::MemInuse => "mem-inuse",
        }
    }

    /// The `profile_value_unit` of its batches.
    pub fn unit(self) -> &'static str {
        match self {
            Event::OnCpu | Event::OffCpu => DEFAULT_UNIT,
            Event::MemAlloc | Event::MemInuse => "bytes",
        }
    }
}

/// A sample with its frames named.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Named {
    /// What it measures.
    pub event: Event,
    /// Process id (tgid).
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The process's name (its main thread's).
    pub process: String,
    /// The thread's name.
    pub thread: String,
    /// Frames, root first, kernel frames last, already in their final form.
    pub frames: Vec<String>,
    /// On-CPU: samples; off-CPU: nanoseconds; memory: bytes.
    pub value: u64,
    /// Whether the process matches `--process-regex` (gets a per-process graph).
    pub wanted: bool,
}

/// A stack's frames joined by `;`, and their lines (one per frame, or none known).
type StackLines = (String, Vec<Option<SourceLine>>);

/// A window's samples, summed per distinct stack (and its lines).
#[derive(Debug, Default)]
pub struct Fold {
    processes: BTreeMap<(Event, String), HashMap<StackLines, Tally>>,
    total: HashMap<String, Tally>,
}

impl Fold {
    /// An empty window.
    pub fn new() -> Fold {
        Fold::default()
    }

    /// Whether nothing was added.
    pub fn is_empty(&self) -> bool {
        self.processes.is_empty() && self.total.is_empty()
    }

    /// Add one sample to its process's graph (if wanted) and, for on-CPU, to `Total`.
    pub fn add(&mut self, s: &Named) {
        self.add_with_lines(s, &[]);
    }

    /// [`Fold::add`] with the source line of each of `s.frames` (`lines` empty, or one entry
    /// per frame).
    pub fn add_with_lines(&mut self, s: &Named, lines: &[Option<SourceLine>]) {
        self.add_timed(s, lines, &[]);
    }

    /// [`Fold::add_with_lines`] with the stamps (Unix ms) of the sample's timed records.
    pub fn add_timed(&mut self, s: &Named, lines: &[Option<SourceLine>], stamps: &[Stamp]) {
        let thread = names::thread(&s.thread, s.tid);
        if s.wanted {
            let mut stack = thread.clone();
            for frame in &s.frames {
                stack.push(';');
                stack.push_str(frame);
            }
            // The thread's frame leads the stack and has no line.
            let known = lines.len() == s.frames.len() && lines.iter().any(Option::is_some);
            let lines = if known {
                std::iter::once(None).chain(lines.iter().cloned()).collect()
            } else {
                Vec::new()
            };
            let app = names::app_service(&s.process, s.pid);
            self.processes
                .entry((s.event, app))
                .or_default()
                .entry((stack, lines))
                .or_default()
                .add(s.value, stamps);
        }
        if s.event == Event::OnCpu {
            let mut stack = names::process(&s.process, s.pid);
            if s.tid != s.pid {
                stack.push(';');
                stack.push_str(&thread);
            }
            self.total.entry(stack).or_default().add(s.value, stamps);
        }
    }

    /// The window as batches timed `time`, values in microseconds (`us_per_sample` per
    /// on-CPU sample), each batch's folded text at most about `max_bytes` (a bigger graph is
    /// split into several batches with the same metadata).
    pub fn batches(
        self,
        time: i64,
        tags: &BTreeMap<String, Value>,
        us_per_sample: u64,
        max_bytes: usize,
    ) -> Vec<BatchInput> {
        let mut out = Vec::new();
        let to_us = |event: Event, v: u64| match event {
            Event::OnCpu => v.saturating_mul(us_per_sample),
            Event::OffCpu => v / 1000,
            Event::MemAlloc | Event::MemInuse => v,
        };
        let total: HashMap<StackLines, Tally> = self
            .total
            .into_iter()
            .map(|(stack, v)| ((stack, Vec::new()), v))
            .collect();
        let graphs = self.processes.into_iter().chain(
            (!total.is_empty()).then(|| ((Event::OnCpu, TOTAL_APP_SERVICE.to_owned()), total)),
        );
        for ((event, app), stacks) in graphs {
            // Each second's lines: a stack's timed records in their second, the rest at the
            // window's time.
            let mut seconds: BTreeMap<i64, Vec<Line>> = BTreeMap::new();
            for (stack, tally) in stacks {
                for (second, us, events) in by_second(&tally, time, |v| to_us(event, v)) {
                    seconds
                        .entry(second)
                        .or_default()
                        .push((stack.clone(), us, events));
                }
            }
            for (second, mut lines) in seconds {
                // Sorted, so a window always folds to the same text.
                lines.sort_unstable_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
                for (folded, details) in split_lines(&lines, max_bytes) {
                    out.push(BatchInput {
                        app_service: app.clone(),
                        profile_language_type: DEFAULT_LANGUAGE.to_owned(),
                        profile_event_type: event.name().to_owned(),
                        profile_value_unit: event.unit().to_owned(),
                        time: Some(second),
                        tags: tags.clone(),
                        folded,
                        details,
                    });
                }
            }
        }
        out
    }
}

/// One folded line: its stack and lines, value, and events.
type Line = (StackLines, u64, Vec<TimedEvent>);

/// Folded texts of `stack value` lines with the details of those that have lines or events,
/// each text (with about what its details add in JSON) at most `max_bytes` unless one line
/// alone is longer.
fn split_lines(lines: &[Line], max_bytes: usize) -> Vec<(String, Vec<FoldedDetail>)> {
    let mut texts = Vec::new();
    let (mut text, mut details, mut bytes, mut count) = (String::new(), Vec::new(), 0, 0);
    for ((stack, frame_lines), value, events) in lines {
        let line = format!("{stack} {value}\n");
        // An event is about 40 bytes of JSON.
        let size = line.len() + detail_bytes(frame_lines) + events.len() * 40;
        if !text.is_empty() && bytes + size > max_bytes {
            texts.push((std::mem::take(&mut text), std::mem::take(&mut details)));
            (bytes, count) = (0, 0);
        }
        if !frame_lines.is_empty() || !events.is_empty() {
            details.push(FoldedDetail {
                sample: count,
                lines: frame_lines.clone(),
                events: events.clone(),
            });
        }
        text.push_str(&line);
        bytes += size;
        count += 1;
    }
    if !text.is_empty() {
        texts.push((text, details));
    }
    texts
}

/// About the bytes a detail with `lines` takes in the JSON body.
fn detail_bytes(lines: &[Option<SourceLine>]) -> usize {
    if lines.is_empty() {
        return 0;
    }
    let each: usize = lines
        .iter()
        .map(|l| l.as_ref().map_or(5, |l| l.file.len() + 24))
        .sum();
    each + 32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(event: Event, tid: u32, frames: &[&str], value: u64, wanted: bool) -> Named {
        Named {
            event,
            pid: 10,
            tid,
            process: "web".into(),
            thread: if tid == 10 {
                "web".into()
            } else {
                "worker".into()
            },
            frames: frames.iter().map(|f| (*f).to_owned()).collect(),
            value,
            wanted,
        }
    }

    #[test]
    fn folds_per_process_and_total_as_deepflow_does() {
        let mut fold = Fold::new();
        fold.add(&sample(Event::OnCpu, 10, &["main", "work"], 2, true));
        fold.add(&sample(Event::OnCpu, 10, &["main", "work"], 1, true));
        fold.add(&sample(
            Event::OnCpu,
            11,
            &["[l] start_thread", "run"],
            1,
            true,
        ));
        fold.add(&sample(
            Event::OffCpu,
            11,
            &["run", "[k] schedule"],
            2_500_000,
            true,
        ));
        fold.add(&sample(Event::OnCpu, 11, &["x"], 4, false));
        let tags = BTreeMap::from([("host".to_owned(), Value::from("h"))]);
        let batches = fold.batches(1_700_000_000, &tags, 10101, 1 << 20);
        let by_app: Vec<(&str, &str, &str)> = batches
            .iter()
            .map(|b| {
                (
                    b.app_service.as_str(),
                    b.profile_event_type.as_str(),
                    b.folded.as_str(),
                )
            })
            .collect();
        assert_eq!(
            by_app,
            vec![
                (
                    "web",
                    "on-cpu",
                    "[t] web;main;work 30303\n[t] worker;[l] start_thread;run 10101\n"
                ),
                ("web", "off-cpu", "[t] worker;run;[k] schedule 2500\n"),
                (
                    "Total",
                    "on-cpu",
                    "[p] web 30303\n[p] web;[t] worker 50505\n"
                ),
            ]
        );
        assert!(batches.iter().all(|b| b.time == Some(1_700_000_000)
            && b.tags == tags
            && b.profile_language_type == "eBPF"
            && b.profile_value_unit == "microseconds"));
    }

    #[test]
    fn a_stack_at_different_lines_folds_once_per_lines_with_its_details() {
        let at = |line| {
            Some(SourceLine {
                file: "/src/hot.c".into(),
                line,
            })
        };
        let mut fold = Fold::new();
        let s = sample(Event::OnCpu, 10, &["main", "work"], 1, true);
        fold.add_with_lines(&s, &[at(3), at(7)]);
        fold.add_with_lines(&s, &[at(3), at(8)]);
        fold.add_with_lines(&s, &[at(3), at(8)]);
        fold.add_with_lines(&s, &[None, None]);
        let batches = fold.batches(1, &BTreeMap::new(), 10, 1 << 20);
        let web = &batches[0];
        assert_eq!(
            web.folded,
            "[t] web;main;work 10\n[t] web;main;work 10\n[t] web;main;work 20\n"
        );
        let details: Vec<(usize, Vec<Option<SourceLine>>)> = web
            .details
            .iter()
            .map(|d| (d.sample, d.lines.clone()))
            .collect();
        assert_eq!(
            details,
            vec![(1, vec![None, at(3), at(7)]), (2, vec![None, at(3), at(8)])]
        );
        assert!(batches[1].details.is_empty(), "Total has no lines");
        // Split: each batch counts its own samples from 0.
        let mut fold = Fold::new();
        for line in 1..=40 {
            fold.add_with_lines(&s, &[at(1), at(line)]);
        }
        let parts = fold.batches(1, &BTreeMap::new(), 1, 300);
        let web: Vec<&BatchInput> = parts.iter().filter(|b| b.app_service == "web").collect();
        assert!(web.len() > 2);
        for b in web {
            let n = b.folded.lines().count();
            assert_eq!(b.details.len(), n);
            assert!(b.details.iter().enumerate().all(|(i, d)| d.sample == i));
        }
    }

    #[test]
    fn timed_samples_go_to_their_seconds_with_their_events() {
        let stamp = |time, tid| Stamp {
            time,
            tid,
            value: 1,
        };
        let mut fold = Fold::new();
        let s = sample(Event::OnCpu, 11, &["main", "spin"], 3, true);
        fold.add_timed(
            &s,
            &[],
            &[stamp(5_999, 11), stamp(6_000, 11), stamp(6_450, 12)],
        );
        fold.add(&sample(Event::OnCpu, 11, &["main", "spin"], 1, true));
        let batches = fold.batches(7, &BTreeMap::new(), 10, 1 << 20);
        type Seen<'a> = (&'a str, Option<i64>, &'a str, Vec<(u16, u32, u64)>);
        let seen: Vec<Seen> = batches
            .iter()
            .map(|b| {
                let events = b
                    .details
                    .iter()
                    .flat_map(|d| d.events.iter().map(|e| (e.offset_ms, e.tid, e.weight)))
                    .collect();
                (b.app_service.as_str(), b.time, b.folded.as_str(), events)
            })
            .collect();
        assert_eq!(
            seen,
            vec![
                (
                    "web",
                    Some(5),
                    "[t] worker;main;spin 10\n",
                    vec![(999, 11, 10)]
                ),
                (
                    "web",
                    Some(6),
                    "[t] worker;main;spin 20\n",
                    vec![(0, 11, 10), (450, 12, 10)]
                ),
                ("web", Some(7), "[t] worker;main;spin 10\n", vec![]),
                (
                    "Total",
                    Some(5),
                    "[p] web;[t] worker 10\n",
                    vec![(999, 11, 10)]
                ),
                (
                    "Total",
                    Some(6),
                    "[p] web;[t] worker 20\n",
                    vec![(0, 11, 10), (450, 12, 10)]
                ),
                ("Total", Some(7), "[p] web;[t] worker 10\n", vec![]),
            ]
        );
    }

    #[test]
    fn big_graphs_are_split_and_empty_windows_send_nothing() {
        let mut fold = Fold::new();
        for i in 0..100 {
            fold.add(&sample(Event::OnCpu, 10, &[&format!("f{i:03}")], 1, true));
        }
        let batches = fold.batches(1, &BTreeMap::new(), 1, 200);
        let web: Vec<&BatchInput> = batches.iter().filter(|b| b.app_service == "web").collect();
        assert!(web.len() > 5, "{}", web.len());
        assert!(web.iter().all(|b| b.folded.len() <= 200));
        let lines: usize = web.iter().map(|b| b.folded.lines().count()).sum();
        assert_eq!(lines, 100);
        assert!(Fold::new().batches(1, &BTreeMap::new(), 1, 200).is_empty());
        let mut tiny = Fold::new();
        tiny.add(&sample(Event::OffCpu, 10, &["a"], 999, true));
        let b = tiny.batches(1, &BTreeMap::new(), 1, 200);
        assert!(b.is_empty(), "under a microsecond rounds to nothing: {b:?}");
    }
}
