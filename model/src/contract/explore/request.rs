//! The explore request bodies: what the viewer posts ([`ServicesRequest`], ...) and what the
//! service makes of them ([`ServicesQuery`], ...), read member by member with [`Members`] so every
//! rejection names the member.

use serde::{Deserialize, Serialize};

use super::{
    check_interval, pick_interval, Dimension, DEFAULT_GROUP_LIMIT, DEFAULT_VALUES_LIMIT,
    MAX_GROUP_LIMIT, MAX_VALUES_LIMIT,
};
use crate::contract::body::{check_range, parse_tracing_body, Members, RequestError, TIME_HINT};
use crate::contract::request::ProfileRequest;
use crate::contract::selection::Selection;
use crate::contract::tag_filter::TagFilter;

/// Body of `POST /v1/profile/services`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServicesRequest {
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_start: i64,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_end: i64,
    /// Only this language type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_language_type: Option<String>,
    /// Only this event type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_event_type: Option<String>,
    /// Conditions `name='value' AND ...`; empty for none.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>))]
    pub tag_filter: String,
}

/// Body of `POST /v1/profile/timeline`: the ProfileTracing fields plus the breakdown.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimelineRequest {
    /// The samples, as for ProfileTracing (`max_kernel_stack_depth` is ignored).
    #[serde(flatten)]
    pub profile: ProfileRequest,
    /// Bucket length in seconds; picked from [`INTERVAL_LADDER`] when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub interval: Option<i64>,
    /// A tag, `app_service` or `thread` to break the series down by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group_by: Option<String>,
    /// Groups kept by name (1 to [`MAX_GROUP_LIMIT`], default [`DEFAULT_GROUP_LIMIT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 50))]
    pub group_limit: Option<i64>,
}

/// Body of `POST /v1/profile/tags`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagsRequest {
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_start: i64,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_end: i64,
    /// Only samples of this process (or `Total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_service: Option<String>,
    /// Only this language type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_language_type: Option<String>,
    /// Only this event type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_event_type: Option<String>,
}

/// Body of `POST /v1/profile/tag_values`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TagValuesRequest {
    /// A tag, or `app_service` (the process-name autocomplete), ... as for `group_by`.
    pub tag: String,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_start: i64,
    /// Unix seconds, inclusive.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub time_end: i64,
    /// Only samples of this process (or `Total`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_service: Option<String>,
    /// Only values starting with this, ASCII case ignored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
    /// Most values (1 to [`MAX_VALUES_LIMIT`], default [`DEFAULT_VALUES_LIMIT`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(minimum = 1, maximum = 1000))]
    pub limit: Option<i64>,
}

/// A `services` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServicesQuery {
    /// The samples to rank (`app_service` is `None`).
    pub selection: Selection,
}

/// A `timeline` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimelineQuery {
    /// The samples; `app_service: None` means every process except `Total`.
    pub selection: Selection,
    /// Bucket length, given or picked.
    pub interval: i64,
    /// The breakdown: the name as requested (the answer's column) and what it means.
    pub group_by: Option<(String, Dimension)>,
    /// Groups kept by name.
    pub group_limit: usize,
}

impl TimelineQuery {
    /// Whether the per-host `Total` pseudo-process is left out: when no process is named, so a
    /// chart of all processes does not count each sample twice.
    pub fn skips_total(&self) -> bool {
        self.selection.app_service.is_none()
    }
}

/// A `tags` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagsQuery {
    /// The samples whose tags are listed (no tag filter).
    pub selection: Selection,
}

/// A `tag_values` request the service accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TagValuesQuery {
    /// The samples whose values are listed (no tag filter, any language and event type).
    pub selection: Selection,
    /// The tag as requested.
    pub tag: String,
    /// What it means.
    pub dimension: Dimension,
    /// Only values starting with this, ASCII case ignored.
    pub prefix: Option<String>,
    /// Most values.
    pub limit: usize,
}

/// `time_start` and `time_end`, both required, in order.
pub(super) fn time_range(m: &Members) -> Result<(i64, i64), RequestError> {
    let start = m.time("time_start")?;
    let end = m.time("time_end")?;
    let missing: Vec<String> = [("time_start", start), ("time_end", end)]
        .iter()
        .filter(|(_, v)| v.is_none())
        .map(|(k, _)| format!("{k} is required ({TIME_HINT})"))
        .collect();
    let (Some(start), Some(end)) = (start, end) else {
        return Err(RequestError(missing.join("\n")));
    };
    check_range(start, end)?;
    Ok((start, end))
}

