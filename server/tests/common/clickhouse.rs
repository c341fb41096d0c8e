//! Reaching the local ClickHouse the tests run against (`scripts/clickhouse.sh single` and
//! `cluster`), with a fresh database per test so runs never see each other's rows.

use std::sync::Arc;

use embers_server::store::{ClickHouseConfig, Store};

use super::{TempDb, TestServer};

/// The single node of `scripts/clickhouse.sh single`.
pub const SINGLE: &str = "http://127.0.0.1:18123";
/// The two shards of `scripts/clickhouse.sh cluster`, cluster `embers`.
pub const SHARDS: [&str; 2] = ["http://127.0.0.1:18124", "http://127.0.0.1:18125"];

/// Which local ClickHouse a test uses.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    Single,
    TwoShards,
}

/// A ClickHouse store over a database of its own; `None` (after a loud note) when ClickHouse is
/// not running and `EMBERS_SKIP_CLICKHOUSE` is set outside CI. Without that variable, or in CI,
/// an absent ClickHouse fails the test: these tests must not pass by doing nothing.
pub fn store(layout: Layout, test: &str) -> Option<Arc<Store>> {
    let (urls, cluster) = match layout {
        Layout::Single => (vec![SINGLE.to_owned()], None),
        Layout::TwoShards => (
            SHARDS.map(str::to_owned).to_vec(),
            Some("embers".to_owned()),
        ),
    };
    let up = urls.iter().all(|u| answers(u));
    if !up {
        let skip = std::env::var_os("EMBERS_SKIP_CLICKHOUSE").is_some();
        let ci = std::env::var_os("CI").is_some_and(|v| !v.is_empty());
        assert!(
            skip && !ci,
            "ClickHouse is not running at {urls:?}: start it with `scripts/clickhouse.sh single` \
             and `scripts/clickhouse.sh cluster` (or, outside CI, set EMBERS_SKIP_CLICKHOUSE=1 to \
             skip the ClickHouse tests)"
        );
        eprintln!(
            "\n!!!!! SKIPPED ClickHouse test {test}: EMBERS_SKIP_CLICKHOUSE is set and no \
             ClickHouse answers at {urls:?} !!!!!\n"
        );
        return None;
    }
    let mut id = [0u8; 6];
    getrandom::fill(&mut id).expect("random");
    let suffix: String = id.iter().map(|b| format!("{b:02x}")).collect();
    let config = ClickHouseConfig {
        urls,
        database: format!("embers_test_{test}_{suffix}"),
        cluster,
        user: None,
        password: None,
    };
    Some(Arc::new(
        Store::open_clickhouse(&config).expect("open ClickHouse store"),
    ))
}

/// A server over SQLite and one over ClickHouse (a database of the test's own), side by side,
/// for the differential tests.
pub struct Pair {
    /// The ClickHouse store.
    pub store: Arc<Store>,
    /// The SQLite store.
    pub sqlite_store: Arc<Store>,
    pub sqlite: TestServer,
    pub clickhouse: TestServer,
    /// Holds the SQLite database.
    pub db: TempDb,
}

impl Pair {
    /// Both servers; `None` when ClickHouse is skipped (see [`store`]).
    pub async fn start(layout: Layout, test: &str) -> Option<Pair> {
        let store = store(layout, test)?;
        let db = TempDb::new();
        let mut sqlite_store = None;
        let sqlite =
            TestServer::start_with(&db.path(), |s| sqlite_store = Some(s.store.clone())).await;
        let clickhouse =
            TestServer::start_over(store.clone(), db.dir.path().join("none"), |_| {}).await;
        Some(Pair {
            store,
            sqlite_store: sqlite_store.expect("the SQLite store"),
            sqlite,
            clickhouse,
            db,
        })
    }

    /// Stops both servers and drops the ClickHouse database.
    pub async fn finish(self) {
        self.sqlite.stop().await;
        self.clickhouse.stop().await;
        drop_database(&self.store);
    }
}

/// A server over the single node's database `db`, opened again as a new server would.
pub async fn reopened(db: String) -> TestServer {
    let config = ClickHouseConfig {
        urls: vec![SINGLE.to_owned()],
        database: db,
        cluster: None,
        user: None,
        password: None,
    };
    let store = Arc::new(Store::open_clickhouse(&config).expect("open again"));
    TestServer::start_over(store, "none".into(), |_| {}).await
}

/// Drop the test's database on every node.
pub fn drop_database(store: &Store) {
    if let Store::ClickHouse(ch) = store {
        ch.drop_database().expect("drop test database");
    }
}

/// Runs `sql` on the single node and waits until its mutations of `db` are done.
pub async fn mutate(client: &reqwest::Client, db: &str, sql: String) {
    let post = |sql: String| client.post(SINGLE).body(sql).send();
    let answer = post(sql.clone()).await.expect("mutation");
    assert!(
        answer.status().is_success(),
        "{sql}: {:?}",
        answer.text().await
    );
    let pending =
        format!("SELECT count() FROM system.mutations WHERE database = '{db}' AND NOT is_done");
    // Mutations are asynchronous on 18.16 (no `mutations_sync`): poll until none is left.
    for _ in 0..600 {
        let text = post(pending.clone())
            .await
            .expect("poll")
            .text()
            .await
            .expect("body");
        if text.trim() == "0" {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("mutations of {db} still running after 30 s");
}

fn answers(url: &str) -> bool {
    let Some(addr) = url.strip_prefix("http://") else {
        return false;
    };
    std::net::TcpStream::connect(addr).is_ok()
}
