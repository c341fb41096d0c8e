//! The events Embers reads and the event types they become, with DeepFlow's and Pyroscope's
//! names for JFR profiles (`contract::event::SDK_EVENT_TYPES`):
//!
//! | JFR event | event types | value |
//! |---|---|---|
//! | `jdk.ExecutionSample` | `cpu` (`itimer`, `wall` when async-profiler's `event` setting says so) | 1 a sample; sleeping threads skipped unless `wall` |
//! | `profiler.WallClockSample` (async-profiler) | `wall` | its `samples` |
//! | `jdk.ObjectAllocationInNewTLAB` | `alloc_in_new_tlab_objects`, `alloc_in_new_tlab_bytes` | 1, `tlabSize` |
//! | `jdk.ObjectAllocationOutsideTLAB` | `alloc_outside_tlab_objects`, `alloc_outside_tlab_bytes` | 1, `allocationSize` |
//! | `jdk.ObjectAllocationSample` (the JDK's default since 16) | `alloc_space` | `weight` |
//! | `jdk.JavaMonitorEnter`, `jdk.ThreadPark` | `lock_count`, `lock_duration` | 1, `duration` in nanoseconds |
//!
//! Each event's stack goes under its thread (`[t] name`). A chunk's sums are keyed by pooled
//! stack, thread and time bucket ([`Clock`]), so each distinct stack and thread is named once
//! ([`super::names`]) however many events share it.

use rustc_hash::FxHashMap;

use super::clock::Clock;
use super::names::{stack_frames, thread_frame};
use super::tree::{Nodes, Tree};
use super::types::Types;
use super::values::{Chunk, Value};
use super::JfrError;
use crate::tree::table::NodeTable;

/// What an event class is read as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Execution,
    WallClock,
    AllocNewTlab,
    AllocOutsideTlab,
    AllocSample,
    Lock,
    Setting,
}

impl Kind {
    pub fn is_setting(self) -> bool {
        self == Kind::Setting
    }
}

const CLASSES: [(&str, Kind); 8] = [
    ("jdk.ExecutionSample", Kind::Execution),
    ("profiler.WallClockSample", Kind::WallClock),
    ("jdk.ObjectAllocationInNewTLAB", Kind::AllocNewTlab),
    ("jdk.ObjectAllocationOutsideTLAB", Kind::AllocOutsideTlab),
    ("jdk.ObjectAllocationSample", Kind::AllocSample),
    ("jdk.JavaMonitorEnter", Kind::Lock),
    ("jdk.ThreadPark", Kind::Lock),
    ("jdk.ActiveSetting", Kind::Setting),
];

/// The event types a recording may give, in the order their trees are returned.
pub const EVENT_TYPES: [&str; 10] = [
    "cpu",
    "itimer",
    "wall",
    "alloc_in_new_tlab_objects",
    "alloc_in_new_tlab_bytes",
    "alloc_outside_tlab_objects",
    "alloc_outside_tlab_bytes",
    "alloc_space",
    "lock_count",
    "lock_duration",
];

fn output(event_type: &str) -> usize {
    EVENT_TYPES
        .iter()
        .position(|e| *e == event_type)
        .unwrap_or(0)
}

/// The classes of a chunk that are read, with their ids (a handful: a list, not a map).
pub fn kinds(types: &Types) -> Vec<(i64, Kind)> {
    types
        .classes
        .iter()
        .filter_map(|(&id, c)| {
            CLASSES
                .iter()
                .find(|(name, _)| *name == &*c.name)
                .map(|&(_, k)| (id, k))
        })
        .collect()
}

/// What class `class` is read as, if it is read.
pub fn kind_of(kinds: &[(i64, Kind)], class: i64) -> Option<Kind> {
    kinds.iter().find(|(id, _)| *id == class).map(|&(_, k)| k)
}

/// A pooled stack trace and thread (`None` when an event has none), and the event's time
/// bucket ([`Clock::bucket`]).
type Key = (Option<i64>, Option<i64>, i64);

/// One event's value as read one by one: its event type (an index in [`EVENT_TYPES`]), pooled
/// stack and thread, and its time in ticks.
pub struct Raw {
    pub output: usize,
    pub stack: Option<i64>,
    pub thread: Option<i64>,
    pub ticks: i64,
    pub value: u64,
}