/// An optional integer member within `1..=max`.
pub(super) fn bounded(
    m: &Members,
    key: &str,
    max: usize,
    default: usize,
) -> Result<usize, RequestError> {
    let hint = format!("1 to {max}");
    match m.int(key, &hint)? {
        None => Ok(default),
        Some(n) => usize::try_from(n)
            .ok()
            .filter(|n| (1..=max).contains(n))
            .ok_or_else(|| RequestError(format!("{key} must be {hint}, got {n}"))),
    }
}

fn selection(
    (time_start, time_end): (i64, i64),
    app_service: Option<String>,
    m: &Members,
    filter: TagFilter,
) -> Result<Selection, RequestError> {
    Ok(Selection {
        app_service,
        language: m.non_empty("profile_language_type")?,
        event_type: m.non_empty("profile_event_type")?,
        time_start,
        time_end,
        filter,
    })
}

/// Reads `POST /v1/profile/services`.
pub fn parse_services_body(body: &[u8]) -> Result<ServicesQuery, RequestError> {
    let m = Members::parse(body)?;
    let range = time_range(&m)?;
    let (_, filter) = m.tag_filter()?;
    Ok(ServicesQuery {
        selection: selection(range, None, &m, filter)?,
    })
}

/// Reads `POST /v1/profile/timeline`: the ProfileTracing members with their messages, then the
/// breakdown.
pub fn parse_timeline_body(body: &[u8]) -> Result<TimelineQuery, RequestError> {
    let tracing = parse_tracing_body(body)?;
    let m = Members::parse(body)?;
    let selection = tracing.selection();
    let (start, end) = (selection.time_start, selection.time_end);
    let interval = match m.int("interval", "seconds, > 0")? {
        Some(interval) => {
            check_interval(start, end, interval)?;
            interval
        }
        None => pick_interval(start, end)?,
    };
    let group_by = match m.non_empty("group_by")? {
        Some(name) => Some((name.clone(), Dimension::parse("group_by", &name)?)),
        None => None,
    };
    Ok(TimelineQuery {
        selection,
        interval,
        group_by,
        group_limit: bounded(&m, "group_limit", MAX_GROUP_LIMIT, DEFAULT_GROUP_LIMIT)?,
    })
}

/// Reads `POST /v1/profile/tags`.
pub fn parse_tags_body(body: &[u8]) -> Result<TagsQuery, RequestError> {
    let m = Members::parse(body)?;
    let range = time_range(&m)?;
    let app = m.non_empty("app_service")?;
    Ok(TagsQuery {
        selection: selection(range, app, &m, TagFilter::default())?,
    })
}

