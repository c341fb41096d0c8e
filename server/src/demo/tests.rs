//! Unit tests of the demo data: deterministic, in its window, and rich enough for every feature the viewer shows.

use std::collections::{HashMap, HashSet};

use super::*;
use crate::store::BatchMeta;

const NOW: i64 = 1_700_021_600;

fn all(batches: &[Batch]) -> Vec<(&BatchMeta, &Sample)> {
    batches
        .iter()
        .flat_map(|b| b.samples.iter().map(move |s| (&b.meta, s)))
        .collect()
}

#[test]
fn rng_is_deterministic() {
    let mut a = Rng::new(7);
    let mut b = Rng::new(7);
    for _ in 0..100 {
        assert_eq!(a.next_u64(), b.next_u64());
    }
    assert_eq!(Rng::new(1).below(0), 0);
}

#[test]
fn demo_is_deterministic_and_in_the_window() {
    let a = generate(NOW);
    assert_eq!(a, generate(NOW));
    for (_, s) in all(&a) {
        assert!(s.time > NOW - WINDOW_S && s.time <= NOW, "{}", s.time);
    }
}

#[test]
fn demo_covers_the_viewer_features() {
    let batches = generate(NOW);
    let all = all(&batches);
    for (m, s) in all.iter().filter(|(m, _)| m.app_service != "Total") {
        assert!(
            s.stack.starts_with("[t] "),
            "{}: {}",
            m.app_service,
            s.stack
        );
    }
    for (m, s) in all.iter().filter(|(m, _)| m.app_service == "Total") {
        assert_eq!(m.event_type, "on-cpu");
        assert!(s.stack.starts_with("[p] "), "{}", s.stack);
    }
    let has = |needle: &str| all.iter().any(|(_, s)| s.stack.contains(needle));
    for needle in [
        "[k] ",
        "[l] ",
        "[c] ",
        "[/usr/lib/",
        "[unknown] 0x",
        ";[t] ",
    ] {
        assert!(has(needle), "{needle}");
    }
    for event in ["on-cpu", "off-cpu", "mem-alloc"] {
        assert!(all.iter().any(|(m, _)| m.event_type == event), "{event}");
    }
    let tag = |m: &BatchMeta, t: &str| m.tags.column(t).unwrap_or("").to_owned();
    let mut pods: HashMap<String, HashSet<String>> = HashMap::new();
    for b in batches.iter().filter(|b| b.meta.app_service != "Total") {
        pods.entry(b.meta.app_service.clone())
            .or_default()
            .insert(tag(&b.meta, "pod"));
        if b.meta.app_service == "java" {
            assert_eq!(tag(&b.meta, "pod_ns"), "team-o'brien");
        }
        if b.meta.app_service == "nginx" {
            assert!(["node-a", "node-b"].contains(&tag(&b.meta, "host").as_str()));
        }
    }
    assert!(pods.len() >= 10, "{pods:?}");
    assert!(
        pods.values().all(|p| p.len() >= 3),
        "several pods each: {pods:?}"
    );
    let last_hour = |app: &str| {
        all.iter()
            .filter(|(m, s)| {
                m.app_service == app && m.event_type == "on-cpu" && s.time > NOW - 3600
            })
            .count()
    };
    assert!((1000..10_000).contains(&last_hour("redis-server")));
    for app in [
        "nginx",
        "java",
        "python3",
        "api-gateway",
        "postgres",
        "deepflow-agent",
    ] {
        assert!(last_hour(app) >= 300, "{app}: {}", last_hour(app));
    }
    for app in ["checkout", "search-api"] {
        let distinct: HashSet<&str> = all
            .iter()
            .filter(|(m, _)| m.app_service == app)
            .map(|(_, s)| s.stack.as_str())
            .collect();
        assert!(distinct.len() >= 2000, "{app}: {} stacks", distinct.len());
    }
}

/// CPU of `app` (all pods, on-CPU) per minute of the window.
fn per_minute(batches: &[Batch], app: &str) -> Vec<u64> {
    let mut out = vec![0u64; (WINDOW_S / 60) as usize];
    for (m, s) in all(batches) {
        if m.app_service == app && m.event_type == "on-cpu" {
            out[((s.time - (NOW - WINDOW_S + 1)) / 60) as usize] += s.value;
        }
    }
    out
}

