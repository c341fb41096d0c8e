//! How the upstream querier is asked: answer size bound, timeouts, and which `X-Org-Id` goes
//! with each request (none unless configured: a client's header is never passed on as is).

use std::time::Duration;

use axum::http::{HeaderMap, HeaderValue};
use clap::Args;

use super::ORG_HEADER;
use crate::error::Error;

/// Default bound of an upstream answer: above a million-node shape-A answer (~183 MB), the
/// querier's own cap.
pub const DEFAULT_MAX_BYTES: u64 = 256 * 1024 * 1024;
/// Default wait for a connection.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// Default number of services whose ProfileTracing answers a functions question reads.
pub const DEFAULT_FANOUT: usize = 10;
/// Most services a functions question may read.
pub const MAX_FANOUT: usize = 100;
/// Default longest silence while waiting for the answer or its next bytes (the querier runs
/// its ClickHouse query, up to 60 s, before it answers).
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(120);

/// The upstream options of `serve`.
#[derive(Debug, Clone, Args)]
pub struct UpstreamArgs {
    /// Largest upstream answer relayed, bytes; a bigger one is a 502 (or, when the querier did
    /// not announce its size, a transfer cut at the limit).
    #[arg(long, default_value_t = DEFAULT_MAX_BYTES)]
    pub upstream_max_bytes: u64,
    /// Longest wait for a connection to the querier (e.g. 10s, 1m).
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub upstream_connect_timeout: Duration,
    /// Longest silence from the querier: before its answer starts, or between its bytes.
    #[arg(long, default_value = "120s", value_parser = humantime::parse_duration)]
    pub upstream_read_timeout: Duration,
    /// X-Org-Id (DeepFlow organisation) sent with every upstream request that does not choose
    /// an allowed one itself.
    #[arg(long, value_name = "N")]
    pub org_id: Option<u32>,
    /// An X-Org-Id a client may choose (repeatable); a request naming another is refused.
    #[arg(long = "allow-org-id", value_name = "N")]
    pub allow_org_ids: Vec<u32>,
    /// Services (the busiest of the range) whose ProfileTracing answers a functions question
    /// reads: a querier keeps no per-function table (1 to 100).
    #[arg(long, default_value_t = DEFAULT_FANOUT, value_name = "N")]
    pub upstream_fanout: usize,
}

impl UpstreamArgs {
    /// The options these arguments give.
    pub fn options(&self) -> Result<UpstreamOptions, String> {
        if self.upstream_max_bytes == 0 {
            return Err("--upstream-max-bytes must be at least 1".into());
        }
        if !(1..=MAX_FANOUT).contains(&self.upstream_fanout) {
            return Err(format!(
                "--upstream-fanout must be 1 to {MAX_FANOUT}, got {}",
                self.upstream_fanout
            ));
        }
        Ok(UpstreamOptions {
            max_bytes: self.upstream_max_bytes,
            connect_timeout: self.upstream_connect_timeout,
            read_timeout: self.upstream_read_timeout,
            org_id: self.org_id,
            allow_org_ids: self.allow_org_ids.clone(),
            fanout: self.upstream_fanout,
        })
    }
}

/// How the upstream querier is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamOptions {
    /// Largest answer relayed or read, bytes.
    pub max_bytes: u64,
    /// Longest wait for a connection.
    pub connect_timeout: Duration,
    /// Longest silence from the querier.
    pub read_timeout: Duration,
    /// X-Org-Id sent when the client names none.
    pub org_id: Option<u32>,
    /// X-Org-Id values a client may name.
    pub allow_org_ids: Vec<u32>,
    /// Services a functions question reads.
    pub fanout: usize,
}

impl Default for UpstreamOptions {
    fn default() -> Self {
        UpstreamOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            read_timeout: DEFAULT_READ_TIMEOUT,
            org_id: None,
            allow_org_ids: Vec::new(),
            fanout: DEFAULT_FANOUT,
        }
    }
}

/// The X-Org-Id to send upstream, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Org(Option<HeaderValue>);

impl Org {
    /// The header value to send, if any.
    pub fn header(&self) -> Option<&HeaderValue> {
        self.0.as_ref()
    }
}

impl UpstreamOptions {
    /// The organisation a request is answered for: the one it names when that is allowed
    /// (`--allow-org-id`, or equal to `--org-id`), else `--org-id`, else none. Naming any
    /// other is a 403: answering from the default organisation instead would show another
    /// organisation's profiles as if they were the one asked for.
    pub fn org(&self, headers: &HeaderMap) -> Result<Org, Error> {
        let Some(asked) = headers.get(ORG_HEADER) else {
            return Ok(Org(self.org_id.map(HeaderValue::from)));
        };
        let text = asked.to_str().unwrap_or("").trim();
        let id = text.parse::<u32>().ok();
        match id {
            Some(id) if self.allow_org_ids.contains(&id) || self.org_id == Some(id) => {
                Ok(Org(Some(HeaderValue::from(id))))
            }
            _ => Err(Error::forbidden(format!(
                "X-Org-Id {text:?} is not forwarded to the querier: this service sends {} \
                 (start it with --allow-org-id N for each organisation clients may choose)",
                self.org_id
                    .map_or_else(|| "no X-Org-Id".to_owned(), |id| format!("X-Org-Id {id}")),
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asking(org: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(ORG_HEADER, HeaderValue::from_str(org).unwrap());
        h
    }

    #[test]
    fn the_org_header_is_sent_only_when_configured() {
        let open = UpstreamOptions::default();
        assert_eq!(open.org(&HeaderMap::new()).unwrap().header(), None);
        let e = open.org(&asking("7")).unwrap_err();
        assert_eq!(e.status(), axum::http::StatusCode::FORBIDDEN);
        assert!(
            e.description().contains("--allow-org-id"),
            "{}",
            e.description()
        );
        let fixed = UpstreamOptions {
            org_id: Some(3),
            ..UpstreamOptions::default()
        };
        assert_eq!(fixed.org(&HeaderMap::new()).unwrap().header().unwrap(), "3");
        assert_eq!(fixed.org(&asking("3")).unwrap().header().unwrap(), "3");
        assert!(fixed.org(&asking("4")).is_err());
        let listed = UpstreamOptions {
            org_id: Some(1),
            allow_org_ids: vec![5, 7],
            ..UpstreamOptions::default()
        };
        assert_eq!(listed.org(&asking(" 7 ")).unwrap().header().unwrap(), "7");
        assert_eq!(
            listed.org(&HeaderMap::new()).unwrap().header().unwrap(),
            "1"
        );
        assert!(listed.org(&asking("6")).is_err());
        assert!(listed.org(&asking("7; DROP")).is_err());
    }
}
