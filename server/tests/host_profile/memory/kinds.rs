//! Every allocator function the collector traps, live (issue 38 item 2): `mem.c --kinds`, built
//! without frame pointers, allocates with `calloc` (zeroed), `realloc` from NULL and then larger
//! (resized) and anonymous `mmap` (mapped, through a helper inlined into it), each keeping 8 MiB
//! live. `mem-alloc` must give each its share of the bytes (2/7, 3/7, 2/7 ± 0.1) under its own
//! allocator's leaf — glibc's realloc(NULL, n) calls malloc and its large callocs call mmap, and
//! neither may be counted again — and the inlined helper must be a frame of its own with its
//! source line (the stacks named as on-CPU ones are); `mem-inuse` a third each of ~24 MiB.

use std::path::Path;

use serde_json::{json, Value};

use super::super::{allowed, graph, graph_of, workloads, SERIAL};
use super::profile_run;
use crate::common::{TempDb, TestServer};

/// Seconds of allocation (100 rounds of 3.5 MiB a second).
const SECONDS: f64 = 3.0;
const MIB: f64 = 1024.0 * 1024.0;

/// The share of `all`'s value under `function` whose stacks run `main → kinds → function →
/// ... → leaf`, as a fraction of `function`'s.
fn intact(all: &[&graph::Line<'_>], chain: &[&str]) -> f64 {
    let function = chain[2];
    let of = |f: &dyn Fn(&graph::Line<'_>) -> bool| -> u64 {
        all.iter().filter(|l| f(l)).map(|l| l.value).sum()
    };
    let whole = of(&|l| graph::holds_in_order(&l.frames, chain));
    whole as f64 / of(&|l| l.frames.contains(&function)).max(1) as f64
}

#[tokio::test(flavor = "multi_thread")]
async fn calloc_realloc_and_mmap_each_show_their_bytes() {
    let _one = SERIAL.lock().await;
    if !allowed() {
        return;
    }
    let dir = tempfile::tempdir().expect("dir");
    let program = workloads::c_mem(dir.path());
    let args = vec!["--kinds".to_owned(), SECONDS.to_string()];
    let db = TempDb::new();
    let (server, range) = profile_run(program, args, Vec::new(), 256 << 10, dir.path(), &db).await;
    check_alloc(&server, range).await;
    check_in_use(&server, range).await;
    check_inlined_line(&server, range).await;
    server.stop().await;
}

async fn check_alloc(server: &TestServer, range: (i64, i64)) {
    let folded = graph_of(server, "embers-mem", "mem-alloc", range).await;
    let lines = graph::lines(&folded);
    let all: Vec<&graph::Line<'_>> = lines.iter().collect();
    for (function, leaf, want) in [
        ("zeroed", "[l] calloc", 2.0 / 7.0),
        ("resized", "[l] realloc", 3.0 / 7.0),
        ("mapped", "[l] mmap", 2.0 / 7.0),
    ] {
        let got = graph::share(&all, function);
        eprintln!("mem-alloc share of {function}: {got:.3} (want {want:.3})");
        assert!(
            (got - want).abs() <= 0.10,
            "{function} has {got:.3} of mem-alloc, want {want:.3}±0.10\n{folded}"
        );
        let chain = ["main", "kinds", function, leaf];
        let whole = intact(&all, &chain);
        assert!(
            whole >= 0.9,
            "{chain:?} in {whole:.2} of {function}'s bytes\n{folded}"
        );
    }
    // The helper inlined into mapped is a frame of its own.
    let place = intact(&all, &["main", "kinds", "mapped", "place", "[l] mmap"]);
    assert!(place >= 0.9, "place under mapped in {place:.2}\n{folded}");
    // Nested calls (realloc's malloc, calloc's and malloc's own mmap) are not counted again.
    let malloc = graph::share(&all, "[l] malloc");
    assert!(
        malloc <= 0.05,
        "[l] malloc has {malloc:.3} of the bytes\n{folded}"
    );
    let allocated = graph::total(&all) as f64 / (SECONDS * 100.0 * 3.5 * MIB);
    assert!(
        (0.8..=1.15).contains(&allocated),
        "mem-alloc sums to {allocated:.2} of the bytes allocated\n{folded}"
    );
}

async fn check_in_use(server: &TestServer, range: (i64, i64)) {
    let folded = graph_of(server, "embers-mem", "mem-inuse", range).await;
    let lines = graph::lines(&folded);
    let all: Vec<&graph::Line<'_>> = lines.iter().collect();
    let total = graph::total(&all) as f64;
    eprintln!("mem-inuse: {:.1} MiB", total / MIB);
    for function in ["zeroed", "resized", "mapped"] {
        let got = graph::share(&all, function);
        eprintln!("mem-inuse share of {function}: {got:.3}");
        assert!(
            (got - 1.0 / 3.0).abs() <= 0.1,
            "{function} holds {got:.3} of mem-inuse, want a third\n{folded}"
        );
    }
    assert!(
        (total / (24.0 * MIB) - 1.0).abs() <= 0.2,
        "mem-inuse is {:.1} MiB, want 24 MiB ±20%\n{folded}",
        total / MIB
    );
}

/// `function_lines` gives `place` (inlined into `mapped`) the line of its `mmap` call.
async fn check_inlined_line(server: &TestServer, range: (i64, i64)) {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../agent/tests/workloads/mem.c");
    let text = std::fs::read_to_string(&source).expect("mem.c");
    let want = 1 + text
        .lines()
        .position(|l| l.trim_start().starts_with("return mmap(NULL, MIB"))
        .expect("place's mmap line") as u64;
    let body = json!({"app_service": "embers-mem", "profile_language_type": "eBPF",
        "profile_event_type": "mem-alloc", "tag_filter": "", "time_start": range.0,
        "time_end": range.1, "function": "place"});
    let (status, answer) = server.post("/v1/profile/function_lines", &body).await;
    assert_eq!(status, 200, "{answer}");
    let rows = answer["result"]["values"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let first: &Value = rows
        .first()
        .unwrap_or_else(|| panic!("no lines for place: {answer}"));
    assert!(
        first[0].as_str().is_some_and(|f| f.ends_with("mem.c")) && first[1] == json!(want),
        "place's hottest line is {first}, want mem.c:{want}"
    );
}
