//! How long a read may run: a deadline and a cancel flag, checked by SQLite itself (a progress
//! handler on the reader connection, so a long statement stops mid-way rather than after it
//! finishes) and by the Rust loops that follow it.
//!
//! A caller runs its store calls [`within`] a budget on the blocking thread doing the work;
//! `Store::with_reader` installs the budget on the connection it hands out. Outside a budget,
//! reads are unlimited (the CLI, benches, tests of the store itself).

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::StoreError;

/// SQLite virtual-machine steps between two looks at the budget (a few microseconds of work).
const STEPS_PER_CHECK: i32 = 1000;

/// Why work stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The deadline passed.
    TimedOut,
    /// The caller went away (the request was dropped).
    Cancelled,
}

/// A deadline (optional) and a cancel flag. Clones share the flag.
#[derive(Debug, Clone)]
pub struct Budget {
    deadline: Option<Instant>,
    cancelled: Arc<AtomicBool>,
}

impl Budget {
    /// A budget ending `limit` from now (`None`: no deadline, only cancellation).
    pub fn new(limit: Option<Duration>) -> Budget {
        Budget::until(limit.and_then(|l| Instant::now().checked_add(l)))
    }

    /// A budget ending at `deadline`.
    pub fn until(deadline: Option<Instant>) -> Budget {
        Budget {
            deadline,
            cancelled: Arc::new(AtomicBool::new(false)),
        }
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    /// Ask every holder of this budget to stop.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    /// Whether (and why) work should stop now.
    pub fn stop(&self) -> Option<Stop> {
        if self.cancelled.load(Ordering::Relaxed) {
            Some(Stop::Cancelled)
        } else if self.deadline.is_some_and(|d| Instant::now() >= d) {
            Some(Stop::TimedOut)
        } else {
            None
        }
    }

    /// `Err(StoreError::Interrupted)` when work should stop.
    pub fn check(&self) -> Result<(), StoreError> {
        match self.stop() {
            Some(_) => Err(StoreError::Interrupted),
            None => Ok(()),
        }
    }
}

thread_local! {
    static CURRENT: RefCell<Option<Budget>> = const { RefCell::new(None) };
}

/// Run `f` with `budget` governing every store read it makes on this thread.
pub fn within<T>(budget: &Budget, f: impl FnOnce() -> T) -> T {
    struct Reset(Option<Budget>);
    impl Drop for Reset {
        fn drop(&mut self) {
            let previous = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = previous);
        }
    }
    let previous = CURRENT.with(|c| c.borrow_mut().replace(budget.clone()));
    let _reset = Reset(previous);
    f()
}

/// The budget of the current thread, if any.
pub fn current() -> Option<Budget> {
    CURRENT.with(|c| c.borrow().clone())
}

/// Make `conn` stop (with `SQLITE_INTERRUPT`) once the current budget runs out; remove any
/// earlier handler when there is no budget.
pub(super) fn install(conn: &Connection) {
    match current() {
        Some(budget) => {
            conn.progress_handler(STEPS_PER_CHECK, Some(move || budget.stop().is_some()))
        }
        None => uninstall(conn),
    }
}

/// Remove the handler (before a connection goes back to the pool).
pub(super) fn uninstall(conn: &Connection) {
    conn.progress_handler(0, None::<fn() -> bool>);
}

/// Whether `e` is SQLite saying a statement was interrupted.
pub(super) fn is_interrupt(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(rusqlite::ErrorCode::OperationInterrupted)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stops_on_cancel_and_on_the_deadline() {
        let b = Budget::new(None);
        assert_eq!(b.stop(), None);
        b.clone().cancel();
        assert_eq!(b.stop(), Some(Stop::Cancelled));
        let late = Budget::until(Some(Instant::now()));
        assert_eq!(late.stop(), Some(Stop::TimedOut));
        assert!(matches!(late.check(), Err(StoreError::Interrupted)));
    }

    #[test]
    fn within_sets_and_restores_the_thread_budget() {
        assert!(current().is_none());
        let b = Budget::new(Some(Duration::from_secs(5)));
        within(&b, || {
            assert_eq!(current().map(|c| c.deadline()), Some(b.deadline()));
        });
        assert!(current().is_none());
    }
}