fn mean(v: &[u64]) -> f64 {
    v.iter().sum::<u64>() as f64 / v.len() as f64
}

/// A host's whole-host timeline at the finest bucket a page uses for the last hour (30 s)
/// has no holes: its samples are summed per 10 s slot, not per minute.
#[test]
fn every_host_has_whole_host_samples_in_every_30s_bucket() {
    let start = NOW - WINDOW_S + 1;
    let batches = generate_minutes(start, 0..60);
    for host in fleet::HOSTS.iter() {
        let meta = tags::host_meta(host);
        let buckets: HashSet<i64> = batches
            .iter()
            .filter(|b| b.meta == meta)
            .flat_map(|b| b.samples.iter().map(|s| (s.time - start).div_euclid(30)))
            .collect();
        assert_eq!(buckets.len(), 120, "{}", meta.app_service);
    }
}

#[test]
fn the_load_has_a_spike_and_a_quiet_period() {
    let batches = generate(NOW);
    let nginx = per_minute(&batches, "nginx");
    let normal = mean(&nginx[20..100]);
    assert!(mean(&nginx[110..125]) > 2.5 * normal, "spike");
    assert!(mean(&nginx[170..210]) < 0.3 * normal, "quiet period");
    let redis = per_minute(&batches, "redis-server");
    assert!(
        mean(&redis[110..125]) < 1.5 * mean(&redis[20..100]),
        "no spike"
    );
}

#[test]
fn one_function_regresses_in_the_last_20_minutes() {
    let batches = generate(NOW);
    let cut = NOW - REGRESSION_S;
    let share = |recent: bool| {
        let (mut hot, mut total) = (0u64, 0u64);
        for (m, s) in all(&batches) {
            let on_cpu = m.app_service == REGRESSION_SERVICE && m.event_type == "on-cpu";
            if on_cpu && (s.time > cut) == recent {
                total += s.value;
                if s.stack.contains(REGRESSION_FUNCTION) {
                    hot += s.value;
                }
            }
        }
        hot as f64 / total as f64
    };
    assert!(share(false) < 0.1, "before: {}", share(false));
    assert!(share(true) > 0.4, "after: {}", share(true));
    let gateway = per_minute(&batches, REGRESSION_SERVICE);
    assert!(mean(&gateway[340..]) > 1.5 * mean(&gateway[250..330]));
}

/// What grew over the last hour against the hour before, by the change inside each service
/// (what the viewer's What grew asks): by total the regressing function first (the JSON
/// encoding below it also runs in another path, so only it grew by the whole regression), by
/// self its leaf.
#[test]
fn what_grew_finds_the_regression_first() {
    use embers_model::contract::explore::parse_functions_body;
    let dir = tempfile::tempdir().expect("dir");
    let store = crate::store::Store::open(&dir.path().join("demo.db")).expect("open");
    store.insert(&generate(NOW)).expect("insert");
    let body = |metric: &str| {
        format!(
            r#"{{"time_start": {}, "time_end": {NOW}, "profile_event_type": "on-cpu",
               "profile_language_type": "eBPF", "baseline_time_start": {},
               "baseline_time_end": {}, "order_by": "place_change", "metric": "{metric}"}}"#,
            NOW - 3599,
            NOW - 7199,
            NOW - 3600
        )
    };
    let grew = |metric: &str| {
        let q = parse_functions_body(body(metric).as_bytes()).expect("body");
        store.functions(&q).expect("functions")
    };
    let total = grew("total");
    let first = &total.values[0];
    assert_eq!(
        first.function,
        REGRESSION_FUNCTION,
        "{:?}",
        &total.values[..3]
    );
    assert_eq!(first.places[0].app_service, REGRESSION_SERVICE);
    let (top, next) = (first.place_change, total.values[1].place_change);
    assert!(top.unwrap_or(0.0) > 10.0 && top > next, "{top:?} {next:?}");
    assert_eq!(
        grew("self").values[0].function,
        "runtime.memclrNoHeapPointers"
    );
}
