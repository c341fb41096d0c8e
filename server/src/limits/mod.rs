//! What one request may cost, with the defaults the CLI documents, and the gate every query
//! passes: at most `max_concurrent_queries` run at once, at most `max_queued_queries` wait for
//! a turn (more are answered 503 at once), and each local one has `query_timeout` from its
//! arrival to its answer. Local queries run on a blocking thread under a [`Budget`], which SQLite
//! checks while it works: on the deadline, or when the request is dropped because the client
//! went away, the statement stops and its turn is given back. Writes pass a gate of their own
//! ([`writes`]: ingest bytes in flight, save and delete turns, snapshot caps).

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore, TryAcquireError};

use crate::error::Error;
use crate::store::budget::{self, Budget, Stop};

pub mod options;
pub mod sizes;
pub mod write_options;
pub mod writes;

/// Default of `--max-stack-frames`.
pub const DEFAULT_MAX_STACK_FRAMES: u32 = 4096;
/// Default of `--max-frame-bytes`.
pub const DEFAULT_MAX_FRAME_BYTES: u32 = 4096;
/// Default of `--max-answer-nodes`.
pub const DEFAULT_MAX_ANSWER_NODES: u32 = 500_000;
/// Default of `--max-concurrent-queries`.
pub const DEFAULT_MAX_CONCURRENT_QUERIES: u32 = 4;
/// Default of `--max-queued-queries`.
pub const DEFAULT_MAX_QUEUED_QUERIES: u32 = 64;
/// Default of `--query-timeout`.
pub const DEFAULT_QUERY_TIMEOUT: Duration = Duration::from_secs(30);

/// What one ingested stack may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StackLimits {
    /// Most frames in one stack.
    pub max_frames: usize,
    /// Most bytes in one frame's name.
    pub max_frame_bytes: usize,
}

impl Default for StackLimits {
    fn default() -> Self {
        StackLimits {
            max_frames: DEFAULT_MAX_STACK_FRAMES as usize,
            max_frame_bytes: DEFAULT_MAX_FRAME_BYTES as usize,
        }
    }
}

/// Every cost limit of the service.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Caps {
    /// Per ingested stack.
    pub stacks: StackLimits,
    /// Most nodes in a ProfileTracing answer; bigger trees are cut (see
    /// `embers_model::tree::truncate`).
    pub max_answer_nodes: usize,
    /// Queries running at once.
    pub max_concurrent_queries: usize,
    /// Queries waiting for a turn.
    pub max_queued_queries: usize,
    /// From a query's arrival to its answer; `None` for no limit.
    pub query_timeout: Option<Duration>,
}

impl Default for Caps {
    fn default() -> Self {
        Caps {
            stacks: StackLimits::default(),
            max_answer_nodes: DEFAULT_MAX_ANSWER_NODES as usize,
            max_concurrent_queries: DEFAULT_MAX_CONCURRENT_QUERIES as usize,
            max_queued_queries: DEFAULT_MAX_QUEUED_QUERIES as usize,
            query_timeout: Some(DEFAULT_QUERY_TIMEOUT),
        }
    }
}

/// The query gate. Shared by every request (in `AppState`).
#[derive(Debug)]
pub struct Limiter {
    caps: Caps,
    running: Arc<Semaphore>,
    waiting: AtomicUsize,
}

/// Cancels a budget when dropped: dropping the request future stops its blocking work.
struct CancelOnDrop(Budget);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// Counts one waiting query while it exists (also when its request is dropped while waiting).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

impl Limiter {
    /// A gate enforcing `caps` (a zero concurrency still lets one query run at a time).
    pub fn new(caps: Caps) -> Limiter {
        Limiter {
            caps,
            running: Arc::new(Semaphore::new(caps.max_concurrent_queries.max(1))),
            waiting: AtomicUsize::new(0),
        }
    }

    /// The limits.
    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    /// Queries running now.
    pub fn running(&self) -> usize {
        self.caps
            .max_concurrent_queries
            .max(1)
            .saturating_sub(self.running.available_permits())
    }

    /// Queries waiting for a turn now.
    pub fn waiting(&self) -> usize {
        self.waiting.load(Ordering::Relaxed)
    }

    fn deadline(&self) -> Option<Instant> {
        self.caps
            .query_timeout
            .and_then(|t| Instant::now().checked_add(t))
    }

    fn timed_out(&self) -> Error {
        let limit = self.caps.query_timeout.map_or_else(
            || "none".to_owned(),
            |t| humantime::format_duration(t).to_string(),
        );
        Error::timed_out(format!(
            "the query did not finish within the time limit of {limit} (--query-timeout); \
             narrow the time range or the filter"
        ))
    }

    /// A turn to run: at once, after waiting in line, or 503 when the line is full.
    async fn admit(&self, deadline: Option<Instant>) -> Result<OwnedSemaphorePermit, Error> {
        match self.running.clone().try_acquire_owned() {
            Ok(permit) => return Ok(permit),
            Err(TryAcquireError::Closed) => return Err(Error::internal("query gate closed")),
            Err(TryAcquireError::NoPermits) => {}
        }
        let ahead = self.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(&self.waiting);
        if ahead >= self.caps.max_queued_queries {
            return Err(Error::busy(format!(
                "too many queries at once: {} running and {} waiting, the limits \
                 (--max-concurrent-queries, --max-queued-queries); retry shortly",
                self.caps.max_concurrent_queries.max(1),
                self.caps.max_queued_queries
            )));
        }
        let acquire = self.running.clone().acquire_owned();
        let acquired = match deadline {
            Some(d) => tokio::time::timeout_at(d.into(), acquire)
                .await
                .map_err(|_| self.timed_out())?,
            None => acquire.await,
        };
        acquired.map_err(|_| Error::internal("query gate closed"))
    }

