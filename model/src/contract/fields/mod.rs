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

/// Where DeepFlow's profile database keeps a field (its querier's tag descriptions of
/// `in_process` and, from v7.1, the 1-second aggregate `in_process_metrics`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeepFlowColumn {
    /// A column of both tables.
    Both,
    /// Both tables, stored as an integer enum code (`pod_group_type`): filterable, but its
    /// values are codes, so it is not listed among the tags that have values.
    Coded,
    /// Only the raw `in_process` table: it varies per sample and the aggregate drops it.
    SamplesOnly,
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
    /// Which of DeepFlow's profile tables have it.
    pub deepflow: DeepFlowColumn,
}

const fn text(name: &'static str) -> FieldDef {
    FieldDef {
        name,
        kind: FieldKind::Text,
        scope: Scope::Batch,
        deepflow: DeepFlowColumn::Both,
    }
}

/// A text field of a batch that only DeepFlow's raw table has.
const fn sample_text(name: &'static str) -> FieldDef {
    FieldDef {
        deepflow: DeepFlowColumn::SamplesOnly,
        ..text(name)
    }
}

/// Every fixed field; open families (`k8s.label.*`, ...) are in [`Family`].
pub const FIELDS: &[FieldDef] = &[
    FieldDef {
        name: "_id",
        kind: FieldKind::Int,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::SamplesOnly,
    },
    FieldDef {
        name: "time",
        kind: FieldKind::Int,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::Both,
    },
    FieldDef {
        name: "app_service",
        kind: FieldKind::Text,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::Both,
    },
    FieldDef {
        name: "profile_language_type",
        kind: FieldKind::Text,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::Both,
    },
    FieldDef {
        name: "profile_event_type",
        kind: FieldKind::Text,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::Both,
    },
    FieldDef {
        name: "profile_create_timestamp",
        kind: FieldKind::Int,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::SamplesOnly,
    },
    FieldDef {
        name: "profile_in_timestamp",
        kind: FieldKind::Int,
        scope: Scope::Sample,
        deepflow: DeepFlowColumn::SamplesOnly,
    },
    sample_text("profile_value_unit"),
    sample_text("profile_id"),
    sample_text("trace_id"),
    sample_text("span_name"),
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
    FieldDef {
        deepflow: DeepFlowColumn::Coded,
        ..text("pod_group_type")
    },
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
        deepflow: DeepFlowColumn::Both,
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

/// Longest key of an open-family tag: a Kubernetes label or annotation key is an optional DNS
/// subdomain prefix (253) and `/` before a name (63).
pub const MAX_KEY_LEN: usize = 317;

/// Whether `c` may appear in an open-family key: the Kubernetes label/annotation key charset.
/// Keys reach upstream SQL as backtick-quoted identifiers, where ClickHouse reads `\` and `` ` ``
/// as escapes; this charset has neither, nor anything else a querier could read as syntax.
pub fn is_key_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-')
}

/// Why a name could not be resolved; the one wording every reader of tag names answers with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// Not a known field nor an open-family tag.
    #[error(
        "unknown tag '{0}'; known tags: {list}, {aliases}, and {families}",
        list = FIELDS.iter().map(|d| d.name).collect::<Vec<_>>().join(", "),
        aliases = ALIASES.iter().map(|(a, _)| *a).collect::<Vec<_>>().join(", "),
        families = Family::ALL.map(|f| format!("{}.<key>", f.base())).join(", ")
    )]
    Unknown(String),
    /// A family name without a key, e.g. `k8s.label` or `k8s.label.`.
    #[error("tag family '{base}' needs a key, e.g. {base}.app", base = .0.base())]
    MissingKey(Family),
    /// An open-family key with a character outside [`is_key_char`] or longer than
    /// [`MAX_KEY_LEN`].
    #[error(
        "tag '{0}': a {base} key may hold only letters, digits, '.', '_', '/' and '-', at most \
         {MAX_KEY_LEN} of them (as Kubernetes label keys)",
        base = .1.base()
    )]
    InvalidKey(String, Family),
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
            if key.len() > MAX_KEY_LEN || !key.chars().all(is_key_char) {
                return Err(ResolveError::InvalidKey(name.to_owned(), family));
            }
            return Ok(FieldRef::Open {
                family,
                name: name.to_owned(),
            });
        }
    }
    Err(ResolveError::Unknown(name.to_owned()))
}

/// The names the viewer's tag-filter builder suggests: every field, the `vtap` alias, and each
/// open family as a prefix ending in `.` for the user to complete with a key.
pub fn offered_names() -> Vec<String> {
    let fields = FIELDS.iter().map(|d| d.name.to_owned());
    let aliases = ALIASES.iter().map(|(alias, _)| (*alias).to_owned());
    let families = Family::ALL.iter().map(|f| format!("{}.", f.base()));
    fields.chain(aliases).chain(families).collect()
}

/// The text tags DeepFlow keeps in both profile tables, each a column with one value per
/// batch: what the upstream tags statement groups by to find the tags that have values.
pub fn deepflow_tag_columns() -> impl Iterator<Item = &'static FieldDef> {
    FIELDS.iter().filter(|def| {
        def.scope == Scope::Batch
            && def.kind == FieldKind::Text
            && def.deepflow == DeepFlowColumn::Both
    })
}

/// The fixed fields an ingest request may set through `tags` (those stored per batch).
pub fn settable_columns() -> impl Iterator<Item = &'static FieldDef> {
    FIELDS.iter().filter(|def| def.scope == Scope::Batch)
}

#[cfg(test)]
mod tests;
