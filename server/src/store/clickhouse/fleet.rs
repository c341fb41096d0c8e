//! Top functions of every process, ranked from the fleet's sums. A question about every
//! process with no filter needs each function's sums over all of them to rank, and its
//! places only for the page's few functions; summing the rollup's rows per process for every
//! function was the cost (a day of 20 processes: 680k entries, 60-80 ms for `sumMap` alone).
//! So ingest also keeps each bucket summed over every process but `Total` (`functions_fleet`),
//! and such a question is read in two steps ([`FunctionsAnswer::ranked`], then
//! [`FunctionsAnswer::fill_places`]):
//!
//! 1. rank: the fleet's buckets (a twentieth of the entries) and the samples at the range's
//!    edges, each function's sums at a single place;
//! 2. places: the rollup's buckets per process again, each row's arrays filtered in
//!    ClickHouse to the page's functions (`arrayFilter`), with the edges' sums kept from step 1.
//!
//! The answer is the one the whole sums give (the contract's test
//! `ranking_the_fleets_sums_then_listing_the_pages_places_answers_as_finish_does`, and the
//! stores' differential tests). Deleting a process leaves its sums in the fleet's buckets, so
//! each delete first records the end of the latest bucket written (`fleet_from`, as a first
//! open does, see `wide`), and so does an ingest call whose fleet rows failed to be written
//! after its rollup rows were: buckets starting before the latest record are ranked from the
//! rollup per process, as before. Sorting by place change needs every function's places and
//! is answered by the one-step path, and so is any comparison: its changes are measured inside
//! each process present on both sides.
//!
//! Two differences remain, both out of the way of the answers the tests pin: the two steps
//! read the two tables a few milliseconds apart while ingest writes one after the other, so
//! the current buckets' places may hold an ingest call the row's value does not yet (or the
//! other way round) for that long; and ClickHouse adds the fleet's sums as `Int64`, so a
//! function over 9.2e18 (of any unit) in a range wraps there, where the per-process path caps
//! at `u64::MAX`.

use crate::store::instant::may_match;
use rustc_hash::FxHashSet;

use super::rollup_read::{add_rollup, buckets_where};
use super::sql::{latest, ChSql};
use super::wide::Starts;
use super::ClickHouseStore;
use crate::store::functions::{function_id, plan_from, IdSums, Plan};
use crate::store::StoreError;
use embers_model::contract::explore::{
    FunctionMetric, FunctionOrder, FunctionSums, FunctionsAnswer, FunctionsQuery,
};
use embers_model::contract::selection::Selection;

/// One side's step-1 read: its plan, each function's sums at one place, the samples at the
/// plan's edges per process (kept for step 2), and step 2's answer for the functions guessed
/// before the edges were in.
struct Ranked {
    plan: Plan,
    totals: FunctionSums,
    edges: IdSums,
    early: Option<(FxHashSet<u64>, Vec<Vec<u8>>)>,
}

/// Which functions step 2 reads before the edges' samples are in: those the buckets alone
/// rank `from..to` by self or total. The page's window with a margin either side: the edges
/// (at most twenty minutes of the range) rarely move a function by more. When they do, step 2
/// is asked again for the page itself. At 10M samples a day the edges take about 100 ms,
/// step 2 about 25.
#[derive(Debug, Clone, Copy)]
struct Guess {
    by_self: bool,
    from: usize,
    to: usize,
}

/// The guess for `q`: for a list ranked by value alone (no baseline, no search).
fn guess(q: &FunctionsQuery) -> Option<Guess> {
    if q.baseline.is_some() || q.search.is_some() {
        return None;
    }
    let margin = q.limit / 4 + 8;
    Some(Guess {
        by_self: q.metric == FunctionMetric::SelfValue,
        from: q.offset.saturating_sub(margin),
        to: q.offset.saturating_add(q.limit).saturating_add(margin),
    })
}

/// Where a side's rollup buckets are read from in step 1.
struct Split {
    /// Buckets starting from the fleet's latest record on: its sums.
    fleet: Vec<(i64, i64, i64)>,
    /// Earlier ones: the rollup's, per process.
    per_process: Vec<(i64, i64, i64)>,
}

/// Whether `sel` is every process but `Total`, with no filter (what the fleet's sums hold).
fn whole_fleet(sel: &Selection) -> bool {
    sel.app_service.is_none() && sel.filter.conditions.is_empty()
}

