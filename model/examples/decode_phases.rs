//! Decodes a synthetic shape-B body of EMBERS_NODES nodes once (for profilers like callgrind).
use embers_model::synth::{SynthOptions, SynthProfile};
fn main() {
    let nodes = std::env::var("EMBERS_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    let body = SynthProfile::generate(SynthOptions {
        nodes,
        ..Default::default()
    })
    .to_shape_b_json();
    let p = embers_model::decode_response(200, &body).map(|d| d.profile.node_count());
    println!("{p:?}");
}
