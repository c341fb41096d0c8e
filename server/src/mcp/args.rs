//! The tools' arguments as an assistant sends them, and how a time range is read from them:
//! explicit Unix seconds, or `last` (a duration such as `20m` or `1h`, ending now), by
//! default the last hour. Every mistake is a sentence naming the argument.

use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use super::error::ToolError;

/// The range when none is given.
const DEFAULT_LAST_SECS: i64 = 3600;
/// The longest `last` accepted (the store keeps 72 h by default; a week covers any retention
/// the viewer offers).
const MAX_LAST_SECS: i64 = 7 * 24 * 3600;

/// A time range: Unix seconds, or the last stretch of time ending now.
#[derive(Debug, Clone, Default, Deserialize, JsonSchema)]
pub struct Range {
    /// Start, Unix seconds (inclusive); with `time_end`, instead of `last`.
    pub time_start: Option<i64>,
    /// End, Unix seconds (inclusive).
    pub time_end: Option<i64>,
    /// The range ending now, e.g. `20m`, `1h`, `6h`; default `1h` when no times are given.
    pub last: Option<String>,
}

/// What to profile: which samples.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
pub struct Which {
    /// The process (`app_service`), as `list_services` names it; `Total` for a host's whole
    /// on-CPU graph.
    pub app_service: String,
    /// `on-cpu` (default), `off-cpu`, `mem-alloc`, ...
    pub event_type: Option<String>,
    /// `eBPF` (default), or what the agent wrote.
    pub language: Option<String>,
    /// Conditions such as `host='node-a' AND pod_ns='prod'`.
    pub tag_filter: Option<String>,
}

impl Which {
    /// The event type asked for, or `on-cpu`.
    pub fn event_type(&self) -> String {
        non_blank(&self.event_type)
            .unwrap_or(embers_model::contract::event::DEFAULT_EVENT_TYPE)
            .to_owned()
    }

    /// The language asked for, or `eBPF`.
    pub fn language(&self) -> String {
        non_blank(&self.language)
            .unwrap_or(embers_model::contract::event::DEFAULT_LANGUAGE)
            .to_owned()
    }
}

/// `text` unless absent or blank.
pub fn non_blank(text: &Option<String>) -> Option<&str> {
    text.as_deref().map(str::trim).filter(|t| !t.is_empty())
}

/// Now, Unix seconds.
pub fn now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

impl Range {
    /// `(time_start, time_end)` as asked, `prefix` naming the arguments in messages
    /// (`""` or `baseline_`).
    pub fn resolve(&self, now: i64, prefix: &str) -> Result<(i64, i64), ToolError> {
        let last = non_blank(&self.last);
        match (self.time_start, self.time_end, last) {
            (Some(_), _, Some(_)) | (_, Some(_), Some(_)) => Err(ToolError::Argument(format!(
                "give either {prefix}time_start and {prefix}time_end, or {prefix}last, not both"
            ))),
            (Some(start), Some(end), None) if start <= 0 || end <= 0 => Err(ToolError::Argument(format!(
                "{prefix}time_start and {prefix}time_end are Unix seconds (> 0), got {start} and {end}"
            ))),
            (Some(start), Some(end), None) if start > end => Err(ToolError::Argument(format!(
                "{prefix}time_start ({start}) is after {prefix}time_end ({end})"
            ))),
            (Some(start), Some(end), None) => Ok((start, end)),
            (Some(_), None, None) | (None, Some(_), None) => Err(ToolError::Argument(format!(
                "give both {prefix}time_start and {prefix}time_end (Unix seconds), or {prefix}last"
            ))),
            (None, None, Some(text)) => {
                let secs = parse_last(text, prefix)?;
                Ok((now - secs + 1, now))
            }
            (None, None, None) => Ok((now - DEFAULT_LAST_SECS + 1, now)),
        }
    }
}

/// `{prefix}last` as seconds (at least one, at most a week).
fn parse_last(text: &str, prefix: &str) -> Result<i64, ToolError> {
    let wrong = |why: String| ToolError::Argument(format!("{prefix}last: {why}"));
    let duration = humantime::parse_duration(text).map_err(|e| {
        wrong(format!(
            "'{text}' is not a duration such as 20m, 1h or 6h ({e})"
        ))
    })?;
    let secs = i64::try_from(duration.as_secs()).unwrap_or(i64::MAX);
    if secs < 1 {
        return Err(wrong(format!("'{text}' is shorter than a second")));
    }
    if secs > MAX_LAST_SECS {
        return Err(wrong(format!("'{text}' is longer than a week")));
    }
    Ok(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn range(start: Option<i64>, end: Option<i64>, last: Option<&str>) -> Range {
        Range {
            time_start: start,
            time_end: end,
            last: last.map(str::to_owned),
        }
    }

    #[test]
    fn ranges_read_times_or_last_and_name_the_argument_when_wrong() {
        let now = 1_700_000_000;
        assert_eq!(
            range(None, None, None).resolve(now, ""),
            Ok((now - 3599, now))
        );
        assert_eq!(
            range(None, None, Some("20m")).resolve(now, ""),
            Ok((now - 1199, now))
        );
        assert_eq!(range(Some(5), Some(9), None).resolve(now, ""), Ok((5, 9)));
        let err = |r: Range| {
            r.resolve(now, "baseline_")
                .expect_err("refused")
                .to_string()
        };
        assert!(err(range(Some(9), Some(5), None)).contains("baseline_time_start (9) is after"));
        assert!(err(range(Some(9), None, None)).contains("give both baseline_time_start"));
        assert!(err(range(Some(1), Some(2), Some("1h"))).contains("not both"));
        assert!(err(range(None, None, Some("soon")))
            .contains("baseline_last: 'soon' is not a duration"));
        assert!(err(range(None, None, Some("30d"))).contains("longer than a week"));
    }
}
