//! The labels Pyroscope's senders attach (a profile's `name=app{k=v}` key, a push series'
//! label pairs) → the tags of the field table, and which labels name the app and the spy.
//!
//! A label whose name is a field (`host`, `pod`, `pod_ns`, `region`, `app_instance`,
//! `profile_id`, `span_name`, `trace_id`, `k8s.label.app`, ...) is stored as that tag; a few
//! common Prometheus/Kubernetes names are read as the field they mean (`namespace` → `pod_ns`,
//! `pod_name` → `pod`, `node` → `pod_node`, `hostname` → `host`, `cluster` → `pod_cluster`).
//! Pyroscope's own labels (`__name__`, `service_name`, `pyroscope_spy`, anything `__…`) are not
//! tags. Any other label is dropped and named in the answer (`ignored_labels`): Embers keeps
//! the field table's tags only, as its stores and DeepFlow's querier filter by them.
//! `app_instance` defaults to the app, as DeepFlow does.

use crate::store::Tags;

use super::FormatError;

/// The label that names the app in a push series.
pub const SERVICE_NAME: &str = "service_name";
/// The label that names the profile type in a push series.
pub const METRIC_NAME: &str = "__name__";
/// The label Pyroscope puts the sender's `spyName` in.
pub const SPY_NAME: &str = "pyroscope_spy";

/// Common label names read as the field they mean.
const ALIASES: [(&str, &str); 6] = [
    ("namespace", "pod_ns"),
    ("pod_name", "pod"),
    ("node", "pod_node"),
    ("node_name", "pod_node"),
    ("hostname", "host"),
    ("cluster", "pod_cluster"),
];

/// Tags made of labels, and the labels left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Labeled {
    /// The tags.
    pub tags: Tags,
    /// Labels that are no field of the table, dropped.
    pub ignored: Vec<String>,
}

/// Whether a label is Pyroscope's own rather than a tag.
fn is_reserved(name: &str) -> bool {
    name.starts_with("__") || name == SERVICE_NAME || name == SPY_NAME
}

/// The tags of `labels` for an app named `app_service` (see the module docs). A label naming a
/// field with a value that field cannot hold (`is_ipv4=yes`) is an error.
pub fn tags_of<'a>(
    labels: impl IntoIterator<Item = (&'a str, &'a str)>,
    app_service: &str,
) -> Result<Labeled, FormatError> {
    let mut out = Labeled::default();
    for (name, value) in labels {
        if is_reserved(name) {
            continue;
        }
        let field = ALIASES
            .iter()
            .find(|(alias, _)| *alias == name)
            .map_or(name, |(_, field)| field);
        if embers_model::contract::fields::resolve(field).is_err() {
            out.ignored.push(name.to_owned());
            continue;
        }
        out.tags
            .set(field, value)
            .map_err(|e| FormatError::invalid(format!("label {name}: {e}")))?;
    }
    if out.tags.column("app_instance").is_none() {
        out.tags
            .set("app_instance", app_service)
            .map_err(FormatError::invalid)?;
    }
    out.ignored.sort();
    out.ignored.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_and_aliases_are_tags_and_the_rest_is_named() {
        let l = tags_of(
            [
                ("__name__", "process_cpu"),
                ("service_name", "web"),
                ("namespace", "prod"),
                ("host", "node-a"),
                ("k8s.label.app", "web"),
                ("env", "staging"),
                ("version", "1.2"),
                ("env", "x"),
            ],
            "web",
        )
        .expect("tags");
        assert_eq!(l.tags.column("pod_ns"), Some("prod"));
        assert_eq!(l.tags.column("host"), Some("node-a"));
        assert_eq!(l.tags.column("app_instance"), Some("web"));
        assert_eq!(l.tags.open().len(), 1);
        assert_eq!(l.ignored, ["env", "version"]);
    }

    #[test]
    fn a_field_with_a_value_it_cannot_hold_is_refused() {
        let e = tags_of([("is_ipv4", "yes")], "web").expect_err("int");
        assert_eq!(
            e.to_string(),
            "label is_ipv4: tag 'is_ipv4' takes an integer value, got 'yes'"
        );
        let l = tags_of([("app_instance", "web-1")], "web").expect("tags");
        assert_eq!(l.tags.column("app_instance"), Some("web-1"));
    }
}
