//! The command line of `embers-agent`.
//!
//! ```text
//! embers-agent (--to http://embers:8080 [--token-file FILE] | --print)
//!              [--frequency 99] [--interval 10s] [--off-cpu [--min-block 1ms]]
//!              [--process-regex RE] [--include-idle] [--include-kernel-threads] [--tag NAME=VALUE]...
//!              [--unwind dwarf|fp] [--stack-bytes 32KiB] [--buffer 64MiB] [--max-request-bytes 4MiB]
//!              [--memory [--memory-pid PID]... [--memory-comm RE] [--memory-sample-bytes 512KiB]
//!              [--memory-max-live 65536]]
//!              [--duration 1m] [--check]
//! ```

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};
use regex::Regex;
use serde_json::Value;

use crate::options::{MemoryOptions, Options, Unwind, DEFAULT_MAX_LIVE};
use crate::sink::http::HttpOptions;

/// How user stacks are walked (`--unwind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum UnwindArg {
    /// Copy the top of each stack and unwind it from .eh_frame: whole stacks without frame
    /// pointers too.
    Dwarf,
    /// Frame pointers only, counted in the kernel: cheapest.
    Fp,
}

/// Embers collector: samples this host's CPUs with eBPF and sends the profiles to Embers.
#[derive(Debug, Parser)]
#[command(name = "embers-agent", version, about)]
pub struct Cli {
    /// The Embers service to send to, e.g. http://embers:8080.
    #[arg(long, required_unless_present_any = ["print", "check"])]
    pub to: Option<String>,
    /// File holding the bearer token of the service's ingest endpoint.
    #[arg(long)]
    pub token_file: Option<PathBuf>,
    /// Write each window's folded stacks to standard output instead of sending them.
    #[arg(long, conflicts_with = "to")]
    pub print: bool,
    /// Only check whether this machine lets the collector run, then exit.
    #[arg(long)]
    pub check: bool,
    /// Samples per second on each CPU.
    #[arg(long, default_value_t = 99)]
    pub frequency: u32,
    /// Length of a window (at least 1s): samples are sent once per window.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub interval: Duration,
    /// Also record time spent blocked (event type off-cpu).
    #[arg(long)]
    pub off_cpu: bool,
    /// With --off-cpu: the shortest wait recorded.
    #[arg(long, default_value = "1ms", value_parser = humantime::parse_duration)]
    pub min_block: Duration,
    /// Per-process graphs only for processes whose name matches (the Total graph has all).
    #[arg(long)]
    pub process_regex: Option<Regex>,
    /// Also sample the idle task (pid 0).
    #[arg(long)]
    pub include_idle: bool,
    /// Give kernel threads (kworker/0:1, ksoftirqd/0, ...) per-process graphs too; by default
    /// their time is only in the Total graph, as `[p] <name>`.
    #[arg(long)]
    pub include_kernel_threads: bool,
    /// A tag of every sample, NAME=VALUE (repeatable): region, az, pod_cluster, host, ...
    #[arg(long = "tag", value_name = "NAME=VALUE")]
    pub tags: Vec<String>,
    /// How user stacks are walked.
    #[arg(long, value_enum, default_value_t = UnwindArg::Dwarf)]
    pub unwind: UnwindArg,
    /// Most bytes of each sample's user stack copied (1KiB to 64KiB): deeper stacks are cut
    /// short (counted in the stats line).
    #[arg(long, default_value = "32KiB", value_parser = parse_size)]
    pub stack_bytes: usize,
    /// Most bytes of windows waiting while the service is unreachable (the oldest are dropped).
    #[arg(long, default_value = "64MiB", value_parser = parse_size)]
    pub buffer: usize,
    /// Most bytes in one request.
    #[arg(long, default_value = "4MiB", value_parser = parse_size)]
    pub max_request_bytes: usize,
    /// Also profile C allocations (event types mem-alloc and mem-inuse): uprobes on malloc,
    /// calloc, realloc and free of glibc (and jemalloc or tcmalloc where a process maps them).
    /// Every traced allocation call traps into the kernel: see docs/collector.md for the cost.
    #[arg(long)]
    pub memory: bool,
    /// With --memory: trace only this process (repeatable; with --memory-comm, these and those).
    #[arg(long = "memory-pid", value_name = "PID", requires = "memory")]
    pub memory_pids: Vec<u32>,
    /// With --memory: trace only processes whose name matches (new ones within 200 ms).
    #[arg(long, value_name = "REGEX", requires = "memory")]
    pub memory_comm: Option<Regex>,
    /// With --memory: mean bytes allocated between two samples (each sample weighted so totals
    /// are unbiased).
    #[arg(long, default_value = "512KiB", value_parser = parse_size, requires = "memory")]
    pub memory_sample_bytes: usize,
    /// With --memory: most sampled allocations tracked as live; beyond it the oldest are
    /// dropped (counted in the stats line).
    #[arg(long, default_value_t = DEFAULT_MAX_LIVE, requires = "memory")]
    pub memory_max_live: usize,
    /// Stop after this long (default: run until SIGINT or SIGTERM).
    #[arg(long, value_parser = humantime::parse_duration)]
    pub duration: Option<Duration>,
}

