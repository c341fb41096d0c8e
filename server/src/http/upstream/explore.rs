//! The explore endpoints answered from the querier's SQL API: one fixed statement per request
//! ([`super::statements`]), its table read back into the contract's rows, and the contract's
//! finishing steps (ranking, group limits, prefixes) applied here exactly as for the local store.

use std::collections::HashMap;

use axum::http::HeaderMap;
use embers_model::contract::envelope::Table;
use embers_model::contract::event::is_instant;
use embers_model::contract::explore::{
    rank_counts, rank_services, thread_of, Dimension, ServiceRow, ServicesQuery, TagValuesQuery,
    TagsQuery, TimelineAnswer, TimelineQuery, TimelineRow, ValueCount,
};
use serde_json::Value;
use thiserror::Error;

use super::sql_api::{column, integer, number, text, Rows, SqlApiError};
use super::statements::{self, RenderError, LAST, PROCESS_KEYS, TAG_ROWS, TIMELINE_ROWS};
use super::{Org, Upstream};
use crate::error::Error;
use crate::http::explore::{success, Explore};

/// Why an explore request could not be answered from upstream.
#[derive(Debug, Error)]
pub enum UpstreamExploreError {
    /// A tag name cannot be written into a statement (answered 400).
    #[error(transparent)]
    Render(#[from] RenderError),
    /// The SQL API failed (answered 502).
    #[error(transparent)]
    Api(#[from] SqlApiError),
    /// The answer hit the statement's row limit, so sums would be incomplete (answered 502).
    #[error(
        "the querier's answer reached {0} rows, so the sums would be incomplete; use a larger \
         interval, a narrower range, a prefix or a tag filter"
    )]
    TooManyRows(usize),
    /// Thread grouping met compressed stacks (answered 502).
    #[error(
        "thread grouping needs the stack text, but the querier returns it compressed (DeepFlow's \
         ingester stores stacks with zstd unless `profile-compression-algorithm: \"\"` is set)"
    )]
    CompressedStacks,
}

impl From<UpstreamExploreError> for Error {
    fn from(e: UpstreamExploreError) -> Error {
        match e {
            UpstreamExploreError::Render(e) => Error::invalid(e.to_string()),
            other => Error::bad_gateway(other.to_string()),
        }
    }
}

type Outcome<T> = Result<T, UpstreamExploreError>;

/// The answer's one column other than `skip` (the querier names a tag column after the tag,
/// without backticks; finding it by elimination does not depend on that spelling).
fn other_column(rows: &Rows, skip: &[&str]) -> Result<usize, SqlApiError> {
    rows.columns
        .iter()
        .position(|c| !skip.contains(&c.as_str()))
        .ok_or_else(|| SqlApiError::Format(format!("no group column in {:?}", rows.columns)))
}

/// The name of a group cell: its text, or the thread of a stack.
fn group_name(cell: &Value, dimension: &Dimension) -> Outcome<String> {
    let value = text(cell);
    if *dimension != Dimension::Thread {
        return Ok(value);
    }
    // Compressed bytes do not survive the querier's JSON encoding: they arrive as U+FFFD.
    if value.contains('\u{FFFD}') {
        return Err(UpstreamExploreError::CompressedStacks);
    }
    Ok(thread_of(&value).to_owned())
}

impl Upstream {
    /// Answer an explore request from the querier; the text is the success envelope.
    pub async fn explore(&self, headers: &HeaderMap, q: &Explore) -> Result<String, Error> {
        super::fields::check_explore(q)?;
        let org = &self.options.org(headers)?;
        Ok(match q {
            Explore::Services(q) => success(&self.services(org, q).await?),
            Explore::Timeline(q) => success(&self.timeline(org, q).await?),
            Explore::Tags(q) => success(&self.tags(org, q).await?),
            Explore::TagValues(q) => success(&self.tag_values(org, q).await?),
            Explore::Functions(q) => success(&self.functions(org, q).await?),
            Explore::FunctionTimeline(_) => {
                return Err(Error::not_implemented(super::functions::NO_TIMELINE))
            }
            Explore::FunctionLines(_) => {
                return Err(Error::not_implemented(super::functions::NO_LINES))
            }
        })
    }

