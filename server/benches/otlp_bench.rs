//! OTLP ingest throughput next to folded ingest of the same profile: the same samples (stacks,
//! threads, seconds), sent once as an OTLP profiles request shaped like the OpenTelemetry eBPF
//! profiler's (on-CPU samples/count at 20 Hz, a timestamp per sample, thread names as sample
//! attributes, frames as locations) and once as the folded JSON body of `/v1/profile/ingest`
//! (one batch per second, a line per thread and stack with its summed value), each parsed and
//! written into a fresh SQLite store. Both write the same rows; the target is OTLP within 2× of
//! folded, in samples (observations) per second.
//!
//! Run: `cargo bench -p embers-server --bench otlp_bench` (not part of `cargo test`).
//! Sizes: `EMBERS_BENCH_SAMPLES` (default 500,000), `EMBERS_BENCH_STACKS` (default 5,000),
//! `EMBERS_BENCH_SECONDS` (default 60).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use embers_model::budget::Budget;
use embers_server::demo::Rng;
use embers_server::formats::otlp::{self, Encoding, ExportProfilesServiceRequest};
use embers_server::input::parse_json_body;
use embers_server::limits::StackLimits;
use embers_server::store::{Batch, Store};
use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::profiles::v1development::{
    Function, KeyValueAndUnit, Line, Location, Profile, ProfilesDictionary, ResourceProfiles,
    Sample, ScopeProfiles, Stack, ValueType,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

mod common;

use common::env_usize;

const T0: u64 = 1_700_000_000;
const NS: u64 = 1_000_000_000;
/// 20 Hz: a sample is 50 ms, 50,000 µs.
const PERIOD_NS: i64 = 50_000_000;
const THREADS: usize = 16;
const REPEAT: usize = 3;

/// The workload: stacks (frame-name indices, leaf first), and each sample's (stack, thread,
/// second).
struct Workload {
    names: Vec<String>,
    stacks: Vec<Vec<usize>>,
    samples: Vec<(usize, usize, u64)>,
}

fn workload(samples: usize, stacks: usize, seconds: usize) -> Workload {
    let mut rng = Rng::new(7);
    let names: Vec<String> = (0..3000)
        .map(|i| match i % 10 {
            0..=5 => format!("app::module{}::function_{i}", i % 97),
            6 | 7 => format!("libfn_{i}"),
            _ => format!("kernel_fn_{i}"),
        })
        .collect();
    let stacks: Vec<Vec<usize>> = (0..stacks)
        .map(|_| {
            let depth = 8 + rng.below(24) as usize;
            (0..depth)
                .map(|_| rng.below(names.len() as u64) as usize)
                .collect()
        })
        .collect();
    let samples = (0..samples)
        .map(|_| {
            (
                rng.below(stacks.len() as u64) as usize,
                rng.below(THREADS as u64) as usize,
                rng.below(seconds as u64),
            )
        })
        .collect();
    Workload {
        names,
        stacks,
        samples,
    }
}

fn text(s: &str) -> Option<AnyValue> {
    Some(AnyValue {
        value: Some(Value::StringValue(s.to_owned())),
    })
}

/// The OTLP request: one location per frame name, one Sample per (stack, thread) with a
/// timestamp per observation, as the eBPF profiler aggregates.
fn otlp_request(w: &Workload) -> Vec<u8> {
    let mut d = ProfilesDictionary {
        string_table: vec![String::new()],
        function_table: vec![Function::default()],
        location_table: vec![Location::default()],
        stack_table: vec![Stack::default()],
        attribute_table: vec![KeyValueAndUnit::default()],
        mapping_table: vec![Default::default()],
        link_table: vec![Default::default()],
    };
    let string = |d: &mut ProfilesDictionary, s: &str| {
        d.string_table.push(s.to_owned());
        d.string_table.len() as i32 - 1
    };
    // Attributes 1 and 2: the frame types native and kernel.
    let frame_type = string(&mut d, "profile.frame.type");
    for value in [text("native"), text("kernel")] {
        d.attribute_table.push(KeyValueAndUnit {
            key_strindex: frame_type,
            value,
            unit_strindex: 0,
        });
    }
    for name in &w.names {
        let name_strindex = string(&mut d, name);
        d.function_table.push(Function {
            name_strindex,
            ..Function::default()
        });
        let is_kernel = name.starts_with("kernel");
        d.location_table.push(Location {
            lines: vec![Line {
                function_index: d.function_table.len() as i32 - 1,
                ..Line::default()
            }],
            attribute_indices: vec![if is_kernel { 2 } else { 1 }],
            ..Location::default()
        });
    }
    for stack in &w.stacks {
        d.stack_table.push(Stack {
            location_indices: stack.iter().map(|&l| l as i32 + 1).collect(),
        });
    }
    let thread_key = string(&mut d, "thread.name");
    let first_thread = d.attribute_table.len();
    for t in 0..THREADS {
        d.attribute_table.push(KeyValueAndUnit {
            key_strindex: thread_key,
            value: text(&format!("worker-{t}")),
            unit_strindex: 0,
        });
    }
    let mut grouped: BTreeMap<(usize, usize), Vec<u64>> = BTreeMap::new();
    for (i, &(stack, thread, second)) in w.samples.iter().enumerate() {
        let ns = (T0 + second) * NS + (i as u64 % 1000) * 1000;
        grouped.entry((stack, thread)).or_default().push(ns);
    }
    let samples = grouped
        .into_iter()
        .map(|((stack, thread), stamps)| Sample {
            stack_index: stack as i32 + 1,
            attribute_indices: vec![(first_thread + thread) as i32],
            timestamps_unix_nano: stamps,
            ..Sample::default()
        })
        .collect();
    let mut value_type = |kind: &str, unit: &str| {
        Some(ValueType {
            type_strindex: string(&mut d, kind),
            unit_strindex: string(&mut d, unit),
        })
    };
    let profile = Profile {
        sample_type: value_type("samples", "count"),
        period_type: value_type("cpu", "nanoseconds"),
        period: PERIOD_NS,
        time_unix_nano: T0 * NS,
        samples,
        ..Profile::default()
    };
    let resource = Resource {
        attributes: vec![KeyValue {
            key: "process.executable.name".into(),
            value: text("bench-app"),
            key_strindex: 0,
        }],
        ..Resource::default()
    };
    ExportProfilesServiceRequest {
        resource_profiles: vec![ResourceProfiles {
            resource: Some(resource),
            scope_profiles: vec![ScopeProfiles {
                profiles: vec![profile],
                ..ScopeProfiles::default()
            }],
            ..ResourceProfiles::default()
        }],
        dictionary: Some(d),
    }
    .encode_to_vec()
}

/// The same samples as folded JSON: a batch per second, a line per thread and stack, with the
/// names the OTLP decoder gives them (root first, `[t]` and `[k]` as it writes them).
fn folded_body(w: &Workload) -> Vec<u8> {
    let mut by_second: BTreeMap<u64, BTreeMap<(usize, usize), u64>> = BTreeMap::new();
    for &(stack, thread, second) in &w.samples {
        *by_second
            .entry(second)
            .or_default()
            .entry((stack, thread))
            .or_default() += 1;
    }
    let us = PERIOD_NS as u64 / 1000;
    let batches: Vec<serde_json::Value> = by_second
        .into_iter()
        .map(|(second, rows)| {
            let mut folded = String::new();
            for ((stack, thread), count) in rows {
                folded.push_str(&format!("[t] worker-{thread}"));
                for &f in w.stacks[stack].iter().rev() {
                    let name = &w.names[f];
                    let kind = if name.starts_with("kernel") {
                        "[k] "
                    } else {
                        ""
                    };
                    folded.push_str(&format!(";{kind}{name}"));
                }
                folded.push_str(&format!(" {}\n", count * us));
            }
            serde_json::json!({"app_service": "bench-app", "time": T0 + second, "folded": folded})
        })
        .collect();
    serde_json::json!({ "batches": batches })
        .to_string()
        .into_bytes()
}

/// Parse with `parse` and write into a fresh store, `REPEAT` times; the fastest (parse, write)
/// and the rows written.
fn measure(parse: &dyn Fn() -> Vec<Batch>) -> (Duration, Duration, u64) {
    let mut best: Option<(Duration, Duration, u64)> = None;
    for _ in 0..REPEAT {
        let dir = tempfile::tempdir().expect("dir");
        let store = Store::open(&dir.path().join("b.db")).expect("store");
        let start = Instant::now();
        let batches = parse();
        let parsed = start.elapsed();
        let stats = store.insert(&batches).expect("insert");
        let written = start.elapsed() - parsed;
        if best.is_none_or(|(p, w, _)| parsed + written < p + w) {
            best = Some((parsed, written, stats.samples));
        }
    }
    best.expect("REPEAT > 0")
}

fn main() {
    let n = env_usize("EMBERS_BENCH_SAMPLES", 500_000);
    let w = workload(
        n,
        env_usize("EMBERS_BENCH_STACKS", 5_000),
        env_usize("EMBERS_BENCH_SECONDS", 60),
    );
    let otlp_bytes = otlp_request(&w);
    let folded = folded_body(&w);
    let stacks = StackLimits::default();
    // As the service reads a request: its shape charged to a budget sized from its bytes
    // before it is decoded.
    let otlp = measure(&|| {
        let budget = Budget::for_input(otlp_bytes.len(), embers_server::DEFAULT_REQUEST_MEMORY);
        otlp::decode(&otlp_bytes, Encoding::Protobuf, 1, stacks, &budget).expect("otlp")
    });
    let json = measure(&|| parse_json_body(&folded, 1, &stacks).expect("folded"));
    assert_eq!(otlp.2, json.2, "both write the same rows");
    println!(
        "{n} samples over {} stacks, {} threads; {} rows written; bodies: OTLP {} KB, folded \
         JSON {} KB",
        w.stacks.len(),
        THREADS,
        otlp.2,
        otlp_bytes.len() / 1024,
        folded.len() / 1024
    );
    println!(
        "{:<8} {:>10} {:>10} {:>10} {:>14}",
        "path", "parse ms", "write ms", "total ms", "samples/s"
    );
    for (name, (parse, write, _)) in [("otlp", otlp), ("folded", json)] {
        let total = parse + write;
        println!(
            "{name:<8} {:>10.1} {:>10.1} {:>10.1} {:>14.0}",
            parse.as_secs_f64() * 1e3,
            write.as_secs_f64() * 1e3,
            total.as_secs_f64() * 1e3,
            n as f64 / total.as_secs_f64()
        );
    }
    let ratio = (otlp.0 + otlp.1).as_secs_f64() / (json.0 + json.1).as_secs_f64();
    println!("OTLP / folded time: {ratio:.2}× (target ≤ 2×)");
    let shape = shape_check_time(&otlp_bytes);
    println!(
        "of OTLP's parse, the budget's shape check before decoding: {:.1} ms ({:.1}%)",
        shape.as_secs_f64() * 1e3,
        100.0 * shape.as_secs_f64() / otlp.0.as_secs_f64()
    );
}

/// The fastest of `REPEAT` runs of the shape check alone (what the request budget adds to
/// reading an OTLP body).
fn shape_check_time(body: &[u8]) -> Duration {
    let desc = otlp::request_descriptor().expect("descriptors");
    (0..REPEAT)
        .map(|_| {
            let budget = Budget::for_input(body.len(), embers_server::DEFAULT_REQUEST_MEMORY);
            let start = Instant::now();
            otlp::shape::charge_protobuf(body, &desc, &budget).expect("within the budget");
            start.elapsed()
        })
        .min()
        .expect("REPEAT > 0")
}
