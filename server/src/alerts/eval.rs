//! One check of one rule: the function sums of its window and of its baseline (the window,
//! `baseline` earlier), read as `POST /v1/profile/functions` reads them — the rollup's whole
//! buckets and the samples at the edges — and every function whose share of some service grew
//! past the rule and that the significance rule calls a change, one alert per service.
//!
//! Cost: two reads of the function rollup over the window per rule and check; a one-hour
//! window is one hour bucket (or six ten-minute buckets and the seconds at the edges) per
//! process and side, independent of the sample rate. Evaluating every function is linear in
//! the functions of the services read.

use embers_model::contract::explore::{grown_in_processes, FunctionMetric, ProcessGrowth};
use embers_model::contract::request::{request_to_url_pairs, ProfileRequest};
use embers_model::contract::selection::Selection;
use embers_model::contract::tag_filter::TagFilter;
use embers_model::stats::significance::Rule;
use serde::Serialize;

use super::rules::AlertRule;
use crate::store::{Store, StoreError};

/// Functions named per alert.
pub const FUNCTIONS_PER_ALERT: usize = 5;

/// One function of an alert: its share of the service before and after, in percent.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct GrownFunction {
    pub function: String,
    pub before: f64,
    pub after: f64,
    pub change: f64,
    pub z: f64,
}

/// What would fire (or fires) for one rule and service: the webhook's body.
#[derive(Debug, Clone, PartialEq, Serialize, utoipa::ToSchema)]
pub struct Alert {
    /// `firing` (a webhook is only sent when a pair starts firing).
    #[schema(value_type = String)]
    pub status: &'static str,
    pub rule: String,
    pub service: String,
    /// The function that grew most (the others follow in `functions`).
    pub function: String,
    /// Its share of the service's samples in the baseline, in percent.
    pub before: f64,
    /// Its share now, in percent.
    pub after: f64,
    /// `after - before`, percentage points.
    pub change: f64,
    /// How sure: the significance rule's z-score.
    pub z: f64,
    pub max_growth_points: f64,
    pub metric: FunctionMetric,
    pub event_type: String,
    /// The window checked, Unix seconds, inclusive.
    pub time_start: i64,
    pub time_end: i64,
    /// The baseline, Unix seconds, inclusive.
    pub baseline_time_start: i64,
    pub baseline_time_end: i64,
    /// The comparison in the viewer, the function selected.
    pub permalink: String,
    /// Up to [`FUNCTIONS_PER_ALERT`] functions of the service past the rule, largest first.
    pub functions: Vec<GrownFunction>,
}

/// The alerts `rule` raises at `now` (Unix seconds) on `store`; links start at `public_url`.
pub fn check(
    store: &Store,
    rule: &AlertRule,
    now: i64,
    public_url: &str,
) -> Result<Vec<Alert>, StoreError> {
    let window = rule.window.as_secs() as i64;
    let offset = rule.baseline_offset.as_secs() as i64;
    let (start, end) = (now - window + 1, now);
    let side = |time_start: i64, time_end: i64| Selection {
        app_service: rule.service.clone(),
        language: rule.language.clone(),
        event_type: Some(rule.event_type.clone()),
        time_start,
        time_end,
        filter: TagFilter::default(),
    };
    let now_sums = store.function_sums(&side(start, end), true)?;
    let base_sums = store.function_sums(&side(start - offset, end - offset), true)?;
    let significance = Rule {
        min_samples: rule.min_samples,
        ..Rule::default()
    };
    let grown = grown_in_processes(
        &now_sums,
        &base_sums,
        rule.metric,
        Some(&rule.event_type),
        significance,
        rule.max_growth_points,
    );
    let mut alerts: Vec<Alert> = Vec::new();
    for g in grown {
        let f = GrownFunction {
            function: g.function.clone(),
            before: g.before,
            after: g.after,
            change: g.change,
            z: g.z,
        };
        match alerts.iter_mut().find(|a| a.service == g.app_service) {
            Some(a) if a.functions.len() < FUNCTIONS_PER_ALERT => a.functions.push(f),
            Some(_) => {}
            None => alerts.push(alert(rule, &g, f, (start, end), offset, public_url)),
        }
    }
    Ok(alerts)
}

/// The alert of `rule` for the service of `g` (its headline function).
fn alert(
    rule: &AlertRule,
    g: &ProcessGrowth,
    f: GrownFunction,
    (start, end): (i64, i64),
    offset: i64,
    public_url: &str,
) -> Alert {
    let link = permalink(
        public_url,
        rule,
        &g.app_service,
        &g.function,
        (start, end),
        offset,
    );
    Alert {
        status: "firing",
        rule: rule.name.clone(),
        service: g.app_service.clone(),
        function: g.function.clone(),
        before: g.before,
        after: g.after,
        change: g.change,
        z: g.z,
        max_growth_points: rule.max_growth_points,
        metric: rule.metric,
        event_type: rule.event_type.clone(),
        time_start: start,
        time_end: end,
        baseline_time_start: start - offset,
        baseline_time_end: end - offset,
        permalink: link,
        functions: vec![f],
    }
}

/// The viewer's URL of the service's comparison with the baseline, `function` selected: the
/// profile's parameters as the viewer writes them (`request_to_url_pairs`), the baseline's
/// range and `select` (see `src/session/compare.rs` and `url.rs`).
pub fn permalink(
    public_url: &str,
    rule: &AlertRule,
    service: &str,
    function: &str,
    (start, end): (i64, i64),
    offset: i64,
) -> String {
    let request = ProfileRequest {
        app_service: Some(service.to_owned()),
        // The viewer needs a language to draw a service; the collector's is eBPF.
        profile_language_type: rule.language.clone().unwrap_or_else(|| "eBPF".into()),
        profile_event_type: rule.event_type.clone(),
        time_start: start,
        time_end: end,
        ..ProfileRequest::default()
    };
    let mut pairs: Vec<(&str, String)> = request_to_url_pairs(&request);
    pairs.push(("baseline_time_start", (start - offset).to_string()));
    pairs.push(("baseline_time_end", (end - offset).to_string()));
    pairs.push(("select", function.to_owned()));
    let base = format!("{}/", public_url.trim_end_matches('/'));
    match reqwest::Url::parse_with_params(&base, &pairs) {
        Ok(url) => url.to_string(),
        // `public_url` was checked at start-up; a link without the base still opens locally.
        Err(_) => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_permalink_is_the_viewers_comparison_url() {
        let rule =
            super::super::rules::parse_rule(r#"{"name":"r","max_growth_points":5}"#).unwrap();
        let link = permalink(
            "http://embers.example:8080/",
            &rule,
            "api-gateway",
            "a;b & c",
            (7201, 10800),
            3600,
        );
        let url = reqwest::Url::parse(&link).unwrap();
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(k, v)| (k.into(), v.into()))
            .collect();
        let get = |k: &str| pairs.iter().find(|p| p.0 == k).map(|p| p.1.as_str());
        assert_eq!(url.path(), "/");
        assert_eq!(get("app_service"), Some("api-gateway"));
        assert_eq!(
            (get("time_start"), get("time_end")),
            (Some("7201"), Some("10800"))
        );
        assert_eq!(
            (get("baseline_time_start"), get("baseline_time_end")),
            (Some("3601"), Some("7200"))
        );
        assert_eq!(get("select"), Some("a;b & c"));
        assert_eq!(get("profile_event_type"), Some("on-cpu"));
    }
}
