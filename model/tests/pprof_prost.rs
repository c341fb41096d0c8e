//! The hand-written pprof reader held to `prost`, the crate it was measured against
//! (`model/src/wire/pprof/README.md`): both read the same bytes — a real Go CPU and heap
//! profile, Embers' own export of a large synthetic profile, and corrupted copies of them — and
//! must agree on every table, or both refuse.
//!
//! `cargo test -p embers-model --release --test pprof_prost -- --ignored --nocapture` also
//! prints the decode times the README quotes.

use std::io::Read;
use std::time::Instant;

use embers_model::contract::event::Quantity;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::wire::pprof::fold::fold;
use embers_model::wire::pprof::{decode, Pprof};
use prost::Message;

/// `profile.proto`'s messages, as far as the reader reads them.
mod proto {
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Profile {
        #[prost(message, repeated, tag = "1")]
        pub sample_type: Vec<ValueType>,
        #[prost(message, repeated, tag = "2")]
        pub sample: Vec<Sample>,
        #[prost(message, repeated, tag = "3")]
        pub mapping: Vec<Mapping>,
        #[prost(message, repeated, tag = "4")]
        pub location: Vec<Location>,
        #[prost(message, repeated, tag = "5")]
        pub function: Vec<Function>,
        #[prost(string, repeated, tag = "6")]
        pub string_table: Vec<String>,
        #[prost(int64, tag = "9")]
        pub time_nanos: i64,
        #[prost(int64, tag = "10")]
        pub duration_nanos: i64,
        #[prost(int64, tag = "12")]
        pub period: i64,
        #[prost(int64, tag = "14")]
        pub default_sample_type: i64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct ValueType {
        #[prost(int64, tag = "1")]
        pub r#type: i64,
        #[prost(int64, tag = "2")]
        pub unit: i64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Sample {
        #[prost(uint64, repeated, tag = "1")]
        pub location_id: Vec<u64>,
        #[prost(int64, repeated, tag = "2")]
        pub value: Vec<i64>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Mapping {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub memory_start: u64,
        #[prost(uint64, tag = "4")]
        pub file_offset: u64,
        #[prost(int64, tag = "5")]
        pub filename: i64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Location {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(uint64, tag = "2")]
        pub mapping_id: u64,
        #[prost(uint64, tag = "3")]
        pub address: u64,
        #[prost(message, repeated, tag = "4")]
        pub line: Vec<Line>,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Line {
        #[prost(uint64, tag = "1")]
        pub function_id: u64,
    }
    #[derive(Clone, PartialEq, prost::Message)]
    pub struct Function {
        #[prost(uint64, tag = "1")]
        pub id: u64,
        #[prost(int64, tag = "2")]
        pub name: i64,
        #[prost(int64, tag = "3")]
        pub system_name: i64,
    }
}

fn data(name: &str) -> Vec<u8> {
    let path = embers_model::testkit::data_dir().join("pprof").join(name);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(&bytes[..])
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// A large profile as Embers writes it (the synthetic generator's tree).
fn synthetic(nodes: usize) -> Vec<u8> {
    let synth = SynthProfile::generate(SynthOptions {
        nodes,
        ..SynthOptions::default()
    });
    let profile = embers_model::decode_response(200, &synth.to_shape_b_json())
        .expect("synthetic answer")
        .profile;
    let meta = PprofMeta {
        event_type: "on-cpu",
        quantity: Quantity::Microseconds,
        time_nanos: 0,
        duration_nanos: 0,
    };
    to_pprof(&profile, &meta)
}

/// Asserts that the two readings agree on everything the hand-written one keeps.
fn same(ours: &Pprof<'_>, theirs: &proto::Profile) {
    assert_eq!(ours.strings, theirs.string_table);
    let types: Vec<(u64, u64)> = ours.sample_types.iter().map(|t| (t.kind, t.unit)).collect();
    let their_types: Vec<(u64, u64)> = theirs
        .sample_type
        .iter()
        .map(|t| (t.r#type as u64, t.unit as u64))
        .collect();
    assert_eq!(types, their_types);
    assert_eq!(ours.samples.len(), theirs.sample.len());
    let k = ours.sample_types.len();
    let mut ids = Vec::new();
    for (i, s) in theirs.sample.iter().enumerate() {
        ours.samples.location_ids(i, &mut ids).expect("ids");
        assert_eq!(ids, s.location_id, "sample {i}");
        assert_eq!(&ours.samples.values[i * k..(i + 1) * k], &s.value[..]);
    }
    assert_eq!(ours.locations.len(), theirs.location.len());
    for (l, t) in ours.locations.iter().zip(&theirs.location) {
        assert_eq!(
            (l.id, l.mapping_id, l.address),
            (t.id, t.mapping_id, t.address)
        );
        let lines: Vec<u64> = ours.lines[l.line_start as usize..l.line_end as usize]
            .iter()
            .map(|x| x.function_id)
            .collect();
        let theirs: Vec<u64> = t.line.iter().map(|x| x.function_id).collect();
        assert_eq!(lines, theirs);
    }
    let functions: Vec<(u64, u64, u64)> = ours
        .functions
        .iter()
        .map(|f| (f.id, f.name, f.system_name))
        .collect();
    let their_functions: Vec<(u64, u64, u64)> = theirs
        .function
        .iter()
        .map(|f| (f.id, f.name as u64, f.system_name as u64))
        .collect();
    assert_eq!(functions, their_functions);
    assert_eq!(
        (ours.time_nanos, ours.duration_nanos, ours.period),
        (theirs.time_nanos, theirs.duration_nanos, theirs.period)
    );
}

#[test]
fn both_readers_agree_on_real_and_written_profiles() {
    for bytes in [
        data("go-cpu.pb.gz"),
        data("go-heap.pb.gz"),
        synthetic(20_000),
    ] {
        let ours = decode(&bytes).expect("ours");
        let theirs = proto::Profile::decode(&bytes[..]).expect("prost");
        same(&ours, &theirs);
    }
}

/// Whether the hand-written reader refuses `bytes` (samples' location ids are read when folded).
fn ours_refuses(bytes: &[u8]) -> bool {
    decode(bytes)
        .and_then(|p| fold(&p, "app", 0).map(|_| ()))
        .is_err()
}

#[test]
fn both_readers_refuse_truncated_and_corrupted_bytes() {
    let bytes = data("go-heap.pb.gz");
    for cut in [1, 7, bytes.len() / 3, bytes.len() - 1] {
        let short = &bytes[..cut];
        // Cutting inside a field fails both; cutting between fields may leave a valid message
        // for prost that lacks ids ours checks for, so only "prost fails ⇒ ours fails" holds.
        if proto::Profile::decode(short).is_err() {
            assert!(ours_refuses(short), "cut at {cut}");
        }
    }
    for tail in [
        &[0x12, 0x7f][..],
        &[0x0f],
        &[
            0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
    ] {
        let bad = [&bytes[..], tail].concat();
        assert!(proto::Profile::decode(&bad[..]).is_err(), "prost {tail:?}");
        assert!(ours_refuses(&bad), "ours {tail:?}");
    }
}

/// Decode time of both readers on Embers' export of a 1M-node profile (the README's numbers).
#[test]
#[ignore = "a measurement: run with --release -- --ignored --nocapture"]
fn decode_speed() {
    let bytes = synthetic(1_000_000);
    let time = |f: &dyn Fn() -> usize| {
        let runs = 5;
        let started = Instant::now();
        let mut n = 0;
        for _ in 0..runs {
            n += f();
        }
        (started.elapsed().as_secs_f64() * 1000.0 / runs as f64, n)
    };
    let (ours, _) = time(&|| decode(&bytes).map(|p| p.samples.len()).unwrap_or(0));
    let (prost, _) = time(&|| {
        proto::Profile::decode(&bytes[..])
            .map(|p| p.sample.len())
            .unwrap_or(0)
    });
    println!(
        "pprof decode, {} bytes: hand-written {ours:.1} ms, prost {prost:.1} ms",
        bytes.len()
    );
}
