//! Alert rules: their JSON form (one object per `--alert-rule`, an array of them in an
//! `--alert-rules` file), their defaults, and the checks that make a bad rule a clear error at
//! start-up rather than an alert that never fires.
//!
//! ```json
//! {"name": "cpu-share", "service": "api-gateway", "event_type": "on-cpu", "metric": "total",
//!  "max_growth_points": 5, "baseline": "previous_day", "window": "1h", "min_samples": 20}
//! ```
//!
//! Only `name` and `max_growth_points` are required: `service` absent or `"*"` is any service,
//! `event_type` is `on-cpu`, `metric` `total`, `baseline` `previous_day`, `window` `1h`,
//! `min_samples` 20 (the significance rule's floor).

use std::time::Duration;

use embers_model::contract::explore::FunctionMetric;
use serde::Deserialize;

/// Longest window or baseline offset a rule may name: the cost of a check grows with the
/// window (it reads the rollup's buckets over it, twice).
pub const MAX_SPAN: Duration = Duration::from_secs(31 * 86_400);

/// A rule as written.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Written {
    name: String,
    #[serde(default)]
    service: Option<String>,
    #[serde(default)]
    event_type: Option<String>,
    #[serde(default)]
    language: Option<String>,
    #[serde(default)]
    metric: Option<FunctionMetric>,
    max_growth_points: f64,
    #[serde(default)]
    baseline: Option<String>,
    #[serde(default)]
    window: Option<String>,
    #[serde(default)]
    min_samples: Option<u64>,
}

/// A checked rule.
#[derive(Debug, Clone, PartialEq)]
pub struct AlertRule {
    /// Its name (the firing state and the webhook name it).
    pub name: String,
    /// The one service it watches; `None`: every service but `Total`.
    pub service: Option<String>,
    /// The event type read.
    pub event_type: String,
    /// Only this language type, when given.
    pub language: Option<String>,
    /// Self or total.
    pub metric: FunctionMetric,
    /// A function fires when its share of a service grew by more than this, in points.
    pub max_growth_points: f64,
    /// How far back the baseline lies: the window, that much earlier.
    pub baseline_offset: Duration,
    /// The range checked: the last `window` up to the check.
    pub window: Duration,
    /// The significance rule's sample floor.
    pub min_samples: u64,
}

/// A duration: `previous_hour`, `previous_day`, `previous_week`, or `30m`, `1h`, `2d`, ...
fn duration(what: &str, text: &str) -> Result<Duration, String> {
    let d = match text {
        "previous_hour" => Duration::from_secs(3600),
        "previous_day" => Duration::from_secs(86_400),
        "previous_week" => Duration::from_secs(7 * 86_400),
        other => humantime::parse_duration(other).map_err(|e| {
            format!(
                "{what} must be previous_hour, previous_day, previous_week or a duration such \
                 as 30m or 1h, got \"{other}\": {e}"
            )
        })?,
    };
    if d < Duration::from_secs(60) || d > MAX_SPAN {
        return Err(format!(
            "{what} must be from 1 minute to 31 days, got \"{text}\""
        ));
    }
    Ok(d)
}

fn check(w: Written) -> Result<AlertRule, String> {
    let name = w.name.trim().to_owned();
    if name.is_empty() || name.len() > 200 {
        return Err("name must be 1 to 200 characters".into());
    }
    let at = |e: String| format!("rule \"{name}\": {e}");
    if !w.max_growth_points.is_finite() || !(0.0..=100.0).contains(&w.max_growth_points) {
        return Err(at(format!(
            "max_growth_points must be 0 to 100 (percentage points), got {}",
            w.max_growth_points
        )));
    }
    let window = duration("window", w.window.as_deref().unwrap_or("1h")).map_err(at)?;
    let baseline_offset =
        duration("baseline", w.baseline.as_deref().unwrap_or("previous_day")).map_err(at)?;
    if baseline_offset < window {
        return Err(at(format!(
            "the baseline ({}) must lie at least a window ({}) back, or the two overlap",
            humantime::format_duration(baseline_offset),
            humantime::format_duration(window)
        )));
    }
    Ok(AlertRule {
        service: w.service.filter(|s| !s.is_empty() && s != "*"),
        event_type: w.event_type.unwrap_or_else(|| "on-cpu".into()),
        language: w.language.filter(|l| !l.is_empty()),
        metric: w.metric.unwrap_or(FunctionMetric::Total),
        max_growth_points: w.max_growth_points,
        baseline_offset,
        window,
        min_samples: w.min_samples.unwrap_or(20),
        name,
    })
}

