//! The ProfileTracing request: the body the viewer posts and the service reads, the tag-filter
//! text built from rows of name/value, validation with per-field messages, and URL parameters.

use serde::{Deserialize, Serialize};

/// The fixed value of `app_service` that asks for the per-host graph.
pub const TOTAL_APP_SERVICE: &str = "Total";

/// eBPF event types the querier knows, in menu order.
pub const EVENT_TYPES: [&str; 6] = [
    "on-cpu",
    "off-cpu",
    "mem-alloc",
    "mem-inuse",
    "hbm-alloc",
    "hbm-inuse",
];

/// Language types the querier knows, in menu order (`eBPF` is the agent's own data).
pub const LANGUAGE_TYPES: [&str; 8] = [
    "eBPF", "Golang", "Java", "python", "ruby", "PHP", "dotnet", "Node",
];

/// The tag names of `profile.in_process` a filter may use (the interface's field table), plus
/// the open families that take a `.key` suffix.
pub const TAG_NAMES: [&str; 49] = [
    "region",
    "az",
    "host",
    "chost",
    "vpc",
    "router",
    "dhcpgw",
    "lb",
    "lb_listener",
    "natgw",
    "redis",
    "rds",
    "pod_cluster",
    "pod_ns",
    "pod_node",
    "pod_ingress",
    "pod_service",
    "pod_group_type",
    "pod_group",
    "pod",
    "service",
    "gprocess",
    "host_ip",
    "host_hostname",
    "chost_ip",
    "chost_hostname",
    "pod_node_ip",
    "pod_node_hostname",
    "ip",
    "is_ipv4",
    "app_service",
    "app_instance",
    "trace_id",
    "span_name",
    "agent",
    "vtap",
    "profile_value_unit",
    "profile_event_type",
    "profile_create_timestamp",
    "profile_in_timestamp",
    "profile_language_type",
    "profile_id",
    "_id",
    "time",
    "k8s.label.",
    "k8s.annotation.",
    "k8s.env.",
    "cloud.tag.",
    "tag.",
];

/// The body of `POST /v1/profile/ProfileTracing`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProfileRequest {
    /// Process name, or `Total` for the per-host graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub app_service: Option<String>,
    /// `eBPF` for agent data.
    pub profile_language_type: String,
    /// `on-cpu`, `off-cpu`, `mem-alloc`, ...
    pub profile_event_type: String,
    /// Conditions `name='value' AND ...`; empty for none.
    #[serde(default)]
    pub tag_filter: String,
    /// Unix seconds, inclusive.
    pub time_start: i64,
    /// Unix seconds, inclusive.
    pub time_end: i64,
    /// Keep at most this many leading kernel frames; -1 keeps all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_kernel_stack_depth: Option<i64>,
}

/// A problem with one field of a request, for display next to that field.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldError {
    /// The request field's name (`time_start`, ...), which the form uses as its key.
    pub field: &'static str,
    /// What to fix.
    pub message: String,
}

impl ProfileRequest {
    /// Checks what the service would reject, so the user hears about it before sending.
    pub fn validate(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let mut err = |field, message: &str| {
            errors.push(FieldError {
                field,
                message: message.to_string(),
            })
        };
        if self
            .app_service
            .as_deref()
            .is_some_and(|s| s.trim().is_empty())
        {
            err(
                "app_service",
                "Enter a process name, or choose the whole host.",
            );
        }
        if self.app_service.as_deref() == Some(TOTAL_APP_SERVICE)
            && self.profile_event_type != "on-cpu"
        {
            err(
                "app_service",
                "The whole-host (Total) graph exists for on-CPU profiles only.",
            );
        }
        if self.profile_language_type.trim().is_empty() {
            err(
                "profile_language_type",
                "Choose a language type (eBPF for agent data).",
            );
        }
        if self.profile_event_type.trim().is_empty() {
            err("profile_event_type", "Choose an event type.");
        }
        if self.time_start <= 0 {
            err("time_start", "Set a start time.");
        }
        if self.time_end <= 0 {
            err("time_end", "Set an end time.");
        }
        if self.time_start > 0 && self.time_end > 0 && self.time_start > self.time_end {
            err("time_end", "The end must not be before the start.");
        }
        if self.max_kernel_stack_depth.is_some_and(|d| d < -1) {
            err(
                "max_kernel_stack_depth",
                "Use -1 (keep all) or a depth of 0 or more.",
            );
        }
        errors
    }
}

/// One `name = 'value'` row of the tag-filter builder.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TagCondition {
    /// Tag name, e.g. `pod` or `k8s.label.app`.
    pub name: String,
    /// Raw value; quoting is applied by [`render_tag_filter`].
    pub value: String,
    /// `!=` instead of `=`.
    pub negated: bool,
}

