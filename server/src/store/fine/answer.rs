//! The answers built from [`FineRows`], once for both stores: the heatmap, the samples in time
//! order, and a ProfileTracing query narrowed to a millisecond window (inner seconds read whole
//! as before, the partly covered seconds at its ends split by their events).

use std::collections::HashMap;

use embers_model::contract::event::is_instant;
use embers_model::contract::fine::heatmap::{HeatmapAnswer, HeatmapBuilder, HeatmapQuery};
use embers_model::contract::fine::samples::{SamplesAnswer, SamplesBuilder, SamplesQuery};
use embers_model::contract::fine::MsWindow;
use embers_model::contract::selection::Selection;

use super::FineRows;
use crate::store::query::{QueryError, QueryOutput};
use crate::store::{Store, StoreError};

/// A ProfileTracing answer of a millisecond window, and whether some of it is known only to
/// the second (rows of a partly covered second without event times, counted whole).
#[derive(Debug)]
pub struct WindowOutput {
    /// The stacks, as [`Store::query`] answers them.
    pub output: QueryOutput,
    /// Whether rows without event times were counted whole in a partly covered second.
    pub untimed_at_edges: bool,
}

/// `sel` over the seconds `[from, to]`.
fn seconds(sel: &Selection, from: i64, to: i64) -> Selection {
    Selection {
        time_start: from,
        time_end: to,
        ..sel.clone()
    }
}

impl Store {
    /// The rows of `sel` with their events (and stack texts when `texts`), and the processes
    /// read.
    pub fn fine_rows(
        &self,
        sel: &Selection,
        texts: bool,
    ) -> Result<(Vec<String>, FineRows), QueryError> {
        match self {
            Store::Sqlite(s) => s.fine_rows(sel, texts),
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.fine_rows(sel, texts)
            }
        }
    }

    /// One step of the fine retention: drop up to `limit` rows of event times of seconds before
    /// `before` (ClickHouse: whole hours at once); how many went.
    pub fn expire_fine_step(&self, before: i64, limit: usize) -> Result<u64, StoreError> {
        match self {
            Store::Sqlite(s) => s.expire_fine_step(before, limit),
            Store::ClickHouse(c) => {
                c.ensure_schema()?;
                c.expire_fine_step(before, limit)
            }
        }
    }

    /// `POST /v1/profile/heatmap`.
    pub fn heatmap(&self, q: &HeatmapQuery) -> Result<HeatmapAnswer, QueryError> {
        let w = q.window;
        let sel = seconds(&q.tracing.selection(), w.first_second(), w.last_second());
        let (_, found) = self.fine_rows(&sel, false)?;
        let mut map = HeatmapBuilder::new(w, q.slots_per_second);
        for row in &found.rows {
            for e in &row.events {
                map.event(row.time, e.offset_ms);
            }
            map.untimed(row.time, row.untimed());
        }
        Ok(map.finish())
    }

    /// `POST /v1/profile/samples`: `Ok(Err(..))` when the window holds too many.
    pub fn samples(
        &self,
        q: &SamplesQuery,
    ) -> Result<
        Result<SamplesAnswer, embers_model::contract::fine::samples::TooManySamples>,
        QueryError,
    > {
        let w = q.window;
        let sel = seconds(&q.tracing.selection(), w.first_second(), w.last_second());
        let (_, found) = self.fine_rows(&sel, true)?;
        let mut out = SamplesBuilder::new();
        for row in &found.rows {
            let text = found.stacks.get(&row.stack).ok_or_else(|| {
                StoreError::Invalid(format!("stack {} of a stored sample is missing", row.stack))
            })?;
            let stack = out.stack(text);
            for e in row
                .events
                .iter()
                .filter(|e| w.contains(row.time, e.offset_ms))
            {
                let t = row.time * 1000 + i64::from(e.offset_ms);
                if let Err(full) = out.event(t, e.tid, stack, e.weight) {
                    return Ok(Err(full));
                }
            }
            let untimed = row.untimed();
            if untimed > 0 {
                if let Err(full) = out.untimed(row.time, stack, untimed) {
                    return Ok(Err(full));
                }
            }
        }
        Ok(Ok(out.finish()))
    }

    /// ProfileTracing over `sel` narrowed to `window`: the seconds it covers whole read as
    /// [`Store::query`] reads them, each partly covered second split by its events.
    pub fn query_window(
        &self,
        sel: &Selection,
        window: MsWindow,
    ) -> Result<WindowOutput, QueryError> {
        let (first, last) = (window.first_second(), window.last_second());
        let mut edges: Vec<i64> = [first, last]
            .into_iter()
            .filter(|s| !window.covers_second(*s))
            .collect();
        edges.dedup();
        // An instant (in-use) profile is one upload, not events over time.
        if edges.is_empty() || sel.event_type.as_deref().is_some_and(is_instant) {
            let output = self.query(&seconds(sel, first, last))?;
            return Ok(WindowOutput {
                output,
                untimed_at_edges: false,
            });
        }
        let inner_from = if edges.contains(&first) {
            first + 1
        } else {
            first
        };
        let inner_to = if edges.contains(&last) {
            last - 1
        } else {
            last
        };
        let mut output = QueryOutput::default();
        let mut sums: HashMap<String, u64> = HashMap::new();
        let mut names: Vec<String> = Vec::new();
        if inner_from <= inner_to {
            match self.query(&seconds(sel, inner_from, inner_to)) {
                Ok(inner) => {
                    names.extend(inner.root.split(", ").map(str::to_owned));
                    output.statements = inner.statements;
                    output.elapsed = inner.elapsed;
                    sums.extend(inner.stacks);
                }
                Err(QueryError::NoAppService) => {}
                Err(e) => return Err(e),
            }
        }
        let mut untimed_at_edges = false;
        for second in edges {
            let found = match self.fine_rows(&seconds(sel, second, second), true) {
                Ok(found) => found,
                Err(QueryError::NoAppService) => continue,
                Err(e) => return Err(e),
            };
            names.extend(found.0);
            untimed_at_edges |= add_edge(&mut sums, &found.1, window, second)?;
        }
        if names.is_empty() {
            return Err(QueryError::NoAppService);
        }
        names.sort();
        names.dedup();
        output.root = sel.app_service.clone().unwrap_or_else(|| names.join(", "));
        output.stacks = sums.into_iter().filter(|(_, v)| *v > 0).collect();
        output
            .statements
            .push("fine rows of the window's partly covered seconds".to_owned());
        Ok(WindowOutput {
            output,
            untimed_at_edges,
        })
    }
}

/// Adds the events of `found` inside `window` (and rows without times whole) to `sums`;
/// whether any row had value without times.
fn add_edge(
    sums: &mut HashMap<String, u64>,
    found: &FineRows,
    window: MsWindow,
    second: i64,
) -> Result<bool, StoreError> {
    let mut untimed_seen = false;
    for row in &found.rows {
        let inside: u64 = row
            .events
            .iter()
            .filter(|e| window.contains(second, e.offset_ms))
            .map(|e| e.weight)
            .sum();
        let untimed = row.untimed();
        untimed_seen |= untimed > 0;
        let add = inside.saturating_add(untimed);
        if add == 0 {
            continue;
        }
        let text = found.stacks.get(&row.stack).ok_or_else(|| {
            StoreError::Invalid(format!("stack {} of a stored sample is missing", row.stack))
        })?;
        let sum = sums.entry(text.clone()).or_default();
        *sum = sum.saturating_add(add);
    }
    Ok(untimed_seen)
}