    /// Run blocking store work under the gate and a budget. The turn is held by the blocking
    /// thread, so it is given back only when the work has really stopped.
    pub async fn run_blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(&Budget) -> Result<T, Error> + Send + 'static,
    ) -> Result<T, Error> {
        let deadline = self.deadline();
        let permit = self.admit(deadline).await?;
        let budget = Budget::until(deadline);
        let _cancel = CancelOnDrop(budget.clone());
        let task_budget = budget.clone();
        let outcome = crate::blocking::run("query", move || {
            let _permit = permit;
            // Out of time (or abandoned) while waiting for a thread: do not start.
            if task_budget.stop().is_some() {
                return Err(Error::internal("stopped before it started"));
            }
            budget::within(&task_budget, || work(&task_budget))
        })
        .await;
        match outcome {
            Err(failed) => Err(failed.into()),
            Ok(Ok(value)) => Ok(value),
            Ok(Err(_)) if budget.stop() == Some(Stop::TimedOut) => Err(self.timed_out()),
            Ok(Err(e)) => Err(e),
        }
    }

    /// Run async work (the upstream querier) under the gate: the time limit bounds the wait
    /// for a turn, and the upstream's own timeouts (--upstream-connect-timeout,
    /// --upstream-read-timeout) bound the work; dropping the future (client gone) drops the
    /// upstream request too.
    pub async fn run_async<T>(
        &self,
        work: impl Future<Output = Result<T, Error>>,
    ) -> Result<T, Error> {
        let _permit = self.admit(self.deadline()).await?;
        work.await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::StatusCode;
    use std::sync::atomic::AtomicBool;

    fn caps(concurrent: usize, queued: usize, timeout: Option<Duration>) -> Caps {
        Caps {
            max_concurrent_queries: concurrent,
            max_queued_queries: queued,
            query_timeout: timeout,
            ..Caps::default()
        }
    }

    #[tokio::test]
    async fn a_full_line_is_refused_at_once_and_turns_are_given_back() {
        let limiter = Arc::new(Limiter::new(caps(1, 1, None)));
        let (release, wait) = std::sync::mpsc::channel::<()>();
        let holder = limiter.clone();
        let first = tokio::spawn(async move {
            holder
                .run_blocking(move |_| {
                    let _ = wait.recv();
                    Ok(1)
                })
                .await
        });
        while limiter.running.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let queued_limiter = limiter.clone();
        let second = tokio::spawn(async move { queued_limiter.run_blocking(|_| Ok(2)).await });
        while limiter.waiting.load(Ordering::Relaxed) == 0 {
            tokio::task::yield_now().await;
        }
        let third = limiter.run_blocking(|_| Ok(3)).await.expect_err("full");
        assert_eq!(third.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(
            third.description().contains("--max-queued-queries"),
            "{third}"
        );
        release.send(()).expect("release");
        assert_eq!(first.await.expect("join").expect("first"), 1);
        assert_eq!(second.await.expect("join").expect("second"), 2);
        assert_eq!(limiter.waiting.load(Ordering::Relaxed), 0);
        assert_eq!(limiter.running.available_permits(), 1);
    }

    #[tokio::test]
    async fn the_deadline_stops_the_work_and_names_the_limit() {
        let limiter = Limiter::new(caps(1, 0, Some(Duration::from_millis(50))));
        let stopped = Arc::new(AtomicBool::new(false));
        let seen = stopped.clone();
        let e = limiter
            .run_blocking(move |budget| {
                while budget.check().is_ok() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                seen.store(true, Ordering::Relaxed);
                Err::<(), _>(Error::internal("interrupted"))
            })
            .await
            .expect_err("timed out");
        assert!(stopped.load(Ordering::Relaxed));
        assert_eq!(e.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert!(e.description().contains("50ms (--query-timeout)"), "{e}");
    }

    #[tokio::test]
    async fn dropping_the_request_cancels_the_work() {
        let limiter = Arc::new(Limiter::new(caps(1, 0, None)));
        let (stopped_tx, stopped_rx) = std::sync::mpsc::channel();
        let started = Arc::new(AtomicBool::new(false));
        let flag = started.clone();
        let l = limiter.clone();
        let request = tokio::spawn(async move {
            l.run_blocking(move |budget| {
                flag.store(true, Ordering::Relaxed);
                while budget.check().is_ok() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                let _ = stopped_tx.send(budget.stop());
                Ok(())
            })
            .await
        });
        while !started.load(Ordering::Relaxed) {
            tokio::task::yield_now().await;
        }
        request.abort();
        let why = tokio::task::spawn_blocking(move || stopped_rx.recv())
            .await
            .expect("join")
            .expect("stopped");
        assert_eq!(why, Some(Stop::Cancelled));
    }
}
