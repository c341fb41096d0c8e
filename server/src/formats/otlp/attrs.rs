//! What an OTLP attribute means to Embers, and the attributes in force at one sample
//! ([`Context`]: resource, then scope, then profile, then sample attributes, later ones
//! winning).
//!
//! | attribute | Embers |
//! |---|---|
//! | `service.name` (not the SDKs' `unknown_service…` default) | `app_service` |
//! | `process.executable.name`, else the file name of `process.executable.path` | `app_service` when there is no `service.name` |
//! | `thread.name` | the `[t] name` frame (and `app_service` when nothing else names it) |
//! | `host.name` | `host` |
//! | `k8s.pod.name`, `k8s.namespace.name`, `k8s.node.name`, `k8s.cluster.name` | `pod`, `pod_ns`, `pod_node`, `pod_cluster` |
//! | `k8s.deployment.name`, `k8s.statefulset.name`, `k8s.daemonset.name`, `k8s.job.name` | `pod_group` |
//! | `cloud.region`, `cloud.availability_zone` | `region`, `az` |
//! | `service.instance.id` | `app_instance` |
//! | `k8s.pod.label.<k>` / `k8s.pod.labels.<k>` | `k8s.label.<k>` |
//! | `k8s.pod.annotation.<k>` / `k8s.pod.annotations.<k>` | `k8s.annotation.<k>` |
//! | `process.environment_variable.<k>` | `k8s.env.<k>` |
//! | an Embers tag name itself (`pod_service`, `k8s.label.team`, ...) | that tag |
//! | `span.name` | `span_name` (else the linked span's id) |
//! | `profile.frame.type` (on a location) | the frame's kind ([`super::frames`]) |
//!
//! Everything else is dropped: `container.id`, `process.pid`, `thread.id`,
//! `cpu.logical_number`, `process.context.label.*`, build ids, values that are arrays, lists
//! or bytes, and open-family keys outside the Kubernetes key charset.

use std::collections::BTreeMap;

use embers_model::contract::fields::{self, FieldKind, FieldRef, Scope};
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::profiles::v1development::KeyValueAndUnit;

/// Fixed attribute names and the tag each becomes.
const TAGS: [(&str, &str); 13] = [
    ("host.name", "host"),
    ("k8s.pod.name", "pod"),
    ("k8s.namespace.name", "pod_ns"),
    ("k8s.node.name", "pod_node"),
    ("k8s.cluster.name", "pod_cluster"),
    ("k8s.deployment.name", "pod_group"),
    ("k8s.statefulset.name", "pod_group"),
    ("k8s.daemonset.name", "pod_group"),
    ("k8s.job.name", "pod_group"),
    ("cloud.region", "region"),
    ("cloud.availability_zone", "az"),
    ("service.instance.id", "app_instance"),
    ("span.name", "span_name"),
];

/// Attribute families and the open tag family each becomes.
const FAMILIES: [(&str, &str); 5] = [
    ("k8s.pod.label.", "k8s.label."),
    ("k8s.pod.labels.", "k8s.label."),
    ("k8s.pod.annotation.", "k8s.annotation."),
    ("k8s.pod.annotations.", "k8s.annotation."),
    ("process.environment_variable.", "k8s.env."),
];

/// What one attribute says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Meaning {
    /// `service.name`.
    Service(String),
    /// The executable's name.
    Executable(String),
    /// The thread's name.
    Thread(String),
    /// A tag: its Embers name and value.
    Tag(String, String),
    /// `profile.frame.type` of a location.
    FrameType(String),
    /// Nothing Embers keeps.
    Ignored,
}

impl Meaning {
    /// Whether it changes which batch a sample goes to (everything but the thread and the
    /// frame type, which are frames).
    pub fn names_the_batch(&self) -> bool {
        matches!(
            self,
            Meaning::Service(_) | Meaning::Executable(_) | Meaning::Tag(..)
        )
    }
}

