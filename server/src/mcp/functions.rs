//! `top_functions`' arguments and the `POST /v1/profile/functions` body they make: the range
//! and samples as the other tools read them, the metric and order as words, a bounded
//! `limit`, and an optional baseline — the previous period, the same time yesterday, or a
//! range — that turns the list into *what grew*. Every mistake is a sentence naming the
//! argument.

use embers_model::contract::explore::{FunctionMetric, FunctionOrder, FunctionsRequest};
use embers_model::summary::MAX_ROWS;
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use super::args::{non_blank, Range, Which};
use super::error::ToolError;

/// Functions listed unless asked otherwise.
pub const DEFAULT_FUNCTION_ROWS: usize = 20;
/// A day, for `baseline: yesterday`.
const DAY: i64 = 86_400;

/// `top_functions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct FunctionsArgs {
    /// The time range.
    #[serde(flatten)]
    pub range: Range,
    /// Only this process; default every process (the per-host `Total` left out).
    pub app_service: Option<String>,
    /// `on-cpu` (default), `off-cpu`, `mem-alloc`, ...
    pub event_type: Option<String>,
    /// `eBPF` (default), ...
    pub language: Option<String>,
    /// Conditions such as `host='node-a' AND pod_ns='prod'`.
    pub tag_filter: Option<String>,
    /// `self` (time in the function itself; the default without a baseline) or `total` (with
    /// its callees; the default with one, so a caller's grown path counts).
    pub metric: Option<String>,
    /// Functions listed, 1 to 50 (default 20).
    pub limit: Option<i64>,
    /// Only functions whose name contains this, case ignored.
    pub search: Option<String>,
    /// Compare with `previous` (the range of the same length just before) or `yesterday`
    /// (the same range a day earlier): the list becomes what grew, by change.
    pub baseline: Option<String>,
    /// The baseline's start, Unix seconds (with `baseline_time_end`), instead of `baseline`.
    pub baseline_time_start: Option<i64>,
    /// The baseline's end, Unix seconds.
    pub baseline_time_end: Option<i64>,
    /// `value`, `change` (of the share of every selected sample) or `place_change` (of the
    /// share inside one service, so growth in a small service is found; the default with a
    /// baseline). Without a baseline only `value`.
    pub order_by: Option<String>,
}

/// The metric asked for.
fn metric(args: &FunctionsArgs, comparing: bool) -> Result<FunctionMetric, ToolError> {
    match non_blank(&args.metric) {
        None if comparing => Ok(FunctionMetric::Total),
        None | Some("self") => Ok(FunctionMetric::SelfValue),
        Some("total") => Ok(FunctionMetric::Total),
        Some(other) => Err(ToolError::Argument(format!(
            "metric must be \"self\" or \"total\", got \"{other}\""
        ))),
    }
}

/// The order asked for.
fn order(args: &FunctionsArgs, comparing: bool) -> Result<FunctionOrder, ToolError> {
    let order = match non_blank(&args.order_by) {
        None if comparing => FunctionOrder::PlaceChange,
        None | Some("value") => FunctionOrder::Value,
        Some("change") => FunctionOrder::Change,
        Some("place_change") => FunctionOrder::PlaceChange,
        Some(other) => {
            return Err(ToolError::Argument(format!(
                "order_by must be \"value\", \"change\" or \"place_change\", got \"{other}\""
            )))
        }
    };
    if order != FunctionOrder::Value && !comparing {
        return Err(ToolError::argument(
            "order_by change and place_change need a baseline: baseline \"previous\" \
                    or \"yesterday\", or baseline_time_start and baseline_time_end",
        ));
    }
    Ok(order)
}

/// The limit asked for, within 1..=[`MAX_ROWS`].
fn limit(args: &FunctionsArgs) -> Result<usize, ToolError> {
    match args.limit {
        None => Ok(DEFAULT_FUNCTION_ROWS),
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=MAX_ROWS).contains(n))
            .ok_or_else(|| ToolError::Argument(format!("limit must be 1 to {MAX_ROWS}, got {n}"))),
    }
}

/// The baseline's range for the range `(start, end)`, if one is asked for.
fn baseline(
    args: &FunctionsArgs,
    (start, end): (i64, i64),
) -> Result<Option<(i64, i64)>, ToolError> {
    let explicit = Range {
        time_start: args.baseline_time_start,
        time_end: args.baseline_time_end,
        last: None,
    };
    let given = explicit.time_start.is_some() || explicit.time_end.is_some();
    match non_blank(&args.baseline) {
        Some(_) if given => Err(ToolError::argument(
            "give either baseline (previous or yesterday) or baseline_time_start and \
             baseline_time_end, not both",
        )),
        Some("previous") => Ok(Some((start - (end - start + 1), start - 1))),
        Some("yesterday") => Ok(Some((start - DAY, end - DAY))),
        Some(other) => Err(ToolError::Argument(format!(
            "baseline must be \"previous\" or \"yesterday\" (or give baseline_time_start and \
             baseline_time_end), got \"{other}\""
        ))),
        None if given => explicit.resolve(start, "baseline_").map(Some),
        None => Ok(None),
    }
}

