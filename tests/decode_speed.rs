//! Decoding speed inside the browser's wasm engine, phase by phase: the numbers behind the
//! "decode" column of `bench/run.sh`, without page boot, fetch or drawing around them.
//!
//! Prints one line per run (`console.log`, shown by the test runner). CI runs it at a small
//! size as a smoke test; for real numbers build it like the release page:
//!
//! ```text
//! EMBERS_DECODE_NODES=1000000 CHROMEDRIVER=/usr/bin/chromedriver \
//!   cargo test --release -p embers --target wasm32-unknown-unknown --test decode_speed -- --nocapture
//! ```
#![cfg(target_arch = "wasm32")]

use embers_model::synth::{SynthOptions, SynthProfile};
use embers_model::wire::decode_response_table;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

fn now_ms() -> f64 {
    web_sys::window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

#[wasm_bindgen_test]
fn decode_phases() {
    let nodes: usize = option_env!("EMBERS_DECODE_NODES")
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let runs: usize = option_env!("EMBERS_DECODE_RUNS")
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let body = SynthProfile::generate(SynthOptions {
        nodes,
        ..Default::default()
    })
    .to_shape_b_json();
    for run in 1..=runs {
        let t0 = now_ms();
        let table = decode_response_table(200, body.as_bytes()).expect("the body decodes");
        let t1 = now_ms();
        let profile = table.build().profile;
        let t2 = now_ms();
        // The generator repeats a sibling now and then; those rows merge.
        let merged = profile.warnings().merged_siblings as usize;
        assert_eq!(profile.node_count() + merged, nodes);
        console_log!(
            "decode {nodes} nodes ({:.1} MB), run {run}: tables {:.1} ms + tree {:.1} ms = {:.1} ms",
            body.len() as f64 / 1e6,
            t1 - t0,
            t2 - t1,
            t2 - t0
        );
    }
}
