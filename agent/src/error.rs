//! The collector's errors: each says what is wrong and what to do about it.

use thiserror::Error;

/// Why the collector cannot start or stopped.
#[derive(Debug, Error)]
pub enum AgentError {
    /// A capability is missing.
    #[error("{0}")]
    Permission(String),
    /// The kernel has no BTF, which the CO-RE program needs.
    #[error(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux is missing): the collector's BPF \
         program is compiled once and relocated against the running kernel's BTF, which needs a \
         kernel built with CONFIG_DEBUG_INFO_BTF=y (most distribution kernels since 5.4)"
    )]
    NoBtf,
    /// The BPF program did not load or attach.
    #[error("the BPF program could not be {what}: {detail}")]
    Bpf {
        /// `loaded`, `attached`, ...
        what: &'static str,
        /// libbpf's error (the verifier's log goes to the debug log).
        detail: String,
    },
    /// No CPU could be sampled.
    #[error("no CPU could be sampled: {0}")]
    NoCpu(String),
    /// A bad option.
    #[error("{0}")]
    Config(String),
}

impl AgentError {
    /// A libbpf failure while doing `what`.
    pub fn bpf(what: &'static str, e: impl std::fmt::Display) -> AgentError {
        AgentError::Bpf {
            what,
            detail: e.to_string(),
        }
    }
}