/// Quotes a value for a tag filter: single quotes, with `\` and `'` escaped by a backslash
/// (what both ClickHouse and our service read).
pub fn quote_tag_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len() + 2);
    out.push('\'');
    for c in value.chars() {
        if c == '\'' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('\'');
    out
}

/// Renders builder rows as `name='value' AND ...`, skipping rows without a name.
pub fn render_tag_filter(rows: &[TagCondition]) -> String {
    rows.iter()
        .filter(|r| !r.name.trim().is_empty())
        .map(|r| {
            format!(
                "{}{}{}",
                r.name.trim(),
                if r.negated { "!=" } else { "=" },
                quote_tag_value(&r.value)
            )
        })
        .collect::<Vec<_>>()
        .join(" AND ")
}

/// Reads request fields from URL query pairs (already percent-decoded), using the request's
/// own field names. Returns `None` when the URL names no query (no `app_service` and no times).
pub fn request_from_url_pairs<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Option<ProfileRequest> {
    let mut req = ProfileRequest {
        profile_language_type: "eBPF".to_string(),
        profile_event_type: "on-cpu".to_string(),
        ..ProfileRequest::default()
    };
    let mut named_any = false;
    for (k, v) in pairs {
        named_any |= matches!(k, "app_service" | "time_start" | "time_end");
        match k {
            "app_service" => req.app_service = Some(v.to_string()),
            "profile_language_type" => req.profile_language_type = v.to_string(),
            "profile_event_type" => req.profile_event_type = v.to_string(),
            "tag_filter" => req.tag_filter = v.to_string(),
            "time_start" => req.time_start = v.trim().parse().unwrap_or(0),
            "time_end" => req.time_end = v.trim().parse().unwrap_or(0),
            "max_kernel_stack_depth" => req.max_kernel_stack_depth = v.trim().parse().ok(),
            _ => {}
        }
    }
    named_any.then_some(req)
}

/// The URL query pairs that reproduce a request (inverse of [`request_from_url_pairs`]).
pub fn request_to_url_pairs(req: &ProfileRequest) -> Vec<(&'static str, String)> {
    let mut pairs = Vec::new();
    if let Some(app) = &req.app_service {
        pairs.push(("app_service", app.clone()));
    }
    pairs.push(("profile_language_type", req.profile_language_type.clone()));
    pairs.push(("profile_event_type", req.profile_event_type.clone()));
    if !req.tag_filter.is_empty() {
        pairs.push(("tag_filter", req.tag_filter.clone()));
    }
    pairs.push(("time_start", req.time_start.to_string()));
    pairs.push(("time_end", req.time_end.to_string()));
    if let Some(d) = req.max_kernel_stack_depth {
        pairs.push(("max_kernel_stack_depth", d.to_string()));
    }
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid() -> ProfileRequest {
        ProfileRequest {
            app_service: Some("redis".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            time_start: 100,
            time_end: 200,
            ..ProfileRequest::default()
        }
    }

    #[test]
    fn a_sound_request_validates_and_serialises_without_optional_fields() {
        assert!(valid().validate().is_empty());
        let json = serde_json::to_value(valid()).unwrap();
        assert_eq!(json["app_service"], "redis");
        assert!(json.get("max_kernel_stack_depth").is_none());
        assert_eq!(json["tag_filter"], "");
    }

    #[test]
    fn validation_names_each_bad_field() {
        let mut r = valid();
        r.time_start = 300;
        r.app_service = Some(TOTAL_APP_SERVICE.into());
        r.profile_event_type = "off-cpu".into();
        r.max_kernel_stack_depth = Some(-5);
        let fields: Vec<_> = r.validate().into_iter().map(|e| e.field).collect();
        assert_eq!(
            fields,
            ["app_service", "time_end", "max_kernel_stack_depth"]
        );
        let mut r = valid();
        r.time_start = 0;
        assert_eq!(r.validate()[0].field, "time_start");
    }

    #[test]
    fn tag_filter_rows_render_with_escaped_quotes() {
        let rows = [
            TagCondition {
                name: "pod".into(),
                value: "web-1".into(),
                negated: false,
            },
            TagCondition {
                name: " ".into(),
                value: "ignored".into(),
                negated: false,
            },
            TagCondition {
                name: "pod_ns".into(),
                value: r"team-o'brien\x".into(),
                negated: true,
            },
        ];
        assert_eq!(
            render_tag_filter(&rows),
            r"pod='web-1' AND pod_ns!='team-o\'brien\\x'"
        );
        assert_eq!(render_tag_filter(&[]), "");
    }

    #[test]
    fn url_pairs_round_trip() {
        let mut r = valid();
        r.tag_filter = "pod='a'".into();
        r.max_kernel_stack_depth = Some(2);
        let pairs = request_to_url_pairs(&r);
        let back = request_from_url_pairs(pairs.iter().map(|(k, v)| (*k, v.as_str()))).unwrap();
        assert_eq!(back, r);
        assert_eq!(request_from_url_pairs([("embed", "1")]), None);
    }
}
