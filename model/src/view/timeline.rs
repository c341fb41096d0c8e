//! The timeline: a `timeline` answer as dense series over every bucket of the range, laid out
//! as (stacked) bars with time ticks, and the inverse mappings the strip needs — which bucket is
//! under the pointer, which time range a drag covers. Pure; the viewer only renders the rects.

use crate::contract::explore::{bucket_count, bucket_start, TimelineAnswer, OTHER_GROUP};
use crate::tree::order::sort_by_dyn;

/// One series of a timeline: a group (or the whole selection) with a value per bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Series {
    /// The group's name (`None` when the timeline is not grouped).
    pub name: Option<String>,
    /// Sum over the range.
    pub total: u64,
    /// Value per bucket, aligned with [`Timeline::starts`].
    pub values: Vec<u64>,
}

/// A timeline over `[time_start, time_end]`, every bucket present (empty ones are 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Timeline {
    /// Bucket length, seconds.
    pub interval: i64,
    /// The range asked for, inclusive.
    pub time_start: i64,
    /// The range asked for, inclusive.
    pub time_end: i64,
    /// Bucket starts, oldest first.
    pub starts: Vec<i64>,
    /// Series, largest first, [`OTHER_GROUP`] last.
    pub series: Vec<Series>,
}

/// Most buckets a timeline is laid out with (the service's own cap is 2,000).
const MAX_DRAWN_BUCKETS: i64 = 4096;

impl Timeline {
    /// The timeline of `answer` for the range `[time_start, time_end]`.
    pub fn new(answer: &TimelineAnswer, time_start: i64, time_end: i64) -> Timeline {
        let interval = answer.interval.max(1);
        let first = bucket_start(time_start, interval);
        let count = bucket_count(time_start, time_end, interval).clamp(0, MAX_DRAWN_BUCKETS);
        let starts: Vec<i64> = (0..count).map(|i| first + i * interval).collect();
        let mut series: Vec<Series> = Vec::new();
        for row in &answer.values {
            let Some(i) = usize::try_from((row.time - first) / interval)
                .ok()
                .filter(|&i| i < starts.len())
            else {
                continue;
            };
            let k = match series.iter().position(|s| s.name == row.group) {
                Some(k) => k,
                None => {
                    series.push(Series {
                        name: row.group.clone(),
                        total: 0,
                        values: vec![0; starts.len()],
                    });
                    series.len() - 1
                }
            };
            series[k].values[i] = series[k].values[i].saturating_add(row.value);
            series[k].total = series[k].total.saturating_add(row.value);
        }
        let is_other = |s: &Series| s.name.as_deref() == Some(OTHER_GROUP);
        sort_by_dyn(&mut series, &|a, b| {
            (is_other(a), b.total, &a.name).cmp(&(is_other(b), a.total, &b.name))
        });
        Timeline {
            interval,
            time_start,
            time_end,
            starts,
            series,
        }
    }

    /// The sum of every series per bucket.
    pub fn stacked_totals(&self) -> Vec<u64> {
        let mut sums = vec![0u64; self.starts.len()];
        for s in &self.series {
            for (sum, v) in sums.iter_mut().zip(&s.values) {
                *sum = sum.saturating_add(*v);
            }
        }
        sums
    }

    /// Whether no bucket has a sample.
    pub fn is_empty(&self) -> bool {
        self.series.iter().all(|s| s.total == 0)
    }
}

/// One drawn bar (a series' share of a bucket), in CSS px with y growing down.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimeBar {
    /// Left edge.
    pub x: f64,
    /// Top edge.
    pub y: f64,
    /// Width.
    pub w: f64,
    /// Height.
    pub h: f64,
    /// Index into [`Timeline::series`].
    pub series: usize,
    /// Index into [`Timeline::starts`].
    pub bucket: usize,
}

/// A labelled time on the axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    /// Horizontal position, CSS px.
    pub x: f64,
    /// Unix seconds.
    pub time: i64,
    /// `HH:MM` (or `HH:MM:SS` for steps under a minute) in the caller's time zone.
    pub label: String,
}

