//! Unit tests of the line store (`super`): lines written at ingest are summed exactly over any
//! range (whole ten-minute buckets and the samples at the edges alike), by tag filter, with
//! recursion counted once per sample, and samples without lines add nothing.

use embers_model::contract::detail::{SampleDetail, SourceLine};
use embers_model::contract::explore::{parse_function_lines_body, FunctionLinesAnswer, LineRow};

use crate::store::{Batch, BatchMeta, Sample, Store, Tags};

fn at(file: &str, line: u32) -> Option<SourceLine> {
    Some(SourceLine {
        file: file.into(),
        line,
    })
}

fn sample(time: i64, stack: &str, value: u64, lines: Vec<Option<SourceLine>>) -> Sample {
    Sample {
        time,
        stack: stack.into(),
        value,
        detail: (!lines.is_empty()).then(|| {
            Box::new(SampleDetail {
                lines,
                events: vec![],
            })
        }),
    }
}

fn batch(pod: &str, samples: Vec<Sample>) -> Batch {
    Batch {
        meta: BatchMeta {
            app_service: "app".into(),
            language: "Golang".into(),
            event_type: "cpu".into(),
            unit: "samples".into(),
            tags: Tags::new().with("pod", pod).expect("tag"),
        },
        samples,
    }
}

fn ask(store: &Store, start: i64, end: i64, function: &str, filter: &str) -> FunctionLinesAnswer {
    let body = serde_json::json!({
        "app_service": "app", "profile_language_type": "Golang", "profile_event_type": "cpu",
        "time_start": start, "time_end": end, "function": function, "tag_filter": filter,
    });
    let q = parse_function_lines_body(body.to_string().as_bytes()).expect("query");
    store.function_lines(&q).expect("answer")
}

fn row(file: &str, line: u32, s: u64, t: u64) -> LineRow {
    LineRow {
        file: file.into(),
        line,
        self_value: s,
        total_value: t,
    }
}

/// Samples over three ten-minute buckets, on two pods; `main.hot` recursing at two lines.
fn filled() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("l.db")).expect("open");
    let hot = |t, v| {
        sample(
            t,
            "main.main;main.hot;main.hot",
            v,
            vec![at("m.go", 5), at("m.go", 12), at("m.go", 9)],
        )
    };
    let calls = |t, v| {
        sample(
            t,
            "main.main;main.hot;runtime.x",
            v,
            vec![at("m.go", 5), at("m.go", 12), None],
        )
    };
    store
        .insert(&[
            batch("a", vec![hot(6_000, 3), calls(6_300, 2), hot(6_599, 1)]),
            batch(
                "a",
                vec![
                    hot(6_600, 10),
                    sample(6_700, "main.main;main.hot", 7, vec![]),
                ],
            ),
            batch("b", vec![hot(7_199, 100), calls(7_200, 1000)]),
        ])
        .expect("insert");
    (dir, store)
}

#[test]
fn lines_sum_exactly_over_buckets_and_edges() {
    let (_dir, store) = filled();
    // Whole buckets [6000, 7200) and one edge second.
    let a = ask(&store, 6_000, 7_200, "main.hot", "");
    assert_eq!(
        a.values,
        vec![row("m.go", 12, 0, 1116), row("m.go", 9, 114, 114),],
        "recursion at two lines: each line once per sample"
    );
    assert_eq!(
        a.function_total_value, 1123,
        "with the sample without lines"
    );
    assert_eq!(a.function_self_value, 121);
    // Edges only (inside one bucket) agree with buckets.
    let edge = ask(&store, 6_001, 6_599, "main.hot", "");
    assert_eq!(
        edge.values,
        vec![row("m.go", 12, 0, 3), row("m.go", 9, 1, 1)]
    );
    let caller = ask(&store, 1, 10_000, "main.main", "");
    assert_eq!(caller.values, vec![row("m.go", 5, 0, 1116)]);
}

#[test]
fn tag_filters_and_per_sample_filters_select_lines() {
    let (_dir, store) = filled();
    let b = ask(&store, 1, 10_000, "main.hot", "pod='b'");
    assert_eq!(
        b.values,
        vec![row("m.go", 12, 0, 1100), row("m.go", 9, 100, 100)]
    );
    // A per-sample field (time) reads the samples themselves.
    let t = ask(&store, 1, 10_000, "main.hot", "time = 7200");
    assert_eq!(t.values, vec![row("m.go", 12, 0, 1000)]);
}

#[test]
fn no_lines_is_an_empty_table_that_says_why() {
    let (_dir, store) = filled();
    let none = ask(&store, 1, 10_000, "runtime.x", "");
    assert!(none.values.is_empty());
    assert_eq!(
        none.reason,
        Some(embers_model::contract::explore::NoLines::NoLineInfo)
    );
    let absent = ask(&store, 1, 10_000, "nowhere", "");
    assert_eq!(
        absent.reason,
        Some(embers_model::contract::explore::NoLines::NoSamples)
    );
}

