//! Each sample's own time through a window (issue 37): the BPF program stamps every ring buffer
//! record with `bpf_ktime_get_ns()`; the intake keeps (time, thread, value) per record of a
//! stack ([`Stamp`]); at the window's end the stamps become Unix milliseconds ([`Clock`]) and a
//! stack's samples are split by wall-clock second ([`by_second`]), so every batch the
//! collector sends is one second and carries its events' milliseconds and threads as
//! `details` (the store keeps them beside the second's row). Samples without a stamp (fp
//! mode's kernel counts, memory events) stay at the window's time, without events.

use std::collections::BTreeMap;

use embers_model::contract::detail::TimedEvent;

/// One record of a stack: when (Unix ms once converted), on which thread, how much (the
/// record's own value: samples or nanoseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Monotonic nanoseconds (`bpf_ktime_get_ns`) in the intake; Unix milliseconds in the fold.
    pub time: i64,
    /// Thread id.
    pub tid: u32,
    /// The record's value.
    pub value: u64,
}

/// The distance between the monotonic clock the BPF program reads and the wall clock.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    realtime_minus_monotonic_ns: i128,
}

fn clock_ns(id: libc::clockid_t) -> i128 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own; both clocks exist on Linux.
    unsafe { libc::clock_gettime(id, &mut ts) };
    i128::from(ts.tv_sec) * 1_000_000_000 + i128::from(ts.tv_nsec)
}

impl Clock {
    /// The clocks' distance now (read back to back: within microseconds).
    pub fn now() -> Clock {
        let mono = clock_ns(libc::CLOCK_MONOTONIC);
        let real = clock_ns(libc::CLOCK_REALTIME);
        Clock {
            realtime_minus_monotonic_ns: real - mono,
        }
    }

    /// A clock `offset_ns` apart (tests).
    pub fn fixed(offset_ns: i128) -> Clock {
        Clock {
            realtime_minus_monotonic_ns: offset_ns,
        }
    }

    /// `stamp` with its monotonic nanoseconds as Unix milliseconds.
    pub fn to_unix_ms(&self, stamp: Stamp) -> Stamp {
        let ns = i128::from(stamp.time) + self.realtime_minus_monotonic_ns;
        Stamp {
            time: i64::try_from(ns.div_euclid(1_000_000)).unwrap_or(0),
            ..stamp
        }
    }
}

/// A stack's samples in a window: their value and the stamps of those timed.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Tally {
    /// Every record's value added up.
    pub value: u64,
    /// The timed records (Unix milliseconds).
    pub stamps: Vec<Stamp>,
}

impl Tally {
    /// Adds a record of `value` with its stamps.
    pub fn add(&mut self, value: u64, stamps: &[Stamp]) {
        self.value = self.value.saturating_add(value);
        self.stamps.extend_from_slice(stamps);
    }
}

/// One second's part of a stack: the second, its value in the batch's unit and its events
/// (empty for the part known only to the window).
pub type SecondPart = (i64, u64, Vec<TimedEvent>);

/// `tally` split by wall-clock second, values converted by `to_unit` record by record (so the
/// events' weights add up to their line's value); the untimed rest at `window_time`, without
/// events. Parts worth 0 are left out.
pub fn by_second(tally: &Tally, window_time: i64, to_unit: impl Fn(u64) -> u64) -> Vec<SecondPart> {
    let mut seconds: BTreeMap<i64, (u64, Vec<TimedEvent>)> = BTreeMap::new();
    let mut timed = 0u64;
    for s in &tally.stamps {
        timed = timed.saturating_add(s.value);
        let weight = to_unit(s.value);
        // The service refuses weightless events (they would only cost storage).
        if weight == 0 {
            continue;
        }
        let part = seconds.entry(s.time.div_euclid(1000)).or_default();
        part.0 = part.0.saturating_add(weight);
        part.1.push(TimedEvent {
            offset_ms: s.time.rem_euclid(1000) as u16,
            tid: s.tid,
            weight,
        });
    }
    let mut out: Vec<SecondPart> = seconds
        .into_iter()
        .filter(|(_, (value, _))| *value > 0)
        .map(|(second, (value, mut events))| {
            events.sort_by_key(|e| e.offset_ms);
            (second, value, events)
        })
        .collect();
    let rest = to_unit(tally.value.saturating_sub(timed));
    if rest > 0 {
        out.push((window_time, rest, Vec::new()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamps_become_unix_milliseconds_and_split_by_second() {
        let clock = Clock::fixed(1_700_000_000_000_000_000);
        let at = |ns: i64, tid| {
            clock.to_unix_ms(Stamp {
                time: ns,
                tid,
                value: 1,
            })
        };
        let a = at(999_999_999, 7);
        assert_eq!(a.time, 1_700_000_000_999);
        let mut tally = Tally::default();
        tally.add(1, &[a]);
        tally.add(2, &[at(1_000_000_000, 8), at(1_250_400_000, 7)]);
        tally.add(3, &[]);
        let parts = by_second(&tally, 1_700_000_009, |v| v * 10101);
        assert_eq!(
            parts,
            vec![
                (
                    1_700_000_000,
                    10101,
                    vec![TimedEvent {
                        offset_ms: 999,
                        tid: 7,
                        weight: 10101
                    }]
                ),
                (
                    1_700_000_001,
                    20202,
                    vec![
                        TimedEvent {
                            offset_ms: 0,
                            tid: 8,
                            weight: 10101
                        },
                        TimedEvent {
                            offset_ms: 250,
                            tid: 7,
                            weight: 10101
                        }
                    ]
                ),
                (1_700_000_009, 30303, vec![]),
            ]
        );
        let real = Clock::now().to_unix_ms(Stamp {
            time: 0,
            tid: 0,
            value: 0,
        });
        assert!(
            real.time > 1_600_000_000_000,
            "boot time as Unix ms: {}",
            real.time
        );
    }

    #[test]
    fn parts_worth_nothing_are_left_out() {
        let tally = Tally {
            value: 2,
            stamps: vec![Stamp {
                time: 5_000,
                tid: 1,
                value: 1,
            }],
        };
        assert!(by_second(&tally, 9, |_| 0).is_empty());
    }
}