/// The `functions` body for `args` over `range`, and the baseline's range when comparing.
pub fn request(
    args: &FunctionsArgs,
    range: (i64, i64),
) -> Result<(FunctionsRequest, Option<(i64, i64)>), ToolError> {
    let which = Which {
        app_service: String::new(),
        event_type: args.event_type.clone(),
        language: args.language.clone(),
        tag_filter: args.tag_filter.clone(),
    };
    let base = baseline(args, range)?;
    let comparing = base.is_some();
    let body = FunctionsRequest {
        time_start: range.0,
        time_end: range.1,
        profile_event_type: which.event_type(),
        profile_language_type: Some(which.language()),
        app_service: non_blank(&args.app_service).map(str::to_owned),
        tag_filter: non_blank(&args.tag_filter).unwrap_or_default().to_owned(),
        metric: Some(metric(args, comparing)?),
        order_by: Some(order(args, comparing)?),
        search: non_blank(&args.search).map(str::to_owned),
        limit: Some(limit(args)? as i64),
        baseline_time_start: base.map(|b| b.0),
        baseline_time_end: base.map(|b| b.1),
        ..FunctionsRequest::default()
    };
    Ok((body, base))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RANGE: (i64, i64) = (1_700_000_000, 1_700_001_199);

    fn ask(args: FunctionsArgs) -> Result<(FunctionsRequest, Option<(i64, i64)>), ToolError> {
        request(&args, RANGE)
    }

    #[test]
    fn baselines_are_the_previous_period_yesterday_or_a_range() {
        let (body, base) = ask(FunctionsArgs::default()).expect("plain");
        assert_eq!(base, None);
        assert_eq!(body.metric, Some(FunctionMetric::SelfValue));
        assert_eq!(body.order_by, Some(FunctionOrder::Value));
        assert_eq!(body.limit, Some(20));
        let previous = FunctionsArgs {
            baseline: Some("previous".into()),
            ..FunctionsArgs::default()
        };
        let (body, base) = ask(previous).expect("previous");
        assert_eq!(base, Some((RANGE.0 - 1200, RANGE.0 - 1)));
        assert_eq!(body.baseline_time_end, Some(RANGE.0 - 1));
        assert_eq!(body.metric, Some(FunctionMetric::Total));
        assert_eq!(body.order_by, Some(FunctionOrder::PlaceChange));
        let yesterday = FunctionsArgs {
            baseline: Some("yesterday".into()),
            metric: Some("self".into()),
            order_by: Some("change".into()),
            ..FunctionsArgs::default()
        };
        let (body, base) = ask(yesterday).expect("yesterday");
        assert_eq!(base, Some((RANGE.0 - DAY, RANGE.1 - DAY)));
        assert_eq!(body.metric, Some(FunctionMetric::SelfValue));
        assert_eq!(body.order_by, Some(FunctionOrder::Change));
        let explicit = FunctionsArgs {
            baseline_time_start: Some(5),
            baseline_time_end: Some(9),
            ..FunctionsArgs::default()
        };
        assert_eq!(ask(explicit).expect("explicit").1, Some((5, 9)));
    }

    #[test]
    fn bad_arguments_name_the_argument() {
        let err = |args: FunctionsArgs| ask(args).expect_err("refused").to_string();
        for n in [0, 51, -3] {
            let e = err(FunctionsArgs {
                limit: Some(n),
                ..FunctionsArgs::default()
            });
            assert_eq!(e, format!("limit must be 1 to 50, got {n}"));
        }
        let e = err(FunctionsArgs {
            metric: Some("cycles".into()),
            ..FunctionsArgs::default()
        });
        assert!(e.starts_with("metric must be \"self\" or \"total\""), "{e}");
        let e = err(FunctionsArgs {
            order_by: Some("change".into()),
            ..FunctionsArgs::default()
        });
        assert!(e.contains("need a baseline"), "{e}");
        let e = err(FunctionsArgs {
            baseline: Some("last week".into()),
            ..FunctionsArgs::default()
        });
        assert!(
            e.starts_with("baseline must be \"previous\" or \"yesterday\""),
            "{e}"
        );
        let e = err(FunctionsArgs {
            baseline: Some("previous".into()),
            baseline_time_start: Some(1),
            ..FunctionsArgs::default()
        });
        assert!(e.contains("not both"), "{e}");
        let e = err(FunctionsArgs {
            baseline_time_start: Some(9),
            baseline_time_end: Some(5),
            ..FunctionsArgs::default()
        });
        assert!(e.contains("baseline_time_start (9) is after"), "{e}");
    }
}
