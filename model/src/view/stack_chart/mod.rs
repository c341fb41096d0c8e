//! The stack chart (a flame chart over time: x = time, y = stack depth) as pure data and
//! decisions. [`StackChart::build`] turns timed samples (the samples endpoint's answer, or a
//! file's samples with their times) into
//!
//! - one call tree of all the samples ([`StackChart::profile`]), so a frame has the same
//!   function id, name, kind and colour as in the flame graph of those samples, and a search
//!   runs on it exactly as on a flame graph;
//! - per thread, per depth, the *spans*: runs of consecutive samples that share the frame at
//!   that depth (and every frame above it), in time order.
//!
//! [`layout`] picks the spans a viewport of time shows (a binary search per visible row, so a
//! frame costs what is visible, not the number of samples), [`paint`] turns them into the
//! flame graph's [`crate::view::draw_list::DrawList`].

mod answer;
pub mod layout;
pub mod paint;

pub use answer::UNKNOWN_THREAD;

use crate::tree::build::TreeBuilder;
use crate::tree::profile::{NodeId, Profile};

/// One timed sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimedSample {
    /// Unix milliseconds.
    pub time_ms: i64,
    /// Index into the thread names.
    pub thread: u32,
    /// Index into the stacks.
    pub stack: u32,
    /// The sample's value (1 for a sample count).
    pub weight: u64,
}

/// Why samples cannot be charted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StackChartError {
    /// A sample names a stack the answer does not have.
    #[error("sample {sample} names stack {stack}, but there are {stacks} stacks")]
    Stack {
        /// The sample's position.
        sample: usize,
        /// The index it names.
        stack: u32,
        /// How many stacks there are.
        stacks: usize,
    },
    /// A sample names a thread the answer does not have.
    #[error("sample {sample} names thread {thread}, but there are {threads} threads")]
    Thread {
        /// The sample's position.
        sample: usize,
        /// The index it names.
        thread: u32,
        /// How many threads there are.
        threads: usize,
    },
}

/// A run of samples with the same frame at one depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// The frame (a node of [`StackChart::profile`]).
    pub node: NodeId,
    /// First millisecond (Unix).
    pub start_ms: i64,
    /// First millisecond after.
    pub end_ms: i64,
}

/// One thread's samples as spans.
#[derive(Debug, Clone, PartialEq)]
pub struct Track {
    /// The thread's name as the answer gives it.
    pub name: String,
    /// Its samples.
    pub samples: usize,
    /// How long one sample lasts on the chart: the most common gap between consecutive
    /// samples (a gap longer than this is time the thread did not run, left empty).
    pub interval_ms: i64,
    /// `depths[d]`: the spans of depth `d` (0 = the first frame below the root), in time order.
    pub depths: Vec<Vec<Span>>,
}

/// Timed samples ready to draw.
#[derive(Debug, Clone)]
pub struct StackChart {
    profile: Profile,
    tracks: Vec<Track>,
    start_ms: i64,
    end_ms: i64,
}

impl StackChart {
    /// Charts `samples` (any order) whose stacks (root first, without a root frame) are
    /// `stacks` and threads `threads`; the call tree's root is named `root_name`.
    pub fn build<S: AsRef<str>>(
        root_name: &str,
        stacks: &[Vec<S>],
        threads: &[String],
        samples: &[TimedSample],
    ) -> Result<StackChart, StackChartError> {
        check(stacks.len(), threads.len(), samples)?;
        let mut tree = TreeBuilder::new(root_name);
        let mut weights = vec![0u64; stacks.len()];
        for s in samples {
            let w = &mut weights[s.stack as usize];
            *w = w.saturating_add(s.weight);
        }
        let rows: Vec<u32> = stacks
            .iter()
            .zip(&weights)
            .map(|(frames, &w)| tree.add_stack_row(frames.iter().map(AsRef::as_ref), w))
            .collect();
        let (profile, node_of_row) = tree.finish_mapped();
        // Each stack's path below the root, found once (there are far fewer stacks than samples).
        let paths: Vec<Vec<NodeId>> = rows
            .iter()
            .map(|&r| {
                let leaf = node_of_row.get(r as usize).copied().unwrap_or(0);
                let mut path = profile.path_to(leaf);
                path.remove(0);
                path
            })
            .collect();
        let mut by_thread: Vec<Vec<TimedSample>> = vec![Vec::new(); threads.len()];
        for s in samples {
            by_thread[s.thread as usize].push(*s);
        }
        let mut tracks: Vec<Track> = by_thread
            .iter_mut()
            .zip(threads)
            .filter(|(s, _)| !s.is_empty())
            .map(|(s, name)| {
                s.sort_by_key(|s| s.time_ms);
                track(name, s, &paths)
            })
            .collect();
        // The busiest thread first: it is what a user opens the chart for.
        tracks.sort_by(|a, b| b.samples.cmp(&a.samples).then(a.name.cmp(&b.name)));
        let start_ms = samples.iter().map(|s| s.time_ms).min().unwrap_or(0);
        let end_ms = tracks
            .iter()
            .flat_map(|t| t.depths.first().and_then(|d| d.last()).map(|s| s.end_ms))
            .max()
            .unwrap_or(start_ms)
            .max(start_ms + 1);
        Ok(StackChart {
            profile,
            tracks,
            start_ms,
            end_ms,
        })
    }

