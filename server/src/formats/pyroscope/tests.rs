use super::*;
use embers_model::budget::Budget;

const L: StackLimits = StackLimits {
    max_frames: 64,
    max_frame_bytes: 256,
};

fn q(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

#[test]
fn keys_parse_as_pyroscope_writes_them() {
    assert_eq!(
        parse_key("checkout.cpu{env=prod, region=eu}"),
        Some((
            "checkout.cpu".to_owned(),
            vec![
                ("env".to_owned(), "prod".to_owned()),
                ("region".to_owned(), "eu".to_owned())
            ]
        ))
    );
    assert_eq!(parse_key("plain"), Some(("plain".to_owned(), vec![])));
    assert_eq!(parse_key("app{}"), Some(("app".to_owned(), vec![])));
    assert_eq!(parse_key("app{env}"), None);
    assert_eq!(parse_key("app{a=b"), None);
    assert_eq!(parse_key("{a=b}"), None);
}

#[test]
fn params_map_spy_names_and_suffixes_and_refuse_nonsense() {
    let p = params(&q(&[
        ("name", "checkout.alloc_space{namespace=prod,env=x}"),
        ("from", "1700000000"),
        ("until", "1700000010"),
        ("spyName", "gospy"),
        ("aggregrationType", "sum"),
        ("sampleRate", "100"),
    ]))
    .expect("params");
    assert_eq!(p.app, "checkout");
    assert_eq!(p.suffix_event.as_deref(), Some("alloc_space"));
    assert_eq!(p.language.as_deref(), Some("Golang"));
    assert_eq!(p.time, Some(1_700_000_000));
    for from in [
        "1700000000",
        "1700000000123",
        "1700000000123456",
        "1700000000123456789",
    ] {
        let p = params(&q(&[("name", "a"), ("from", from)])).expect("params");
        assert_eq!(p.time, Some(1_700_000_000), "from={from}");
    }
    let unparsable = params(&q(&[("name", "we{ird"), ("spyName", "pyroscope-rs")])).expect("ok");
    assert_eq!(
        (unparsable.app.as_str(), unparsable.language.as_deref()),
        ("we{ird", Some("pyroscope-rs"))
    );
    for (query, message) in [
        (vec![("from", "1")], "name is required"),
        (
            vec![("name", "a"), ("from", "yesterday")],
            "from must be Unix time in seconds (or milliseconds, microseconds, nanoseconds), got 'yesterday'",
        ),
        (
            vec![("name", "a"), ("from", "9"), ("until", "8")],
            "from (9) is after until (8)",
        ),
        (
            vec![("name", "a"), ("units", "furlongs")],
            "units must be one of",
        ),
        (
            vec![("name", "a"), ("aggregationType", "max")],
            "aggregationType must be sum or average",
        ),
        (
            vec![("name", "a"), ("format", "speedscope")],
            "format=speedscope is not supported",
        ),
        (
            vec![("name", "a"), ("sampleRate", "0")],
            "sampleRate must be a positive integer",
        ),
    ] {
        let e = params(&q(&query)).expect_err(message).to_string();
        assert!(e.starts_with(message), "{e}");
    }
}

#[test]
fn folded_and_lines_bodies_store_as_sent_with_deepflow_units() {
    let p = params(&q(&[
        ("name", "web.cpu{host=h1}"),
        ("from", "100"),
        ("spyName", "pyspy"),
    ]))
    .expect("params");
    let out = batches(
        &p,
        Body::Raw(b"main;work 3\nmain 1\n"),
        &L,
        1 << 20,
        &Budget::unlimited(),
    )
    .expect("folded");
    let b = &out.batches[0];
    assert_eq!(
        (
            b.meta.app_service.as_str(),
            b.meta.language.as_str(),
            b.meta.event_type.as_str(),
            b.meta.unit.as_str()
        ),
        ("web", "python", "cpu", "samples")
    );
    assert_eq!(b.meta.tags.column("host"), Some("h1"));
    assert_eq!(b.meta.tags.column("app_instance"), Some("web"));
    assert_eq!((b.samples[0].time, b.samples[0].value), (100, 3));
    let p = params(&q(&[
        ("name", "web"),
        ("format", "lines"),
        ("spyName", "ebpfspy"),
        ("sampleRate", "99"),
    ]))
    .expect("params");
    let out = batches(
        &p,
        Body::Raw(b"a;b\na;b\nc\n"),
        &L,
        1 << 20,
        &Budget::unlimited(),
    )
    .expect("lines");
    let b = &out.batches[0];
    assert_eq!(
        (
            b.meta.language.as_str(),
            b.meta.event_type.as_str(),
            b.meta.unit.as_str()
        ),
        ("eBPF", "on-cpu", "microseconds")
    );
    let values: Vec<(&str, u64)> = b
        .samples
        .iter()
        .map(|s| (s.stack.as_str(), s.value))
        .collect();
    assert_eq!(values, [("a;b", 2 * 10101), ("c", 10101)]);
}

/// A pprof of alloc_space/bytes: one stack main;alloc with `value`.
fn alloc_profile(value: u64) -> Vec<u8> {
    use embers_model::wire::protobuf::{put_bytes, put_packed, put_uint};
    let (mut out, mut m, mut s, mut scratch) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    put_uint(&mut m, 1, 1);
    put_uint(&mut m, 2, 2);
    put_bytes(&mut out, 1, &m);
    m.clear();
    put_packed(&mut m, 1, &[2, 1], &mut scratch);
    put_packed(&mut m, 2, &[value], &mut scratch);
    put_bytes(&mut out, 2, &m);
    for (id, f) in [(1u64, 3u64), (2, 4)] {
        m.clear();
        put_uint(&mut m, 1, id);
        s.clear();
        put_uint(&mut s, 1, id);
        put_bytes(&mut m, 4, &s);
        put_bytes(&mut out, 4, &m);
        m.clear();
        put_uint(&mut m, 1, id);
        put_uint(&mut m, 2, f);
        put_bytes(&mut out, 5, &m);
    }
    for text in ["", "alloc_space", "bytes", "main", "alloc"] {
        put_bytes(&mut out, 6, text.as_bytes());
    }
    out
}

#[test]
fn multipart_cumulative_types_need_and_subtract_their_previous_profile() {
    let p = params(&q(&[("name", "web"), ("from", "5")])).expect("params");
    let (now, before) = (alloc_profile(1000), alloc_profile(600));
    let read = |previous, config| {
        let body = Body::Multipart {
            profile: &now,
            previous,
            config,
        };
        batches(&p, body, &L, 1 << 20, &Budget::unlimited())
    };
    let out = read(Some(&before[..]), None).expect("delta");
    let b = &out.batches[0];
    assert_eq!(
        (
            b.meta.event_type.as_str(),
            b.meta.unit.as_str(),
            b.meta.language.as_str()
        ),
        ("alloc_space", "bytes", "unknown")
    );
    assert_eq!(
        (b.samples[0].stack.as_str(), b.samples[0].value),
        ("main;alloc", 400)
    );
    let out = read(None, None).expect("no previous: the totals");
    assert_eq!(out.batches[0].samples[0].value, 1000);
    let config = br#"{"alloc_space": {"units": "bytes", "cumulative": true, "display-name": "alloc_space"}}"#;
    let e = read(None, Some(&config[..])).expect_err("declared");
    assert_eq!(e.to_string(), "alloc_space is cumulative (sample_type_config) but the request has no prev_profile to subtract");
    let e = read(None, Some(br#"{"inuse_space": {}}"#)).expect_err("none");
    assert_eq!(e.to_string(), "unknown sample types: the profile has alloc_space/bytes; sample_type_config names none of them");
    let e = read(None, Some(b"{")).expect_err("json");
    assert!(e.to_string().starts_with("sample_type_config: EOF"), "{e}");
}
