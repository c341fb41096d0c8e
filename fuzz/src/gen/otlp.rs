//! OTLP profiles requests from the fuzzer's bytes: small tables whose indices usually fit and
//! sometimes do not, strings from the vocabulary the decoder looks for (attribute keys, frame
//! types, sample types and units, shared-object names) or anything, zero entries first or not,
//! values and timestamps of every sign and size. Encoded with the generated prost types, so the
//! decoder's deep code (checks, naming, sums, budget) is reached on most inputs.

use arbitrary::Arbitrary;
use opentelemetry_proto::tonic::collector::profiles::v1development::ExportProfilesServiceRequest;
use opentelemetry_proto::tonic::common::v1::{
    any_value::Value, AnyValue, InstrumentationScope, KeyValue,
};
use opentelemetry_proto::tonic::profiles::v1development::{
    Function, KeyValueAndUnit, Line, Link, Location, Mapping, Profile, ProfilesDictionary,
    ResourceProfiles, Sample, ScopeProfiles, Stack, ValueType,
};
use opentelemetry_proto::tonic::resource::v1::Resource;

/// Strings the decoder gives a meaning to.
const WORDS: [&str; 34] = [
    "",
    "service.name",
    "process.executable.name",
    "process.executable.path",
    "thread.name",
    "profile.frame.type",
    "host.name",
    "k8s.pod.name",
    "k8s.pod.labels.app",
    "k8s.pod.annotations.a b",
    "process.environment_variable.HOME",
    "span.name",
    "is_ipv4",
    "trace_id",
    "kernel",
    "native",
    "cpython",
    "samples",
    "count",
    "cpu",
    "off_cpu",
    "nanoseconds",
    "ms",
    "events",
    "/usr/lib/libc.so.6",
    "redis-server",
    "unknown_service:java",
    "main",
    "a;b",
    "new\nline",
    "[t] x",
    "/",
    "k8s.label.",
    "ünï",
];

/// A string: a word, or any text.
#[derive(Arbitrary, Debug, Clone)]
pub enum Word {
    Known(u8),
    Any(String),
}

impl Word {
    fn text(&self) -> String {
        match self {
            Word::Known(i) => WORDS[usize::from(*i) % WORDS.len()].to_owned(),
            Word::Any(s) => s.clone(),
        }
    }
}

/// An attribute value.
#[derive(Arbitrary, Debug, Clone)]
pub enum Val {
    Str(Word),
    Index(i32),
    Int(i64),
    Bool(bool),
    /// Quarters: exact in decimal, so the JSON round trip compares equal (NaN never would,
    /// and prost-reflect writes some doubles with one digit too few).
    Double(i16),
    Array(Vec<Word>),
    Bytes(Vec<u8>),
    Absent,
}

