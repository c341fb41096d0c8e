//! The functions endpoints on the SQLite store: the hottest functions of a range from the
//! function rollup ([`super::super::fn_rollup`]) — whole buckets of the process series, or of
//! the tag-set series a filter or grouping selects — plus the samples at the range's edges, and
//! one function's timeline from the samples. Both end in the contract's finishing steps.

mod samples;

use std::sync::Arc;

use rustc_hash::FxHashMap;

use rusqlite::Connection;

use super::super::fn_rollup::{body, table_of};
use super::super::functions::{has_tag_conditions, known, plan, IdSums, ALL, LEVELS};
use super::super::sql::{conditions_where, needs_samples, series_selection, Sql};
use super::super::{SqliteStore, StoreError};
use super::labels;
use super::read::Series;
use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};
use embers_model::contract::explore::{
    Dimension, FunctionSums, FunctionTimelineAnswer, FunctionTimelineQuery,
};
use embers_model::contract::selection::Selection;

/// A function series a question reads, with the place its sums count for.
#[derive(Debug, Clone)]
pub(super) struct Listed {
    pub(super) id: i64,
    /// `[app_service, language, event type]`.
    pub(super) process: [String; 3],
    pub(super) tagset_id: i64,
    pub(super) place: usize,
}

/// The function series of `sel` (its processes when `per_tagset` is false), each given its
/// place in `sums` (the process, and the group's value when grouped).
fn list(
    conn: &Connection,
    sel: &Selection,
    skip_total: bool,
    per_tagset: bool,
    group: Option<&Dimension>,
    sums: &mut IdSums,
) -> Result<Vec<Listed>, StoreError> {
    let mut sql = Sql::new(
        "SELECT id, app_service, profile_language_type, profile_event_type, tagset_id \
         FROM profile.function_series WHERE tagset_id ",
    );
    sql.push(if per_tagset { "!= 0" } else { "= 0" });
    match &sel.app_service {
        Some(app) => sql.push(" AND app_service = ").bind(app.clone()),
        None if skip_total => sql
            .push(" AND app_service != ")
            .bind(TOTAL_APP_SERVICE.to_owned()),
        None => &mut sql,
    };
    let series_only = series_selection(sel);
    conditions_where(&mut sql, &series_only);
    let mut stmt = conn.prepare_cached(&sql.text)?;
    let mut rows = stmt.query(sql.params())?;
    let mut listed = Vec::new();
    while let Some(row) = rows.next()? {
        listed.push(Listed {
            id: row.get(0)?,
            process: [row.get(1)?, row.get(2)?, row.get(3)?],
            tagset_id: row.get(4)?,
            place: 0,
        });
    }
    let labels = match group {
        Some(d) => {
            let series: Vec<Series> = listed
                .iter()
                .map(|l| Series {
                    app_service: l.process[0].clone(),
                    language: l.process[1].clone(),
                    event_type: l.process[2].clone(),
                    tagset_id: l.tagset_id,
                    thread: String::new(),
                })
                .collect();
            Some(labels::labels(conn, &series, d)?)
        }
        None => None,
    };
    for (i, l) in listed.iter_mut().enumerate() {
        let group = labels.as_ref().map(|n| n[i].clone());
        l.place = sums.place((l.process[0].clone(), group));
    }
    Ok(listed)
}

/// Adds the rollup rows of `listed` over whole buckets `(level, first, last)`.
fn read_buckets(
    conn: &Connection,
    listed: &[Listed],
    buckets: &[(i64, i64, i64)],
    sums: &mut IdSums,
) -> Result<(), StoreError> {
    for &(level, first, last) in buckets {
        // A fixed identifier of fn_rollup::TABLES.
        let mut stmt = conn.prepare_cached(&format!(
            "SELECT body FROM {} WHERE series_id = ?1 AND time >= ?2 AND time <= ?3",
            table_of(level)?
        ))?;
        for l in listed {
            let mut rows = stmt.query(rusqlite::params![l.id, first, last])?;
            while let Some(row) = rows.next()? {
                let blob = row.get_ref(0)?.as_blob().map_err(rusqlite::Error::from)?;
                let all = body::decode(blob, |id, s, t| sums.add(l.place, id, s, t))?;
                sums.add(l.place, ALL, 0, all);
            }
        }
    }
    Ok(())
}

impl SqliteStore {
    /// One side's sums of `POST /v1/profile/functions`: `sel`'s samples (every process but
    /// `Total` with `skip_total`), each function's places by process (and `group`).
    pub fn function_sums(
        &self,
        sel: &Selection,
        skip_total: bool,
        group: Option<&Dimension>,
    ) -> Result<FunctionSums, StoreError> {
        let per_tagset = group.is_some() || has_tag_conditions(&sel.filter);
        let sums = self.with_reader(|conn| {
            let mut sums = IdSums::default();
            let listed = list(conn, sel, skip_total, per_tagset, group, &mut sums)?;
            // Instants are each process's latest upload: the summed rollup cannot say it.
            let (instants, listed): (Vec<Listed>, Vec<Listed>) =
                listed.into_iter().partition(|l| is_instant(&l.process[2]));
            samples::read_latest(self, conn, sel, &instants, &mut sums)?;
            if needs_samples(&sel.filter) {
                let whole = [(sel.time_start, sel.time_end)];
                samples::read(self, conn, sel, &listed, &whole, &mut sums)?;
            } else {
                let horizon = super::super::fn_rollup::horizon(conn)?;
                // Tag-set series are kept per hour only (see fn_rollup).
                let levels = if per_tagset {
                    &LEVELS[..1]
                } else {
                    &LEVELS[..]
                };
                let plan = plan(sel.time_start, sel.time_end, horizon, levels);
                read_buckets(conn, &listed, &plan.buckets, &mut sums)?;
                samples::read(self, conn, sel, &listed, &plan.samples, &mut sums)?;
            }
            Ok::<_, StoreError>(sums)
        })?;
        let names = self.with_reader(|conn| self.function_names(conn, sums.ids()))?;
        sums.named(|id| names.get(&id).cloned())
    }

    /// The names of functions `ids`: from the cache, the rest from `profile.functions`.
    fn function_names(
        &self,
        conn: &Connection,
        ids: impl Iterator<Item = u64>,
    ) -> Result<FxHashMap<u64, Arc<str>>, StoreError> {
        let (mut out, missing) = {
            let cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
            known(ids, |id| cache.name(id))
        };
        let mut stmt = conn.prepare_cached("SELECT name FROM profile.functions WHERE id = ?1")?;
        for id in missing {
            let stored = super::super::fn_rollup::stored_id(id);
            let name: Option<String> =
                rusqlite::OptionalExtension::optional(stmt.query_row([stored], |r| r.get(0)))?;
            if let Some(name) = name {
                let mut cache = self.frames.lock().unwrap_or_else(|p| p.into_inner());
                cache.remember_name(id, &name);
                out.insert(id, Arc::from(name.as_str()));
            }
        }
        Ok(out)
    }

    /// `POST /v1/profile/function_timeline`.
    pub fn function_timeline(
        &self,
        q: &FunctionTimelineQuery,
    ) -> Result<FunctionTimelineAnswer, StoreError> {
        let points = self.with_reader(|conn| samples::timeline(self, conn, q))?;
        Ok(FunctionTimelineAnswer::finish(&q.timeline, points))
    }
}
