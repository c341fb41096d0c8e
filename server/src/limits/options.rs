//! The limits as command-line options (flattened into `serve` and `import`), each with its
//! documented default.

use std::time::Duration;

use clap::Args;

use super::{
    Caps, StackLimits, DEFAULT_MAX_ANSWER_NODES, DEFAULT_MAX_CONCURRENT_QUERIES,
    DEFAULT_MAX_FRAME_BYTES, DEFAULT_MAX_QUEUED_QUERIES, DEFAULT_MAX_STACK_FRAMES,
};

/// Limits on ingested stacks (`serve` and `import`).
#[derive(Debug, Clone, Args)]
pub struct StackArgs {
    /// Most frames in one ingested stack; a deeper one rejects its batch.
    #[arg(long, default_value_t = DEFAULT_MAX_STACK_FRAMES, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_stack_frames: u32,
    /// Most bytes in one ingested frame name; a longer one rejects its batch.
    #[arg(long, default_value_t = DEFAULT_MAX_FRAME_BYTES, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_frame_bytes: u32,
}

impl StackArgs {
    /// As store-side limits.
    pub fn limits(&self) -> StackLimits {
        StackLimits {
            max_frames: self.max_stack_frames as usize,
            max_frame_bytes: self.max_frame_bytes as usize,
        }
    }
}

/// Every cost limit of `serve`.
#[derive(Debug, Clone, Args)]
pub struct LimitArgs {
    /// Limits on ingested stacks.
    #[command(flatten)]
    pub stacks: StackArgs,
    /// Most nodes in a ProfileTracing answer; a bigger tree is cut to its heaviest part and
    /// the answer says "truncated: N of M nodes".
    #[arg(long, default_value_t = DEFAULT_MAX_ANSWER_NODES, value_parser = clap::value_parser!(u32).range(2..))]
    pub max_answer_nodes: u32,
    /// Queries (ProfileTracing, explore) running at once.
    #[arg(long, default_value_t = DEFAULT_MAX_CONCURRENT_QUERIES, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_queries: u32,
    /// Queries waiting for a turn; past that a query is answered 503 at once.
    #[arg(long, default_value_t = DEFAULT_MAX_QUEUED_QUERIES)]
    pub max_queued_queries: u32,
    /// Time from a query's arrival to its answer (waiting included), e.g. 30s, 2m; 0 for no
    /// limit. The SQLite work stops when it runs out.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub query_timeout: Duration,
}

impl LimitArgs {
    /// As the service's limits.
    pub fn caps(&self) -> Caps {
        Caps {
            stacks: self.stacks.limits(),
            max_answer_nodes: self.max_answer_nodes as usize,
            max_concurrent_queries: self.max_concurrent_queries as usize,
            max_queued_queries: self.max_queued_queries as usize,
            query_timeout: Some(self.query_timeout).filter(|t| !t.is_zero()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        limits: LimitArgs,
    }

    #[test]
    fn defaults_are_the_documented_ones() {
        let caps = Cli::parse_from(["x"]).limits.caps();
        assert_eq!(caps, Caps::default());
        assert_eq!(caps.query_timeout, Some(Duration::from_secs(30)));
    }

    #[test]
    fn options_set_every_limit_and_zero_means_no_time_limit() {
        let cli = Cli::parse_from([
            "x",
            "--max-stack-frames",
            "10",
            "--max-frame-bytes",
            "20",
            "--max-answer-nodes",
            "30",
            "--max-concurrent-queries",
            "2",
            "--max-queued-queries",
            "0",
            "--query-timeout",
            "0",
        ]);
        let caps = cli.limits.caps();
        assert_eq!(caps.stacks.max_frames, 10);
        assert_eq!(caps.stacks.max_frame_bytes, 20);
        assert_eq!(caps.max_answer_nodes, 30);
        assert_eq!(caps.max_concurrent_queries, 2);
        assert_eq!(caps.max_queued_queries, 0);
        assert_eq!(caps.query_timeout, None);
        let cli = Cli::parse_from(["x", "--query-timeout", "1m 30s"]);
        assert_eq!(
            cli.limits.caps().query_timeout,
            Some(Duration::from_secs(90))
        );
        assert!(Cli::try_parse_from(["x", "--max-concurrent-queries", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--query-timeout", "soon"]).is_err());
    }
}
