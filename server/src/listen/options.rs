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
/// Default of `--body-read-timeout`: a 64 MiB ingest body at about 1 MB/s, the slowest link
/// an agent is expected on.
pub const DEFAULT_BODY_READ_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of `--write-timeout`: a client that takes nothing of an answer for a minute is gone
/// or hostile.
pub const DEFAULT_WRITE_TIMEOUT: Duration = Duration::from_secs(60);
/// Default of `--max-connections`.
pub const DEFAULT_MAX_CONNECTIONS: u32 = 1024;

/// Default of `--max-connections-per-ip`: a quarter of `max_connections` (at least 1), so
/// one client cannot take every slot.
pub fn default_per_ip(max_connections: usize) -> usize {
    (max_connections / 4).max(1)
}

/// How long clients may hold connections, and how many.
#[derive(Debug, Clone, Args)]
pub struct ConnArgs {
    /// Time a client has to send a request's headers (from the connection's start for its
    /// first request, from the first byte for later ones); then the connection is closed.
    /// 0 for no limit.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Duration,
    /// Time a client has to send a request's whole body, counted from the end of its headers
    /// (a deadline, not a rate); past it the request fails with 408 Request Timeout and the
    /// connection is closed. 0 for no limit.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub body_read_timeout: Duration,
    /// Time a kept-alive connection may wait for its next request while none of its requests
    /// is being answered; then it is closed. 0 for no limit.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub idle_timeout: Duration,
    /// Time a write of an answer may make no progress (the client reads nothing); then the
    /// connection is closed. A slow reader that keeps taking bytes is not cut. 0 for no limit.
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub write_timeout: Duration,
    /// Connections served at once; more wait, not yet accepted, in the listen backlog until
    /// one closes. Each takes a file descriptor: keep it under `ulimit -n`.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections: u32,
    /// Connections one client IP address may hold at once [default: a quarter of
    /// --max-connections]; a connection over it is accepted and closed at once. Behind a
    /// proxy or NAT every client shares one address: raise it to --max-connections there.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_ip: Option<u32>,
}

impl ConnArgs {
    /// As the listener's limits.
    pub fn limits(&self) -> ConnLimits {
        let bound = |d: Duration| Some(d).filter(|d| !d.is_zero());
        let max_connections = self.max_connections as usize;
        ConnLimits {
            header_read_timeout: bound(self.header_read_timeout),
            body_read_timeout: bound(self.body_read_timeout),
            idle_timeout: bound(self.idle_timeout),
            write_timeout: bound(self.write_timeout),
            max_connections,
            max_connections_per_ip: self
                .max_connections_per_ip
                .map_or_else(|| default_per_ip(max_connections), |n| n as usize),
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
            "--body-read-timeout",
            "0",
            "--write-timeout",
            "5s",
            "--max-connections",
            "5",
        ]);
        assert_eq!(
            cli.conn.limits(),
            ConnLimits {
                header_read_timeout: None,
                body_read_timeout: None,
                idle_timeout: Some(Duration::from_secs(120)),
                write_timeout: Some(Duration::from_secs(5)),
                max_connections: 5,
                max_connections_per_ip: 1,
            }
        );
        assert!(Cli::try_parse_from(["x", "--max-connections", "0"]).is_err());
        assert!(Cli::try_parse_from(["x", "--max-connections-per-ip", "0"]).is_err());
        let cli = Cli::parse_from(["x", "--max-connections-per-ip", "7"]);
        assert_eq!(cli.conn.limits().max_connections_per_ip, 7);
        assert_eq!(ConnLimits::default().max_connections_per_ip, 256);
    }
}
