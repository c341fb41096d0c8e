//! Whether ClickHouse's schema exists and ClickHouse answers: created at start, or on first use
//! when ClickHouse was down then (the service starts anyway and answers 503 meanwhile), and the
//! readiness probe.

use std::sync::atomic::Ordering;

use super::{ch_err, client_for, in_context, schema, snapshots, ClickHouseConfig, ClickHouseStore};
use crate::store::StoreError;

impl ClickHouseStore {
    /// [`ClickHouseStore::open`], except that a ClickHouse that cannot be reached (an
    /// [`StoreError::Unavailable`]) does not stop the start: the service comes up, answers
    /// 503 until ClickHouse is back and creates the schema on first use. Wrong settings
    /// (names, a shard without its table) still fail here.
    pub fn open_lazily(config: &ClickHouseConfig) -> Result<ClickHouseStore, StoreError> {
        let store = ClickHouseStore::connect(config)?;
        match store.ensure_schema() {
            Err(StoreError::Unavailable { outage, detail }) => {
                tracing::warn!(
                    store = %store.describe(),
                    %detail,
                    "{}; serving anyway: requests that need the store are answered 503 until it is back",
                    outage.cause
                );
                Ok(store)
            }
            other => other.map(|()| store),
        }
    }

    /// Create the database and tables unless that was done already; every store call passes
    /// here first (see `Store`'s dispatch).
    pub fn ensure_schema(&self) -> Result<(), StoreError> {
        if self.schema_ready.load(Ordering::Acquire) {
            return Ok(());
        }
        let _creating = self.schema_lock.lock().unwrap_or_else(|p| p.into_inner());
        if !self.schema_ready.load(Ordering::Acquire) {
            self.block_on(self.create_schema())?;
            self.schema_ready.store(true, Ordering::Release);
        }
        Ok(())
    }

    /// Whether ClickHouse answers now: the schema is there and a read touches every shard.
    pub fn probe(&self) -> Result<(), StoreError> {
        self.ensure_schema()?;
        self.sample_count().map(|_| ())
    }

    async fn create_schema(&self) -> Result<(), StoreError> {
        let db = &self.config.database;
        for url in &self.config.urls {
            let client = client_for(url, &self.config);
            let exec = |sql: String| {
                let client = client.clone();
                async move {
                    client
                        .query(&sql)
                        .execute()
                        .await
                        .map_err(|e| in_context(ch_err(e), url))
                }
            };
            let tables = schema::ddl(db, self.config.cluster.as_deref());
            for sql in tables.into_iter().chain(snapshots::ddl(db)) {
                exec(sql).await?;
            }
            self.add_sample_columns(&client)
                .await
                .map_err(|e| in_context(e, url))?;
        }
        // Reading the table touches every shard: a shard without its local table fails here,
        // at start, rather than on the first query.
        self.count("SELECT count() AS n FROM {t}")
            .await
            .map_err(|e| match e {
                StoreError::ClickHouse(text) => StoreError::ClickHouse(format!(
                    "{text}; with --clickhouse-cluster, pass one --clickhouse-url per shard"
                )),
                other => other,
            })?;
        self.mark_wide_levels().await
    }
}
