//! How a range is read from the function rollup: its whole buckets, coarsest first, and the
//! samples of what is left at its edges — and, before a retention horizon or a level's first
//! bucket, what must be read finer (or from the samples) because those buckets are incomplete.

use embers_model::contract::explore::bucket_start;

use super::{HOUR, LEVELS, WIDE_LEVELS};

/// How a range is read: whole buckets `(level seconds, first start, last start)`, and the
/// inclusive time ranges left at its edges, read from the samples.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Plan {
    pub(crate) buckets: Vec<(i64, i64, i64)>,
    pub(crate) samples: Vec<(i64, i64)>,
}

/// The plan of `[start, end]` over `levels` (coarsest first, each dividing the one before,
/// none finer than needed to cover an hour), everything before the first whole hour at or
/// after `horizon` (the latest retention cutoff, if any) read from the samples.
pub(crate) fn plan(start: i64, end: i64, horizon: Option<i64>, levels: &[i64]) -> Plan {
    let kept = horizon.map_or(i64::MIN, |h| {
        let floor = bucket_start(h, HOUR);
        if floor == h {
            h
        } else {
            floor.saturating_add(HOUR)
        }
    });
    let mut samples = Vec::new();
    if start < kept {
        samples.push((start, end.min(kept.saturating_sub(1))));
    }
    let (pieces, rest) = super::super::cover::cover(start.max(kept), end, levels);
    samples.extend(rest);
    Plan {
        buckets: pieces
            .into_iter()
            .map(|(level, a, b)| (levels[level], a, b))
            .collect(),
        samples,
    }
}

/// The plan of `[start, end]` on a store that keeps [`WIDE_LEVELS`] for samples from
/// `wide_from` on (rounded up to a six-hour bucket) and only [`LEVELS`] before: a store whose
/// rollup was written before the six-hour level existed has no complete six-hour buckets
/// there, so that part is read as before.
pub(crate) fn plan_from(start: i64, end: i64, horizon: Option<i64>, wide_from: i64) -> Plan {
    let wide = WIDE_LEVELS[0];
    let floor = bucket_start(wide_from, wide);
    let wide_from = if floor == wide_from {
        floor
    } else {
        floor.saturating_add(wide)
    };
    if wide_from <= start {
        return plan(start, end, horizon, &WIDE_LEVELS);
    }
    if wide_from > end {
        return plan(start, end, horizon, &LEVELS);
    }
    // `wide_from` is a whole hour, so the two halves meet without samples between them.
    let mut out = plan(start, wide_from - 1, horizon, &LEVELS);
    let later = plan(wide_from, end, horizon, &WIDE_LEVELS);
    out.buckets.extend(later.buckets);
    out.samples.extend(later.samples);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The inclusive ranges a plan reads, sorted, each with its level (0 for samples).
    fn pieces(p: &Plan) -> Vec<(i64, i64, i64)> {
        let mut out: Vec<(i64, i64, i64)> = p
            .buckets
            .iter()
            .map(|&(level, first, last)| (first, last + level - 1, level))
            .chain(p.samples.iter().map(|&(a, b)| (a, b, 0)))
            .collect();
        out.sort_unstable();
        out
    }

    #[test]
    fn plans_read_whole_buckets_and_samples_at_the_edges() {
        let p = plan(3000, 7500, None, &LEVELS);
        assert_eq!(p.buckets, vec![(600, 3000, 3000), (3600, 3600, 3600)]);
        assert_eq!(p.samples, vec![(7200, 7500)]);
        let p = plan(3001, 3599, None, &LEVELS);
        assert!(p.buckets.is_empty());
        assert_eq!(p.samples, vec![(3001, 3599)]);
        // Before a retention horizon, up to the next whole hour, only samples are exact.
        let p = plan(0, 10_799, Some(3601), &LEVELS);
        assert_eq!(p.buckets, vec![(3600, 7200, 7200)]);
        assert_eq!(p.samples, vec![(0, 7199)]);
        assert_eq!(
            plan(0, 10_799, Some(3600), &LEVELS).samples,
            vec![(0, 3599)]
        );
        let p = plan(0, 100, Some(7000), &LEVELS);
        assert_eq!((p.buckets, p.samples), (vec![], vec![(0, 100)]));
        // Hours only (SQLite's tag-set series).
        let p = plan(3000, 7500, None, &LEVELS[..1]);
        assert_eq!(
            (p.buckets, p.samples),
            (vec![(3600, 3600, 3600)], vec![(3000, 3599), (7200, 7500)])
        );
    }

    #[test]
    fn a_day_reads_six_hour_buckets_in_the_middle() {
        // 22:00 to 21:59:59 the next day: 22 and 23 as hours, three six-hour buckets, then
        // 18 to 21 as hours.
        let start = 4 * 86_400 - 2 * HOUR;
        let p = plan_from(start, start + 86_399, None, 0);
        let wide: Vec<_> = p.buckets.iter().filter(|b| b.0 == 6 * HOUR).collect();
        assert_eq!(wide, [&(6 * HOUR, 4 * 86_400, 4 * 86_400 + 12 * HOUR)]);
        let hours: i64 = p
            .buckets
            .iter()
            .filter(|b| b.0 == HOUR)
            .map(|b| (b.2 - b.1) / HOUR + 1)
            .sum();
        assert_eq!(hours, 6);
        assert!(p.samples.is_empty());
    }

    #[test]
    fn six_hour_buckets_only_from_where_they_are_complete() {
        let day = 86_400;
        for (start, end, horizon, wide_from) in [
            (0, 2 * day - 1, None, day + 1),
            (17, 2 * day + 5, Some(3 * HOUR + 1), 12 * HOUR),
            (5 * HOUR, 9 * HOUR, None, 30 * HOUR),
            (5 * HOUR + 7, 40 * HOUR - 1, Some(20 * HOUR), 0),
            (day, day, None, day),
        ] {
            let p = plan_from(start, end, horizon, wide_from);
            let got = pieces(&p);
            // Every second of the range exactly once, in order.
            assert_eq!(got.first().map(|g| g.0), Some(start), "{got:?}");
            assert_eq!(got.last().map(|g| g.1), Some(end), "{got:?}");
            for pair in got.windows(2) {
                assert_eq!(pair[0].1 + 1, pair[1].0, "{got:?}");
            }
            for (a, _, level) in got {
                assert!(
                    level != 6 * HOUR || a >= wide_from,
                    "{a} before {wide_from}"
                );
                if let Some(h) = horizon {
                    assert!(level == 0 || a >= h, "bucket {a} before horizon {h}");
                }
            }
        }
    }
}
