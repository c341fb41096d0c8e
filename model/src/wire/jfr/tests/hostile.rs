//! Recordings forged to expand: arrays of values that take no bytes, refused within the
//! request's budget, and the service's hostile-input fixture written from the same builder.

use super::*;

#[test]
fn arrays_of_empty_values_cannot_expand_without_bound() {
    // Each element of an array of `Outer` is a one-byte count of up to 127 `Empty` values,
    // which take no bytes at all.
    let file = empty_values(1);
    let err = read(&file, "x").expect_err("refused");
    assert!(matches!(err, JfrError::TooLarge(_)), "{err}");
    assert!(err.to_string().contains("(JFR values)"), "{err}");
    // Within a request's budget, the refusal comes once the budget is spent: a 60 KB
    // recording may cost 32 MiB + 64 × 60 KB, not the 7.6M values it claims.
    let budget = Budget::for_input(file.len(), usize::MAX);
    let err = super::read_within(&file, "x", Some(1), &budget).expect_err("refused");
    assert!(err.to_string().contains("(JFR values)"), "{err}");
    assert!(budget.used() <= budget.limit(), "{}", budget.used());
}

/// A recording of `events` execution samples whose stack traces are arrays of `Outer`, each
/// element a one-byte count of 127 `Empty` values that take no bytes: 8 MB of it claims ~1G
/// values and gzips to ~8 KB.
fn empty_values(events: usize) -> Vec<u8> {
    let classes: [ClassDef<'_>; 3] = [
        ("Empty", 10, &[]),
        ("Outer", 11, &[("items", 10, false, true)]),
        (
            "jdk.ExecutionSample",
            SAMPLE,
            &[("stackTrace", 11, false, true)],
        ),
    ];
    let mut all = Vec::new();
    for _ in 0..events {
        let mut e = W::new(true);
        e.long(SAMPLE).int(60_000);
        e.out.extend(std::iter::repeat_n(127u8, 60_000));
        all.push(e.out);
    }
    chunk(true, &classes, &all)
}

/// Writes the service's hostile-input fixture (`server/tests/data/hostile/`):
/// `EMBERS_WRITE_FIXTURES=1 cargo test -p embers-model --lib write_hostile_jfr -- --ignored`.
#[test]
#[ignore]
fn write_hostile_jfr() {
    use std::io::Write;
    if std::env::var_os("EMBERS_WRITE_FIXTURES").is_none() {
        return;
    }
    let file = empty_values(140);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&file).expect("gzip");
    let out = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../server/tests/data/hostile/empty-values.jfr.gz"
    );
    std::fs::create_dir_all(std::path::Path::new(out).parent().expect("dir")).expect("mkdir");
    std::fs::write(out, gz.finish().expect("gzip")).expect("write");
}
