//! Requests built with the generated types, as the OpenTelemetry eBPF profiler shapes them,
//! through [`to_batches`] (`refusals`: every refusal naming its field).

mod refusals;

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::profiles::v1development::{
    Function, KeyValueAndUnit, Line, Link, Location, Mapping, Profile, ProfilesDictionary,
    ResourceProfiles, Sample, ScopeProfiles, Stack, ValueType,
};
use opentelemetry_proto::tonic::resource::v1::Resource;
use prost::Message;

use super::*;
use crate::limits::StackLimits;
use crate::store::Batch;

const LIMITS: Bounds = Bounds {
    stacks: StackLimits {
        max_frames: 64,
        max_frame_bytes: 256,
    },
    max_text: 1 << 20,
};
const T: u64 = 1_700_000_000;
const NS: u64 = 1_000_000_000;

/// Builds a dictionary the way the eBPF profiler does (zero entries first).
struct Dict(ProfilesDictionary);

fn text(s: &str) -> Option<AnyValue> {
    Some(AnyValue {
        value: Some(Value::StringValue(s.to_owned())),
    })
}

impl Dict {
    fn new() -> Dict {
        Dict(ProfilesDictionary {
            mapping_table: vec![Mapping::default()],
            location_table: vec![Location::default()],
            function_table: vec![Function::default()],
            link_table: vec![Link::default()],
            string_table: vec![String::new()],
            attribute_table: vec![KeyValueAndUnit::default()],
            stack_table: vec![Stack::default()],
        })
    }

    fn string(&mut self, s: &str) -> i32 {
        let t = &mut self.0.string_table;
        let at = t.iter().position(|x| x == s).unwrap_or_else(|| {
            t.push(s.to_owned());
            t.len() - 1
        });
        at as i32
    }

    fn attr(&mut self, key: &str, value: &str) -> i32 {
        let key_strindex = self.string(key);
        self.0.attribute_table.push(KeyValueAndUnit {
            key_strindex,
            value: text(value),
            unit_strindex: 0,
        });
        self.0.attribute_table.len() as i32 - 1
    }

    fn mapping(&mut self, file: &str) -> i32 {
        let filename_strindex = self.string(file);
        self.0.mapping_table.push(Mapping {
            filename_strindex,
            ..Mapping::default()
        });
        self.0.mapping_table.len() as i32 - 1
    }

    /// A location with `functions` (outermost last, as inlined lines are), its frame type and
    /// mapping.
    fn location(&mut self, functions: &[&str], frame_type: &str, mapping: i32, addr: u64) -> i32 {
        let mut lines = Vec::new();
        for f in functions {
            let name_strindex = self.string(f);
            self.0.function_table.push(Function {
                name_strindex,
                ..Function::default()
            });
            lines.push(Line {
                function_index: self.0.function_table.len() as i32 - 1,
                ..Line::default()
            });
        }
        let ty = self.attr("profile.frame.type", frame_type);
        self.0.location_table.push(Location {
            mapping_index: mapping,
            address: addr,
            lines,
            attribute_indices: vec![ty],
        });
        self.0.location_table.len() as i32 - 1
    }

    fn stack(&mut self, leaf_first: &[i32]) -> i32 {
        self.0.stack_table.push(Stack {
            location_indices: leaf_first.to_vec(),
        });
        self.0.stack_table.len() as i32 - 1
    }

    fn value_type(&mut self, kind: &str, unit: &str) -> Option<ValueType> {
        Some(ValueType {
            type_strindex: self.string(kind),
            unit_strindex: self.string(unit),
        })
    }
}

fn request(
    dict: Dict,
    resource: Vec<KeyValue>,
    profiles: Vec<Profile>,
) -> ExportProfilesServiceRequest {
    ExportProfilesServiceRequest {
        resource_profiles: vec![ResourceProfiles {
            resource: Some(Resource {
                attributes: resource,
                ..Resource::default()
            }),
            scope_profiles: vec![ScopeProfiles {
                profiles,
                ..ScopeProfiles::default()
            }],
            ..ResourceProfiles::default()
        }],
        dictionary: Some(dict.0),
    }
}

fn kv(key: &str, value: &str) -> KeyValue {
    KeyValue {
        key: key.to_owned(),
        value: text(value),
        key_strindex: 0,
    }
}

/// An on-CPU profile at 20 Hz (50 ms a sample), as the eBPF profiler sends it.
fn on_cpu(dict: &mut Dict, samples: Vec<Sample>) -> Profile {
    Profile {
        sample_type: dict.value_type("samples", "count"),
        period_type: dict.value_type("cpu", "nanoseconds"),
        period: 50_000_000,
        time_unix_nano: T * NS,
        samples,
        ..Profile::default()
    }
}

fn stacks(batch: &Batch) -> Vec<(i64, &str, u64)> {
    batch
        .samples
        .iter()
        .map(|s| (s.time, s.stack.as_str(), s.value))
        .collect()
}

