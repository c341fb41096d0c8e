//! pprof in and out, on profiles a real Go program wrote with `runtime/pprof`
//! (`server/tests/data/go/hot`): the shares Embers computes must be the ones `go tool pprof
//! -top` printed for the same files (`tests/data/pprof/*.top.txt`), and what Embers writes must
//! read back to the same tree. Bad profiles are refused with a message naming the field.

use std::io::Read;

use embers_model::budget::Budget;
use embers_model::contract::event::Quantity;
use embers_model::export::folded::to_folded;
use embers_model::export::pprof::{to_pprof, PprofMeta};
use embers_model::tree::table::NodeTable;
use embers_model::wire::pprof::fold::{fold, max_nodes};
use embers_model::wire::pprof::sample_types::{choose, primary, Cumulative, Scale};
use embers_model::wire::pprof::stacks::{stacks, StackBounds};
use embers_model::wire::pprof::{decode, Pprof, PprofError};
use embers_model::wire::protobuf::{put_bytes, put_packed, put_uint};
use embers_model::Profile;

fn data(name: &str) -> Vec<u8> {
    let path = embers_model::testkit::data_dir().join("pprof").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(bytes)
        .read_to_end(&mut out)
        .expect("gzip");
    out
}

/// `(flat, cum)` percentages `go tool pprof -top` printed for `function`.
fn top_percent(top: &str, function: &str) -> (f64, f64) {
    top.lines()
        .find_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            (cols.len() >= 6 && cols[5] == function).then(|| {
                let pct = |s: &str| s.trim_end_matches('%').parse::<f64>().expect("percent");
                (pct(cols[1]), pct(cols[4]))
            })
        })
        .unwrap_or_else(|| panic!("{function} not in the top output"))
}

/// `(self, total)` of `function` over the whole tree (no recursion in these programs).
fn function_values(p: &Profile, function: &str) -> (u64, u64) {
    p.nodes()
        .filter(|&n| p.name(n) == function)
        .fold((0, 0), |(s, t), n| (s + p.self_value(n), t + p.total(n)))
}

fn tree(p: &Pprof<'_>, root: &str, index: usize) -> Profile {
    Profile::from_table(fold(p, root, index).expect("fold"))
}

#[test]
fn a_go_cpu_profile_has_the_shares_go_tool_pprof_reports() {
    let bytes = gunzip(&data("go-cpu.pb.gz"));
    let p = decode(&bytes).expect("decode");
    let choices = choose(&p);
    assert_eq!(
        choices.len(),
        1,
        "samples/count only, as Pyroscope: {choices:?}"
    );
    assert_eq!(
        (choices[0].event_type.as_str(), choices[0].unit.as_str()),
        ("cpu", "samples")
    );
    let t = tree(&p, "hot", choices[0].index);
    let top = String::from_utf8(data("go-cpu.top.txt")).expect("utf8");
    for function in ["main.hotLoop", "main.warmLoop", "runtime.main"] {
        let (flat, cum) = top_percent(&top, function);
        let (s, total) = function_values(&t, function);
        let share = |v: u64| v as f64 * 100.0 / t.root_total() as f64;
        assert!((share(s) - flat).abs() < 0.01, "{function} flat");
        assert!((share(total) - cum).abs() < 0.01, "{function} cum");
    }
}

#[test]
fn a_go_heap_profile_gives_its_four_sample_types_deepflow_names() {
    let bytes = gunzip(&data("go-heap.pb.gz"));
    let p = decode(&bytes).expect("decode");
    let choices = choose(&p);
    let names: Vec<(&str, &str, Cumulative)> = choices
        .iter()
        .map(|c| (c.event_type.as_str(), c.unit.as_str(), c.cumulative))
        .collect();
    assert_eq!(
        names,
        [
            ("alloc_objects", "objects", Cumulative::ByDefault),
            ("alloc_space", "bytes", Cumulative::ByDefault),
            ("inuse_objects", "objects", Cumulative::No),
            ("inuse_space", "bytes", Cumulative::No),
        ]
    );
    assert_eq!(
        primary(&p, &choices).map(|c| c.event_type.as_str()),
        Some("inuse_space")
    );
    let t = tree(&p, "hot", choices[1].index);
    let top = String::from_utf8(data("go-heap.alloc_space.top.txt")).expect("utf8");
    let (_, cum) = top_percent(&top, "main.main");
    let share = function_values(&t, "main.main").1 as f64 * 100.0 / t.root_total() as f64;
    assert!((share - cum).abs() < 0.01, "{share} vs {cum}");
}

