//! The demo's fleet: four hosts in two regions and the pods running on them, with the tags every
//! sample of a pod carries (host, pod, pod_ns, region, host_ip, `k8s.label.app`, ...).
//!
//! nginx runs on node-a and node-b only, and every java pod lives in namespace `team-o'brien`:
//! the viewer's end-to-end tests filter on both facts.

use super::synth::{self, Synth};
use super::templates::*;

/// The kind of profile a source describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    OnCpu,
    OffCpu,
    MemAlloc,
}

impl Event {
    pub(super) fn name(self) -> &'static str {
        match self {
            Event::OnCpu => "on-cpu",
            Event::OffCpu => "off-cpu",
            Event::MemAlloc => "mem-alloc",
        }
    }
}

/// Where a profile's stacks come from.
#[derive(Clone, Copy)]
pub(super) enum Source {
    /// Weighted templates, `weight frame;frame;...` per line.
    Text(&'static str),
    /// Generated combinations (thousands of distinct stacks).
    Synth(&'static Synth),
}

/// A host and its tags.
pub(super) struct Host {
    pub(super) name: &'static str,
    pub(super) ip: &'static str,
    pub(super) region: &'static str,
    pub(super) az: &'static str,
}

pub(super) const HOSTS: [Host; 4] = [
    host("node-a", "10.0.1.11", "cn-north-1", "cn-north-1a"),
    host("node-b", "10.0.1.12", "cn-north-1", "cn-north-1b"),
    host("node-c", "10.0.2.13", "eu-west-1", "eu-west-1a"),
    host("node-d", "10.0.2.14", "eu-west-1", "eu-west-1b"),
];

const fn host(
    name: &'static str,
    ip: &'static str,
    region: &'static str,
    az: &'static str,
) -> Host {
    Host {
        name,
        ip,
        region,
        az,
    }
}

/// What the pods of one workload share.
pub(super) struct Workload {
    pub(super) app: &'static str,
    pub(super) name: &'static str,
    pub(super) ns: &'static str,
    pub(super) version: &'static str,
    pub(super) team: &'static str,
    /// Whether it follows user traffic (and so takes part in the spike).
    pub(super) frontend: bool,
    pub(super) profiles: &'static [(Event, Source)],
}

/// One running process (a pod) of a workload.
pub(super) struct Pod {
    pub(super) workload: &'static Workload,
    pub(super) host: usize,
    pub(super) pid: u32,
    pub(super) name: &'static str,
    pub(super) ip: &'static str,
    /// On-CPU samples per minute at normal load.
    pub(super) rate: u64,
}

use Event::{MemAlloc, OffCpu, OnCpu};
use Source::{Synth as Gen, Text};

const REDIS: Workload = Workload {
    app: "redis-server",
    name: "redis",
    ns: "cache",
    version: "7.2.4",
    team: "platform",
    frontend: false,
    profiles: &[
        (OnCpu, Text(REDIS_CPU)),
        (OffCpu, Text(REDIS_OFF)),
        (MemAlloc, Text(REDIS_MEM)),
    ],
};
const NGINX: Workload = Workload {
    app: "nginx",
    name: "ingress-nginx",
    ns: "ingress-nginx",
    version: "1.25.3",
    team: "edge",
    frontend: true,
    profiles: &[(OnCpu, Text(NGINX_CPU)), (OffCpu, Text(NGINX_OFF))],
};
const JAVA: Workload = Workload {
    app: "java",
    name: "order-service",
    ns: "team-o'brien",
    version: "2.14.0",
    team: "o'brien",
    frontend: true,
    profiles: &[
        (OnCpu, Text(JAVA_CPU)),
        (OffCpu, Text(JAVA_OFF)),
        (MemAlloc, Text(JAVA_MEM)),
    ],
};
const PYTHON: Workload = Workload {
    app: "python3",
    name: "ml-worker",
    ns: "ml",
    version: "0.9.1",
    team: "data",
    frontend: false,
    profiles: &[(OnCpu, Text(PYTHON_CPU)), (MemAlloc, Text(PYTHON_MEM))],
};
/// The workload with the regression (see `super::REGRESSION_FUNCTION`).
pub(super) const GATEWAY: Workload = Workload {
    app: "api-gateway",
    name: "api-gateway",
    ns: "edge",
    version: "3.1.0",
    team: "edge",
    frontend: true,
    profiles: &[(OnCpu, Text(GATEWAY_CPU)), (MemAlloc, Text(GATEWAY_MEM))],
};
const POSTGRES: Workload = Workload {
    app: "postgres",
    name: "postgres",
    ns: "db",
    version: "16.2",
    team: "platform",
    frontend: false,
    profiles: &[(OnCpu, Text(POSTGRES_CPU)), (OffCpu, Text(POSTGRES_OFF))],
};
const AGENT: Workload = Workload {
    app: "deepflow-agent",
    name: "deepflow-agent",
    ns: "deepflow",
    version: "6.6.9",
    team: "observability",
    frontend: false,
    profiles: &[(OnCpu, Text(AGENT_CPU))],
};
const CHECKOUT: Workload = Workload {
    app: "checkout",
    name: "checkout",
    ns: "shop",
    version: "5.3.2",
    team: "shop",
    frontend: true,
    profiles: &[(OnCpu, Gen(&synth::CHECKOUT))],
};
const SEARCH: Workload = Workload {
    app: "search-api",
    name: "search-api",
    ns: "shop",
    version: "1.8.0",
    team: "discovery",
    frontend: true,
    profiles: &[(OnCpu, Gen(&synth::SEARCH))],
};
const PAYMENT: Workload = Workload {
    app: "payment",
    name: "payment",
    ns: "finance",
    version: "2.0.4",
    team: "finance",
    frontend: true,
    profiles: &[(OnCpu, Gen(&synth::PAYMENT))],
};
const KAFKA: Workload = Workload {
    app: "kafka",
    name: "kafka",
    ns: "streaming",
    version: "3.7.0",
    team: "platform",
    frontend: false,
    profiles: &[(OnCpu, Gen(&synth::KAFKA))],
};

const fn pod(
    workload: &'static Workload,
    host: usize,
    pid: u32,
    name: &'static str,
    ip: &'static str,
    rate: u64,
) -> Pod {
    Pod {
        workload,
        host,
        pid,
        name,
        ip,
        rate,
    }
}

/// Every pod. Rates keep the long-standing processes wide enough in the per-host graph for
/// their `[p]` labels to show.
pub(super) const PODS: [Pod; 34] = [
    pod(&REDIS, 0, 4123, "redis-0", "10.244.1.17", 55),
    pod(&REDIS, 3, 4188, "redis-1", "10.244.4.19", 20),
    pod(
        &NGINX,
        0,
        2210,
        "ingress-nginx-7d9f5-abcde",
        "10.244.1.23",
        45,
    ),
    pod(
        &NGINX,
        1,
        2388,
        "ingress-nginx-7d9f5-xyz12",
        "10.244.2.31",
        40,
    ),
    pod(
        &NGINX,
        1,
        2391,
        "ingress-nginx-7d9f5-q8r2t",
        "10.244.2.33",
        15,
    ),
    pod(
        &JAVA,
        1,
        4242,
        "order-service-5c8d-2kq9p",
        "10.244.2.45",
        70,
    ),
    pod(
        &JAVA,
        3,
        4377,
        "order-service-5c8d-7hx4w",
        "10.244.4.28",
        25,
    ),
    pod(&PYTHON, 2, 7311, "ml-worker-0", "10.244.3.12", 60),
    pod(&PYTHON, 3, 7402, "ml-worker-1", "10.244.4.40", 20),
    pod(
        &GATEWAY,
        1,
        3120,
        "api-gateway-6b7c9-p4x2m",
        "10.244.2.52",
        50,
    ),
    pod(
        &GATEWAY,
        2,
        3166,
        "api-gateway-6b7c9-k9d3s",
        "10.244.3.57",
        25,
    ),
    pod(&POSTGRES, 2, 1876, "postgres-0", "10.244.3.20", 50),
    pod(&POSTGRES, 3, 1902, "postgres-1", "10.244.4.21", 15),
    pod(&AGENT, 0, 911, "deepflow-agent-r8k2d", "10.0.1.11", 30),
    pod(&AGENT, 1, 907, "deepflow-agent-w5n8c", "10.0.1.12", 10),
    pod(&AGENT, 2, 905, "deepflow-agent-m2v7q", "10.0.2.13", 25),
    pod(&AGENT, 3, 913, "deepflow-agent-t3j6h", "10.0.2.14", 10),
    pod(
        &CHECKOUT,
        2,
        5120,
        "checkout-84c6d-2wz7m",
        "10.244.3.61",
        12,
    ),
    pod(
        &CHECKOUT,
        3,
        5131,
        "checkout-84c6d-9pq4v",
        "10.244.4.62",
        12,
    ),
    pod(
        &CHECKOUT,
        3,
        5147,
        "checkout-84c6d-h6t2b",
        "10.244.4.63",
        10,
    ),
    pod(
        &SEARCH,
        2,
        6210,
        "search-api-5f7b8-c2x9k",
        "10.244.3.70",
        14,
    ),
    pod(
        &SEARCH,
        3,
        6233,
        "search-api-5f7b8-m4r8p",
        "10.244.4.71",
        12,
    ),
    pod(&PAYMENT, 0, 5510, "payment-6d9c4-f7k2q", "10.244.1.80", 6),
    pod(&PAYMENT, 1, 5522, "payment-6d9c4-x3b8n", "10.244.2.81", 5),
    pod(&KAFKA, 3, 8801, "kafka-0", "10.244.4.90", 8),
    pod(&KAFKA, 2, 8815, "kafka-1", "10.244.3.91", 7),
    // A third pod for the services that had two (added last: the generator draws from one
    // random stream in this order, so the earlier pods' data stay as they were).
    pod(&REDIS, 1, 4201, "redis-2", "10.244.2.18", 10),
    pod(&PYTHON, 1, 7455, "ml-worker-2", "10.244.2.41", 10),
    pod(&POSTGRES, 1, 1930, "postgres-2", "10.244.2.22", 8),
    pod(&PAYMENT, 2, 5534, "payment-6d9c4-q2m7d", "10.244.3.82", 4),
    pod(&KAFKA, 0, 8830, "kafka-2", "10.244.1.92", 6),
    pod(
        &JAVA,
        1,
        4391,
        "order-service-5c8d-v8n3c",
        "10.244.2.29",
        15,
    ),
    pod(
        &GATEWAY,
        3,
        3181,
        "api-gateway-6b7c9-w2h6t",
        "10.244.4.58",
        15,
    ),
    pod(&SEARCH, 1, 6247, "search-api-5f7b8-z7d1q", "10.244.2.72", 8),
];

/// Processes without pods that only appear in the per-host graph: (host, `[p]` name, on-CPU
/// ticks per minute).
pub(super) const HOST_ONLY: [(usize, &str, u64); 5] = [
    (0, "[p] kworker/u16:2", 3),
    (1, "[p] ksoftirqd/1", 5),
    (2, "[p] kworker/u16:2", 2),
    (2, "[p] systemd-journal", 4),
    (3, "[p] containerd", 3),
];