/// A value as text: strings, numbers and booleans; `None` for the rest and for empty strings.
fn text(value: Option<&AnyValue>, strings: &[String]) -> Option<String> {
    let text = match value?.value.as_ref()? {
        Value::StringValue(s) => s.clone(),
        // Checked against the table before anything is read.
        Value::StringValueStrindex(i) => strings.get(usize::try_from(*i).ok()?)?.clone(),
        Value::IntValue(i) => i.to_string(),
        Value::DoubleValue(d) => d.to_string(),
        Value::BoolValue(b) => b.to_string(),
        Value::ArrayValue(_) | Value::KvlistValue(_) | Value::BytesValue(_) => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// The meaning of attribute `key` with `value`.
pub(super) fn meaning(key: &str, value: Option<&AnyValue>, strings: &[String]) -> Meaning {
    let Some(text) = text(value, strings) else {
        return Meaning::Ignored;
    };
    match key {
        "service.name" if !text.starts_with("unknown_service") => Meaning::Service(text),
        "process.executable.name" => Meaning::Executable(text),
        "process.executable.path" => match text.rsplit('/').next() {
            Some(name) if !name.is_empty() => Meaning::Executable(name.to_owned()),
            _ => Meaning::Ignored,
        },
        "thread.name" => Meaning::Thread(text),
        "profile.frame.type" => Meaning::FrameType(text),
        _ => tag(key, text),
    }
}

/// A tag for `key`, when it maps to one the store accepts with this value.
fn tag(key: &str, value: String) -> Meaning {
    let name = TAGS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, tag)| (*tag).to_owned())
        .or_else(|| {
            FAMILIES.iter().find_map(|(prefix, family)| {
                key.strip_prefix(prefix)
                    .map(|rest| format!("{family}{rest}"))
            })
        })
        .unwrap_or_else(|| key.to_owned());
    let accepted = match fields::resolve(&name) {
        Ok(FieldRef::Column(def)) => {
            def.scope == Scope::Batch
                && def.name != "profile_value_unit"
                && (def.kind == FieldKind::Text || value.trim().parse::<i64>().is_ok())
        }
        Ok(FieldRef::Open { .. }) => true,
        Err(_) => false,
    };
    if accepted {
        Meaning::Tag(name, value)
    } else {
        Meaning::Ignored
    }
}

/// The meaning of a dictionary attribute (its key and value indices already checked).
pub(super) fn of_entry(a: &KeyValueAndUnit, strings: &[String]) -> Meaning {
    let key = usize::try_from(a.key_strindex)
        .ok()
        .and_then(|i| strings.get(i))
        .map_or("", String::as_str);
    meaning(key, a.value.as_ref(), strings)
}

/// The meaning of a resource or scope attribute (its indices already checked).
fn of_key_value(kv: &KeyValue, strings: &[String]) -> Meaning {
    let key = if kv.key.is_empty() {
        usize::try_from(kv.key_strindex)
            .ok()
            .and_then(|i| strings.get(i))
            .map_or("", String::as_str)
    } else {
        &kv.key
    };
    meaning(key, kv.value.as_ref(), strings)
}

/// The attributes in force at some level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Context {
    service: Option<String>,
    executable: Option<String>,
    /// The thread's name, when a level above the sample gives one.
    pub thread: Option<String>,
    /// Tags by Embers name.
    pub tags: BTreeMap<String, String>,
}

impl Context {
    /// Take in one meaning (a later one wins over an earlier one of the same slot).
    pub fn apply(&mut self, m: &Meaning) {
        match m {
            Meaning::Service(s) => self.service = Some(s.clone()),
            Meaning::Executable(e) => self.executable = Some(e.clone()),
            Meaning::Thread(t) => self.thread = Some(t.clone()),
            Meaning::Tag(name, value) => {
                self.tags.insert(name.clone(), value.clone());
            }
            Meaning::FrameType(_) | Meaning::Ignored => {}
        }
    }

    /// Take in resource or scope attributes.
    pub fn apply_key_values(&mut self, list: &[KeyValue], strings: &[String]) {
        for kv in list {
            self.apply(&of_key_value(kv, strings));
        }
    }

    /// `app_service`: the service, else the executable, else `thread` (the sample's); `None`
    /// when nothing names it.
    pub fn app_service<'s>(&'s self, thread: Option<&'s str>) -> Option<&'s str> {
        self.service
            .as_deref()
            .or(self.executable.as_deref())
            .or(thread)
    }
}
