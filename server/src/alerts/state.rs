//! Which (rule, service) pairs are firing, so a rule fires once when a service's function
//! grows past it and again only after it has resolved (no function of that service past the
//! rule at a check). Kept in a small SQLite file of its own (`--alert-state`, by default
//! `alerts.db` beside a SQLite store), so a restart does not fire everything again; in memory
//! when there is no such place (a ClickHouse store without `--alert-state`): the store's own
//! schema stays the store's, and ClickHouse is not written per check.
//!
//! Keyed by rule and service, not function: one regression grows its function and every
//! function it calls (by total) at once; one alert names them all.

use std::path::Path;
use std::sync::Mutex;

use rusqlite::{params, Connection};

/// The firing state.
#[derive(Debug)]
pub struct FiringState {
    conn: Mutex<Connection>,
}

/// A pair firing: rule, service, the function it fired for, and since when (Unix seconds).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Firing {
    pub rule: String,
    pub service: String,
    pub function: String,
    pub since: i64,
}

impl FiringState {
    /// The state in the file `path` (created if new), or in memory with `None`.
    pub fn open(path: Option<&Path>) -> Result<FiringState, String> {
        let conn = match path {
            Some(p) => Connection::open(p)
                .map_err(|e| format!("cannot open the alert state {}: {e}", p.display()))?,
            None => Connection::open_in_memory()
                .map_err(|e| format!("cannot open the alert state in memory: {e}"))?,
        };
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS firing (
                rule TEXT NOT NULL, service TEXT NOT NULL, function TEXT NOT NULL,
                since INTEGER NOT NULL, PRIMARY KEY (rule, service))",
        )
        .map_err(|e| format!("cannot set up the alert state: {e}"))?;
        Ok(FiringState {
            conn: Mutex::new(conn),
        })
    }

    fn with<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T, String> {
        let conn = self.conn.lock().unwrap_or_else(|p| p.into_inner());
        f(&conn).map_err(|e| format!("alert state: {e}"))
    }

    /// Every pair firing.
    pub fn all(&self) -> Result<Vec<Firing>, String> {
        self.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT rule, service, function, since FROM firing ORDER BY 1, 2",
            )?;
            let rows = stmt.query_map([], |r| {
                Ok(Firing {
                    rule: r.get(0)?,
                    service: r.get(1)?,
                    function: r.get(2)?,
                    since: r.get(3)?,
                })
            })?;
            rows.collect()
        })
    }

    /// Records that `f` fired; false when the pair was firing already (nothing changes).
    pub fn fire(&self, f: &Firing) -> Result<bool, String> {
        self.with(|c| {
            let n = c.execute(
                "INSERT OR IGNORE INTO firing (rule, service, function, since) VALUES (?1, ?2, ?3, ?4)",
                params![f.rule, f.service, f.function, f.since],
            )?;
            Ok(n == 1)
        })
    }

    /// Records that the pair resolved.
    pub fn resolve(&self, rule: &str, service: &str) -> Result<(), String> {
        self.with(|c| {
            c.execute(
                "DELETE FROM firing WHERE rule = ?1 AND service = ?2",
                params![rule, service],
            )
            .map(|_| ())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_fires_once_until_it_resolves_and_survives_a_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("alerts.db");
        let f = Firing {
            rule: "r".into(),
            service: "api-gateway".into(),
            function: "encode".into(),
            since: 10,
        };
        let state = FiringState::open(Some(&path)).unwrap();
        assert!(state.fire(&f).unwrap());
        assert!(!state
            .fire(&Firing {
                since: 20,
                ..f.clone()
            })
            .unwrap());
        drop(state);
        let state = FiringState::open(Some(&path)).unwrap();
        assert_eq!(state.all().unwrap(), std::slice::from_ref(&f));
        state.resolve("r", "api-gateway").unwrap();
        assert!(state.all().unwrap().is_empty());
        assert!(state.fire(&f).unwrap(), "fires again once resolved");
        let memory = FiringState::open(None).unwrap();
        assert!(memory.fire(&f).unwrap() && !memory.fire(&f).unwrap());
    }
}