#[test]
fn embers_pprof_reads_back_to_the_same_tree_and_root() {
    let bytes = gunzip(&data("go-cpu.pb.gz"));
    let p = decode(&bytes).expect("decode");
    let original = tree(&p, "hot", 0);
    let meta = PprofMeta {
        event_type: "cpu",
        quantity: Quantity::Samples,
        time_nanos: 1_700_000_000_000_000_000,
        duration_nanos: 10_000_000_000,
    };
    let written = to_pprof(&original, &meta);
    let back = decode(&written).expect("our own pprof");
    assert_eq!(back.root_name(), Some("hot"));
    assert_eq!(back.sample_type_name(0), "cpu/count");
    assert_eq!(back.time_nanos, meta.time_nanos);
    let again = tree(&back, back.root_name().unwrap_or("x"), 0);
    assert_eq!(to_folded(&again), to_folded(&original));
    let choice = &choose(&back);
    assert_eq!(choice.len(), 1);
    assert_eq!(
        (choice[0].event_type.as_str(), choice[0].unit.as_str()),
        ("cpu", "samples")
    );
    let on_cpu = PprofMeta {
        event_type: "on-cpu",
        quantity: Quantity::Microseconds,
        ..meta
    };
    let ebpf = to_pprof(&original, &on_cpu);
    let choice = &choose(&decode(&ebpf).expect("decode"))[0];
    assert_eq!(
        (choice.event_type.as_str(), choice.unit.as_str()),
        ("on-cpu", "microseconds")
    );
    assert_eq!(choice.scale, Scale::AsSent);
}

/// A small profile: sample types, samples `(location ids, values)`, locations
/// `(id, function id)`, functions `(id, name string)` and the string table.
fn profile(
    types: &[(u64, u64)],
    samples: &[(&[u64], &[u64])],
    locations: &[(u64, u64)],
    functions: &[(u64, u64)],
    strings: &[&str],
) -> Vec<u8> {
    let (mut out, mut m, mut s, mut scratch) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for &(t, u) in types {
        m.clear();
        put_uint(&mut m, 1, t);
        put_uint(&mut m, 2, u);
        put_bytes(&mut out, 1, &m);
    }
    for (locs, values) in samples {
        m.clear();
        put_packed(&mut m, 1, locs, &mut scratch);
        put_packed(&mut m, 2, values, &mut scratch);
        put_bytes(&mut out, 2, &m);
    }
    for &(id, function) in locations {
        m.clear();
        put_uint(&mut m, 1, id);
        s.clear();
        put_uint(&mut s, 1, function);
        put_bytes(&mut m, 4, &s);
        put_bytes(&mut out, 4, &m);
    }
    for &(id, name) in functions {
        m.clear();
        put_uint(&mut m, 1, id);
        put_uint(&mut m, 2, name);
        put_bytes(&mut out, 5, &m);
    }
    for text in strings {
        put_bytes(&mut out, 6, text.as_bytes());
    }
    out
}

const STRINGS: &[&str] = &["", "cpu", "nanoseconds", "main", "work"];

