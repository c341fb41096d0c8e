//! The field table of `profile.in_process`: which names a `tag_filter` (and an ingest request's
//! `tags`) may use, whether each is per sample or shared by a batch, and what type its values
//! have. The viewer's tag builder offers [`offered_names`]; the service resolves with [`resolve`].
//!
//! Names and meanings follow the seed interface's "Profile record" table. Names here are fixed
//! identifiers that stores may put into SQL text; user input never is (values are always bound).

/// How values of a field are typed in SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Text; compared byte-for-byte (case-sensitive).
    Text,
    /// Integer; a filter value must parse as `i64`.
    Int,
}

/// Whether a field varies per sample or is a tag shared by every sample of an ingested batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// Set per sample (time, app_service, event type, ...).
    Sample,
    /// A resource tag, shared by every sample of one ingested batch (host, pod, ...).
    Batch,
}

/// One named, filterable field.
#[derive(Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// The name used in `tag_filter` and as the column name of `profile.in_process`.
    pub name: &'static str,
    /// Value type.
    pub kind: FieldKind,
    /// Per sample or per batch.
    pub scope: Scope,
}

const fn text(name: &'static str) -> FieldDef {
    FieldDef {
        name,
        kind: FieldKind::Text,
        scope: Scope::Batch,
    }
}

/// Every fixed field; open families (`k8s.label.*`, ...) are in [`Family`].
pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        name: "_id",
        kind: FieldKind::Int,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "time",
        kind: FieldKind::Int,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "app_service",
        kind: FieldKind::Text,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "profile_language_type",
        kind: FieldKind::Text,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "profile_event_type",
        kind: FieldKind::Text,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "profile_create_timestamp",
        kind: FieldKind::Int,
        scope: Scope::Sample,
    },
    FieldDef {
        name: "profile_in_timestamp",
        kind: FieldKind::Int,
        scope: Scope::Sample,
    },
    text("profile_value_unit"),
    text("profile_id"),
    text("trace_id"),
    text("span_name"),
    text("app_instance"),
    text("region"),
    text("az"),
    text("host"),
    text("chost"),
    text("vpc"),
    text("router"),
    text("dhcpgw"),
    text("lb"),
    text("lb_listener"),
    text("natgw"),
    text("redis"),
    text("rds"),
    text("pod_cluster"),
    text("pod_ns"),
    text("pod_node"),
    text("pod_ingress"),
    text("pod_service"),
    text("pod_group_type"),
    text("pod_group"),
    text("pod"),
    text("service"),
    text("gprocess"),
    text("host_ip"),
    text("host_hostname"),
    text("chost_ip"),
    text("chost_hostname"),
    text("pod_node_ip"),
    text("pod_node_hostname"),
    text("ip"),
    FieldDef {
        name: "is_ipv4",
        kind: FieldKind::Int,
        scope: Scope::Batch,
    },
    text("agent"),
];

/// Deprecated names accepted as aliases: (alias, canonical name).
pub const ALIASES: &[(&str, &str)] = &[("vtap", "agent")];

/// The open tag families, each a prefix followed by a free key (`k8s.label.app`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// `k8s.label.<key>`
    K8sLabel,
    /// `k8s.annotation.<key>`
    K8sAnnotation,
    /// `k8s.env.<key>`
    K8sEnv,
    /// `cloud.tag.<key>`
    CloudTag,
}

impl Family {
    /// Every family, in documentation order.
    pub const ALL: [Family; 4] = [
        Family::K8sLabel,
        Family::K8sAnnotation,
        Family::K8sEnv,
        Family::CloudTag,
    ];

    /// The family's name without the trailing dot, as in the seed's table.
    pub fn base(self) -> &'static str {
        match self {
            Family::K8sLabel => "k8s.label",
            Family::K8sAnnotation => "k8s.annotation",
            Family::K8sEnv => "k8s.env",
            Family::CloudTag => "cloud.tag",
        }
    }
}

