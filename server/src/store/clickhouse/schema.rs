//! The ClickHouse schema, close to DeepFlow's `profile.in_process` but normalised where
//! measurement said it pays (see docs/operations.md, "ClickHouse and scaling out": inserting the
//! flat row — the stack text and some 40 tag columns per sample — ran at ~140,000 samples/s here,
//! ids at ~1,000,000):
//!
//! - `in_process`: one row per sample: `time` (a `DateTime`: 18.16 has no `DateTime64`), `_id`,
//!   `app_service`, language, event type, `stack_id` and `thread` (the stack's `[t] ` frame, for
//!   the explore endpoints), `profile_value`, `tagset_id` and the two timestamps.
//!   `ENGINE = MergeTree() PARTITION BY toStartOfHour(time) ORDER BY (app_service,
//!   profile_language_type, time)` — the syntax both 18.16 and current ClickHouse run. 18.16 has
//!   no table TTL (19.6 brought it): retention drops whole hour partitions. Below the sample
//!   (docs/design/lines-and-time.md): `line_stack_id` (0 without lines) and `events` (the
//!   millisecond, thread and weight of its events packed as `store::fine::blob`, empty without
//!   them), both added to older stores by `migrate`;
//! - `line_stacks`: each distinct line-level stack once, keyed by the xxh3 of its stack and
//!   lines: per frame the function's name, file and line (`''` and 0 where unknown);
//! - `stacks`: each distinct `profile_location_str` once, keyed by its 64-bit xxh3 hash;
//! - `tagsets`: each distinct set of batch tags once (every settable column of the contract's
//!   field table, `profile_value_unit` included, and the open families as DeepFlow's
//!   `tag_names`/`tag_values` arrays), keyed by the hash of its contents.
//!
//! - `functions_rollup`: per six hours, hour and 10 minutes, per process, one row: every sample's value
//!   and each function's self and total as a nested map, summed at ingest (`SummingMergeTree`,
//!   partitioned by hour like the samples, so retention drops them alike). One row per bucket
//!   rather than per function: the rows an ingest call writes are then as many as its buckets
//!   and processes, not (as measured first) about as many as its samples;
//! - `functions_fleet`: the same buckets summed over every process but `Total`, what an
//!   unfiltered question ranks by (see `fleet`): a day of 20 processes is a twentieth of the
//!   entries;
//! - `functions`: each function's name, keyed by the hash of it;
//! - `horizon`: the cutoffs of retention passes (see [`crate::store::functions`]), on every node;
//! - `wide_from`: from when the rollup's six-hour buckets are complete (see `wide`), on every node;
//! - `fleet_from`: from when `functions_fleet` is complete and holds no deleted process (see
//!   `fleet`), on every node.
//!
//! The dictionaries (`stacks`, `tagsets`, `functions`) are `ReplacingMergeTree` tables written
//! by any number of stateless servers: a row written twice is the same row, merged away in the
//! background and read with `LIMIT 1 BY id` meanwhile. With a cluster, `in_process_local`,
//! `functions_rollup_local` and `functions_fleet_local` hold each shard's rows under
//! `Distributed` tables without the suffix, sharded by `rand()`; the dictionaries are small and
//! kept whole on every node, so each shard resolves tag filters locally. Every table is created
//! on every node directly (`ON CLUSTER` would need ZooKeeper).

use embers_model::contract::fields::{self, FieldKind};

/// The columns of `in_process` in table order; ingest writes them in this order.
pub(crate) const SAMPLE_COLUMNS: [(&str, &str); 13] = [
    ("time", "DateTime"),
    ("_id", "Int64"),
    ("app_service", "String"),
    ("profile_event_type", "String"),
    ("profile_language_type", "String"),
    ("stack_id", "UInt64"),
    ("thread", "String"),
    ("profile_value", "Int64"),
    ("tagset_id", "UInt64"),
    ("profile_create_timestamp", "Int64"),
    ("profile_in_timestamp", "Int64"),
    ("line_stack_id", "UInt64"),
    ("events", "String"),
];

