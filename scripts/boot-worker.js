// Prepended to the page's boot script by scripts/externalize-boot.mjs: starts the decode
// worker before the page's wasm is fetched and compiled, so both load side by side and a
// query fired at page load need not wait for the worker to start after the page booted
// (that wait was ~50–70 ms of a 10k render; measured, this bought nothing yet: the worker's
// script fetch still starts late while the page boots, see docs/performance-history.md). The page's
// decode_worker client takes it over from `__embersDecodeWorker`
// (src/net/decode_worker/client.rs) and replaces these handlers; where no worker can be created the page starts (or falls back) as before.
try {
  const started = { worker: new Worker('./decode_worker_loader.js'), ready: false, warm: false, error: null };
  // Must equal `READY` and `WARM` in worker/src/lib.rs (the e2e suite checks the hand-over).
  started.worker.onmessage = (e) => {
    if (e.data === 'embers-decode-worker:ready') started.ready = true;
    if (e.data === 'embers-decode-worker:warm') started.warm = true;
  };
  started.worker.onerror = (e) => {
    e.preventDefault();
    started.error = e.message || 'its script failed';
  };
  window.__embersDecodeWorker = started;
} catch (e) {
  // No worker here (a policy forbids it): the page decodes on its own thread.
}
