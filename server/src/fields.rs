//! The field table of `profile.in_process`: which names a `tag_filter` (and an ingest request's
//! `tags`) may use, where each lives in the store and what type its values have.
//!
//! Names and meanings follow the seed interface's "Profile record" table. Column names here are
//! fixed identifiers that end up in SQL text; user input never does (values are always bound).

/// How values of a field are typed in SQL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldKind {
    /// Text; compared byte-for-byte (case-sensitive).
    Text,
    /// Integer; a filter value must parse as `i64`.
    Int,
}

/// Which stored table holds the field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Home {
    /// A column of `profile.samples` (one value per stored sample).
    Sample,
    /// A column of `profile.tagsets` (shared by every sample of one ingested batch).
    TagSet,
}

/// One named, filterable field.
#[derive(Debug, PartialEq, Eq)]
pub struct FieldDef {
    /// The name used in `tag_filter` and as the column name of the `profile.in_process` view.
    pub name: &'static str,
    /// The column in its home table (equal to `name` except for `_id`).
    pub column: &'static str,
    /// Value type.
    pub kind: FieldKind,
    /// Home table.
    pub home: Home,
}

const fn text(name: &'static str) -> FieldDef {
    FieldDef {
        name,
        column: name,
        kind: FieldKind::Text,
        home: Home::TagSet,
    }
}

/// Every fixed field; open families (`k8s.label.*`, ...) are in [`Family`].
pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        name: "_id",
        column: "id",
        kind: FieldKind::Int,
        home: Home::Sample,
    },
    FieldDef {
        name: "time",
        column: "time",
        kind: FieldKind::Int,
        home: Home::Sample,
    },
    FieldDef {
        name: "app_service",
        column: "app_service",
        kind: FieldKind::Text,
        home: Home::Sample,
    },
    FieldDef {
        name: "profile_language_type",
        column: "profile_language_type",
        kind: FieldKind::Text,
        home: Home::Sample,
    },
    FieldDef {
        name: "profile_event_type",
        column: "profile_event_type",
        kind: FieldKind::Text,
        home: Home::Sample,
    },
    FieldDef {
        name: "profile_create_timestamp",
        column: "profile_create_timestamp",
        kind: FieldKind::Int,
        home: Home::Sample,
    },
    FieldDef {
        name: "profile_in_timestamp",
        column: "profile_in_timestamp",
        kind: FieldKind::Int,
        home: Home::Sample,
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
        column: "is_ipv4",
        kind: FieldKind::Int,
        home: Home::TagSet,
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

/// The fixed fields an ingest request may set through `tags` (those stored per batch).
pub fn settable_columns() -> impl Iterator<Item = &'static FieldDef> {
    FIELDS.iter().filter(|def| def.home == Home::TagSet)
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
    fn column_names_are_plain_identifiers() {
        for def in FIELDS {
            assert!(def
                .column
                .chars()
                .all(|c| c.is_ascii_lowercase() || c == '_' || c.is_ascii_digit()));
        }
    }
}