/// Reads `POST /v1/profile/tag_values`.
pub fn parse_tag_values_body(body: &[u8]) -> Result<TagValuesQuery, RequestError> {
    let m = Members::parse(body)?;
    let tag = m
        .non_empty("tag")?
        .ok_or_else(|| RequestError("tag is required (e.g. \"pod\" or \"app_service\")".into()))?;
    let dimension = Dimension::parse("tag", &tag)?;
    let (time_start, time_end) = time_range(&m)?;
    Ok(TagValuesQuery {
        selection: Selection {
            app_service: m.non_empty("app_service")?,
            time_start,
            time_end,
            ..Selection::default()
        },
        tag,
        dimension,
        prefix: m.non_empty("prefix")?,
        limit: bounded(&m, "limit", MAX_VALUES_LIMIT, DEFAULT_VALUES_LIMIT)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::explore::tests::err;
    use crate::contract::explore::Dimension;

    #[test]
    fn services_and_tags_bodies() {
        let q = parse_services_body(
            br#"{"time_start":10,"time_end":20,"profile_event_type":"on-cpu","tag_filter":"pod='a'"}"#,
        )
        .unwrap();
        assert_eq!(q.selection.event_type.as_deref(), Some("on-cpu"));
        assert_eq!(q.selection.language, None);
        assert_eq!(q.selection.filter.conditions.len(), 1);
        let e = err(parse_services_body(br#"{"time_end":20}"#));
        assert!(e.contains("time_start is required"), "{e}");
        assert!(err(parse_services_body(br#"{"time_start":30,"time_end":20}"#)).contains("after"));
        assert!(err(parse_services_body(
            br#"{"time_start":1,"time_end":2,"tag_filter":"pod='a' OR 1=1"}"#
        ))
        .contains("OR is not supported"));
        let t = parse_tags_body(br#"{"time_start":1,"time_end":2,"app_service":"redis"}"#).unwrap();
        assert_eq!(t.selection.app_service.as_deref(), Some("redis"));
        assert!(err(parse_tags_body(b"[]")).contains("JSON object"));
    }

    #[test]
    fn tag_values_bodies() {
        let q = parse_tag_values_body(
            br#"{"tag":"pod","time_start":1,"time_end":2,"prefix":"We","limit":5}"#,
        )
        .unwrap();
        assert_eq!((q.prefix.as_deref(), q.limit), (Some("We"), 5));
        let q =
            parse_tag_values_body(br#"{"tag":"app_service","time_start":1,"time_end":2}"#).unwrap();
        assert_eq!((q.dimension, q.limit), (Dimension::AppService, 100));
        assert!(
            err(parse_tag_values_body(br#"{"time_start":1,"time_end":2}"#))
                .contains("tag is required")
        );
        for limit in ["0", "1001", "-1", "\"5\""] {
            let body = format!(r#"{{"tag":"pod","time_start":1,"time_end":2,"limit":{limit}}}"#);
            assert!(
                err(parse_tag_values_body(body.as_bytes())).contains("limit"),
                "{limit}"
            );
        }
    }

    const TRACING: &str = r#""profile_language_type":"eBPF","profile_event_type":"on-cpu""#;

    fn timeline(extra: &str) -> Result<TimelineQuery, RequestError> {
        let body = format!(r#"{{{TRACING},"time_start":1000,"time_end":4599{extra}}}"#);
        parse_timeline_body(body.as_bytes())
    }

    #[test]
    fn timeline_bodies() {
        let q = timeline("").unwrap();
        assert!(q.skips_total());
        assert_eq!((q.interval, q.group_limit, q.group_by), (30, 10, None));
        let q = timeline(r#","interval":60,"group_by":"pod","group_limit":3"#).unwrap();
        assert_eq!((q.interval, q.group_limit), (60, 3));
        assert_eq!(q.group_by.map(|(n, _)| n).as_deref(), Some("pod"));
        assert!(!timeline(r#","app_service":"Total""#).unwrap().skips_total());
        assert!(err(timeline(r#","interval":1"#)).contains("3600 buckets"));
        assert!(err(timeline(r#","interval":0"#)).contains("positive"));
        assert!(err(timeline(r#","interval":1.5"#)).contains("interval must be an integer"));
        assert!(err(timeline(r#","group_by":"nope""#)).contains("unknown tag 'nope'"));
        // No interval over ~84 days: even hours are too many buckets.
        let long = format!(
            r#"{{{TRACING},"time_start":1000,"time_end":{}}}"#,
            1000 + 2001 * 3600
        );
        let e = err(parse_timeline_body(long.as_bytes()));
        assert!(e.contains("too long for an automatic interval"), "{e}");
        assert!(err(timeline(r#","group_limit":51"#)).contains("group_limit must be 1 to 50"));
        assert!(err(timeline(r#","group_limit":0"#)).contains("group_limit must be 1 to 50"));
        assert!(
            err(parse_timeline_body(br#"{"time_start":1,"time_end":2}"#))
                .contains("ProfileEventType")
        );
    }

    #[test]
    fn requests_serialise_to_the_bodies_the_service_reads() {
        let sent = TimelineRequest {
            profile: ProfileRequest {
                app_service: Some("redis".into()),
                profile_language_type: "eBPF".into(),
                profile_event_type: "on-cpu".into(),
                tag_filter: "pod='a'".into(),
                time_start: 100,
                time_end: 200,
                max_kernel_stack_depth: None,
            },
            interval: Some(10),
            group_by: Some("thread".into()),
            group_limit: Some(4),
        };
        let read = parse_timeline_body(&serde_json::to_vec(&sent).unwrap()).unwrap();
        assert_eq!((read.interval, read.group_limit), (10, 4));
        assert_eq!(read.group_by.map(|(_, d)| d), Some(Dimension::Thread));
        let values = TagValuesRequest {
            tag: "pod".into(),
            time_start: 1,
            time_end: 2,
            ..TagValuesRequest::default()
        };
        let json = serde_json::to_string(&values).unwrap();
        assert_eq!(json, r#"{"tag":"pod","time_start":1,"time_end":2}"#);
        assert!(parse_tag_values_body(json.as_bytes()).is_ok());
        let services = ServicesRequest {
            time_start: 1,
            time_end: 2,
            ..ServicesRequest::default()
        };
        assert!(parse_services_body(&serde_json::to_vec(&services).unwrap()).is_ok());
        let tags = TagsRequest {
            time_start: 1,
            time_end: 2,
            ..TagsRequest::default()
        };
        assert!(parse_tags_body(&serde_json::to_vec(&tags).unwrap()).is_ok());
    }
}