    pub(super) async fn services(&self, h: &Org, q: &ServicesQuery) -> Outcome<Table<ServiceRow>> {
        let rows = self.select(h, &statements::services(q)?).await?;
        if rows.values.len() >= TIMELINE_ROWS {
            return Err(UpstreamExploreError::TooManyRows(TIMELINE_ROWS));
        }
        let at = |name| column(&rows, name);
        let (app, language, event, v) = (
            at("app_service")?,
            at("profile_language_type")?,
            at("profile_event_type")?,
            at("v")?,
        );
        // Rows per process (in-use types, or any type): each its last value or its sum, the
        // event type says which, summed per service here.
        let last = column(&rows, LAST).ok();
        let mut sums: HashMap<(String, String, String), u64> = HashMap::new();
        for row in &rows.values {
            let cell = |i: usize| row.get(i).unwrap_or(&Value::Null);
            let event = text(cell(event));
            let value = match last {
                Some(l) if is_instant(&event) => cell(l),
                _ => cell(v),
            };
            let sum = sums
                .entry((text(cell(app)), text(cell(language)), event))
                .or_default();
            *sum = sum.saturating_add(number(value)?);
        }
        let out = sums
            .into_iter()
            .map(|((app, language, event), v)| ServiceRow::from((app, language, event, v)))
            .collect();
        Ok(rank_services(out))
    }

    async fn timeline(&self, h: &Org, q: &TimelineQuery) -> Outcome<TimelineAnswer> {
        let rows = self.select(h, &statements::timeline(q)?).await?;
        if rows.values.len() >= TIMELINE_ROWS {
            return Err(UpstreamExploreError::TooManyRows(TIMELINE_ROWS));
        }
        let (toi, v) = (column(&rows, "toi")?, column(&rows, "v")?);
        let group = match &q.group_by {
            Some((_, dimension)) => {
                let skip = ["toi", "v", PROCESS_KEYS[0], PROCESS_KEYS[1]];
                Some((other_column(&rows, &skip)?, dimension))
            }
            None => None,
        };
        let mut points = Vec::with_capacity(rows.values.len());
        for row in &rows.values {
            let cell = |i: usize| row.get(i).unwrap_or(&Value::Null);
            points.push(TimelineRow {
                time: integer(cell(toi))?,
                group: match group {
                    Some((at, dimension)) => Some(group_name(cell(at), dimension)?),
                    None => None,
                },
                value: number(cell(v))?,
            });
        }
        // `finish` also floors every time to its bucket, whatever alignment the querier used,
        // and sums the rows of a bucket (an in-use type's are one per process).
        Ok(TimelineAnswer::finish(q, points))
    }

    async fn tags(&self, h: &Org, q: &TagsQuery) -> Outcome<Table<ValueCount>> {
        let rows = self.select(h, &statements::tags(q)?).await?;
        // A cut answer would drop tags and undercount the rest.
        if rows.values.len() >= TAG_ROWS {
            return Err(UpstreamExploreError::TooManyRows(TAG_ROWS));
        }
        let n = column(&rows, "n")?;
        let columns: Vec<(usize, &str)> = statements::tag_column_names()
            .filter_map(|name| column(&rows, name).ok().map(|i| (i, name)))
            .collect();
        let mut counts: HashMap<String, u64> = HashMap::new();
        for row in &rows.values {
            let cell = |i: usize| row.get(i).unwrap_or(&Value::Null);
            let count = number(cell(n))?;
            for &(at, name) in &columns {
                let value = text(cell(at));
                if !statements::is_map_tag(name) {
                    if !value.is_empty() {
                        *counts.entry(name.to_owned()).or_default() += count;
                    }
                    continue;
                }
                // A map tag is a JSON object of key -> value; a key with a value is a tag.
                let map: HashMap<String, Value> = serde_json::from_str(&value).unwrap_or_default();
                for (key, v) in map {
                    if !text(&v).is_empty() {
                        *counts.entry(format!("{name}.{key}")).or_default() += count;
                    }
                }
            }
        }
        Ok(rank_counts(counts, None, usize::MAX))
    }

    async fn tag_values(&self, h: &Org, q: &TagValuesQuery) -> Outcome<Table<ValueCount>> {
        let rows = self.select(h, &statements::tag_values(q)?).await?;
        // The statement keeps the most frequent values (prefix applied in SQL), so a cut answer
        // still holds the top `limit` (at most MAX_VALUES_LIMIT < TAG_ROWS) with exact counts;
        // not for `thread`, where many stacks add up to one value.
        if q.dimension == Dimension::Thread && rows.values.len() >= TAG_ROWS {
            return Err(UpstreamExploreError::TooManyRows(TAG_ROWS));
        }
        let n = column(&rows, "n")?;
        let at = other_column(&rows, &["n"])?;
        let mut counts: HashMap<String, u64> = HashMap::new();
        for row in &rows.values {
            let cell = |i: usize| row.get(i).unwrap_or(&Value::Null);
            *counts
                .entry(group_name(cell(at), &q.dimension)?)
                .or_default() += number(cell(n))?;
        }
        Ok(rank_counts(counts, q.prefix.as_deref(), q.limit))
    }
}