    /// The call tree of all the samples.
    pub fn profile(&self) -> &Profile {
        &self.profile
    }

    /// The threads, busiest first.
    pub fn tracks(&self) -> &[Track] {
        &self.tracks
    }

    /// First millisecond of the first sample.
    pub fn start_ms(&self) -> i64 {
        self.start_ms
    }

    /// End of the last sample.
    pub fn end_ms(&self) -> i64 {
        self.end_ms
    }
}

/// The call tree of the samples inside `[start_ms, end_ms)` only: an interval of the chart
/// opened as a flame graph (samples naming a stack that does not exist are left out; charting
/// them was refused already).
pub fn interval_profile<S: AsRef<str>>(
    root_name: &str,
    stacks: &[Vec<S>],
    samples: &[TimedSample],
    start_ms: i64,
    end_ms: i64,
) -> Profile {
    let mut tree = TreeBuilder::new(root_name);
    for s in samples {
        if s.time_ms < start_ms || s.time_ms >= end_ms {
            continue;
        }
        if let Some(frames) = stacks.get(s.stack as usize) {
            tree.add_stack(frames.iter().map(AsRef::as_ref), s.weight);
        }
    }
    tree.finish()
}

fn check(stacks: usize, threads: usize, samples: &[TimedSample]) -> Result<(), StackChartError> {
    for (i, s) in samples.iter().enumerate() {
        if s.stack as usize >= stacks {
            return Err(StackChartError::Stack {
                sample: i,
                stack: s.stack,
                stacks,
            });
        }
        if s.thread as usize >= threads {
            return Err(StackChartError::Thread {
                sample: i,
                thread: s.thread,
                threads,
            });
        }
    }
    Ok(())
}

/// The most common gap between consecutive samples (their median), at least 1 ms.
fn sample_interval(samples: &[TimedSample]) -> i64 {
    let mut gaps: Vec<i64> = samples
        .windows(2)
        .map(|w| w[1].time_ms - w[0].time_ms)
        .filter(|&g| g > 0)
        .collect();
    if gaps.is_empty() {
        return 10;
    }
    let mid = gaps.len() / 2;
    *gaps.select_nth_unstable(mid).1
}

/// One thread's spans from its samples in time order. A sample lasts until the next one, or
/// one interval when the next is further away; runs of the same frame at a depth merge while
/// they touch.
fn track(name: &str, samples: &[TimedSample], paths: &[Vec<NodeId>]) -> Track {
    let interval_ms = sample_interval(samples);
    let mut depths: Vec<Vec<Span>> = Vec::new();
    let mut open: Vec<Span> = Vec::new();
    for (i, s) in samples.iter().enumerate() {
        let next = samples.get(i + 1).map_or(i64::MAX, |n| n.time_ms);
        let end_ms = next
            .min(s.time_ms.saturating_add(interval_ms))
            .max(s.time_ms + 1);
        let path = &paths[s.stack as usize];
        // Spans deeper than this stack end here.
        for (d, span) in open.drain(path.len().min(open.len())..).enumerate() {
            close(&mut depths, path.len() + d, span);
        }
        for (d, &node) in path.iter().enumerate() {
            match open.get_mut(d) {
                Some(o) if o.node == node && o.end_ms == s.time_ms => o.end_ms = end_ms,
                Some(o) => {
                    let done = std::mem::replace(
                        o,
                        Span {
                            node,
                            start_ms: s.time_ms,
                            end_ms,
                        },
                    );
                    close(&mut depths, d, done);
                }
                None => open.push(Span {
                    node,
                    start_ms: s.time_ms,
                    end_ms,
                }),
            }
        }
    }
    for (d, span) in open.into_iter().enumerate() {
        close(&mut depths, d, span);
    }
    Track {
        name: name.to_owned(),
        samples: samples.len(),
        interval_ms,
        depths,
    }
}

fn close(depths: &mut Vec<Vec<Span>>, depth: usize, span: Span) {
    if depths.len() <= depth {
        depths.resize_with(depth + 1, Vec::new);
    }
    depths[depth].push(span);
}

#[cfg(test)]
mod tests;
