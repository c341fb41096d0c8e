//! Before loading anything: may this process load BPF programs and sample every CPU, does the
//! kernel have BTF, and what will be missing (another user's processes without
//! CAP_SYS_PTRACE, kernel names without CAP_SYSLOG). Reads `/proc/self/status` and a few files;
//! [`assess`] decides from what was read, so the rules are tested without root.

use std::path::Path;

use crate::error::AgentError;

const CAP_SYS_PTRACE: u32 = 19;
const CAP_SYS_ADMIN: u32 = 21;
const CAP_SYSLOG: u32 = 34;
const CAP_PERFMON: u32 = 38;
const CAP_BPF: u32 = 39;

/// Where the kernel's BTF is.
pub const BTF: &str = "/sys/kernel/btf/vmlinux";

fn has(caps: u64, cap: u32) -> bool {
    caps & (1u64 << cap) != 0
}

/// The effective capabilities in `/proc/self/status` text.
pub fn effective_caps(status: &str) -> Option<u64> {
    let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
    u64::from_str_radix(line["CapEff:".len()..].trim(), 16).ok()
}

/// Whether the collector can run with capabilities `caps` on a kernel with (or without) BTF;
/// `Ok` carries warnings about what will be missing.
pub fn assess(caps: u64, btf: bool, kptr_restrict: Option<u32>) -> Result<Vec<String>, AgentError> {
    let admin = has(caps, CAP_SYS_ADMIN);
    let missing: Vec<&str> = [("CAP_BPF", CAP_BPF), ("CAP_PERFMON", CAP_PERFMON)]
        .into_iter()
        .filter(|(_, c)| !admin && !has(caps, *c))
        .map(|(n, _)| n)
        .collect();
    if !missing.is_empty() {
        return Err(AgentError::Permission(format!(
            "the collector needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to load its BPF \
             program and sample every CPU; this process lacks {}. Run it as root, with \
             `setcap cap_bpf,cap_perfmon,cap_sys_ptrace,cap_syslog+ep embers-agent`, or in a \
             container with them (deploy/kubernetes/base/embers-agent.yaml), or as the unit \
             deploy/systemd/embers-agent.service",
            missing.join(" and ")
        )));
    }
    if !btf {
        return Err(AgentError::NoBtf);
    }
    let mut warnings = Vec::new();
    if !has(caps, CAP_SYS_PTRACE) {
        warnings.push(
            "without CAP_SYS_PTRACE the memory maps of other users' processes cannot be read: \
             their user frames will be [unknown]"
                .to_owned(),
        );
    }
    if kptr_restrict.unwrap_or(0) > 0 && !(has(caps, CAP_SYSLOG) && kptr_restrict == Some(1)) {
        warnings.push(
            "kernel addresses are hidden (kernel.kptr_restrict and no CAP_SYSLOG): kernel frames \
             will be [k] [unknown]"
                .to_owned(),
        );
    }
    Ok(warnings)
}

/// [`assess`] this process on this machine.
pub fn check() -> Result<Vec<String>, AgentError> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let caps = effective_caps(&status).unwrap_or(0);
    let kptr = std::fs::read_to_string("/proc/sys/kernel/kptr_restrict")
        .ok()
        .and_then(|t| t.trim().parse().ok());
    assess(caps, Path::new(BTF).exists(), kptr)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: u64 = 0x1ff_ffff_ffff;

    #[test]
    fn names_the_missing_capabilities() {
        let none = assess(0, true, Some(0)).expect_err("no caps");
        assert!(
            none.to_string().contains("lacks CAP_BPF and CAP_PERFMON"),
            "{none}"
        );
        let bpf_only = assess(1 << CAP_BPF, true, Some(0)).expect_err("no perfmon");
        assert!(
            bpf_only.to_string().contains("lacks CAP_PERFMON."),
            "{bpf_only}"
        );
        assert!(assess(1 << CAP_SYS_ADMIN, true, Some(0)).is_ok());
        let both = (1 << CAP_BPF) | (1 << CAP_PERFMON);
        let warnings = assess(both, true, Some(1)).expect("can run");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(assess(ROOT, true, Some(1)).expect("root").is_empty());
        assert_eq!(assess(ROOT, true, Some(2)).expect("root").len(), 1);
    }

    #[test]
    fn btf_is_required() {
        assert!(matches!(assess(ROOT, false, None), Err(AgentError::NoBtf)));
    }

    #[test]
    fn reads_capeff() {
        let status = "Name:\tx\nCapInh:\t0000000000000000\nCapEff:\t000001fffeffffff\n";
        assert_eq!(effective_caps(status), Some(0x1fffeffffff));
        assert_eq!(effective_caps("Name: x"), None);
    }
}
