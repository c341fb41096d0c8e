//! The explore queries on the SQLite store: services ranked by value, timelines (optionally
//! grouped), tag names and tag values in a range.
//!
//! Each one reads summed points of the matching series ([`read`]), names them under the asked
//! dimension ([`labels`]) and leaves ranking, limits and `other` to the contract's finishing
//! steps, so another backend implementing the same methods answers the same way. The methods take
//! the contract's checked queries and return its answer types: no SQL type crosses this API.

mod functions;
mod instant;
mod labels;
mod read;

use std::collections::HashMap;

use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{
    rank_counts, rank_services, ServiceRow, ServicesQuery, TagValuesQuery, TagsQuery,
    TimelineAnswer, TimelineQuery, TimelineRow, ValueCount,
};

use super::{SqliteStore, StoreError};
use read::{Points, Read};

/// A stored sum as the answer's unsigned value (sums of stored values are never negative).
fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl SqliteStore {
    /// `POST /v1/profile/services`: every (app_service, language, event type) with samples in
    /// the range, by summed value (instants by each process's latest upload).
    pub fn services(&self, q: &ServicesQuery) -> Result<Table<ServiceRow>, StoreError> {
        let read = Read {
            selection: &q.selection,
            skip_total: false,
            interval: None,
        };
        let points = self.with_reader(|conn| {
            let mut points = read::read(conn, &read)?;
            instant::replace(conn, &read, &mut points)?;
            Ok::<_, StoreError>(points)
        })?;
        let mut sums: HashMap<(&str, &str, &str), i64> = HashMap::new();
        for p in &points.points {
            let s = &points.series[p.series];
            let sum = sums
                .entry((&s.app_service, &s.language, &s.event_type))
                .or_default();
            *sum = sum.saturating_add(p.value);
        }
        let rows = sums
            .into_iter()
            .map(|((app, language, event), value)| {
                ServiceRow::from((app.into(), language.into(), event.into(), unsigned(value)))
            })
            .collect();
        Ok(rank_services(rows))
    }

    /// `POST /v1/profile/timeline`: summed values per bucket (and group); instants the value at
    /// each bucket's end.
    pub fn timeline(&self, q: &TimelineQuery) -> Result<TimelineAnswer, StoreError> {
        let read = Read {
            selection: &q.selection,
            skip_total: q.skips_total(),
            interval: Some(q.interval),
        };
        let (points, names) = self.with_reader(|conn| {
            let mut points = read::read(conn, &read)?;
            instant::replace(conn, &read, &mut points)?;
            let names = match &q.group_by {
                Some((_, dimension)) => Some(labels::labels(conn, &points.series, dimension)?),
                None => None,
            };
            Ok::<_, StoreError>((points, names))
        })?;
        let rows = points
            .points
            .iter()
            .map(|p| TimelineRow {
                time: p.time,
                group: names.as_ref().map(|n| n[p.series].clone()),
                value: unsigned(p.value),
            })
            .collect();
        Ok(TimelineAnswer::finish(q, rows))
    }

    /// `POST /v1/profile/tags`: tag names with a value on samples in the range, by sample count.
    pub fn tags(&self, q: &TagsQuery) -> Result<Table<ValueCount>, StoreError> {
        let read = Read {
            selection: &q.selection,
            skip_total: false,
            interval: None,
        };
        let (points, names) = self.with_reader(|conn| {
            Ok::<_, StoreError>((read::read(conn, &read)?, labels::tag_names(conn)?))
        })?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        for (tagset, samples) in samples_per_tagset(&points) {
            for name in names.get(&tagset).into_iter().flatten() {
                let count = counts.entry(name.clone()).or_default();
                *count = count.saturating_add(samples);
            }
        }
        Ok(rank_counts(counts, None, usize::MAX))
    }

    /// `POST /v1/profile/tag_values`: values of one tag in the range, by sample count.
    pub fn tag_values(&self, q: &TagValuesQuery) -> Result<Table<ValueCount>, StoreError> {
        let read = Read {
            selection: &q.selection,
            skip_total: false,
            interval: None,
        };
        let (points, names) = self.with_reader(|conn| {
            let points = read::read(conn, &read)?;
            let names = labels::labels(conn, &points.series, &q.dimension)?;
            Ok::<_, StoreError>((points, names))
        })?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        for p in &points.points {
            let count = counts.entry(names[p.series].clone()).or_default();
            *count = count.saturating_add(unsigned(p.samples));
        }
        Ok(rank_counts(counts, q.prefix.as_deref(), q.limit))
    }
}

/// Sample counts per tag set.
fn samples_per_tagset(points: &Points) -> HashMap<i64, u64> {
    let mut out: HashMap<i64, u64> = HashMap::new();
    for p in &points.points {
        let count = out.entry(points.series[p.series].tagset_id).or_default();
        *count = count.saturating_add(unsigned(p.samples));
    }
    out
}
