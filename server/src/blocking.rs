//! Blocking work (store calls, decoding and parsing big bodies) run off the async threads with
//! [`run`], and the one way its failure to finish is named: `"{what} task failed: {reason}"`
//! ([`TaskFailed`]; the work panicked, or the runtime is shutting down). The service's error
//! (`crate::error::Error`, as a 500) and the commands' `String` errors convert from it, so
//! callers use `?`.

use std::fmt;

use tokio::task::JoinError;

/// A blocking task that did not finish.
#[derive(Debug)]
pub struct TaskFailed {
    what: &'static str,
    join: JoinError,
}

impl fmt::Display for TaskFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} task failed: {}", self.what, self.join)
    }
}

impl std::error::Error for TaskFailed {}

impl From<TaskFailed> for String {
    fn from(e: TaskFailed) -> String {
        e.to_string()
    }
}

/// Runs `work` on tokio's blocking threads; `what` names it should it not finish ("ingest",
/// "snapshot", ...).
pub async fn run<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, TaskFailed> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|join| TaskFailed { what, join })
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_panicking_task_is_named() {
        assert_eq!(super::run("demo", || 7).await.expect("ran"), 7);
        let failed = super::run("demo", || -> u8 { panic!("boom") })
            .await
            .expect_err("panicked");
        assert!(
            failed.to_string().starts_with("demo task failed: "),
            "{failed}"
        );
    }
}
