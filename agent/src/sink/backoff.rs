//! What to do after a send: done, retry later (a 5xx, a 503 with `Retry-After`, a connection
//! that failed), or give up (a 4xx: the service refused the body itself, sending it again cannot
//! help).

use std::time::{Duration, SystemTime};

/// First retry delay.
pub const FIRST_DELAY: Duration = Duration::from_millis(500);
/// Longest delay between two tries (also the cap on a `Retry-After`).
pub const MAX_DELAY: Duration = Duration::from_secs(60);

/// How one attempt ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Attempt {
    /// An HTTP answer with this status and `Retry-After` header (if any).
    Answered {
        /// The status code.
        status: u16,
        /// The raw `Retry-After` value.
        retry_after: Option<String>,
    },
    /// No answer: connection refused, reset, timed out.
    Failed,
}

/// The decision.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Sent; go on with the next body.
    Done,
    /// Try the same body again after this long.
    Retry(Duration),
    /// Drop the body: the service will never take it.
    GiveUp,
}

/// Decide after attempt number `attempt` (0 = the first try); `jitter` in [0, 1) spreads the
/// retries of many agents (the delay is scaled by 0.5 + jitter/2).
pub fn next(outcome: &Attempt, attempt: u32, jitter: f64, now: SystemTime) -> Next {
    let backoff = || {
        let doubled = FIRST_DELAY.saturating_mul(1u32 << attempt.min(16));
        doubled
            .min(MAX_DELAY)
            .mul_f64(0.5 + jitter.clamp(0.0, 1.0) / 2.0)
    };
    match outcome {
        Attempt::Answered { status, .. } if (200..300).contains(status) => Next::Done,
        Attempt::Answered { status, .. } if (400..500).contains(status) => Next::GiveUp,
        Attempt::Answered { retry_after, .. } => {
            let asked = retry_after
                .as_deref()
                .and_then(|v| parse_retry_after(v, now));
            Next::Retry(asked.map_or_else(backoff, |d| d.min(MAX_DELAY)))
        }
        Attempt::Failed => Next::Retry(backoff()),
    }
}

/// `Retry-After` as seconds (`120`) or an HTTP date (`Wed, 21 Oct 2015 07:28:00 GMT`).
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(status: u16, retry_after: Option<&str>) -> Attempt {
        Attempt::Answered {
            status,
            retry_after: retry_after.map(str::to_owned),
        }
    }

    #[test]
    fn success_is_done_and_a_4xx_is_never_retried() {
        let now = SystemTime::UNIX_EPOCH;
        assert_eq!(next(&answered(200, None), 0, 0.0, now), Next::Done);
        for status in [400, 401, 403, 404, 413, 422, 429] {
            assert_eq!(
                next(&answered(status, Some("1")), 3, 0.0, now),
                Next::GiveUp
            );
        }
    }

    #[test]
    fn a_503_waits_as_long_as_it_is_told_and_others_back_off_doubling() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_445_412_470);
        assert_eq!(
            next(&answered(503, Some("7")), 0, 0.9, now),
            Next::Retry(Duration::from_secs(7))
        );
        assert_eq!(
            next(
                &answered(503, Some("Wed, 21 Oct 2015 07:28:00 GMT")),
                0,
                0.0,
                now
            ),
            Next::Retry(Duration::from_secs(10))
        );
        assert_eq!(
            next(&answered(503, Some("86400")), 0, 0.0, now),
            Next::Retry(MAX_DELAY)
        );
        let delays: Vec<Next> = (0..4)
            .map(|a| next(&Attempt::Failed, a, 1.0, now))
            .collect();
        assert_eq!(
            delays,
            [500, 1000, 2000, 4000].map(|ms| Next::Retry(Duration::from_millis(ms)))
        );
        assert_eq!(
            next(&answered(500, Some("soon")), 30, 0.0, now),
            Next::Retry(MAX_DELAY / 2)
        );
        assert_eq!(parse_retry_after(" 3 ", now), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after("-3", now), None);
    }
}