/// A timeline laid out in a `width` × `height` box.
#[derive(Clone, Debug, PartialEq)]
pub struct TimelineLayout {
    /// The bars, series by series, bottom of the stack first.
    pub bars: Vec<TimeBar>,
    /// Time ticks along the bottom.
    pub ticks: Vec<Tick>,
    /// The tallest stack's value (the top of the scale).
    pub max: u64,
}

/// Tick steps (seconds) to choose from: at least ~90 px between labels.
const TICK_STEPS: [i64; 13] = [
    1, 5, 10, 30, 60, 300, 600, 900, 1800, 3600, 7200, 21_600, 86_400,
];

/// Lays out `t` as stacked bars filling `width` × `height`; `utc_offset_secs` is the viewer's
/// time zone offset (east of UTC positive), used for tick placement and labels.
pub fn layout_timeline(
    t: &Timeline,
    width: f64,
    height: f64,
    utc_offset_secs: i64,
) -> TimelineLayout {
    let n = t.starts.len().max(1) as f64;
    let slot = width / n;
    let gap = if slot >= 4.0 { 1.0 } else { 0.0 };
    let totals = t.stacked_totals();
    let max = totals.iter().copied().max().unwrap_or(0);
    let scale = if max == 0 { 0.0 } else { height / max as f64 };
    let mut bars = Vec::new();
    let mut base = vec![height; t.starts.len()];
    for (k, s) in t.series.iter().enumerate() {
        for (i, &v) in s.values.iter().enumerate() {
            if v == 0 {
                continue;
            }
            let h = v as f64 * scale;
            base[i] -= h;
            bars.push(TimeBar {
                x: i as f64 * slot,
                y: base[i],
                w: (slot - gap).max(0.5),
                h,
                series: k,
                bucket: i,
            });
        }
    }
    TimelineLayout {
        bars,
        ticks: ticks(t, width, utc_offset_secs),
        max,
    }
}

fn ticks(t: &Timeline, width: f64, utc_offset_secs: i64) -> Vec<Tick> {
    let Some(&first) = t.starts.first() else {
        return Vec::new();
    };
    let end = first + t.starts.len() as i64 * t.interval;
    let span = (end - first).max(1);
    let per_px = span as f64 / width.max(1.0);
    let step = TICK_STEPS
        .iter()
        .copied()
        .find(|&s| s as f64 / per_px >= 90.0)
        .unwrap_or(86_400);
    let local = |time: i64| time + utc_offset_secs;
    let mut time = bucket_start(local(first), step) - utc_offset_secs;
    if time < first {
        time += step;
    }
    let mut out = Vec::new();
    while time < end {
        let secs = local(time).rem_euclid(86_400);
        let label = if step < 60 {
            format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
        } else {
            format!("{:02}:{:02}", secs / 3600, secs / 60 % 60)
        };
        out.push(Tick {
            x: (time - first) as f64 / per_px,
            time,
            label,
        });
        time += step;
    }
    out
}

/// The bucket under horizontal position `x` (CSS px) of a strip `width` wide.
pub fn bucket_at(t: &Timeline, width: f64, x: f64) -> Option<usize> {
    if width <= 0.0 || x < 0.0 || x >= width || t.starts.is_empty() {
        return None;
    }
    Some(((x / width) * t.starts.len() as f64) as usize).filter(|&i| i < t.starts.len())
}

/// The time range (inclusive, whole buckets) a drag from `x0` to `x1` covers, clamped to the
/// timeline's own range; `None` for a drag within one bucket's width of nothing.
pub fn brushed_range(t: &Timeline, width: f64, x0: f64, x1: f64) -> Option<(i64, i64)> {
    let (lo, hi) = if x0 <= x1 { (x0, x1) } else { (x1, x0) };
    let first = bucket_at(t, width, lo.clamp(0.0, width - 0.001))?;
    let last = bucket_at(t, width, hi.clamp(0.0, width - 0.001))?;
    let start = t.starts[first].max(t.time_start);
    let end = (t.starts[last] + t.interval - 1).min(t.time_end);
    (start < end).then_some((start, end))
}

