//! What the model's benchmarks share.

/// The benchmark profile's node count: `EMBERS_BENCH_NODES`, else a million (the browser
/// benchmark's largest size).
pub fn nodes() -> usize {
    std::env::var("EMBERS_BENCH_NODES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000)
}