/// A resolved field name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldRef {
    /// A fixed column.
    Column(&'static FieldDef),
    /// An open-family tag; `name` is the full stored name (`k8s.label.app`).
    Open { family: Family, name: String },
}

impl FieldRef {
    /// The canonical name (aliases resolved).
    pub fn name(&self) -> &str {
        match self {
            FieldRef::Column(def) => def.name,
            FieldRef::Open { name, .. } => name,
        }
    }

    /// The value type: open tags are always text.
    pub fn kind(&self) -> FieldKind {
        match self {
            FieldRef::Column(def) => def.kind,
            FieldRef::Open { .. } => FieldKind::Text,
        }
    }
}

/// Why a name could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// Not a known field nor an open-family tag.
    Unknown,
    /// A family name without a key, e.g. `k8s.label` or `k8s.label.`.
    MissingKey(Family),
}

/// Resolve a tag name (exact, case-sensitive), accepting aliases and open families.
pub fn resolve(name: &str) -> Result<FieldRef, ResolveError> {
    let canonical = ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, c)| c);
    if let Some(def) = FIELDS.iter().find(|def| def.name == canonical) {
        return Ok(FieldRef::Column(def));
    }
    for family in Family::ALL {
        let base = family.base();
        if name == base {
            return Err(ResolveError::MissingKey(family));
        }
        if let Some(key) = name
            .strip_prefix(base)
            .and_then(|rest| rest.strip_prefix('.'))
        {
            if key.is_empty() {
                return Err(ResolveError::MissingKey(family));
            }
            return Ok(FieldRef::Open {
                family,
                name: name.to_owned(),
            });
        }
    }
    Err(ResolveError::Unknown)
}

/// The names the viewer's tag-filter builder suggests: every field, the `vtap` alias, and each
/// open family as a prefix ending in `.` for the user to complete with a key.
pub fn offered_names() -> Vec<String> {
    let fields = FIELDS.iter().map(|d| d.name.to_owned());
    let aliases = ALIASES.iter().map(|(alias, _)| (*alias).to_owned());
    let families = Family::ALL.iter().map(|f| format!("{}.", f.base()));
    fields.chain(aliases).chain(families).collect()
}

/// The fixed fields an ingest request may set through `tags` (those stored per batch).
pub fn settable_columns() -> impl Iterator<Item = &'static FieldDef> {
    FIELDS.iter().filter(|def| def.scope == Scope::Batch)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolves_columns_aliases_and_families() {
        assert_eq!(
            resolve("pod").map(|f| f.name().to_owned()),
            Ok("pod".to_owned())
        );
        assert_eq!(
            resolve("vtap").map(|f| f.name().to_owned()),
            Ok("agent".to_owned())
        );
        match resolve("k8s.label.app.kubernetes.io/name") {
            Ok(FieldRef::Open { family, name }) => {
                assert_eq!(family, Family::K8sLabel);
                assert_eq!(name, "k8s.label.app.kubernetes.io/name");
            }
            other => panic!("unexpected {other:?}"),
        }
        assert_eq!(
            resolve("k8s.label"),
            Err(ResolveError::MissingKey(Family::K8sLabel))
        );
        assert_eq!(
            resolve("cloud.tag."),
            Err(ResolveError::MissingKey(Family::CloudTag))
        );
        assert_eq!(resolve("Pod"), Err(ResolveError::Unknown));
        assert_eq!(resolve("k8s.labels.app"), Err(ResolveError::Unknown));
    }

    #[test]
    fn names_are_plain_identifiers() {
        for def in FIELDS {
            assert!(def
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()));
        }
    }

    #[test]
    fn every_offered_name_resolves_once_completed() {
        for name in offered_names() {
            let complete = if name.ends_with('.') {
                format!("{name}key")
            } else {
                name.clone()
            };
            assert!(resolve(&complete).is_ok(), "{name}");
        }
        assert!(offered_names().iter().any(|n| n == "k8s.label."));
        assert!(!offered_names().iter().any(|n| n == "tag."));
    }
}
