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
//! | `thread.id` | the thread of each timestamped sample's event (the samples endpoint) |
//!
//! Everything else is dropped: `container.id`, `process.pid`,
//! `cpu.logical_number`, `process.context.label.*`, build ids, values that are arrays, lists
//! or bytes, and open-family keys outside the Kubernetes key charset.

use std::borrow::Cow;
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

/// What one attribute says. Texts borrow from the request where they can: an attribute that
/// points at a long string costs no copy of it, however many entries point there.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Meaning<'a> {
    /// `service.name`.
    Service(Cow<'a, str>),
    /// The executable's name.
    Executable(Cow<'a, str>),
    /// The thread's name.
    Thread(Cow<'a, str>),
    /// `thread.id`: the thread of each event's time.
    ThreadId(u32),
    /// A tag: its Embers name and value.
    Tag(Cow<'a, str>, Cow<'a, str>),
    /// `profile.frame.type` of a location.
    FrameType(Cow<'a, str>),
    /// Nothing Embers keeps.
    Ignored,
}

impl Meaning<'_> {
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
fn text<'a>(value: Option<&'a AnyValue>, strings: &'a [String]) -> Option<Cow<'a, str>> {
    let text: Cow<'a, str> = match value?.value.as_ref()? {
        Value::StringValue(s) => Cow::Borrowed(s),
        // Checked against the table before anything is read.
        Value::StringValueStrindex(i) => Cow::Borrowed(strings.get(usize::try_from(*i).ok()?)?),
        Value::IntValue(i) => Cow::Owned(i.to_string()),
        Value::DoubleValue(d) => Cow::Owned(d.to_string()),
        Value::BoolValue(b) => Cow::Owned(b.to_string()),
        Value::ArrayValue(_) | Value::KvlistValue(_) | Value::BytesValue(_) => return None,
    };
    (!text.is_empty()).then_some(text)
}

/// The meaning of attribute `key` with `value`.
pub(super) fn meaning<'a>(
    key: &'a str,
    value: Option<&'a AnyValue>,
    strings: &'a [String],
) -> Meaning<'a> {
    let Some(text) = text(value, strings) else {
        return Meaning::Ignored;
    };
    match key {
        "service.name" if !text.starts_with("unknown_service") => Meaning::Service(text),
        "process.executable.name" => Meaning::Executable(text),
        "process.executable.path" => match text.rsplit('/').next() {
            Some(name) if !name.is_empty() => Meaning::Executable(Cow::Owned(name.to_owned())),
            _ => Meaning::Ignored,
        },
        "thread.name" => Meaning::Thread(text),
        "thread.id" => text.parse().map_or(Meaning::Ignored, Meaning::ThreadId),
        "profile.frame.type" => Meaning::FrameType(text),
        _ => tag(key, text),
    }
}

/// A tag for `key`, when it maps to one the store accepts with this value.
fn tag<'a>(key: &'a str, value: Cow<'a, str>) -> Meaning<'a> {
    let name: Cow<'a, str> = match TAGS.iter().find(|(k, _)| *k == key) {
        Some((_, tag)) => Cow::Borrowed(tag),
        None => FAMILIES
            .iter()
            .find_map(|(prefix, family)| {
                key.strip_prefix(prefix)
                    .map(|rest| Cow::Owned(format!("{family}{rest}")))
            })
            .unwrap_or(Cow::Borrowed(key)),
    };
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
pub(super) fn of_entry<'a>(a: &'a KeyValueAndUnit, strings: &'a [String]) -> Meaning<'a> {
    let key = usize::try_from(a.key_strindex)
        .ok()
        .and_then(|i| strings.get(i))
        .map_or("", String::as_str);
    meaning(key, a.value.as_ref(), strings)
}

/// The meanings of resource or scope attributes (their indices already checked).
pub(super) fn of_key_values<'a>(list: &'a [KeyValue], strings: &'a [String]) -> Vec<Meaning<'a>> {
    list.iter()
        .map(|kv| {
            let key = if kv.key.is_empty() {
                usize::try_from(kv.key_strindex)
                    .ok()
                    .and_then(|i| strings.get(i))
                    .map_or("", String::as_str)
            } else {
                &kv.key
            };
            meaning(key, kv.value.as_ref(), strings)
        })
        .collect()
}

/// Who a sample belongs to, as far as the attributes applied so far say; small, so each level
/// (resource and scope once, then each profile and sample) adds to a copy.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Names<'m> {
    service: Option<&'m str>,
    executable: Option<&'m str>,
    /// The thread's name.
    pub thread: Option<&'m str>,
    /// The thread's id.
    pub tid: Option<u32>,
}

impl<'m> Names<'m> {
    /// These names with `meanings` applied (later ones win).
    pub fn with<'a: 'm>(mut self, meanings: impl IntoIterator<Item = &'m Meaning<'a>>) -> Self {
        for m in meanings {
            match m {
                Meaning::Service(s) => self.service = Some(s),
                Meaning::Executable(e) => self.executable = Some(e),
                Meaning::Thread(t) => self.thread = Some(t),
                Meaning::ThreadId(id) => self.tid = Some(*id),
                _ => {}
            }
        }
        self
    }

    /// `app_service`: the service, else the executable, else `thread`; `None` when nothing
    /// names it.
    pub fn app_service(&self, thread: Option<&'m str>) -> Option<&'m str> {
        self.service.or(self.executable).or(thread)
    }
}

/// The tags in force at a profile's samples, as layers (resource, scope, profile; a sample's
/// own come last), each filtered once to the attributes that are tags, so that making a batch's
/// tags costs about as much as the tags themselves (which the request's text budget counts).
#[derive(Debug, Clone, Copy)]
pub(super) struct Layers<'m, 'a> {
    pub resource: &'m [&'m Meaning<'a>],
    pub scope: &'m [&'m Meaning<'a>],
    pub profile: &'m [&'m Meaning<'a>],
}

/// The tags among `meanings`.
pub(super) fn tags_of<'m, 'a>(
    meanings: impl IntoIterator<Item = &'m Meaning<'a>>,
) -> Vec<&'m Meaning<'a>>
where
    'a: 'm,
{
    meanings
        .into_iter()
        .filter(|m| matches!(m, Meaning::Tag(..)))
        .collect()
}

impl<'m, 'a> Layers<'m, 'a> {
    /// The tags in force with a sample's `extra` meanings, by Embers name.
    pub fn tags(&self, extra: &[&'m Meaning<'a>]) -> BTreeMap<String, String> {
        let mut tags = BTreeMap::new();
        let all = self
            .resource
            .iter()
            .chain(self.scope)
            .chain(self.profile)
            .chain(extra);
        for m in all {
            if let Meaning::Tag(name, value) = m {
                tags.insert(name.to_string(), value.to_string());
            }
        }
        tags
    }
}