/// The eBPF profiler's shape: kernel, shared-object, executable and unsymbolized frames,
/// thread names per sample, timestamps only.
fn ebpf_request() -> ExportProfilesServiceRequest {
    let mut d = Dict::new();
    let libc = d.mapping("/usr/lib/x86_64-linux-gnu/libc.so.6");
    let exe = d.mapping("/usr/bin/redis-server");
    let main = d.location(&["main"], "native", exe, 0x1000);
    let read = d.location(&["__libc_read"], "native", libc, 0x2000);
    let sys = d.location(&["ksys_read"], "kernel", 0, 0xffff);
    let bare = d.location(&[], "native", libc, 0x1a2b);
    let s1 = d.stack(&[sys, read, main]);
    let s2 = d.stack(&[bare, main]);
    let (t1, t2) = (d.attr("thread.name", "io-1"), d.attr("thread.name", "main"));
    let tid = d.attr("thread.id", "7");
    let sample = |stack, thread, stamps: &[u64]| Sample {
        stack_index: stack,
        attribute_indices: vec![thread, tid],
        timestamps_unix_nano: stamps.to_vec(),
        ..Sample::default()
    };
    let profile = on_cpu(
        &mut d,
        vec![
            sample(s1, t1, &[T * NS, T * NS + 5, (T + 1) * NS]),
            sample(s2, t2, &[T * NS + 9]),
        ],
    );
    let resource = vec![
        kv("process.executable.name", "redis-server"),
        kv("host.name", "node-a"),
        kv("k8s.pod.name", "redis-0"),
        kv("k8s.namespace.name", "cache"),
        kv("k8s.pod.labels.app", "redis"),
        kv("container.id", "abc"),
    ];
    request(d, resource, vec![profile])
}

#[test]
fn an_ebpf_profilers_request_lands_as_deepflow_stores_its_agents_samples() {
    let batches = to_batches(&ebpf_request(), 1, &LIMITS).expect("ok");
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(
        (b.meta.app_service.as_str(), b.meta.language.as_str()),
        ("redis-server", "eBPF")
    );
    assert_eq!(
        (b.meta.event_type.as_str(), b.meta.unit.as_str()),
        ("on-cpu", "microseconds")
    );
    assert_eq!(b.meta.tags.column("host"), Some("node-a"));
    assert_eq!(b.meta.tags.column("pod"), Some("redis-0"));
    assert_eq!(b.meta.tags.column("pod_ns"), Some("cache"));
    let open: Vec<_> = b.meta.tags.open().collect();
    assert_eq!(open, [(&"k8s.label.app".to_owned(), &"redis".to_owned())]);
    let t = T as i64;
    assert_eq!(
        stacks(b),
        [
            (t, "[t] io-1;main;[l] __libc_read;[k] ksys_read", 100_000),
            (t, "[t] main;main;[libc.so.6] +0x1a2b", 50_000),
            (t + 1, "[t] io-1;main;[l] __libc_read;[k] ksys_read", 50_000),
        ]
    );
}

#[test]
fn protobuf_bytes_decode_to_the_same_batches() {
    let bytes = ebpf_request().encode_to_vec();
    let budget = embers_model::budget::Budget::for_input(bytes.len(), usize::MAX);
    let decoded = decode(&bytes, Encoding::Protobuf, 1, LIMITS.stacks, &budget).expect("decode");
    assert_eq!(
        decoded,
        to_batches(&ebpf_request(), 1, &LIMITS).expect("ok")
    );
}

#[test]
fn off_cpu_values_are_nanoseconds_and_links_give_trace_and_span() {
    let mut d = Dict::new();
    let f = d.location(&["wait;for\nit"], "cpython", 0, 0);
    let s = d.stack(&[f]);
    d.0.link_table.push(Link {
        trace_id: (1..=16).collect(),
        span_id: vec![0xab; 8],
    });
    let profile = Profile {
        sample_type: d.value_type("off_cpu", "nanoseconds"),
        time_unix_nano: T * NS,
        samples: vec![
            Sample {
                stack_index: s,
                values: vec![1_500_000, 2_000_499],
                timestamps_unix_nano: vec![T * NS, T * NS + 1],
                link_index: 1,
                ..Sample::default()
            },
            Sample {
                stack_index: s,
                values: vec![400],
                ..Sample::default()
            },
        ],
        ..Profile::default()
    };
    let batches = to_batches(
        &request(d, vec![kv("service.name", "api")], vec![profile]),
        1,
        &LIMITS,
    )
    .expect("ok");
    // The linked sample and the other one differ in their tags: two batches. 400 ns round
    // to 0 µs, so the second batch has no rows and is not written.
    assert_eq!(batches.len(), 1);
    let b = &batches[0];
    assert_eq!(
        (b.meta.app_service.as_str(), b.meta.event_type.as_str()),
        ("api", "off-cpu")
    );
    assert_eq!(
        b.meta.tags.column("trace_id"),
        Some("0102030405060708090a0b0c0d0e0f10")
    );
    assert_eq!(b.meta.tags.column("span_name"), Some("abababababababab"));
    // 3,500,499 ns in one second round to 3,500 µs; `;` and the newline cannot split a frame.
    assert_eq!(stacks(b), [(T as i64, "wait:for\u{fffd}it", 3_500)]);
}

#[test]
fn inlined_lines_are_frames_caller_first_and_threads_name_unnamed_processes() {
    let mut d = Dict::new();
    let inl = d.location(&["inlined_leaf", "caller"], "native", 0, 0);
    let s = d.stack(&[inl]);
    let kworker = d.attr("thread.name", "kworker/0:1");
    let sample = Sample {
        stack_index: s,
        attribute_indices: vec![kworker],
        timestamps_unix_nano: vec![T * NS],
        ..Sample::default()
    };
    let profile = on_cpu(&mut d, vec![sample]);
    let batches = to_batches(&request(d, vec![], vec![profile]), 1, &LIMITS).expect("ok");
    assert_eq!(batches[0].meta.app_service, "kworker/0:1");
    assert_eq!(
        stacks(&batches[0]),
        [(T as i64, "[t] kworker/0:1;caller;inlined_leaf", 50_000)]
    );
}
