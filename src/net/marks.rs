//! Named moments of a load (`performance.mark`): the benchmark and the e2e suite read them to
//! see where the time before the first painted graph goes (worker start, decode, first paint).

/// The page's booted wasm started the app.
pub const APP_STARTED: &str = "embers:app-started";
/// The decode worker said it listens (or was found listening already).
pub const WORKER_READY: &str = "embers:worker-ready";
/// The decode worker finished warming up (its decoder runs at full speed from here on).
pub const WORKER_WARM: &str = "embers:worker-warm";
/// The flame graph's warm-up drew its off-screen profile and removed it.
pub const GRAPH_WARM: &str = "embers:graph-warm";
/// A body was handed to the decoder.
pub const DECODE_START: &str = "embers:decode-start";
/// The decoded profile is back on the page.
pub const DECODE_END: &str = "embers:decode-end";
/// The worker's message was read into a profile on the page (columns copied into the page's
/// wasm memory and checked).
pub const PROFILE_READ: &str = "embers:profile-read";
/// The first flame graph of a load was drawn.
pub const GRAPH_PAINTED: &str = "embers:graph-painted";

/// Records `name` at the current time (nothing where the Performance API is missing).
pub fn mark(name: &str) {
    if let Some(p) = web_sys::window().and_then(|w| w.performance()) {
        // A failing mark only costs the benchmark a timestamp.
        let _ = p.mark(name);
    }
}