/// Whether the fleet's sums answer `q`.
fn answers(q: &FunctionsQuery) -> bool {
    // The fleet's sums add every upload up: instants are read from their latest ones.
    !may_match(&q.selection)
        && q.baseline.as_ref().is_none_or(|b| !may_match(b))
        && q.group_by.is_none()
        && q.order != FunctionOrder::PlaceChange
        && whole_fleet(&q.selection)
        // A comparison's changes are measured inside each process (`function_change`): it
        // needs every function's sums per process.
        && q.baseline.is_none()
}

/// `buckets` (each `(level, first start, last start)`) split at `from`: those starting before
/// it, and the rest.
fn split(buckets: &[(i64, i64, i64)], from: i64) -> Split {
    let mut out = Split {
        fleet: Vec::new(),
        per_process: Vec::new(),
    };
    for &(level, first, last) in buckets {
        // The first start at or after `from`, on this level's steps from `first`.
        let (gap, level_len) = (from.saturating_sub(first).max(0), level.max(1));
        let steps = gap / level_len + i64::from(gap % level_len != 0);
        let cut = first.saturating_add(steps.saturating_mul(level));
        if cut > first {
            out.per_process.push((level, first, last.min(cut - level)));
        }
        if cut <= last {
            out.fleet.push((level, cut, last));
        }
    }
    out
}

/// The buckets' answers added up at one place: the sums, and that place.
fn collapsed(answers: &[Vec<u8>]) -> Result<(IdSums, usize), StoreError> {
    let mut totals = IdSums::default();
    let one = totals.place((String::new(), None));
    for bytes in answers {
        add_rollup(bytes, &mut totals, Some(one))?;
    }
    Ok((totals, one))
}

impl ClickHouseStore {
    /// `POST /v1/profile/functions` read in two steps when `q` is about every process with no
    /// filter; `None` when it is not (the caller reads the whole sums).
    pub fn fleet_functions(
        &self,
        q: &FunctionsQuery,
    ) -> Result<Option<FunctionsAnswer>, StoreError> {
        if !answers(q) {
            return Ok(None);
        }
        let starts = self.starts()?;
        let now = self.rank_side(&q.selection, starts, guess(q))?;
        let base = match &q.baseline {
            Some(b) => Some(self.rank_side(b, starts, None)?),
            None => None,
        };
        let mut answer = FunctionsAnswer::ranked(q, &now.totals, base.as_ref().map(|b| &b.totals));
        let ids: FxHashSet<u64> = answer.page_functions().map(function_id).collect();
        let now = self.page_places(&q.selection, now, &ids)?;
        let base = match (&q.baseline, base) {
            (Some(sel), Some(side)) => Some(self.page_places(sel, side, &ids)?),
            _ => None,
        };
        answer.fill_places(q, &now, base.as_ref());
        Ok(Some(answer))
    }

    /// Step 1 for one side: the fleet's buckets, the rollup's per process before the fleet's
    /// latest record, and the edges' samples, asked of every shard at once. With `guess`,
    /// step 2 starts as soon as the buckets are in, for the functions they rank in the page's
    /// window (see [`Guess`]), while the edges are still being read.
    fn rank_side(
        &self,
        sel: &Selection,
        starts: Starts,
        guess: Option<Guess>,
    ) -> Result<Ranked, StoreError> {
        let plan = plan_from(
            sel.time_start,
            sel.time_end,
            starts.horizon,
            starts.wide_from,
        );
        let parts = split(&plan.buckets, starts.fleet_from);
        let fleet_table = self.table_named(self.local_fleet());
        let mut asks = Vec::new();
        if !parts.fleet.is_empty() {
            asks.push(self.fleet_sql(&fleet_table, sel, &parts.fleet));
        }
        if !parts.per_process.is_empty() {
            let table = self.table_named(self.local_functions());
            asks.push(self.rollup_sql(&table, sel, true, &parts.per_process, None));
        }
        let edges_sql = self.edges_sql(sel, true, &plan);
        let buckets = async {
            let (totals, one) = collapsed(&self.rollup_bytes(&asks).await?)?;
            let early = self.guessed_places(sel, &plan, &totals, one, guess).await?;
            Ok::<_, StoreError>((totals, one, early))
        };
        // The edges' samples are summed on a thread of their own while the buckets and step 2
        // are read (at 1M samples a day: 6,700 stacks, 4.4 ms).
        let (buckets, edges) = std::thread::scope(|scope| {
            let edges = scope.spawn(|| {
                let rows = self.block_on(self.edge_rows(edges_sql.as_ref()))?;
                let mut by_process = IdSums::default();
                self.add_samples(rows, None, &mut by_process)?;
                Ok::<_, StoreError>(by_process)
            });
            let buckets = self.block_on(buckets);
            let edges = edges
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (buckets, edges)
        });
        let (mut totals, one, early) = buckets?;
        let by_process = edges?;
        by_process.add_into(&mut totals, one);
        let names = self.function_names(totals.ids())?;
        let totals = totals.named(|id| names.get(&id).cloned())?;
        Ok(Ranked {
            plan,
            totals,
            edges: by_process,
            early,
        })
    }