#[test]
fn lines_that_do_not_fit_their_stack_are_refused() {
    let dir = tempfile::tempdir().expect("dir");
    let store = Store::open(&dir.path().join("l.db")).expect("open");
    let bad = sample(1, "a;b", 1, vec![at("x.c", 1)]);
    let e = store.insert(&[batch("a", vec![bad])]).expect_err("refused");
    assert!(
        e.to_string().contains("1 lines for a stack of 2 frames"),
        "{e}"
    );
    assert_eq!(store.sample_count().expect("count"), 0);
}

#[test]
fn retention_and_delete_remove_line_sums() {
    let (_dir, store) = filled();
    while store.expire_step(7_200, 1000).expect("expire").samples > 0 {}
    let left = ask(&store, 1, 10_000, "main.hot", "");
    assert_eq!(left.values, vec![row("m.go", 12, 0, 1000)]);
    store.delete_app("app", 1000).expect("delete");
    assert!(ask(&store, 1, 10_000, "main.hot", "").values.is_empty());
}

/// The frames of a store as `(id, function, file, line)`, by `sql`.
fn frames(conn: &rusqlite::Connection, sql: &str) -> Vec<(i64, String, String, i64)> {
    conn.prepare(sql)
        .and_then(|mut s| {
            s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)))?
                .collect()
        })
        .expect("frames")
}

/// Turns the store at `path` back into version 6: `frames_at` with version 5's DDL, by texts,
/// under the same ids, without version 7's tables and index. Its frames.
fn back_to_version_6(path: &std::path::Path) -> Vec<(i64, String, String, i64)> {
    let conn = crate::store::connect(path).expect("conn");
    conn.execute_batch(
        "CREATE TABLE profile.frames_at_v5 (
           id INTEGER PRIMARY KEY,
           function TEXT NOT NULL,
           file TEXT NOT NULL,
           line INTEGER NOT NULL,
           UNIQUE (function, file, line)
         );
         INSERT INTO profile.frames_at_v5 (id, function, file, line)
           SELECT f.id, n.name, p.path, f.line FROM profile.frames_at AS f
           JOIN profile.functions AS n ON n.id = f.function_id
           JOIN profile.files AS p ON p.id = f.file_id;
         DROP TABLE profile.frames_at;
         DROP TABLE profile.files;
         DROP INDEX profile.rollup_1s_by_series;
         ALTER TABLE profile.frames_at_v5 RENAME TO frames_at;
         PRAGMA profile.user_version = 6;",
    )
    .expect("made version 6");
    frames(
        &conn,
        "SELECT id, function, file, line FROM profile.frames_at ORDER BY id",
    )
}

/// A version-6 store (`frames_at` by texts, as version 5 wrote it) opened by this build: the
/// frames are carried over under their own ids and every lines answer is as before.
#[test]
fn a_version_6_store_keeps_its_lines_through_the_migration() {
    let (dir, store) = filled();
    let sel = embers_model::contract::selection::Selection {
        app_service: Some("app".into()),
        language: Some("Golang".into()),
        event_type: Some("cpu".into()),
        time_start: 1,
        time_end: 10_000,
        filter: Default::default(),
    };
    let answers = |store: &Store| {
        (
            ask(store, 6_000, 7_200, "main.hot", ""),
            ask(store, 1, 10_000, "main.main", "pod='b'"),
            store.line_samples(&sel).expect("export"),
        )
    };
    let before = answers(&store);
    assert!(before.2.is_some(), "the export has lines");
    drop(store);
    let path = dir.path().join("l.db");
    let v6 = back_to_version_6(&path);
    assert_eq!(v6.len(), 3, "{v6:?}");
    let store = Store::open(&path).expect("migrated");
    assert_eq!(answers(&store), before);
    let conn = crate::store::connect(&path).expect("conn");
    let v7 = frames(
        &conn,
        "SELECT f.id, n.name, p.path, f.line FROM profile.frames_at AS f \
         JOIN profile.functions AS n ON n.id = f.function_id \
         JOIN profile.files AS p ON p.id = f.file_id ORDER BY f.id",
    );
    assert_eq!(v7, v6, "the same frames under the same ids");
    // New samples at a known line reuse its frame; a new line adds one.
    let deeper = vec![at("m.go", 5), at("m.go", 12), at("m.go", 40)];
    let again = sample(9_000, "main.main;main.hot;main.hot", 1, deeper);
    store.insert(&[batch("a", vec![again])]).expect("insert");
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM profile.frames_at", [], |r| r.get(0))
        .expect("count");
    assert_eq!(n, 4);
    let hot = ask(&store, 9_000, 9_000, "main.hot", "");
    assert_eq!(
        hot.values,
        vec![row("m.go", 40, 1, 1), row("m.go", 12, 0, 1)]
    );
}