fn err(bytes: &[u8]) -> String {
    match decode(bytes) {
        Ok(p) => fold(&p, "app", 0)
            .map(|_| ())
            .expect_err("must fail")
            .to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_profiles_are_refused_naming_the_problem() {
    let ok = profile(
        &[(1, 2)],
        &[(&[2, 1], &[30])],
        &[(1, 1), (2, 2)],
        &[(1, 3), (2, 4)],
        STRINGS,
    );
    let p = decode(&ok).expect("decode");
    let t: NodeTable = fold(&p, "app", 0).expect("fold");
    let bounds = StackBounds {
        max_frames: 2,
        max_frame_bytes: 4,
    };
    // "main;work" (9 bytes) and the memory every stack costs besides its text (64).
    let fits = Budget::with_limit(9 + 64);
    assert_eq!(
        stacks(&t, &bounds, &fits),
        Ok(vec![("main;work".to_owned(), 30)])
    );
    let over = stacks(&t, &bounds, &Budget::with_limit(8 + 64)).expect_err("over");
    assert!(
        matches!(&over, PprofError::OverBudget(e) if e.what == "stack text" && e.limit == 72),
        "{over}"
    );
    for (bounds, message) in [
        (
            StackBounds {
                max_frames: 1,
                ..bounds
            },
            "a stack has 2 frames, over the limit of 1 frames per stack (--max-stack-frames)",
        ),
        (
            StackBounds {
                max_frame_bytes: 3,
                ..bounds
            },
            "a frame is 4 bytes long, over the limit of 3 bytes per frame (--max-frame-bytes)",
        ),
    ] {
        let e = stacks(&t, &bounds, &Budget::unlimited()).expect_err(message);
        assert_eq!(e.to_string(), message);
    }
    let c = &choose(&p)[0];
    assert_eq!(
        (c.event_type.as_str(), c.scale),
        ("on-cpu", Scale::Ratio { mul: 1, div: 1000 })
    );
    assert!(c.ebpf);

    let cases: [(Vec<u8>, &str); 7] = [
        (
            profile(&[(1, 9)], &[], &[], &[], STRINGS),
            "sample_type[0].unit refers to string 9, but string_table has 5 entries",
        ),
        (
            profile(&[(1, 2)], &[(&[7], &[1])], &[(1, 1)], &[(1, 3)], STRINGS),
            "sample 1 location_id refers to location id 7, which the profile does not define",
        ),
        (
            profile(&[(1, 2)], &[(&[1], &[1])], &[(1, 5)], &[(1, 3)], STRINGS),
            "location 1 line function_id refers to function id 5, which the profile does not define",
        ),
        (
            profile(&[(1, 2)], &[(&[1], &[1, 2])], &[(1, 1)], &[(1, 3)], STRINGS),
            "sample 1 has 2 values but the profile has 1 sample types",
        ),
        (
            profile(&[(1, 2)], &[(&[1], &[(-5i64) as u64])], &[(1, 1)], &[(1, 3)], STRINGS),
            "sample 1 has the negative value -5 for cpu/nanoseconds",
        ),
        (
            profile(&[(1, 2)], &[(&[1], &[i64::MAX as u64]), (&[1], &[1])], &[(1, 1)], &[(1, 3)], STRINGS),
            "the values of cpu/nanoseconds add up to more than 9223372036854775807",
        ),
        (
            profile(&[(1, 2)], &[], &[(1, 1), (1, 1)], &[(1, 3)], STRINGS),
            "location id 1 is defined twice",
        ),
    ];
    for (bytes, message) in cases {
        assert_eq!(err(&bytes), message);
    }
    assert_eq!(err(&[0x1f, 0x8b, 8]), PprofError::Gzipped.to_string());
    assert_eq!(
        err(&[0x0a, 0x05, 0x08]),
        "not a pprof profile (profile.proto): the message ends inside a field at byte 0"
    );
    assert_eq!(
        err(&profile(&[], &[], &[], &[], STRINGS)),
        "the profile has no sample_type"
    );
}

#[test]
fn a_folding_bomb_is_refused() {
    // One location of 2,000 inlined lines, repeated 100 times in each sample, under a
    // different root location per sample: a few kilobytes that would fold into ~10M nodes.
    let (mut lines, mut s) = (Vec::new(), Vec::new());
    for _ in 0..2000 {
        s.clear();
        put_uint(&mut s, 1, 1);
        put_bytes(&mut lines, 4, &s);
    }
    let mut bomb = profile(&[(1, 2)], &[], &[], &[(1, 3)], STRINGS);
    let mut loc = Vec::new();
    put_uint(&mut loc, 1, 1);
    loc.extend_from_slice(&lines);
    put_bytes(&mut bomb, 4, &loc);
    for root in 2..60u64 {
        loc.clear();
        put_uint(&mut loc, 1, root);
        s.clear();
        put_uint(&mut s, 1, 1);
        put_bytes(&mut loc, 4, &s);
        put_bytes(&mut bomb, 4, &loc);
        let mut ids = vec![1u64; 100];
        ids.push(root);
        let (mut m, mut scratch) = (Vec::new(), Vec::new());
        put_packed(&mut m, 1, &ids, &mut scratch);
        put_packed(&mut m, 2, &[1], &mut scratch);
        put_bytes(&mut bomb, 2, &m);
    }
    assert!(bomb.len() < 40_000, "{}", bomb.len());
    let limit = max_nodes(bomb.len());
    assert_eq!(err(&bomb), PprofError::TooManyNodes(limit).to_string());
}

#[test]
fn a_read_profile_says_how_many_samples_its_values_are() {
    use embers_model::wire::pprof::read_profile;
    // Go's CPU profile counts samples (`samples/count`): its values are the samples.
    let cpu = read_profile(&gunzip(&data("go-cpu.pb.gz")), "hot").expect("cpu");
    assert_eq!(cpu.samples, Some(cpu.profile.root_total()));
    assert!(cpu.samples.is_some_and(|n| n > 50), "{:?}", cpu.samples);
    // Embers' own export has no sample count and no period in the values' unit: unknown.
    let exported = to_pprof(
        &cpu.profile,
        &PprofMeta {
            event_type: "on-cpu",
            quantity: Quantity::Microseconds,
            time_nanos: 0,
            duration_nanos: 0,
        },
    );
    assert_eq!(
        read_profile(&exported, "hot").expect("export").samples,
        None
    );
}
