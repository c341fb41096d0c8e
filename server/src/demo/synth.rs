//! Generated stacks for the demo's busy services: a thread, a fixed base, then one frame per
//! layer (a pattern filled with a word) and a leaf, picked with a skew so a few paths are hot and
//! many are rare — thousands of distinct stacks per service over the six hours.

use super::Rng;

/// A family of generated stacks.
pub(super) struct Synth {
    threads: &'static [&'static str],
    base: &'static [&'static str],
    /// Frame patterns; `{}` is replaced by a word of [`WORDS`].
    layers: &'static [&'static str],
    leaves: &'static [&'static str],
}

const WORDS: [&str; 16] = [
    "Cart", "Order", "Price", "Tax", "Coupon", "Stock", "Shipping", "Invoice", "Payment",
    "Customer", "Address", "Loyalty", "Fraud", "Catalog", "Review", "Session",
];

/// Uniform in `0..n`, skewed towards 0 (cubed), so the first choices are the hot ones.
fn skewed(rng: &mut Rng, n: usize) -> usize {
    let u = rng.below(1 << 16) as f64 / 65536.0;
    ((u * u * u) * n as f64) as usize % n.max(1)
}

impl Synth {
    /// One stack, root first.
    pub(super) fn stack(&self, rng: &mut Rng) -> String {
        let mut frames: Vec<String> = Vec::with_capacity(2 + self.base.len() + self.layers.len());
        frames.push(self.threads[skewed(rng, self.threads.len())].to_owned());
        frames.extend(self.base.iter().map(|f| (*f).to_owned()));
        for pattern in self.layers {
            frames.push(pattern.replace("{}", WORDS[skewed(rng, WORDS.len())]));
        }
        frames.push(self.leaves[skewed(rng, self.leaves.len())].to_owned());
        frames.join(";")
    }
}

pub(super) const CHECKOUT: Synth = Synth {
    threads: &[
        "[t] http-nio-8443-e",
        "[t] kafka-listener",
        "[t] scheduling-1",
        "[t] GC Thread#0",
    ],
    base: &[
        "[l] start_thread",
        "thread_native_entry",
        "JavaThread::thread_main_inner",
        "java.lang.Thread.run",
    ],
    layers: &[
        "com.example.checkout.web.{}Controller.handle",
        "com.example.checkout.service.{}Service.process",
        "com.example.checkout.domain.{}.validate",
    ],
    leaves: &[
        "java.util.HashMap.getNode",
        "com.fasterxml.jackson.databind.ObjectMapper.writeValueAsString",
        "org.postgresql.jdbc.PgPreparedStatement.executeQuery",
        "java.math.BigDecimal.multiply",
        "java.lang.String.hashCode",
        "[k] tcp_sendmsg",
        "[k] copy_user_enhanced_fast_string",
        "[/tmp/perf-5120.map]",
    ],
};

pub(super) const SEARCH: Synth = Synth {
    threads: &["[t] search-api", "[t] uvicorn-worker", "[t] index-refresh"],
    base: &[
        "[l] __libc_start_main",
        "Py_BytesMain",
        "_PyEval_EvalFrameDefault",
        "uvicorn/server.py:serve",
    ],
    layers: &[
        "search/handlers.py:find_{}",
        "search/ranking.py:score_{}",
        "search/index.py:lookup_{}",
    ],
    leaves: &[
        "numpy/core/numeric.py:dot",
        "json/encoder.py:iterencode",
        "re/_compiler.py:compile",
        "[l] PyObject_Malloc",
        "[k] do_syscall_64",
        "[/usr/lib/python3.11/lib-dynload/_json.cpython-311-x86_64-linux-gnu.so]",
    ],
};

pub(super) const PAYMENT: Synth = Synth {
    threads: &["[t] payment", "[t] payment-batch"],
    base: &[
        "runtime.goexit.abi0",
        "net/http.(*conn).serve",
        "net/http.serverHandler.ServeHTTP",
    ],
    layers: &[
        "github.com/example/payment/api.handle{}",
        "github.com/example/payment/ledger.post{}",
    ],
    leaves: &[
        "crypto/sha256.block",
        "database/sql.(*DB).QueryContext",
        "encoding/json.Marshal",
        "runtime.mallocgc",
    ],
};

pub(super) const KAFKA: Synth = Synth {
    threads: &[
        "[t] data-plane-kafk",
        "[t] kafka-network-t",
        "[t] kafka-log-clean",
    ],
    base: &[
        "[l] start_thread",
        "thread_native_entry",
        "java.lang.Thread.run",
    ],
    layers: &["kafka.server.KafkaApis.handle{}Request"],
    leaves: &[
        "kafka.log.UnifiedLog.append",
        "org.apache.kafka.common.record.MemoryRecords.writeTo",
        "sun.nio.ch.FileChannelImpl.transferTo",
        "[k] tcp_sendmsg",
        "[k] do_splice_direct",
    ],
};
