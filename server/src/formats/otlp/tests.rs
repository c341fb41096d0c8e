//! Requests built with the generated types, as the OpenTelemetry eBPF profiler shapes them,
//! through [`to_batches`]; and every refusal naming its field.

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
    let decoded = decode(&bytes, Encoding::Protobuf, 1, &LIMITS).expect("decode");
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

/// Refusals of a request changed by `edit`, by their message.
fn refusal(edit: impl FnOnce(&mut ExportProfilesServiceRequest)) -> String {
    let mut r = ebpf_request();
    edit(&mut r);
    to_batches(&r, 1, &LIMITS).expect_err("refused").to_string()
}

fn first_profile(r: &mut ExportProfilesServiceRequest) -> &mut Profile {
    &mut r.resource_profiles[0].scope_profiles[0].profiles[0]
}

const P: &str = "resource_profiles[0].scope_profiles[0].profiles[0]";

#[test]
fn indices_out_of_range_are_named_with_their_table() {
    let e = refusal(|r| first_profile(r).samples[1].stack_index = 99);
    assert!(
        e.starts_with(&format!(
            "{P}.samples[1].stack_index: index 99 is out of range: dictionary.stack_table has 3 \
             entries (read as opentelemetry-proto v1.11.0"
        )),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).samples[0].attribute_indices.push(-1));
    assert!(
        e.starts_with(&format!("{P}.samples[0].attribute_indices[2]: index -1")),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).samples[0].link_index = 1);
    assert!(
        e.starts_with(&format!("{P}.samples[0].link_index: index 1 is out")),
        "{e}"
    );
    let e =
        refusal(|r| r.dictionary.as_mut().unwrap().location_table[1].lines[0].function_index = 50);
    assert!(
        e.starts_with("dictionary.location_table[1].lines[0].function_index: index 50"),
        "{e}"
    );
    let e = refusal(|r| r.dictionary.as_mut().unwrap().function_table[1].name_strindex = 500);
    assert!(e.starts_with("dictionary.function_table[1].name_strindex: index 500 is out of range: dictionary.string_table has"), "{e}");
    let e = refusal(|r| r.dictionary.as_mut().unwrap().stack_table[1].location_indices[0] = 9);
    assert!(
        e.starts_with("dictionary.stack_table[1].location_indices[0]: index 9"),
        "{e}"
    );
    let e = refusal(|r| r.dictionary.as_mut().unwrap().mapping_table[1].filename_strindex = 77);
    assert!(
        e.starts_with("dictionary.mapping_table[1].filename_strindex: index 77"),
        "{e}"
    );
    let e = refusal(|r| r.dictionary.as_mut().unwrap().location_table[2].mapping_index = 3);
    assert!(
        e.starts_with("dictionary.location_table[2].mapping_index: index 3"),
        "{e}"
    );
    let e = refusal(|r| {
        r.resource_profiles[0].resource.as_mut().unwrap().attributes[0].key_strindex = 1000
    });
    assert!(
        e.starts_with("resource_profiles[0].resource.attributes[0].key_strindex: index 1000"),
        "{e}"
    );
    let e = refusal(|r| {
        r.dictionary.as_mut().unwrap().attribute_table[1].value = Some(AnyValue {
            value: Some(Value::StringValueStrindex(4000)),
        })
    });
    assert!(
        e.starts_with("dictionary.attribute_table[1].value.string_value_strindex: index 4000"),
        "{e}"
    );
}

#[test]
fn zero_entries_ids_and_values_are_checked() {
    let e = refusal(|r| r.dictionary.as_mut().unwrap().string_table[0] = "x".into());
    assert!(
        e.starts_with("dictionary.string_table[0]: must be the empty string"),
        "{e}"
    );
    let e = refusal(|r| r.dictionary.as_mut().unwrap().stack_table[0].location_indices = vec![1]);
    assert!(
        e.starts_with("dictionary.stack_table[0]: must be the empty Stack{}"),
        "{e}"
    );
    let e = refusal(|r| {
        r.dictionary.as_mut().unwrap().link_table.push(Link {
            trace_id: vec![1; 5],
            span_id: vec![],
        })
    });
    assert_eq!(
        e,
        "dictionary.link_table[1].trace_id: has 5 bytes; it must have 16 (or none)"
    );
    let e = refusal(|r| {
        let s = &mut first_profile(r).samples[0];
        s.values = vec![1, -2, 3];
    });
    assert_eq!(e, format!("{P}.samples[0].values[1]: -2 is negative"));
    let e = refusal(|r| first_profile(r).samples[0].values = vec![1, 2]);
    assert!(
        e.starts_with(&format!(
            "{P}.samples[0]: has 2 values and 3 timestamps_unix_nano"
        )),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).samples[0].timestamps_unix_nano.clear());
    assert!(
        e.starts_with(&format!("{P}.samples[0]: has neither values nor")),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).samples[1].timestamps_unix_nano = vec![5]);
    assert_eq!(
        e,
        format!("{P}.samples[1].timestamps_unix_nano[0]: 5 is not a time (nanoseconds since 1970)")
    );
    let e = refusal(|r| {
        let p = first_profile(r);
        p.period = i64::MAX;
        p.samples[0].values = vec![i64::MAX, i64::MAX, i64::MAX];
        p.sample_type.as_mut().unwrap().type_strindex = p.period_type.unwrap().type_strindex;
    });
    assert!(e.contains("more than"), "{e}");
}

