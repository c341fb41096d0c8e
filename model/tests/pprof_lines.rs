//! Source lines read from a real Go CPU profile (`server/tests/data/go/hot`, written by
//! `runtime/pprof`): every function's per-line self and total must be what `go tool pprof
//! -lines -top` printed for the same file (`tests/data/pprof/go-cpu.lines.txt`), and the hot
//! loop's body must be `hotLoop`'s hottest line.

use std::io::Read;

use embers_model::wire::pprof::lines::NO_LINES;
use embers_model::wire::pprof::read_profile_with_lines;

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

/// `(function, file, line, flat, cum)` of each `-lines -top` row, in samples (Go's CPU
/// profiler samples at 100 Hz: 10 ms a sample).
fn tool_rows(text: &str) -> Vec<(String, String, u32, u64, u64)> {
    let ms = |s: &str| -> u64 {
        let v: f64 = s.trim_end_matches("ms").parse().expect("ms");
        (v / 10.0).round() as u64
    };
    text.lines()
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let (file, number) = cols.get(6)?.rsplit_once(':')?;
            let flat = if cols[0] == "0" { 0 } else { ms(cols[0]) };
            Some((
                cols[5].to_owned(),
                file.to_owned(),
                number.parse().ok()?,
                flat,
                ms(cols[3]),
            ))
        })
        .collect()
}

#[test]
fn lines_are_the_ones_go_tool_pprof_lists() {
    let (read, lines) =
        read_profile_with_lines(&gunzip(&data("go-cpu.pb.gz")), "hot").expect("reads");
    assert_eq!(read.sample_type, "samples/count");
    let rows = tool_rows(&String::from_utf8(data("go-cpu.lines.txt")).expect("text"));
    assert!(rows.len() >= 8, "{rows:?}");
    for (function, file, line, flat, cum) in &rows {
        let ours = lines.of(function);
        let row = ours
            .iter()
            .find(|r| r.file == *file && r.line == *line)
            .unwrap_or_else(|| panic!("{function} {file}:{line} missing from {ours:?}"));
        assert_eq!(
            (row.self_value, row.total_value),
            (*flat, *cum),
            "{function}:{line}"
        );
        assert!(
            read.profile.function_id(function).is_some(),
            "{function} is a frame"
        );
    }
    let hot = lines.of("main.hotLoop");
    assert_eq!(hot.len(), 2, "{hot:?}");
    assert_eq!(hot[0].line, 26, "the loop body burns: {hot:?}");
    assert!(hot[0].file.ends_with("go/hot/main.go"), "{hot:?}");
}

#[test]
fn a_profile_without_line_numbers_says_so() {
    // Embers' own export writes functions without lines.
    let p = embers_model::wire::folded::parse_folded("app;main;work 3\n", "app").expect("folded");
    let meta = embers_model::export::pprof::PprofMeta {
        event_type: "on-cpu",
        quantity: embers_model::contract::event::quantity("on-cpu"),
        time_nanos: 0,
        duration_nanos: 0,
    };
    let bytes = embers_model::export::pprof::to_pprof(&p, &meta);
    let (read, lines) = read_profile_with_lines(&bytes, "app").expect("reads");
    assert!(read.profile.function_id("work").is_some());
    assert!(lines.is_empty());
    assert_eq!(lines.why_none.as_deref(), Some(NO_LINES));
}
