//! The querier's SQL API: `POST {upstream}/v1/query/` with the form body `db=profile&sql=...`,
//! answered `{"OPT_STATUS", "DESCRIPTION", "result": {"columns", "values"}, "debug"}`.
//!
//! Statements try `in_process_metrics` first (DeepFlow ≥ v7.1); when the querier says that
//! table is unknown, the same statement runs on `in_process`, and the metrics table is not
//! tried again for [`RETRY_METRICS_AFTER`] (an upgraded querier is picked up without a restart).

use std::time::{Duration, Instant};

use embers_model::contract::envelope::{Incoming, Table, SUCCESS};
use serde_json::Value;
use thiserror::Error;

use super::relay::ReadError;
use super::statements::{Source, Statement};
use super::{Org, Upstream, ORG_HEADER};

/// How long a querier without `in_process_metrics` is asked only for `in_process`.
pub const RETRY_METRICS_AFTER: Duration = Duration::from_secs(600);

/// A querier answer as rows of JSON values.
pub type Rows = Table<Vec<Value>>;

/// Why the querier's SQL API gave no usable answer.
#[derive(Debug, Error)]
pub enum SqlApiError {
    /// No HTTP answer.
    #[error("upstream querier {url} is unreachable: {detail}")]
    Unreachable {
        /// The SQL API's URL.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The querier answered with a failure.
    #[error("upstream querier answered HTTP {status} {opt_status}: {description}")]
    Failed {
        /// HTTP status.
        status: u16,
        /// Its `OPT_STATUS`.
        opt_status: String,
        /// Its `DESCRIPTION`.
        description: String,
    },
    /// The answer is not the expected table.
    #[error("upstream querier's answer cannot be read: {0}")]
    Format(String),
    /// The answer is a redirect or too big; the text says which and what to do.
    #[error("{0}")]
    Unusable(String),
}

/// Whether a failure says the metrics table does not exist (the querier's own check, or
/// ClickHouse's `UNKNOWN_TABLE`, both name it).
fn unknown_metrics_table(description: &str) -> bool {
    description.contains(Source::Metrics.table()) || description.contains("UNKNOWN_TABLE")
}

impl Upstream {
    /// The SQL API's URL.
    pub fn sql_url(&self) -> String {
        format!("{}/v1/query/", self.base)
    }

    fn metrics_tried_recently(&self) -> bool {
        let missing = self
            .metrics_missing
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        missing.is_some_and(|since| since.elapsed() < RETRY_METRICS_AFTER)
    }

    /// Run `statement` on `in_process_metrics` if it can answer it, else (or when that table is
    /// unknown) on `in_process`.
    pub(crate) async fn select(
        &self,
        org: &Org,
        statement: &Statement,
    ) -> Result<Rows, SqlApiError> {
        if statement.metrics && !self.metrics_tried_recently() {
            match self.post_sql(org, &statement.sql(Source::Metrics)).await {
                Err(SqlApiError::Failed { description, .. })
                    if unknown_metrics_table(&description) =>
                {
                    tracing::info!("the querier has no in_process_metrics; using in_process");
                    *self
                        .metrics_missing
                        .lock()
                        .unwrap_or_else(|p| p.into_inner()) = Some(Instant::now());
                }
                other => return other,
            }
        }
        self.post_sql(org, &statement.sql(Source::Samples)).await
    }

    async fn post_sql(&self, org: &Org, sql: &str) -> Result<Rows, SqlApiError> {
        let url = self.sql_url();
        let mut request = self
            .client
            .post(&url)
            .form(&[("db", "profile"), ("sql", sql)]);
        if let Some(org) = org.header() {
            request = request.header(ORG_HEADER, org.clone());
        }
        let unreachable = |detail: String| SqlApiError::Unreachable {
            url: url.clone(),
            detail,
        };
        let mut answer = request
            .send()
            .await
            .map_err(|e| unreachable(self.describe(&e)))?;
        if let Some(description) = self.redirected(&url, &answer) {
            return Err(SqlApiError::Unusable(description));
        }
        let status = answer.status().as_u16();
        let body = match self.read_bounded(&mut answer).await {
            Ok(body) => body,
            Err(ReadError::TooBig) => return Err(SqlApiError::Unusable(self.too_big())),
            Err(ReadError::Failed(e)) => {
                return Err(unreachable(format!(
                    "reading the answer failed: {}",
                    self.describe(&e)
                )))
            }
        };
        let parsed: Result<Incoming<Rows>, _> = serde_json::from_slice(&body);
        match parsed {
            Ok(a) if status == 200 && a.opt_status.as_deref() == Some(SUCCESS) => {
                Ok(a.result.unwrap_or(Table {
                    columns: Vec::new(),
                    values: Vec::new(),
                }))
            }
            Ok(a) => Err(SqlApiError::Failed {
                status,
                opt_status: a.opt_status.unwrap_or_default(),
                description: a.description.unwrap_or_default(),
            }),
            Err(e) if status == 200 => Err(SqlApiError::Format(e.to_string())),
            Err(_) => Err(SqlApiError::Failed {
                status,
                opt_status: String::new(),
                description: String::from_utf8_lossy(&body).chars().take(500).collect(),
            }),
        }
    }
}

/// The index of column `name` in an answer.
pub(crate) fn column(rows: &Rows, name: &str) -> Result<usize, SqlApiError> {
    rows.columns
        .iter()
        .position(|c| c == name)
        .ok_or_else(|| SqlApiError::Format(format!("no column {name} in {:?}", rows.columns)))
}

/// A cell as a non-negative integer (the querier may send sums as floats).
pub(crate) fn number(cell: &Value) -> Result<u64, SqlApiError> {
    match cell {
        Value::Number(n) => n
            .as_u64()
            .or_else(|| n.as_f64().filter(|f| *f >= 0.0).map(|f| f.round() as u64))
            .ok_or_else(|| SqlApiError::Format(format!("{n} is not a count"))),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| SqlApiError::Format(format!("{s:?} is not a count"))),
        other => Err(SqlApiError::Format(format!("{other} is not a count"))),
    }
}

/// A cell as a signed integer (times).
pub(crate) fn integer(cell: &Value) -> Result<i64, SqlApiError> {
    match cell {
        Value::Number(n) => n
            .as_i64()
            .or_else(|| n.as_f64().map(|f| f.round() as i64))
            .ok_or_else(|| SqlApiError::Format(format!("{n} is not a time"))),
        Value::String(s) => s
            .trim()
            .parse()
            .map_err(|_| SqlApiError::Format(format!("{s:?} is not a time"))),
        other => Err(SqlApiError::Format(format!("{other} is not a time"))),
    }
}

/// A cell as text (numbers print as numbers, null as empty).
pub(crate) fn text(cell: &Value) -> String {
    match cell {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}
