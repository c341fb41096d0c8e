//! A recording's events one by one, for the service to store with their times
//! ([`super::read_timed`]): each event's type, stack (with each frame's source line), thread
//! id, Unix time and value, where [`super::read`] folds them into one tree per event type.
//! The stacks are the trees' exactly (the same names, `[t] thread` first, `[unknown]` for an
//! event with neither), each distinct stack and lines once.

use rustc_hash::FxHashMap;

use super::events::{ChunkSums, Sink, EVENT_TYPES};
use super::names::{stack_frames, stack_lines, thread_frame};
use super::JfrError;
use crate::budget::Budget;
use crate::contract::detail::SourceLine;

/// A stack of a recording: its frames below the root (`[t] thread` first, then outermost
/// first) and their source lines (one per frame, or none when no frame has one).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct JfrStack {
    pub frames: Vec<String>,
    pub lines: Vec<Option<SourceLine>>,
}

/// One event (one value of it: an allocation event gives its count and its bytes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JfrEvent {
    pub event_type: &'static str,
    /// Its index in [`TimedRecording::stacks`].
    pub stack: u32,
    pub unix_nanos: i64,
    /// The OS thread id (else the Java one; 0 when the event has no thread).
    pub tid: u64,
    pub value: u64,
}

/// A recording's events in the order read, and their stacks.
#[derive(Clone, Debug, Default)]
pub struct TimedRecording {
    pub stacks: Vec<JfrStack>,
    pub events: Vec<JfrEvent>,
}

/// Reads chunks into a [`TimedRecording`], each name charged to the request's budget.
pub struct TimedBuilder<'b> {
    pub mode: Option<String>,
    out: TimedRecording,
    index: FxHashMap<JfrStack, u32>,
    budget: &'b Budget,
}

impl<'b> TimedBuilder<'b> {
    pub fn new(budget: &'b Budget) -> Self {
        TimedBuilder {
            mode: None,
            out: TimedRecording::default(),
            index: FxHashMap::default(),
            budget,
        }
    }

    pub fn finish(self) -> TimedRecording {
        self.out
    }

    /// The index of the stack of pooled `stack` and `thread`, and the thread's id.
    fn stack_of(
        &mut self,
        sums: &ChunkSums<'_>,
        stack: Option<i64>,
        thread: Option<i64>,
    ) -> Result<(u32, u64), JfrError> {
        let c = sums.chunk;
        let pooled = |class: &str, key: Option<i64>| {
            let class = c.types.id_of(class)?;
            c.pools.get(&(class, key?))
        };
        let thread = pooled("java.lang.Thread", thread);
        let stack = pooled("jdk.types.StackTrace", stack);
        let mut frames: Vec<String> = thread.map(|t| thread_frame(c, t)).into_iter().collect();
        let mut lines: Vec<Option<SourceLine>> = frames.iter().map(|_| None).collect();
        if let Some(s) = stack {
            frames.extend(stack_frames(c, s));
            lines.extend(stack_lines(c, s));
        }
        if frames.is_empty() {
            frames.push("[unknown]".to_owned());
        }
        if lines.len() != frames.len() || lines.iter().all(Option::is_none) {
            lines.clear();
        }
        let tid = thread
            .and_then(|t| {
                c.int(t, "osThreadId")
                    .filter(|&id| id > 0)
                    .or_else(|| c.int(t, "javaThreadId"))
            })
            .and_then(|id| u64::try_from(id).ok())
            .unwrap_or(0);
        let key = JfrStack { frames, lines };
        if let Some(&at) = self.index.get(&key) {
            return Ok((at, tid));
        }
        // Bounded as the trees' nodes are: a few bytes of forged pools must not name
        // stacks without end.
        let bytes: usize = key.frames.iter().map(|f| f.len() + 48).sum();
        self.budget
            .charge(bytes.saturating_mul(2), "JFR stacks")
            .map_err(|e| JfrError::TooLarge(e.to_string()))?;
        let at = u32::try_from(self.out.stacks.len())
            .map_err(|_| JfrError::TooLarge("more than 2^32 stacks".to_owned()))?;
        self.out.stacks.push(key.clone());
        self.index.insert(key, at);
        Ok((at, tid))
    }
}

impl Sink for TimedBuilder<'_> {
    fn mode(&self) -> Option<String> {
        self.mode.clone()
    }

    fn timed(&self) -> bool {
        true
    }

    fn add(&mut self, mut sums: ChunkSums<'_>) -> Result<(), JfrError> {
        self.mode.clone_from(&sums.mode);
        let raw = sums.raw.take().unwrap_or_default();
        // The same stack and thread is named once per chunk.
        let mut seen: FxHashMap<(Option<i64>, Option<i64>), (u32, u64)> = FxHashMap::default();
        for r in raw {
            let (stack, tid) = match seen.get(&(r.stack, r.thread)) {
                Some(&known) => known,
                None => {
                    let known = self.stack_of(&sums, r.stack, r.thread)?;
                    seen.insert((r.stack, r.thread), known);
                    known
                }
            };
            self.out.events.push(JfrEvent {
                event_type: EVENT_TYPES[r.output],
                stack,
                unix_nanos: sums.clock.unix_nanos(r.ticks),
                tid,
                value: r.value,
            });
        }
        Ok(())
    }
}
