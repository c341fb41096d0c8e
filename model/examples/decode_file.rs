//! Decodes a shape-A or shape-B response file N times and prints the time of each run
//! (for `perf record` and quick before/after comparisons): `decode_file FILE [RUNS]`.
use std::time::Instant;

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: decode_file FILE [RUNS]");
        std::process::exit(2);
    };
    let runs: usize = args.next().and_then(|r| r.parse().ok()).unwrap_or(5);
    let body = match std::fs::read_to_string(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(1);
        }
    };
    for _ in 0..runs {
        let t = Instant::now();
        match embers_model::wire::decode_response_table(200, body.as_bytes()) {
            Ok(d) => {
                let tables = t.elapsed().as_secs_f64() * 1e3;
                let d = d.build();
                println!(
                    "{} nodes: tables {tables:.1} ms, total {:.1} ms",
                    d.profile.node_count(),
                    t.elapsed().as_secs_f64() * 1e3
                )
            }
            Err(e) => println!("error: {e}"),
        }
    }
}
