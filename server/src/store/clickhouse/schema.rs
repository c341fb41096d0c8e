//! The ClickHouse schema: one flat table close to DeepFlow's `profile.in_process`.
//!
//! Columns: `time` (a `DateTime`: 18.16 has no `DateTime64`), `_id`, `app_service`,
//! `profile_location_str` (the `;`-joined stack, stored per row as DeepFlow does: ClickHouse's
//! column compression takes the repetition away, so a separate stacks table and join does not
//! pay here), `profile_value`, event type, language, the two timestamps, every settable column
//! of the contract's field table (`profile_value_unit`, `host`, `pod`, ...) and the open tag
//! families as DeepFlow's `tag_names`/`tag_values` arrays.
//!
//! `ENGINE = MergeTree() PARTITION BY toStartOfHour(time) ORDER BY (app_service,
//! profile_language_type, time)`: the syntax both 18.16 and current ClickHouse run. 18.16 has no
//! table TTL (it arrived in 19.6), so retention drops whole hour partitions
//! (`ALTER TABLE ... DROP PARTITION`).
//!
//! With a cluster, `in_process_local` holds each shard's rows and `in_process` is a
//! `Distributed` table over them, sharded by `rand()` so that ingest spreads evenly and every
//! query runs on all shards in parallel. The local tables are created on every shard directly
//! (`ON CLUSTER` would need ZooKeeper).

use embers_model::contract::fields::{self, FieldKind};

/// The columns in table order with their ClickHouse types; ingest writes them in this order.
pub(crate) fn columns() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![
        ("time", "DateTime"),
        ("_id", "Int64"),
        ("app_service", "String"),
        ("profile_location_str", "String"),
        ("profile_value", "Int64"),
        ("profile_event_type", "String"),
        ("profile_language_type", "String"),
        ("profile_create_timestamp", "Int64"),
        ("profile_in_timestamp", "Int64"),
    ];
    out.extend(fields::settable_columns().map(|def| {
        let ty = match def.kind {
            FieldKind::Text => "String",
            FieldKind::Int => "Int64",
        };
        (def.name, ty)
    }));
    out.push(("tag_names", "Array(String)"));
    out.push(("tag_values", "Array(String)"));
    out
}

/// `CREATE TABLE IF NOT EXISTS db.table (...) ENGINE = MergeTree() ...`. `db` and `table` are
/// checked identifiers.
pub(crate) fn merge_tree(db: &str, table: &str) -> String {
    let cols: Vec<String> = columns()
        .iter()
        .map(|(name, ty)| format!("  `{name}` {ty}"))
        .collect();
    format!(
        "CREATE TABLE IF NOT EXISTS {db}.{table} (\n{}\n) ENGINE = MergeTree() \
         PARTITION BY toStartOfHour(time) ORDER BY (app_service, profile_language_type, time)",
        cols.join(",\n")
    )
}

/// The `Distributed` table `db.in_process` over `db.in_process_local` of `cluster`.
pub(crate) fn distributed(db: &str, cluster: &str) -> String {
    format!(
        "CREATE TABLE IF NOT EXISTS {db}.in_process AS {db}.in_process_local \
         ENGINE = Distributed({cluster}, {db}, in_process_local, rand())"
    )
}

/// The column list of an insert: `(time, _id, ...)`.
pub(crate) fn insert_columns() -> String {
    let names: Vec<String> = columns()
        .iter()
        .map(|(name, _)| format!("`{name}`"))
        .collect();
    format!("({})", names.join(", "))
}

/// Whether `name` can be pasted into SQL as a database or cluster identifier.
pub(crate) fn is_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_settable_field_is_a_column_once() {
        let cols = columns();
        for def in fields::settable_columns() {
            assert_eq!(cols.iter().filter(|(n, _)| *n == def.name).count(), 1);
        }
        let ddl = merge_tree("embers", "in_process");
        assert!(ddl.contains("PARTITION BY toStartOfHour(time)"), "{ddl}");
        assert!(ddl.contains("`profile_value_unit` String"), "{ddl}");
    }

    #[test]
    fn identifiers_are_checked() {
        assert!(is_identifier("embers_1"));
        for bad in ["", "1db", "a-b", "a.b", "x`; DROP", "é"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
