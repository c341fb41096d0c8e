//! Which store failures are the store's state rather than the request or a bug: ClickHouse that
//! cannot be reached or reports a passing condition (memory, too many queries, a read-only
//! replica), SQLite that is busy, locked, out of disk or failing I/O. The service answers them
//! 503 with `Retry-After` naming the store, and `GET /readyz` reports them, so senders retry
//! these and never a 4xx.

use std::fmt;

use rusqlite::ErrorCode;

/// Which backend a store is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    /// The embedded SQLite file.
    Sqlite,
    /// A ClickHouse server or cluster.
    ClickHouse,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Sqlite => "SQLite",
            Backend::ClickHouse => "ClickHouse",
        })
    }
}

/// A store that cannot serve now but may shortly: what clients are told (no paths, URLs or
/// server text; those go to the log).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outage {
    /// Which store.
    pub backend: Backend,
    /// What is wrong, in a few words a client can act on.
    pub cause: &'static str,
    /// Seconds a sender should wait before trying again (`Retry-After`).
    pub retry_after: u32,
}

/// Seconds to wait when another writer holds the database's lock: it lets go within a transaction.
const BUSY_RETRY: u32 = 1;
/// Seconds to wait when the store is down or failing: long enough not to hammer it.
const DOWN_RETRY: u32 = 5;

impl Outage {
    /// A ClickHouse outage with `cause`.
    pub fn clickhouse(cause: &'static str) -> Outage {
        Outage {
            backend: Backend::ClickHouse,
            cause,
            retry_after: DOWN_RETRY,
        }
    }

    /// A SQLite outage with `cause`.
    pub fn sqlite(cause: &'static str) -> Outage {
        Outage {
            backend: Backend::Sqlite,
            cause,
            retry_after: DOWN_RETRY,
        }
    }

    /// The message a client gets.
    pub fn describe(&self) -> String {
        format!(
            "the {} store is unavailable: {}; retry after {} s (GET /readyz says when it is back)",
            self.backend, self.cause, self.retry_after
        )
    }
}

/// The outage a SQLite error means, if it is one. Corruption, schema errors and misuse are
/// not: retrying does not mend them.
pub fn sqlite(e: &rusqlite::Error) -> Option<Outage> {
    let rusqlite::Error::SqliteFailure(failure, _) = e else {
        return None;
    };
    let (cause, retry_after) = match failure.code {
        ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked => (
            "the database is locked by another writer (busy)",
            BUSY_RETRY,
        ),
        ErrorCode::FileLockingProtocolFailed => ("the database's lock failed (busy)", BUSY_RETRY),
        ErrorCode::SystemIoFailure => ("a disk I/O error", DOWN_RETRY),
        ErrorCode::DiskFull => ("the disk is full", DOWN_RETRY),
        ErrorCode::ReadOnly => ("the database cannot be written (read-only)", DOWN_RETRY),
        ErrorCode::CannotOpen => ("the database file cannot be opened", DOWN_RETRY),
        ErrorCode::OutOfMemory => ("out of memory", DOWN_RETRY),
        _ => return None,
    };
    Some(Outage {
        backend: Backend::Sqlite,
        cause,
        retry_after,
    })
}

/// ClickHouse exception codes that mean a passing condition of the server, not a wrong
/// statement: timeouts, memory, too many queries or parts, a read-only or unreachable replica,
/// no space, the coordinator.
const CLICKHOUSE_PASSING: [(u32, &str); 12] = [
    (159, "a query timed out in ClickHouse"),
    (202, "ClickHouse runs too many queries"),
    (209, "ClickHouse timed out on a socket"),
    (210, "ClickHouse has a network error"),
    (241, "ClickHouse is out of memory"),
    (242, "a ClickHouse table is read-only"),
    (243, "ClickHouse has no disk space left"),
    (252, "ClickHouse has too many parts (merges are behind)"),
    (279, "ClickHouse cannot reach a shard"),
    (319, "ClickHouse does not know whether an insert succeeded"),
    (425, "ClickHouse reports a system error"),
    (999, "ClickHouse's coordinator (Keeper) fails"),
];

/// The outage a ClickHouse client error means, if it is one.
pub fn clickhouse(e: &clickhouse::error::Error) -> Option<Outage> {
    use clickhouse::error::Error;
    match e {
        Error::Network(_) => Some(Outage::clickhouse("ClickHouse cannot be reached")),
        Error::TimedOut => Some(Outage::clickhouse("ClickHouse did not answer in time")),
        Error::BadResponse(text) => {
            let code = exception_code(text)?;
            CLICKHOUSE_PASSING
                .iter()
                .find(|(c, _)| *c == code)
                .map(|(_, cause)| Outage::clickhouse(cause))
        }
        _ => None,
    }
}

/// `N` from a ClickHouse exception text `Code: N. DB::Exception: ...`.
fn exception_code(text: &str) -> Option<u32> {
    let rest = &text[text.find("Code: ")? + "Code: ".len()..];
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    rest.get(..digits)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure(code: i32) -> rusqlite::Error {
        rusqlite::Error::SqliteFailure(rusqlite::ffi::Error::new(code), None)
    }

    #[test]
    fn sqlite_busy_io_and_full_are_outages_and_corruption_is_not() {
        let busy = sqlite(&failure(rusqlite::ffi::SQLITE_BUSY)).expect("busy");
        assert_eq!((busy.backend, busy.retry_after), (Backend::Sqlite, 1));
        assert!(busy
            .describe()
            .starts_with("the SQLite store is unavailable: "));
        for code in [
            rusqlite::ffi::SQLITE_IOERR,
            rusqlite::ffi::SQLITE_FULL,
            rusqlite::ffi::SQLITE_READONLY,
            rusqlite::ffi::SQLITE_CANTOPEN,
        ] {
            assert_eq!(sqlite(&failure(code)).map(|o| o.retry_after), Some(5));
        }
        assert_eq!(sqlite(&failure(rusqlite::ffi::SQLITE_CORRUPT)), None);
        assert_eq!(sqlite(&rusqlite::Error::QueryReturnedNoRows), None);
    }

    #[test]
    fn clickhouse_codes_are_read_from_the_exception_text() {
        let e = clickhouse::error::Error::BadResponse(
            "Code: 241. DB::Exception: Memory limit (total) exceeded".into(),
        );
        assert_eq!(
            clickhouse(&e).map(|o| o.cause),
            Some("ClickHouse is out of memory")
        );
        let syntax =
            clickhouse::error::Error::BadResponse("Code: 62. DB::Exception: Syntax".into());
        assert_eq!(clickhouse(&syntax), None);
        assert_eq!(exception_code("no code here"), None);
        assert_eq!(exception_code("Code: 12"), Some(12));
    }
}