/// What a recording's chunks are read into: the trees ([`Builder`]) or the
/// events one by one ([`super::timed::TimedBuilder`]).
pub trait Sink {
    /// The `event` setting of the chunks read so far ([`ChunkSums`]).
    fn mode(&self) -> Option<String>;
    /// Whether events are kept one by one ([`ChunkSums::raw`]) instead of summed.
    fn timed(&self) -> bool;
    /// Adds a chunk's values.
    fn add(&mut self, sums: ChunkSums<'_>) -> Result<(), JfrError>;
}

/// One chunk's values, summed per event type, stack and thread (or kept one by one).
pub struct ChunkSums<'c> {
    pub chunk: &'c Chunk,
    kinds: &'c [(i64, Kind)],
    pub clock: Clock,
    /// async-profiler's `event` setting: what its execution samples measure. Written in the
    /// first chunk only, so it carries over from chunk to chunk.
    pub mode: Option<String>,
    sums: Vec<FxHashMap<Key, u64>>,
    /// Each event's values, when read one by one.
    pub raw: Option<Vec<Raw>>,
}

impl<'c> ChunkSums<'c> {
    /// The sums of `chunk`, whose execution samples are `mode` unless it says otherwise.
    pub fn new(
        chunk: &'c Chunk,
        kinds: &'c [(i64, Kind)],
        clock: Clock,
        mode: Option<String>,
        timed: bool,
    ) -> Self {
        ChunkSums {
            chunk,
            kinds,
            clock,
            mode,
            sums: vec![FxHashMap::default(); EVENT_TYPES.len()],
            raw: timed.then(Vec::new),
        }
    }

    /// Adds one event of class `class`.
    pub fn add(&mut self, class: i64, v: &Value) -> Result<(), JfrError> {
        let c = self.chunk;
        let Some(kind) = kind_of(self.kinds, class) else {
            return Ok(());
        };
        let int = |name: &str| c.int(v, name).unwrap_or(0).max(0) as u64;
        let (first, values): (&str, [u64; 2]) = match kind {
            Kind::Setting => {
                if c.field_text(v, "name") == Some("event") {
                    self.mode = c.field_text(v, "value").map(str::to_owned);
                }
                return Ok(());
            }
            Kind::Execution => {
                // Other modes (`cpu`, perf events such as `cycles`) are CPU samples.
                let mode = self
                    .mode
                    .as_deref()
                    .filter(|m| matches!(*m, "itimer" | "wall"))
                    .unwrap_or("cpu");
                let state = c.field(v, "state").and_then(|s| c.field_text(s, "name"));
                if mode != "wall" && state == Some("STATE_SLEEPING") {
                    return Ok(());
                }
                (mode, [1, 0])
            }
            Kind::WallClock => ("wall", [int("samples"), 0]),
            Kind::AllocNewTlab => ("alloc_in_new_tlab_objects", [1, int("tlabSize")]),
            Kind::AllocOutsideTlab => ("alloc_outside_tlab_objects", [1, int("allocationSize")]),
            Kind::AllocSample => ("alloc_space", [int("weight"), 0]),
            Kind::Lock => ("lock_count", [1, self.nanoseconds(int("duration"))]),
        };
        let ticks = c.int(v, "startTime").unwrap_or(self.clock.start_ticks);
        let (stack, thread) = (self.key(v, "stackTrace"), self.key_of_thread(v));
        let key = (stack, thread, self.clock.bucket(ticks));
        let at = output(first);
        // Kinds with two values put the second in the event type after the first.
        let pairs = [(at, values[0]), (at + 1, values[1])];
        let n = if matches!(kind, Kind::Execution | Kind::WallClock | Kind::AllocSample) {
            1
        } else {
            2
        };
        if let Some(raw) = &mut self.raw {
            for &(output, value) in pairs[..n].iter().filter(|(_, v)| *v > 0) {
                raw.push(Raw {
                    output,
                    stack,
                    thread,
                    ticks,
                    value,
                });
            }
            return Ok(());
        }
        for &(o, value) in &pairs[..n] {
            let sum = self.sums[o].entry(key).or_insert(0);
            *sum = sum.checked_add(value).ok_or_else(|| {
                JfrError::Invalid(format!("{} adds up past 2^64", EVENT_TYPES[o]))
            })?;
        }
        Ok(())
    }