/// A range twice as long around the same middle (the strip's zoom-out).
pub fn zoomed_out(time_start: i64, time_end: i64) -> (i64, i64) {
    let half = (time_end - time_start).max(1);
    let mid = time_start + (time_end - time_start) / 2;
    (mid - half, mid + half)
}

/// SVG polyline points of a sparkline of `values` in a `width` × `height` box.
pub fn sparkline_points(values: &[u64], width: f64, height: f64) -> String {
    let max = values.iter().copied().max().unwrap_or(0).max(1) as f64;
    let step = if values.len() > 1 {
        width / (values.len() - 1) as f64
    } else {
        0.0
    };
    values
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let y = height - (v as f64 / max) * (height - 1.0) - 0.5;
            format!("{:.1},{:.1}", i as f64 * step, y)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::explore::TimelineRow;

    fn answer(interval: i64, rows: &[(i64, Option<&str>, u64)]) -> TimelineAnswer {
        TimelineAnswer {
            interval,
            columns: vec![],
            values: rows
                .iter()
                .map(|&(time, g, value)| TimelineRow {
                    time,
                    group: g.map(str::to_owned),
                    value,
                })
                .collect(),
        }
    }

    #[test]
    fn series_fill_every_bucket_and_rank_by_total_with_other_last() {
        let a = answer(
            60,
            &[
                (60, Some("b"), 5),
                (120, Some("a"), 1),
                (120, Some("other"), 50),
                (180, Some("b"), 5),
            ],
        );
        let t = Timeline::new(&a, 60, 239);
        assert_eq!(t.starts, [60, 120, 180]);
        let names: Vec<_> = t.series.iter().map(|s| s.name.as_deref()).collect();
        assert_eq!(names, [Some("b"), Some("a"), Some("other")]);
        assert_eq!(t.series[0].values, [5, 0, 5]);
        assert_eq!(t.stacked_totals(), [5, 51, 5]);
    }

    #[test]
    fn bars_stack_and_fill_the_height() {
        let a = answer(10, &[(0, None, 10), (10, None, 5)]);
        let t = Timeline::new(&a, 0, 19);
        let l = layout_timeline(&t, 200.0, 100.0, 0);
        assert_eq!(l.max, 10);
        assert_eq!(l.bars.len(), 2);
        assert_eq!((l.bars[0].y, l.bars[0].h), (0.0, 100.0));
        assert_eq!((l.bars[1].x, l.bars[1].y, l.bars[1].w), (100.0, 50.0, 99.0));
    }

    #[test]
    fn ticks_fall_on_round_local_times() {
        let a = answer(60, &[(0, None, 1)]);
        let t = Timeline::new(&a, 1_700_000_000, 1_700_003_600);
        let l = layout_timeline(&t, 800.0, 50.0, 3600);
        assert!(l.ticks.len() >= 4, "{:?}", l.ticks);
        for tick in &l.ticks {
            assert_eq!((tick.time + 3600) % 600, 0, "{tick:?}");
            assert!(tick.x >= 0.0 && tick.x < 800.0);
        }
        assert_eq!(l.ticks[0].label.len(), 5);
    }

    #[test]
    fn hit_testing_and_brushing_use_whole_buckets() {
        let a = answer(60, &[(0, None, 1)]);
        let t = Timeline::new(&a, 0, 599);
        assert_eq!(bucket_at(&t, 1000.0, 0.0), Some(0));
        assert_eq!(bucket_at(&t, 1000.0, 999.0), Some(9));
        assert_eq!(bucket_at(&t, 1000.0, 1000.0), None);
        assert_eq!(brushed_range(&t, 1000.0, 250.0, 120.0), Some((60, 179)));
        assert_eq!(brushed_range(&t, 1000.0, -50.0, 2000.0), Some((0, 599)));
        assert_eq!(zoomed_out(100, 200), (50, 250));
    }

    #[test]
    fn sparklines_scale_to_their_box() {
        assert_eq!(sparkline_points(&[0, 10], 10.0, 11.0), "0.0,10.5 10.0,0.5");
        assert_eq!(sparkline_points(&[], 10.0, 11.0), "");
    }
}
