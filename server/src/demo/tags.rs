//! The tags of the demo's samples: every pod's samples carry its host's tags (region, az, host,
//! host_ip, agent, ...) and its own (pod, pod_ns, `k8s.label.app`, `cloud.tag.team`, ...); a
//! host's `Total` stacks carry the host's.

use super::fleet::{Event, Host, Pod, HOSTS};
use crate::store::{BatchMeta, Tags};

fn set_all(tags: &mut Tags, pairs: &[(&str, &str)]) {
    for (name, value) in pairs {
        // Every name here is in the field table or an open family, so `set` cannot fail.
        let _ = tags.set(name, value);
    }
}

fn host_tags(host: &Host) -> Tags {
    let mut tags = Tags::new();
    let hostname = format!("{}.prod.internal", host.name);
    let agent = format!("deepflow-agent-{}", host.name);
    set_all(
        &mut tags,
        &[
            ("region", host.region),
            ("az", host.az),
            ("host", host.name),
            ("host_ip", host.ip),
            ("host_hostname", &hostname),
            ("agent", &agent),
            ("pod_cluster", "prod-cluster"),
            ("pod_node", host.name),
            ("pod_node_ip", host.ip),
            ("pod_node_hostname", &hostname),
        ],
    );
    tags
}

fn meta(app: &str, event: Event, tags: Tags) -> BatchMeta {
    BatchMeta {
        app_service: app.to_owned(),
        language: "eBPF".to_owned(),
        event_type: event.name().to_owned(),
        unit: "microseconds".to_owned(),
        tags,
    }
}

/// The metadata of a host's per-host (`Total`) stacks.
pub(super) fn host_meta(host: &Host) -> BatchMeta {
    meta("Total", Event::OnCpu, host_tags(host))
}

/// The metadata of one pod's profile.
pub(super) fn pod_meta(p: &Pod, event: Event) -> BatchMeta {
    let w = p.workload;
    let mut tags = host_tags(&HOSTS[p.host]);
    let pid = p.pid.to_string();
    let service = format!("{}-svc", w.name);
    let stateful = p.name.ends_with("-0") || p.name.ends_with("-1");
    set_all(
        &mut tags,
        &[
            ("pod", p.name),
            ("pod_ns", w.ns),
            ("pod_group", w.name),
            (
                "pod_group_type",
                if stateful {
                    "StatefulSet"
                } else {
                    "Deployment"
                },
            ),
            ("pod_service", &service),
            ("service", &service),
            ("gprocess", w.app),
            ("ip", p.ip),
            ("is_ipv4", "1"),
            ("app_instance", &pid),
            ("k8s.label.app", w.name),
            ("k8s.label.version", w.version),
            ("k8s.annotation.owner", w.team),
            ("k8s.env.TZ", "UTC"),
            ("cloud.tag.team", w.team),
        ],
    );
    meta(w.app, event, tags)
}