/// One rule from its JSON text (`--alert-rule`).
pub fn parse_rule(text: &str) -> Result<AlertRule, String> {
    let w: Written =
        serde_json::from_str(text).map_err(|e| format!("--alert-rule is not a rule: {e}"))?;
    check(w)
}

/// The rules of a file's JSON text (`--alert-rules`): an array of rules.
pub fn parse_rules(text: &str, file: &str) -> Result<Vec<AlertRule>, String> {
    let written: Vec<Written> = serde_json::from_str(text)
        .map_err(|e| format!("{file} is not a JSON array of alert rules: {e}"))?;
    written
        .into_iter()
        .map(|w| check(w).map_err(|e| format!("{file}: {e}")))
        .collect()
}

/// `rules` with no name twice.
pub fn distinct(rules: Vec<AlertRule>) -> Result<Vec<AlertRule>, String> {
    let mut seen = std::collections::HashSet::new();
    for r in &rules {
        if !seen.insert(r.name.clone()) {
            return Err(format!("two alert rules are named \"{}\"", r.name));
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_every_member() {
        let r = parse_rule(r#"{"name": "a", "max_growth_points": 5}"#).unwrap();
        assert_eq!(r.service, None);
        assert_eq!(
            (r.event_type.as_str(), r.metric),
            ("on-cpu", FunctionMetric::Total)
        );
        assert_eq!(
            (r.window.as_secs(), r.baseline_offset.as_secs()),
            (3600, 86_400)
        );
        let r = parse_rule(
            r#"{"name": "b", "service": "api-gateway", "event_type": "off-cpu", "metric": "self",
                "max_growth_points": 2.5, "baseline": "2h", "window": "30m", "min_samples": 50,
                "language": "eBPF"}"#,
        )
        .unwrap();
        assert_eq!(r.service.as_deref(), Some("api-gateway"));
        assert_eq!(
            (r.window.as_secs(), r.baseline_offset.as_secs()),
            (1800, 7200)
        );
        assert_eq!((r.min_samples, r.metric), (50, FunctionMetric::SelfValue));
        assert_eq!(
            parse_rule(r#"{"name":"c","service":"*","max_growth_points":1}"#)
                .unwrap()
                .service,
            None
        );
    }

    #[test]
    fn bad_rules_say_what_is_wrong() {
        for (text, says) in [
            (r#"{"max_growth_points": 5}"#, "missing field `name`"),
            (r#"{"name": "a"}"#, "missing field `max_growth_points`"),
            (
                r#"{"name": "a", "max_growth_points": 5, "treshold": 1}"#,
                "unknown field `treshold`",
            ),
            (r#"{"name": "a", "max_growth_points": 500}"#, "0 to 100"),
            (
                r#"{"name": "a", "max_growth_points": 5, "window": "soon"}"#,
                "window must be",
            ),
            (
                r#"{"name": "a", "max_growth_points": 5, "window": "2h", "baseline": "previous_hour"}"#,
                "overlap",
            ),
            (
                r#"{"name": "a", "max_growth_points": 5, "window": "1s"}"#,
                "1 minute to 31 days",
            ),
            (
                r#"{"name": "a", "max_growth_points": 5, "metric": "both"}"#,
                "unknown variant",
            ),
            (r#"{"name": " ", "max_growth_points": 5}"#, "name must be"),
        ] {
            let e = parse_rule(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
        let e = parse_rules(r#"{"name": "a"}"#, "rules.json").unwrap_err();
        assert!(e.contains("rules.json is not a JSON array"), "{e}");
        let two = parse_rules(
            r#"[{"name": "a", "max_growth_points": 5}, {"name": "a", "max_growth_points": 6}]"#,
            "f",
        )
        .unwrap();
        assert!(distinct(two).unwrap_err().contains("named \"a\""));
    }
}
