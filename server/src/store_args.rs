//! The command-line options that choose the store (`--db` for SQLite, `--clickhouse-*` for
//! ClickHouse) and opening it from them.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Args;

use crate::store::{ClickHouseConfig, Store, StoreError, Synchronous};

/// Environment variable with the ClickHouse user name.
pub const USER_ENV: &str = "EMBERS_CLICKHOUSE_USER";
/// Environment variable with the ClickHouse password.
pub const PASSWORD_ENV: &str = "EMBERS_CLICKHOUSE_PASSWORD";

/// ClickHouse options; without `--clickhouse-url` the SQLite file is the store.
#[derive(Debug, Clone, Default, Args)]
pub struct ClickHouseArgs {
    /// Store profiles in ClickHouse at this HTTP URL (e.g. http://127.0.0.1:8123) instead of
    /// SQLite. With --clickhouse-cluster, repeat it with one node of every shard: each gets the
    /// shard-local table. User and password come from EMBERS_CLICKHOUSE_USER and
    /// EMBERS_CLICKHOUSE_PASSWORD (or --clickhouse-password-file).
    #[arg(long = "clickhouse-url", value_name = "URL")]
    pub urls: Vec<String>,
    /// ClickHouse database (created when missing).
    #[arg(
        long = "clickhouse-database",
        default_value = "embers",
        requires = "urls"
    )]
    pub database: String,
    /// Shard over this cluster of the servers' remote_servers: shard-local tables plus a
    /// Distributed table.
    #[arg(long = "clickhouse-cluster", value_name = "NAME", requires = "urls")]
    pub cluster: Option<String>,
    /// Read the ClickHouse password from this file (its first line).
    #[arg(
        long = "clickhouse-password-file",
        value_name = "PATH",
        requires = "urls"
    )]
    pub password_file: Option<PathBuf>,
}

impl ClickHouseArgs {
    /// The connection settings, or `None` when SQLite is the store.
    pub fn config(&self) -> Result<Option<ClickHouseConfig>, String> {
        if self.urls.is_empty() {
            return Ok(None);
        }
        let env = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let password = match &self.password_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| format!("--clickhouse-password-file {}: {e}", path.display()))?;
                Some(text.lines().next().unwrap_or("").to_owned())
            }
            None => env(PASSWORD_ENV),
        };
        Ok(Some(ClickHouseConfig {
            urls: self.urls.clone(),
            database: self.database.clone(),
            cluster: self.cluster.clone(),
            user: env(USER_ENV),
            password,
        }))
    }
}

/// Open the store the options choose: ClickHouse when a URL is given, else the SQLite file
/// `db` (default [`default_db_path`]) with the writer's `synchronous` setting. Fails when
/// ClickHouse cannot be reached (`import`, `delete`).
pub fn open_store(
    db: Option<&Path>,
    ch: &ClickHouseArgs,
    synchronous: Synchronous,
) -> Result<Arc<Store>, String> {
    open(db, ch, synchronous, Store::open_clickhouse)
}

/// [`open_store`] for `serve`: a ClickHouse that cannot be reached yet does not stop the start
/// (the service answers 503 and `/readyz` says why until it is back).
pub fn open_serving_store(
    db: Option<&Path>,
    ch: &ClickHouseArgs,
    synchronous: Synchronous,
) -> Result<Arc<Store>, String> {
    open(db, ch, synchronous, Store::open_clickhouse_lazily)
}

fn open(
    db: Option<&Path>,
    ch: &ClickHouseArgs,
    synchronous: Synchronous,
    open_clickhouse: fn(&ClickHouseConfig) -> Result<Store, StoreError>,
) -> Result<Arc<Store>, String> {
    let store = match ch.config()? {
        Some(config) => {
            if db.is_some() {
                return Err("--db and --clickhouse-url choose different stores; give one".into());
            }
            open_clickhouse(&config).map_err(|e| format!("cannot open ClickHouse: {e}"))?
        }
        None => {
            let path = db.map_or_else(default_db_path, Path::to_path_buf);
            Store::open_with(&path, synchronous)
                .map_err(|e| format!("cannot open {}: {e}", path.display()))?
        }
    };
    tracing::info!(store = %store.describe(), "opened profile store");
    Ok(Arc::new(store))
}

/// The default database file: `$XDG_DATA_HOME/embers/embers.db`, else
/// `~/.local/share/embers/embers.db`, else `./embers.db`.
pub fn default_db_path() -> PathBuf {
    let from_env = |name: &str| {
        std::env::var_os(name)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(data) = from_env("XDG_DATA_HOME") {
        return data.join("embers").join("embers.db");
    }
    if let Some(home) = from_env("HOME") {
        return home
            .join(".local")
            .join("share")
            .join("embers")
            .join("embers.db");
    }
    PathBuf::from("embers.db")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_url_means_sqlite_and_a_password_file_is_read() {
        assert_eq!(ClickHouseArgs::default().config(), Ok(None));
        let dir = tempfile::tempdir().expect("dir");
        let file = dir.path().join("pw");
        std::fs::write(&file, "s3cret\n").expect("write");
        let args = ClickHouseArgs {
            urls: vec!["http://127.0.0.1:18123".into()],
            database: "embers".into(),
            cluster: Some("embers".into()),
            password_file: Some(file),
        };
        let config = args.config().expect("config").expect("clickhouse");
        assert_eq!(config.password.as_deref(), Some("s3cret"));
        assert_eq!(config.cluster.as_deref(), Some("embers"));
        let missing = ClickHouseArgs {
            password_file: Some(dir.path().join("absent")),
            ..args
        };
        assert!(missing.config().is_err());
    }
}
