//! The connection bounds as `serve` options, each with its documented default.

use std::time::Duration;

use clap::Args;

use super::ConnLimits;

/// Default of `--header-read-timeout`: a request's headers are a few hundred bytes; ten
/// seconds covers the slowest real link many times over.
pub const DEFAULT_HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Default of `--idle-timeout`: longer than an agent's usual 10 s between windows, so its
/// connection is reused, and short enough that idle ones do not pile up.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;

/// How long clients may hold connections, and how many.
#[derive(Debug, Clone, Args)]
pub struct ConnArgs {
    /// Time a client has to send a request's headers (from the connection's start for its
    /// first request, from the first byte for later ones); then the connection is closed.
    /// 0 for no limit.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request while none of its requests
    /// is being answered; then it is closed. 0 for no limit.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub idle_timeout: Duration,
    /// Connections served at once; more wait, not yet accepted, in the listen backlog until
    /// one closes. Each takes a file descriptor: keep it under `ulimit -n`.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
}

impl ConnArgs {
    /// As the listener's limits.
    pub fn limits(&self) -> ConnLimits {
        let bound = |d: Duration| Some(d).filter(|d| !d.is_zero());
        ConnLimits {
            header_read_timeout: bound(self.header_read_timeout),
            idle_timeout: bound(self.idle_timeout),
            max_connections: self.max_connections as usize,
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
        conn: ConnArgs,
    }

    #[test]
    fn defaults_match_the_constants_and_zero_means_no_limit() {
        let cli = Cli::parse_from(["x"]);
        assert_eq!(cli.conn.limits(), ConnLimits::default());
        let cli = Cli::parse_from([
            "x",
            "--header-read-timeout",
            "0",
            "--idle-timeout",
            "2m",
            "--max-connections",
            "5",
        ]);
        assert_eq!(
            cli.conn.limits(),
            ConnLimits {
                header_read_timeout: None,
                idle_timeout: Some(Duration::from_secs(120)),
                max_connections: 5,
            }
        );
        assert!(Cli::try_parse_from(["x", "--max-connections", "0"]).is_err());
    }
}