impl Val {
    fn any(&self) -> Option<AnyValue> {
        let value = match self {
            Val::Str(w) => Value::StringValue(w.text()),
            Val::Index(i) => Value::StringValueStrindex(*i),
            Val::Int(i) => Value::IntValue(*i),
            Val::Bool(b) => Value::BoolValue(*b),
            Val::Double(q) => Value::DoubleValue(f64::from(*q) / 4.0),
            Val::Array(words) => {
                Value::ArrayValue(opentelemetry_proto::tonic::common::v1::ArrayValue {
                    values: words
                        .iter()
                        .map(|w| AnyValue {
                            value: Some(Value::StringValue(w.text())),
                        })
                        .collect(),
                })
            }
            Val::Bytes(b) => Value::BytesValue(b.clone()),
            Val::Absent => return None,
        };
        Some(AnyValue { value: Some(value) })
    }
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Attr {
    key: u8,
    value: Val,
    unit: u8,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Loc {
    mapping: u8,
    address: u64,
    functions: Vec<u8>,
    attrs: Vec<u8>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Samp {
    stack: u8,
    attrs: Vec<u8>,
    link: u8,
    values: Vec<i64>,
    /// Seconds after 1,700,000,000 (small: rows repeat), or raw nanoseconds.
    stamps: Vec<Result<u8, u64>>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Prof {
    sample_type: Option<(u8, u8)>,
    period_type: Option<(u8, u8)>,
    period: i64,
    time: u64,
    attrs: Vec<u8>,
    samples: Vec<Samp>,
}

#[derive(Arbitrary, Debug, Clone)]
pub struct Res {
    attrs: Vec<(Word, Val, Option<i32>)>,
    scope_attrs: Vec<(Word, Val)>,
    profiles: Vec<Prof>,
}

/// A whole request.
#[derive(Arbitrary, Debug, Clone)]
pub struct Request {
    /// Whether the tables start with their zero entries, as they must.
    zeros: bool,
    strings: Vec<Word>,
    functions: Vec<(u8, u8, u8)>,
    mappings: Vec<u8>,
    locations: Vec<Loc>,
    stacks: Vec<Vec<u8>>,
    attrs: Vec<Attr>,
    links: Vec<(Vec<u8>, Vec<u8>)>,
    resources: Vec<Res>,
}

fn i(v: u8) -> i32 {
    i32::from(v)
}

fn vt(pair: Option<(u8, u8)>) -> Option<ValueType> {
    pair.map(|(t, u)| ValueType {
        type_strindex: i(t),
        unit_strindex: i(u),
    })
}

impl Request {
    /// The request as the generated types hold it.
    pub fn build(&self) -> ExportProfilesServiceRequest {
        let z = usize::from(self.zeros);
        let mut strings: Vec<String> = WORDS.iter().map(|w| (*w).to_owned()).collect();
        strings.extend(self.strings.iter().map(Word::text));
        if !self.zeros {
            strings.rotate_left(1);
        }
        let d = ProfilesDictionary {
            string_table: strings,
            function_table: zeros(
                z,
                self.functions.iter().map(|&(n, s, f)| Function {
                    name_strindex: i(n),
                    system_name_strindex: i(s),
                    filename_strindex: i(f),
                    start_line: 0,
                }),
            ),
            mapping_table: zeros(
                z,
                self.mappings.iter().map(|&f| Mapping {
                    filename_strindex: i(f),
                    ..Mapping::default()
                }),
            ),
            location_table: zeros(
                z,
                self.locations.iter().map(|l| Location {
                    mapping_index: i(l.mapping),
                    address: l.address,
                    lines: l
                        .functions
                        .iter()
                        .map(|&f| Line {
                            function_index: i(f),
                            line: 1,
                            column: 0,
                        })
                        .collect(),
                    attribute_indices: l.attrs.iter().map(|&a| i(a)).collect(),
                }),
            ),
            stack_table: zeros(
                z,
                self.stacks.iter().map(|s| Stack {
                    location_indices: s.iter().map(|&l| i(l)).collect(),
                }),
            ),
            attribute_table: zeros(
                z,
                self.attrs.iter().map(|a| KeyValueAndUnit {
                    key_strindex: i(a.key),
                    value: a.value.any(),
                    unit_strindex: i(a.unit),
                }),
            ),
            link_table: zeros(
                z,
                self.links.iter().map(|(t, s)| Link {
                    trace_id: t.clone(),
                    span_id: s.clone(),
                }),
            ),
        };
        ExportProfilesServiceRequest {
            resource_profiles: self.resources.iter().map(Res::build).collect(),
            dictionary: Some(d),
        }
    }
}

/// A table from `items`, after a zero entry when `z` is 1.
fn zeros<T: Default>(z: usize, items: impl Iterator<Item = T>) -> Vec<T> {
    (0..z).map(|_| T::default()).chain(items).collect()
}

impl Res {
    fn build(&self) -> ResourceProfiles {
        let attributes = self
            .attrs
            .iter()
            .map(|(k, v, index)| KeyValue {
                key: if index.is_some() {
                    String::new()
                } else {
                    k.text()
                },
                value: v.any(),
                key_strindex: index.unwrap_or(0),
            })
            .collect();
        let scope_attrs = self
            .scope_attrs
            .iter()
            .map(|(k, v)| KeyValue {
                key: k.text(),
                value: v.any(),
                key_strindex: 0,
            })
            .collect();
        ResourceProfiles {
            resource: Some(Resource {
                attributes,
                ..Resource::default()
            }),
            scope_profiles: vec![ScopeProfiles {
                scope: Some(InstrumentationScope {
                    attributes: scope_attrs,
                    ..InstrumentationScope::default()
                }),
                profiles: self.profiles.iter().map(Prof::build).collect(),
                ..ScopeProfiles::default()
            }],
            ..ResourceProfiles::default()
        }
    }
}

impl Prof {
    fn build(&self) -> Profile {
        Profile {
            sample_type: vt(self.sample_type),
            period_type: vt(self.period_type),
            period: self.period,
            time_unix_nano: self.time,
            attribute_indices: self.attrs.iter().map(|&a| i(a)).collect(),
            samples: self.samples.iter().map(Samp::build).collect(),
            ..Profile::default()
        }
    }
}

impl Samp {
    fn build(&self) -> Sample {
        Sample {
            stack_index: i(self.stack),
            attribute_indices: self.attrs.iter().map(|&a| i(a)).collect(),
            link_index: i(self.link),
            values: self.values.clone(),
            timestamps_unix_nano: self
                .stamps
                .iter()
                .map(|s| match s {
                    Ok(second) => (1_700_000_000 + u64::from(*second)) * 1_000_000_000,
                    Err(raw) => *raw,
                })
                .collect(),
        }
    }
}