/// The columns of [`SAMPLE_COLUMNS`] that stores made before them lack, with the value their
/// old rows read: added by [`super::migrate`] in this order (the last ones of the table, so a
/// migrated table and a new one have the same layout).
pub(crate) const ADDED_SAMPLE_COLUMNS: [(&str, &str, &str); 2] =
    [("line_stack_id", "UInt64", "0"), ("events", "String", "''")];

/// The columns of `line_stacks` in table order.
pub(crate) const LINE_STACK_COLUMNS: [(&str, &str); 4] = [
    ("id", "UInt64"),
    ("functions", "Array(String)"),
    ("files", "Array(String)"),
    ("lines", "Array(UInt32)"),
];

/// The columns of `functions_rollup` in table order; ingest writes them in this order. A row
/// is one bucket of `level` seconds of one process: every sample's value (`all_value`) and,
/// in the nested `fnMap`, each function's id, self and total (merges add rows of one key
/// together, `fnMap` by id).
pub(crate) const FUNCTION_COLUMNS: [(&str, &str); 9] = [
    ("level", "UInt32"),
    ("time", "DateTime"),
    ("app_service", "String"),
    ("profile_language_type", "String"),
    ("profile_event_type", "String"),
    ("all_value", "Int64"),
    ("fnMap.id", "Array(UInt64)"),
    ("fnMap.self_value", "Array(Int64)"),
    ("fnMap.total", "Array(Int64)"),
];

/// The columns of `functions_fleet` in table order: [`FUNCTION_COLUMNS`] but the process's
/// name, the buckets' sums over every process but `Total`.
pub(crate) fn fleet_columns() -> Vec<(&'static str, &'static str)> {
    FUNCTION_COLUMNS
        .into_iter()
        .filter(|(name, _)| *name != "app_service")
        .collect()
}

/// A rollup's `columns` as the table declares them (the three arrays as one `Nested`).
fn function_table_columns(columns: &[(&str, &str)]) -> String {
    let plain: Vec<(&str, &str)> = columns
        .iter()
        .copied()
        .filter(|(n, _)| !n.starts_with("fnMap."))
        .collect();
    format!(
        "{}, `fnMap` Nested(`id` UInt64, `self_value` Int64, `total` Int64)",
        column_list(&plain, true)
    )
}