#[test]
fn sample_types_other_than_cpu_time_are_refused_by_name() {
    let e = refusal(|r| {
        let d = r.dictionary.as_mut().unwrap();
        d.string_table.push("events".into());
        let i = d.string_table.len() as i32 - 1;
        first_profile(r).sample_type.as_mut().unwrap().type_strindex = i;
    });
    assert!(
        e.starts_with(&format!(
            "{P}.sample_type: events/count is not a sample type Embers stores"
        )),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).period = 0);
    assert!(
        e.starts_with(&format!("{P}.period: is 0 for sample type samples/count")),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).period_type = None);
    assert!(
        e.starts_with(&format!("{P}.period_type: is missing")),
        "{e}"
    );
    let e = refusal(|r| first_profile(r).sample_type = None);
    assert!(
        e.starts_with(&format!("{P}.sample_type: is missing")),
        "{e}"
    );
}

#[test]
fn stacks_over_the_limits_are_refused() {
    let tight = Bounds {
        stacks: StackLimits {
            max_frames: 3,
            max_frame_bytes: 256,
        },
        ..LIMITS
    };
    let e = to_batches(&ebpf_request(), 1, &tight)
        .expect_err("deep")
        .to_string();
    assert!(
        e.starts_with("dictionary.stack_table[1]: the stack has 4 frames, over the limit of 3"),
        "{e}"
    );
}

/// `Sample` as v1.9.0 and earlier laid it out: values 2, attribute_indices 3, link_index 4.
#[derive(Clone, PartialEq, prost::Message)]
struct OldSample {
    #[prost(int32, tag = "1")]
    stack_index: i32,
    #[prost(int64, repeated, tag = "2")]
    values: Vec<i64>,
    #[prost(int32, repeated, tag = "3")]
    attribute_indices: Vec<i32>,
    #[prost(int32, tag = "4")]
    link_index: i32,
    #[prost(fixed64, repeated, tag = "5")]
    timestamps_unix_nano: Vec<u64>,
}

#[test]
fn samples_of_the_previous_layout_are_refused_not_misread() {
    // With attributes, v1.9's packed attribute_indices land on v1.11's link_index (a varint):
    // the protobuf itself does not decode.
    let old = OldSample {
        stack_index: 1,
        values: vec![123_456_789],
        attribute_indices: vec![1, 2],
        link_index: 0,
        timestamps_unix_nano: vec![T * NS],
    };
    let e = Sample::decode(old.encode_to_vec().as_slice()).expect_err("wire type");
    assert!(
        e.to_string()
            .contains("Sample.link_index: invalid wire type"),
        "{e}"
    );
    // Without them, the value (an off-CPU time in nanoseconds) reads as an attribute index.
    let old = OldSample {
        attribute_indices: vec![],
        ..old
    };
    let sample = Sample::decode(old.encode_to_vec().as_slice()).expect("decodes");
    let mut r = ebpf_request();
    first_profile(&mut r).samples = vec![sample];
    let e = to_batches(&r, 1, &LIMITS).expect_err("misread").to_string();
    assert!(
        e.starts_with(&format!(
            "{P}.samples[0].attribute_indices[0]: index 123456789 is out of range"
        )),
        "{e}"
    );
}

#[test]
fn a_request_that_expands_past_its_text_budget_is_refused() {
    // One 200-byte name, 30 lines of it in one location, a stack of 60 such locations: a few
    // hundred bytes of protobuf that name 360 KB per row, and a row per second for 10 seconds.
    let mut d = Dict::new();
    let long = "f".repeat(200);
    let names: Vec<&str> = vec![long.as_str(); 30];
    let l = d.location(&names, "native", 0, 0);
    let s = d.stack(&[l; 60]);
    let stamps: Vec<u64> = (0..10).map(|i| (T + i) * NS).collect();
    let sample = Sample {
        stack_index: s,
        timestamps_unix_nano: stamps,
        ..Sample::default()
    };
    let profile = on_cpu(&mut d, vec![sample]);
    let r = request(d, vec![], vec![profile]);
    let wide = Bounds {
        stacks: StackLimits {
            max_frames: 4096,
            max_frame_bytes: 4096,
        },
        max_text: 1 << 20,
    };
    let e = to_batches(&r, 1, &wide).expect_err("expands");
    assert_eq!(e, OtlpError::Expands { limit: 1 << 20 });
    assert!(
        e.to_string()
            .contains("send the profiles in smaller requests"),
        "{e}"
    );
    let e = to_batches(&r, 1, &LIMITS).expect_err("deep").to_string();
    assert!(
        e.starts_with("dictionary.stack_table[1]: the stack has 90 frames, over the limit of 64"),
        "{e}"
    );
    // Within a large enough budget it is stored: 10 rows of 1,800 frames.
    let roomy = Bounds {
        max_text: 8 << 20,
        ..wide
    };
    let batches = to_batches(&r, 1, &roomy).expect("fits");
    assert_eq!(batches[0].samples.len(), 10);
    assert_eq!(batches[0].samples[0].stack.split(';').count(), 1800);
}
