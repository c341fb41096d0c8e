//! What a parsed capture is read as: its event type, its processes, one call tree for the
//! viewer, and per-process stacks for the store.

use rustc_hash::FxHashMap;

use super::{PerfSample, PerfScript};
use crate::contract::detail::SourceLine;
use crate::tree::build::TreeBuilder;
use crate::tree::profile::Profile;

impl PerfScript {
    /// The event type its samples are stored and shown as: `on-cpu` (microseconds of CPU, as
    /// DeepFlow's agent stores its own) for a clock event, else `cpu` (counted in samples).
    pub fn event_type(&self) -> &'static str {
        if self.clock {
            "on-cpu"
        } else {
            "cpu"
        }
    }

    /// The frames of sample `i`, root first.
    pub fn frames_of(&self, sample: &PerfSample) -> impl Iterator<Item = &str> {
        self.frames[sample.frame_start as usize..sample.frame_end as usize]
            .iter()
            .map(|&f| self.names[f as usize].as_str())
    }

    /// A sample's stored stack: `[t] thread;frame;...`, root first.
    pub fn stack_of(&self, sample: &PerfSample) -> String {
        let mut stack = self.names[sample.thread as usize].clone();
        for f in self.frames_of(sample) {
            stack.push(';');
            stack.push_str(f);
        }
        stack
    }

    /// The source lines of [`Self::stack_of`]'s frames (none for the thread's), or nothing when
    /// perf named none of them (no `srcline`, or a binary without `-g`).
    pub fn lines_of(&self, sample: &PerfSample) -> Vec<Option<SourceLine>> {
        let of = &self.frame_lines[sample.frame_start as usize..sample.frame_end as usize];
        if of.iter().all(|&k| k == 0) {
            return Vec::new();
        }
        let line = |k: u32| {
            k.checked_sub(1)
                .and_then(|i| self.sources.get(i as usize))
                .cloned()
        };
        std::iter::once(None)
            .chain(of.iter().map(|&k| line(k)))
            .collect()
    }

    /// Whether its times are Unix time (`perf record -k CLOCK_REALTIME`) rather than perf's
    /// default clock, time since boot: a machine up for 31 years is taken for the former.
    pub fn realtime(&self) -> bool {
        const SINCE_2001_NS: u64 = 1_000_000_000 * 1_000_000_000;
        self.samples
            .first()
            .is_some_and(|s| s.time_ns >= SINCE_2001_NS)
    }

    /// The processes sampled, in order of first appearance.
    pub fn processes(&self) -> Vec<&str> {
        let mut seen = Vec::new();
        for s in &self.samples {
            if !seen.contains(&s.process) {
                seen.push(s.process);
            }
        }
        seen.iter()
            .map(|&p| self.names[p as usize].as_str())
            .collect()
    }

    /// One call tree: a single process's under its name with `[t]` threads below; several
    /// processes under `Total` with a `[p] process` layer, as DeepFlow draws a whole host.
    pub fn tree(&self) -> Profile {
        let processes = self.processes();
        let whole_host = processes.len() > 1;
        let root = if whole_host { "Total" } else { processes[0] };
        let mut b = TreeBuilder::new(root);
        let mut path: Vec<String> = Vec::new();
        for s in &self.samples {
            path.clear();
            if whole_host {
                path.push(format!("[p] {}", self.names[s.process as usize]));
            }
            path.push(self.names[s.thread as usize].clone());
            path.extend(self.frames_of(s).map(str::to_owned));
            b.add_stack(path.iter().map(String::as_str), s.value);
        }
        b.finish()
    }

    /// Per process: its stacks (`[t] thread;frame;...`) and values, merged, for storage.
    pub fn stacks_by_process(&self) -> Vec<(String, Vec<(String, u64)>)> {
        let mut by: Vec<(u32, FxHashMap<String, u64>)> = Vec::new();
        for s in &self.samples {
            let at = match by.iter().position(|(p, _)| *p == s.process) {
                Some(at) => at,
                None => {
                    by.push((s.process, FxHashMap::default()));
                    by.len() - 1
                }
            };
            let v = by[at].1.entry(self.stack_of(s)).or_insert(0);
            *v = v.saturating_add(s.value);
        }
        by.into_iter()
            .map(|(p, stacks)| {
                let mut stacks: Vec<(String, u64)> = stacks.into_iter().collect();
                stacks.sort();
                (self.names[p as usize].clone(), stacks)
            })
            .collect()
    }
}
