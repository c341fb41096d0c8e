//! Every refusal names its field: indices out of range, zero entries, ids, values, sample
//! types, stack limits, the previous layout, the text budget.

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue};
use opentelemetry_proto::tonic::profiles::v1development::{Link, Profile, Sample};
use prost::Message;

use super::*;

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

#[test]
fn every_batch_key_made_counts_against_the_budget() {
    // 1,000 label tags on the resource and 5,000 one-sample profiles: each profile's batch is
    // the same, but making its key costs the ~30 KB of tags again, 150 MB in all.
    let mut d = Dict::new();
    let l = d.location(&["main"], "native", 0, 0);
    let s = d.stack(&[l]);
    let profiles: Vec<Profile> = (0..5_000)
        .map(|_| {
            let sample = Sample {
                stack_index: s,
                timestamps_unix_nano: vec![T * NS],
                ..Sample::default()
            };
            on_cpu(&mut d, vec![sample])
        })
        .collect();
    let labels: Vec<_> = (0..1_000)
        .map(|i| kv(&format!("k8s.pod.labels.label-{i}"), "value"))
        .collect();
    let r = request(d, labels, profiles);
    let e = to_batches(&r, 1, &LIMITS).expect_err("expands");
    assert_eq!(e, OtlpError::Expands { limit: 1 << 20 });
}
