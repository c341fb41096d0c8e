//! `perf script` text (import, `/ingest?format=perf`, the viewer's *Open*): parsing never
//! panics and holds memory within the budget; the tree it gives keeps the call-tree
//! invariants, its total is the samples' values; the stacks stored per process have no empty
//! frame and start with the thread's `[t]` frame.
#![no_main]

use embers_fuzz::{alloc, check};
use embers_model::wire::perf::parse_perf_script;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    alloc::bounded(text.len(), || {
        let Ok(script) = parse_perf_script(&text) else {
            return;
        };
        let tree = script.tree();
        check::profile_invariants(&tree);
        let sum = script
            .samples
            .iter()
            .fold(0u64, |a, s| a.saturating_add(s.value));
        assert_eq!(tree.root_total(), sum);
        for (process, stacks) in script.stacks_by_process() {
            assert!(!process.is_empty());
            for (stack, value) in stacks {
                assert!(value > 0);
                assert!(stack.starts_with("[t] "), "{stack}");
                assert!(stack.split(';').all(|f| !f.is_empty()), "{stack}");
            }
        }
    });
});