/// The columns of `tagsets` in table order.
pub(crate) fn tagset_columns() -> Vec<(&'static str, &'static str)> {
    let mut out = vec![("id", "UInt64")];
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

fn column_list(columns: &[(&str, &str)], with_types: bool) -> String {
    let cols: Vec<String> = columns
        .iter()
        .map(|(name, ty)| match with_types {
            true => format!("`{name}` {ty}"),
            false => format!("`{name}`"),
        })
        .collect();
    cols.join(", ")
}

/// The DDL of one node: the samples table (`in_process`, or `in_process_local` under a
/// Distributed `in_process` with a cluster), the rollups (likewise), the dictionaries and the
/// markers. `db` and `cluster` are checked identifiers.
pub(crate) fn ddl(db: &str, cluster: Option<&str>) -> Vec<String> {
    let (samples, functions, fleet) = if cluster.is_some() {
        (
            "in_process_local",
            "functions_rollup_local",
            "functions_fleet_local",
        )
    } else {
        ("in_process", "functions_rollup", "functions_fleet")
    };
    let mut out = vec![
        format!("CREATE DATABASE IF NOT EXISTS {db}"),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.{samples} ({}) ENGINE = MergeTree() \
             PARTITION BY toStartOfHour(time) ORDER BY (app_service, profile_language_type, time)",
            column_list(&SAMPLE_COLUMNS, true)
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.stacks (`id` UInt64, `location_str` String) \
             ENGINE = ReplacingMergeTree() ORDER BY id"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.tagsets ({}) ENGINE = ReplacingMergeTree() ORDER BY id",
            column_list(&tagset_columns(), true)
        ),
        // Rows of one key written by several calls (or servers) are summed by merges (the
        // nested `fnMap` by id: its name ends in Map); reads sum them again until then.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.{functions} ({}) ENGINE = SummingMergeTree() \
             PARTITION BY toStartOfHour(time) ORDER BY \
             (profile_event_type, level, time, app_service, profile_language_type)",
            function_table_columns(&FUNCTION_COLUMNS)
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.{fleet} ({}) ENGINE = SummingMergeTree() \
             PARTITION BY toStartOfHour(time) ORDER BY \
             (profile_event_type, level, time, profile_language_type)",
            function_table_columns(&fleet_columns())
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.functions (`id` UInt64, `name` String) \
             ENGINE = ReplacingMergeTree() ORDER BY id"
        ),
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.line_stacks ({}) \
             ENGINE = ReplacingMergeTree() ORDER BY id",
            column_list(&LINE_STACK_COLUMNS, true)
        ),
    ];
    out.extend(markers(db));
    if let Some(cluster) = cluster {
        out.push(format!(
            "CREATE TABLE IF NOT EXISTS {db}.in_process AS {db}.in_process_local \
             ENGINE = Distributed({cluster}, {db}, in_process_local, rand())"
        ));
        out.push(format!(
            "CREATE TABLE IF NOT EXISTS {db}.functions_rollup AS {db}.functions_rollup_local \
             ENGINE = Distributed({cluster}, {db}, functions_rollup_local, rand())"
        ));
        out.push(format!(
            "CREATE TABLE IF NOT EXISTS {db}.functions_fleet AS {db}.functions_fleet_local \
             ENGINE = Distributed({cluster}, {db}, functions_fleet_local, rand())"
        ));
    }
    out
}

/// The DDL of the tables of markers every node keeps: retention's cutoffs and where the
/// rollups' buckets are complete from.
fn markers(db: &str) -> [String; 3] {
    [
        // One row per retention cutoff (rounded up to the hour, so a few a day): reads take
        // the latest.
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.horizon (`cutoff` DateTime) \
             ENGINE = ReplacingMergeTree() ORDER BY cutoff"
        ),
        // One row per node, written when a server first opens the store (see `wide`).
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.wide_from (`start` DateTime) \
             ENGINE = ReplacingMergeTree() ORDER BY start"
        ),
        // A row per node when a server first opens the store and per process deleted (see
        // `fleet`).
        format!(
            "CREATE TABLE IF NOT EXISTS {db}.fleet_from (`start` DateTime) \
             ENGINE = ReplacingMergeTree() ORDER BY start"
        ),
    ]
}

/// `INSERT INTO db.table (cols) FORMAT RowBinary` for `columns`.
pub(crate) fn insert(db: &str, table: &str, columns: &[(&str, &str)]) -> String {
    format!(
        "INSERT INTO {db}.{table} ({}) FORMAT RowBinary",
        column_list(columns, false)
    )
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
    fn every_settable_field_is_a_tagset_column_once() {
        let cols = tagset_columns();
        for def in fields::settable_columns() {
            assert_eq!(cols.iter().filter(|(n, _)| *n == def.name).count(), 1);
        }
        let ddl = ddl("embers", Some("c")).join("\n");
        assert!(ddl.contains("PARTITION BY toStartOfHour(time)"), "{ddl}");
        assert!(ddl.contains("`profile_value_unit` String"), "{ddl}");
        assert!(
            ddl.contains("Distributed(c, embers, in_process_local, rand())"),
            "{ddl}"
        );
    }

    #[test]
    fn identifiers_are_checked() {
        assert!(is_identifier("embers_1"));
        for bad in ["", "1db", "a-b", "a.b", "x`; DROP", "é"] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }
}