    fn nanoseconds(&self, ticks: u64) -> u64 {
        let ns = u128::from(ticks) * 1_000_000_000 / self.clock.ticks_per_second.max(1) as u128;
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    fn key(&self, v: &Value, field: &str) -> Option<i64> {
        let Value::Object { class, fields } = v else {
            return None;
        };
        let i = self.chunk.types.classes.get(class)?.field(field)?;
        match fields.get(i)? {
            Value::Ref { key, .. } => Some(*key),
            _ => None,
        }
    }

    fn key_of_thread(&self, v: &Value) -> Option<i64> {
        self.key(v, "sampledThread")
            .or_else(|| self.key(v, "eventThread"))
    }
}

/// The tree of one event type (over one time bucket, when read in buckets).
#[derive(Clone, Debug)]
pub struct JfrProfile {
    pub event_type: &'static str,
    /// The Unix second its bucket starts at; `None` when not read in buckets.
    pub time: Option<i64>,
    pub table: NodeTable,
}

/// A recording's trees, one per event type that has values (and time bucket, when asked).
#[derive(Clone, Debug, Default)]
pub struct Recording {
    pub profiles: Vec<JfrProfile>,
    /// When the first chunk began (Unix nanoseconds).
    pub start_nanos: Option<i64>,
}

/// The trees of a recording as its chunks are read.
pub struct Builder {
    root: String,
    trees: Vec<Tree>,
    /// Where the tree of an event type (its index in [`EVENT_TYPES`]) and bucket is.
    index: FxHashMap<(usize, i64), usize>,
    /// Whether trees are per time bucket.
    bucketed: bool,
    nodes: Nodes,
    pub start_nanos: Option<i64>,
    /// The `event` setting of the chunks read so far ([`ChunkSums`]).
    pub mode: Option<String>,
}

impl Sink for Builder {
    fn mode(&self) -> Option<String> {
        self.mode.clone()
    }

    fn timed(&self) -> bool {
        false
    }

    fn add(&mut self, sums: ChunkSums<'_>) -> Result<(), JfrError> {
        Builder::add(self, sums)
    }
}

impl Builder {
    pub fn new(root: &str, input_len: usize, bucketed: bool) -> Self {
        Builder {
            root: root.to_owned(),
            trees: Vec::new(),
            index: FxHashMap::default(),
            bucketed,
            nodes: Nodes::for_input(input_len),
            start_nanos: None,
            mode: None,
        }
    }

    /// Adds a chunk's sums, naming each of its stacks and threads once.
    pub fn add(&mut self, sums: ChunkSums<'_>) -> Result<(), JfrError> {
        let c = sums.chunk;
        self.mode.clone_from(&sums.mode);
        let stack_class = c.types.id_of("jdk.types.StackTrace").unwrap_or(-1);
        let thread_class = c.types.id_of("java.lang.Thread").unwrap_or(-2);
        // Frames of pooled stacks and threads (a thread's is its one `[t]` frame, or none
        // for JFR's null thread), by class and key: one map for both keeps the viewer's
        // worker smaller than two.
        let mut names: FxHashMap<(i64, i64), Vec<String>> = FxHashMap::default();
        for (o, sum) in sums.sums.iter().enumerate() {
            for (&(stack, thread, bucket), &value) in sum.iter().filter(|(_, &v)| v > 0) {
                let keys = [
                    thread.map(|t| (thread_class, t)),
                    stack.map(|s| (stack_class, s)),
                ];
                for key @ (class, _) in keys.into_iter().flatten() {
                    names.entry(key).or_insert_with(|| match c.pools.get(&key) {
                        Some(v) if class == thread_class => vec![thread_frame(c, v)],
                        Some(v) => stack_frames(c, v),
                        None => Vec::new(),
                    });
                }
                let of = |key: Option<(i64, i64)>| {
                    key.and_then(|k| names.get(&k))
                        .map_or(&[][..], Vec::as_slice)
                };
                let (thread, frames) = (of(keys[0]), of(keys[1]));
                // An event with neither (a JVM-internal allocation) still counts somewhere.
                let unknown = (thread.is_empty() && frames.is_empty()).then_some("[unknown]");
                let names = thread
                    .iter()
                    .chain(frames)
                    .map(String::as_str)
                    .chain(unknown);
                let (tree, nodes) = self.tree(o, bucket)?;
                tree.add(names, value, nodes)?;
            }
        }
        Ok(())
    }

    /// The tree of `event` and `bucket` (made on first use, its root a node of the budget),
    /// with the budget.
    fn tree(&mut self, event: usize, bucket: i64) -> Result<(&mut Tree, &mut Nodes), JfrError> {
        let next = self.trees.len();
        let at = *self.index.entry((event, bucket)).or_insert(next);
        if at == next {
            self.nodes.take()?;
            let time = self.bucketed.then_some(bucket);
            self.trees.push(Tree::new(&self.root, event, time));
        }
        Ok((&mut self.trees[at], &mut self.nodes))
    }

    /// The trees, each event type's in the order first met.
    pub fn finish(self) -> Recording {
        let profiles = self
            .trees
            .into_iter()
            .map(|t| JfrProfile {
                event_type: EVENT_TYPES[t.event],
                time: t.time,
                table: t.table,
            })
            .collect();
        Recording {
            profiles,
            start_nanos: self.start_nanos,
        }
    }
}