/// A size: bytes, or with a unit `KiB`, `MiB`, `GiB` (also `K`, `M`, `G`).
pub fn parse_size(text: &str) -> Result<usize, String> {
    let t = text.trim();
    let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    let (digits, unit) = t.split_at(split);
    let n: usize = digits
        .parse()
        .map_err(|_| format!("'{text}' is not a size (e.g. 64MiB)"))?;
    let factor: usize = match unit.trim() {
        "" | "B" => 1,
        "K" | "KiB" | "k" => 1 << 10,
        "M" | "MiB" => 1 << 20,
        "G" | "GiB" => 1 << 30,
        other => return Err(format!("unknown size unit '{other}' (use KiB, MiB or GiB)")),
    };
    n.checked_mul(factor)
        .ok_or_else(|| format!("'{text}' is too large"))
}

/// `NAME=VALUE` tags.
pub fn parse_tags(tags: &[String]) -> Result<BTreeMap<String, Value>, String> {
    tags.iter()
        .map(|t| match t.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => {
                Ok((name.trim().to_owned(), Value::from(value)))
            }
            _ => Err(format!("--tag {t}: expected NAME=VALUE")),
        })
        .collect()
}

impl Cli {
    /// The collector's options.
    pub fn options(&self) -> Result<Options, String> {
        Options {
            frequency: self.frequency,
            interval: self.interval,
            off_cpu: self.off_cpu,
            min_block: self.min_block,
            process_regex: self.process_regex.clone(),
            include_idle: self.include_idle,
            include_kernel_threads: self.include_kernel_threads,
            tags: parse_tags(&self.tags)?,
            stack_bytes: u32::try_from(self.stack_bytes).unwrap_or(u32::MAX),
            unwind: match self.unwind {
                UnwindArg::Dwarf => Unwind::Dwarf,
                UnwindArg::Fp => Unwind::Fp,
            },
            memory: MemoryOptions {
                enabled: self.memory,
                sample_bytes: self.memory_sample_bytes as u64,
                max_live: self.memory_max_live,
                pids: self.memory_pids.clone(),
                comm: self.memory_comm.clone(),
                stack_bytes: u32::try_from(self.stack_bytes).unwrap_or(u32::MAX),
            },
            ..Options::default()
        }
        .check()
    }

    /// How to send, when sending (`--to`).
    pub fn http(&self) -> Result<Option<HttpOptions>, String> {
        let Some(to) = &self.to else {
            return Ok(None);
        };
        if !(to.starts_with("http://") || to.starts_with("https://")) {
            return Err(format!("--to {to}: expected http://host:port"));
        }
        let token = match &self.token_file {
            Some(path) => Some(
                std::fs::read_to_string(path)
                    .map_err(|e| format!("--token-file {}: {e}", path.display()))?
                    .trim()
                    .to_owned(),
            ),
            None => None,
        };
        Ok(Some(HttpOptions {
            to: to.clone(),
            token,
            buffer_bytes: self.buffer,
            max_request_bytes: self.max_request_bytes,
            timeout: Duration::from_secs(30),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_tags() {
        assert_eq!(parse_size("64MiB"), Ok(64 << 20));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert_eq!(parse_size("2G"), Ok(2 << 30));
        assert!(parse_size("12 parsecs").is_err());
        assert!(parse_size("MiB").is_err());
        let tags = parse_tags(&["region=eu".into(), "k8s.label.app=a=b".into()]).expect("ok");
        assert_eq!(tags["k8s.label.app"], "a=b");
        assert!(parse_tags(&["novalue".into()]).is_err());
    }

    #[test]
    fn parses_a_command_line() {
        let cli = Cli::parse_from([
            "embers-agent",
            "--to",
            "http://127.0.0.1:8080",
            "--interval",
            "2s",
            "--off-cpu",
            "--tag",
            "region=eu",
            "--unwind",
            "fp",
            "--include-kernel-threads",
        ]);
        let o = cli.options().expect("valid");
        assert!(o.include_kernel_threads);
        assert_eq!(o.interval, Duration::from_secs(2));
        assert!(o.off_cpu && o.unwind == Unwind::Fp);
        assert_eq!(
            cli.http().expect("ok").map(|h| h.buffer_bytes),
            Some(64 << 20)
        );
        let bad = Cli::parse_from(["embers-agent", "--to", "embers:8080"]);
        assert!(bad.http().is_err());
        assert!(
            Cli::try_parse_from(["embers-agent"]).is_err(),
            "--to or --print is required"
        );
        let short = Cli::parse_from(["embers-agent", "--print", "--interval", "100ms"]);
        assert!(short.options().is_err());
        assert!(!o.memory.enabled, "--memory is off by default");
        let mem = Cli::parse_from([
            "embers-agent",
            "--print",
            "--memory",
            "--memory-pid",
            "42",
            "--memory-comm",
            "^redis",
            "--memory-sample-bytes",
            "64KiB",
        ]);
        let m = mem.options().expect("valid").memory;
        assert!(m.enabled && m.pids == [42] && m.sample_bytes == 64 << 10);
        assert!(m.comm.is_some_and(|r| r.is_match("redis-server")));
        assert!(
            Cli::try_parse_from(["embers-agent", "--print", "--memory-pid", "1"]).is_err(),
            "the memory filters need --memory"
        );
        let tiny = Cli::parse_from([
            "embers-agent",
            "--print",
            "--memory",
            "--memory-sample-bytes",
            "1",
        ]);
        assert!(tiny
            .options()
            .expect_err("too small")
            .contains("--memory-sample-bytes"));
    }
}
