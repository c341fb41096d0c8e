//! Samples whose producer timed each one (perf script, JFR, OTLP with timestamps) as the
//! store keeps them: one stored sample per second, stack and source lines, its value the sum
//! of its events and its detail each event's millisecond, thread and weight in time order
//! ([`SampleDetail`]), so the heatmap, the samples and millisecond windows answer for them
//! at millisecond resolution.

use std::collections::HashMap;

use embers_model::contract::detail::{SampleDetail, SourceLine, TimedEvent};

use super::{Detailed, FormatError};

/// One stack's events so far, by the Unix second they fall in.
type Seconds = HashMap<(i64, u32), Vec<TimedEvent>>;

/// Timed events gathered into stored samples.
#[derive(Default)]
pub struct Timed {
    /// Each distinct stack and its lines, by the index events name it by.
    stacks: Vec<(String, Vec<Option<SourceLine>>)>,
    index: HashMap<(String, Vec<Option<SourceLine>>), u32>,
    events: Seconds,
}

impl Timed {
    /// The index of `stack` (`;`-joined, root first) with `lines` (one per frame, or none).
    pub fn stack(
        &mut self,
        stack: String,
        lines: Vec<Option<SourceLine>>,
    ) -> Result<u32, FormatError> {
        let key = (stack, lines);
        if let Some(&at) = self.index.get(&key) {
            return Ok(at);
        }
        let at = u32::try_from(self.stacks.len())
            .map_err(|_| FormatError::TooLarge("more than 2^32 distinct stacks".to_owned()))?;
        self.stacks.push(key.clone());
        self.index.insert(key, at);
        Ok(at)
    }

    /// An event of stack `stack` at Unix millisecond `unix_ms` on thread `tid`, weighing
    /// `weight`; weightless events are left out (they would add nothing to any answer).
    pub fn add(&mut self, stack: u32, unix_ms: i64, tid: u32, weight: u64) {
        if weight == 0 {
            return;
        }
        let second = unix_ms.div_euclid(1000);
        // rem_euclid of 1000 is 0..=999.
        let offset_ms = u16::try_from(unix_ms.rem_euclid(1000)).unwrap_or(0);
        self.events
            .entry((second, stack))
            .or_default()
            .push(TimedEvent {
                offset_ms,
                tid,
                weight,
            });
    }

    /// Whether no event was added.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
    }

    /// The stored samples, `(second, (stack, value, detail))`, in time order.
    pub fn finish(self) -> Result<Vec<(i64, Detailed)>, FormatError> {
        let mut keys: Vec<(i64, u32)> = self.events.keys().copied().collect();
        keys.sort_unstable();
        let mut events = self.events;
        let mut out = Vec::with_capacity(keys.len());
        for key in keys {
            let Some(mut list) = events.remove(&key) else {
                continue;
            };
            list.sort_by_key(|e| e.offset_ms);
            let value = list
                .iter()
                .try_fold(0u64, |sum, e| sum.checked_add(e.weight))
                .ok_or_else(|| {
                    FormatError::invalid("a stack's values add up past 2^64 in one second")
                })?;
            let (stack, lines) = &self.stacks[key.1 as usize];
            let detail = SampleDetail {
                lines: lines.clone(),
                events: list,
            };
            out.push((key.0, (stack.clone(), value, Some(Box::new(detail)))));
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_become_one_sample_per_second_and_stack_in_time_order() {
        let mut t = Timed::default();
        let line = Some(SourceLine {
            file: "hot.c".into(),
            line: 9,
        });
        let hot = t
            .stack("[t] a;hot".into(), vec![None, line.clone()])
            .expect("stack");
        let other = t.stack("[t] a;hot".into(), vec![]).expect("stack");
        assert_ne!(
            hot, other,
            "the same stack at other lines is another sample"
        );
        assert_eq!(
            t.stack("[t] a;hot".into(), vec![None, line])
                .expect("stack"),
            hot
        );
        t.add(hot, 1_700_000_000_900, 7, 10);
        t.add(hot, 1_700_000_000_020, 8, 5);
        t.add(hot, 1_700_000_001_000, 7, 10);
        t.add(other, 1_700_000_000_500, 7, 0);
        let samples = t.finish().expect("samples");
        assert_eq!(samples.len(), 2, "weightless events are left out");
        let (second, (stack, value, detail)) = &samples[0];
        assert_eq!(
            (*second, stack.as_str(), *value),
            (1_700_000_000, "[t] a;hot", 15)
        );
        let detail = detail.as_deref().expect("detail");
        let offsets: Vec<(u16, u32)> = detail.events.iter().map(|e| (e.offset_ms, e.tid)).collect();
        assert_eq!(offsets, [(20, 8), (900, 7)]);
        assert_eq!(detail.check(2, *value), Ok(()));
        assert_eq!(samples[1].0, 1_700_000_001);
        assert_eq!(
            samples[1].1 .2.as_deref().expect("detail").events[0].offset_ms,
            0
        );
    }
}