    /// Step 2's answer for the functions `totals` (the buckets' alone, at `one`) rank in the
    /// window of `guess`, with their ids; `None` without a guess or anything to read.
    async fn guessed_places(
        &self,
        sel: &Selection,
        plan: &Plan,
        totals: &IdSums,
        one: usize,
        guess: Option<Guess>,
    ) -> Result<Option<(FxHashSet<u64>, Vec<Vec<u8>>)>, StoreError> {
        let ids = guess.map_or_else(Vec::new, |g| {
            totals.ranked_ids(one, g.by_self, g.from, g.to)
        });
        if ids.is_empty() || plan.buckets.is_empty() {
            return Ok(None);
        }
        let bytes = self
            .rollup_bytes(&[self.places_sql(sel, plan, &ids)])
            .await?;
        Ok(Some((ids.into_iter().collect(), bytes)))
    }

    /// Step 2 for one side: the places of functions `ids`, from the rollup per process (or the
    /// early read, when it has them all) and the edges' samples read in step 1.
    fn page_places(
        &self,
        sel: &Selection,
        side: Ranked,
        ids: &FxHashSet<u64>,
    ) -> Result<FunctionSums, StoreError> {
        let mut sums = side.edges;
        sums.keep_only(ids);
        if !ids.is_empty() && !side.plan.buckets.is_empty() {
            let rollups = match side.early {
                Some((guessed, bytes)) if ids.is_subset(&guessed) => bytes,
                _ => {
                    let only: Vec<u64> = ids.iter().copied().collect();
                    let sql = self.places_sql(sel, &side.plan, &only);
                    self.block_on(self.rollup_bytes(&[sql]))?
                }
            };
            for bytes in &rollups {
                add_rollup(bytes, &mut sums, None)?;
            }
        }
        let names = self.function_names(sums.ids())?;
        sums.named(|id| names.get(&id).cloned())
    }

    /// The rollup's sums per process of functions `ids` over `plan`'s buckets.
    fn places_sql(&self, sel: &Selection, plan: &Plan, ids: &[u64]) -> ChSql {
        let table = self.table_named(self.local_functions());
        self.rollup_sql(&table, sel, true, &plan.buckets, Some(ids))
    }

    /// The fleet's sums of whole buckets, as one row of the rollup's answer (process `""`).
    fn fleet_sql(&self, table: &str, sel: &Selection, buckets: &[(i64, i64, i64)]) -> ChSql {
        let mut sql = ChSql::new(
            "SELECT '' AS app, sum(all_value) AS all_sum, \
             sumMap(fnMap.id, fnMap.self_value, fnMap.total) AS fns FROM ",
        );
        sql.push(table).push(" WHERE ");
        buckets_where(&mut sql, buckets);
        // `sel` has no filter (see `answers`): language and event type only.
        sql.series_conditions(sel);
        sql
    }

    /// Records, before a process's samples and rollup rows are deleted, that the buckets
    /// written so far (of either table: the latest end) will still hold them in the fleet's
    /// sums.
    pub(super) async fn fleet_without_deleted(&self) -> Result<(), StoreError> {
        let mut end = None;
        for table in ["functions_fleet", "functions_rollup"] {
            let table = self.table_named(table);
            let latest = latest(self.client(), "toInt64(time) + level", &table).await?;
            end = end.max(latest);
        }
        match end {
            Some(end) => self.record_everywhere("fleet_from", end).await,
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_split_at_the_first_start_from_the_record() {
        let hour = 3600;
        let s = split(
            &[(hour, 0, 5 * hour), (600, 6 * hour, 6 * hour + 1200)],
            2 * hour + 1,
        );
        assert_eq!(s.per_process, [(hour, 0, 2 * hour)]);
        assert_eq!(
            s.fleet,
            [(hour, 3 * hour, 5 * hour), (600, 6 * hour, 6 * hour + 1200)]
        );
        let all_fleet = split(&[(hour, 0, hour)], 0);
        assert_eq!((all_fleet.per_process.len(), all_fleet.fleet.len()), (0, 1));
        let none = split(&[(hour, 0, hour)], 10 * hour);
        assert_eq!(
            (none.per_process, none.fleet.len()),
            (vec![(hour, 0, hour)], 0)
        );
    }
}
