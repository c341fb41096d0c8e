//! Recordings written here, byte by byte, for what a real one does not show: fixed-size
//! integers, several chunks, and forged files built to loop, recurse or expand without bound.
//! (`model/tests/jfr.rs` reads a real recording against the JDK's own reader.)

use super::*;
use crate::budget::Budget;
use crate::wire::pprof::stacks::{stacks, StackBounds};

/// Writes JFR integers in one chunk's encoding.
mod hostile;

struct W {
    compressed: bool,
    out: Vec<u8>,
}

impl W {
    fn new(compressed: bool) -> Self {
        W {
            compressed,
            out: Vec::new(),
        }
    }

    fn long(&mut self, v: i64) -> &mut Self {
        if !self.compressed {
            self.out.extend_from_slice(&v.to_be_bytes());
            return self;
        }
        let mut v = v as u64;
        for _ in 0..8 {
            if v < 0x80 {
                self.out.push(v as u8);
                return self;
            }
            self.out.push((v as u8 & 0x7f) | 0x80);
            v >>= 7;
        }
        self.out.push(v as u8);
        self
    }

    fn int(&mut self, v: i32) -> &mut Self {
        if self.compressed {
            self.long(i64::from(v))
        } else {
            self.out.extend_from_slice(&v.to_be_bytes());
            self
        }
    }

    fn text(&mut self, s: &str) -> &mut Self {
        self.out.push(3);
        self.int(s.len() as i32);
        self.out.extend_from_slice(s.as_bytes());
        self
    }

    /// An event: its size (which counts itself) before `body`.
    fn event(&mut self, body: &[u8]) -> &mut Self {
        let mut size = body.len() + 1;
        loop {
            let mut w = W::new(self.compressed);
            w.int(size as i32);
            if w.out.len() + body.len() == size {
                break;
            }
            size = w.out.len() + body.len();
        }
        self.int(size as i32);
        self.out.extend_from_slice(body);
        self
    }
}

/// A class: name, id, fields as (name, class id, pooled, array).
type ClassDef<'a> = (&'a str, i64, &'a [(&'a str, i64, bool, bool)]);

/// A metadata event's body declaring `classes`.
fn metadata(compressed: bool, classes: &[ClassDef<'_>]) -> Vec<u8> {
    let mut strings: Vec<String> = Vec::new();
    let mut index = |s: &str| -> i32 {
        let i = strings.iter().position(|x| x == s).unwrap_or_else(|| {
            strings.push(s.to_owned());
            strings.len() - 1
        });
        i as i32
    };
    // The element tree first (string indices), then the table before it.
    let mut tree = W::new(compressed);
    tree.int(index("root")).int(0).int(1);
    tree.int(index("metadata")).int(0).int(classes.len() as i32);
    for (name, id, fields) in classes {
        tree.int(index("class")).int(2);
        tree.int(index("name")).int(index(name));
        tree.int(index("id")).int(index(&id.to_string()));
        tree.int(fields.len() as i32);
        for (field, class, pooled, array) in fields.iter() {
            let n = 2 + i32::from(*pooled) + i32::from(*array);
            tree.int(index("field")).int(n);
            tree.int(index("name")).int(index(field));
            tree.int(index("class")).int(index(&class.to_string()));
            if *pooled {
                tree.int(index("constantPool")).int(index("true"));
            }
            if *array {
                tree.int(index("dimension")).int(index("1"));
            }
            tree.int(0);
        }
    }
    let mut w = W::new(compressed);
    w.long(0).long(0).long(0).long(0).int(strings.len() as i32);
    for s in &strings {
        w.text(s);
    }
    w.out.extend_from_slice(&tree.out);
    w.out
}

/// A whole chunk: header, then `events` (bodies after their size), then the metadata.
fn chunk(compressed: bool, classes: &[ClassDef<'_>], events: &[Vec<u8>]) -> Vec<u8> {
    let mut body = W::new(compressed);
    for e in events {
        body.event(e);
    }
    let metadata_at = HEADER_BYTES + body.out.len();
    body.event(&metadata(compressed, classes));
    let size = HEADER_BYTES + body.out.len();
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&2u16.to_be_bytes());
    out.extend_from_slice(&1u16.to_be_bytes());
    for v in [
        size as i64,
        0,
        metadata_at as i64,
        1_700_000_000_000_000_000,
        0,
        0,
        1_000_000_000,
    ] {
        out.extend_from_slice(&v.to_be_bytes());
    }
    out.extend_from_slice(&i32::from(compressed).to_be_bytes());
    out.extend_from_slice(&body.out);
    out
}

const LONG: i64 = 1;
const STRING: i64 = 2;
const SYMBOL: i64 = 3;
const CLASS: i64 = 4;
const METHOD: i64 = 5;
const FRAME: i64 = 6;
const STACK: i64 = 7;
const THREAD: i64 = 8;
const SAMPLE: i64 = 20;

const CLASSES: [ClassDef<'static>; 9] = [
    ("long", LONG, &[]),
    ("java.lang.String", STRING, &[]),
    (
        "jdk.types.Symbol",
        SYMBOL,
        &[("string", STRING, false, false)],
    ),
    ("java.lang.Class", CLASS, &[("name", SYMBOL, true, false)]),
    (
        "jdk.types.Method",
        METHOD,
        &[("type", CLASS, true, false), ("name", SYMBOL, true, false)],
    ),
    (
        "jdk.types.StackFrame",
        FRAME,
        &[("method", METHOD, true, false)],
    ),
    (
        "jdk.types.StackTrace",
        STACK,
        &[("frames", FRAME, false, true)],
    ),
    (
        "java.lang.Thread",
        THREAD,
        &[("javaName", STRING, false, false)],
    ),
    (
        "jdk.ExecutionSample",
        SAMPLE,
        &[
            ("startTime", LONG, false, false),
            ("sampledThread", THREAD, true, false),
            ("stackTrace", STACK, true, false),
        ],
    ),
];

/// A checkpoint with `a/B.run → a/B.work` as stack 1 and thread 1 `worker`, then `n` samples.
fn sampled_chunk(compressed: bool, n: usize) -> Vec<u8> {
    named_chunk(compressed, n, ["a/B", "run", "work"], "worker")
}

/// As [`sampled_chunk`], with these names of the class, its two methods and the thread.
fn named_chunk(compressed: bool, n: usize, symbols: [&str; 3], thread: &str) -> Vec<u8> {
    let mut cp = W::new(compressed);
    cp.long(1).long(0).long(0).long(0);
    cp.out.push(0);
    cp.int(5);
    cp.long(SYMBOL).int(3);
    for (key, s) in (1..).zip(symbols) {
        cp.long(key).text(s);
    }
    cp.long(CLASS).int(1).long(1).long(1);
    cp.long(METHOD)
        .int(2)
        .long(1)
        .long(1)
        .long(2)
        .long(2)
        .long(1)
        .long(3);
    // Leaf first, as JFR lists frames.
    cp.long(STACK).int(1).long(1).int(2).long(2).long(1);
    cp.long(THREAD).int(1).long(1).text(thread);
    let mut events = vec![cp.out];
    for _ in 0..n {
        let mut e = W::new(compressed);
        e.long(SAMPLE).long(0).long(1).long(1);
        events.push(e.out);
    }
    chunk(compressed, &CLASSES, &events)
}

fn folded(r: &Recording) -> Vec<(String, u64)> {
    let bounds = StackBounds {
        max_frames: 64,
        max_frame_bytes: 256,
    };
    stacks(&r.profiles[0].table, &bounds, &Budget::unlimited()).expect("stacks")
}

/// Two chunks, integers compressed in the first and fixed-size in the second.
fn two_chunks() -> Vec<u8> {
    let mut file = sampled_chunk(true, 3);
    file.extend(sampled_chunk(false, 2));
    file
}

#[test]
fn chunks_in_either_integer_encoding_add_up() {
    let r = read(&two_chunks(), "app").expect("read");
    assert_eq!(r.profiles.len(), 1);
    assert_eq!(r.profiles[0].event_type, "cpu");
    assert_eq!(
        folded(&r),
        vec![("[t] worker;a.B.run;a.B.work".to_owned(), 5)]
    );
}

#[test]
fn names_are_untrusted_text() {
    // Found by the fuzzer: a `;` in a name would split one frame into two, one of them empty.
    let file = named_chunk(true, 1, ["", ";un", "wo\nrk"], "a;b\u{85}");
    let r = read(&file, "app").expect("read");
    assert_eq!(folded(&r), vec![("[t] a:b ;:un;wo rk".to_owned(), 1)]);
}

#[test]
fn a_deep_stack_in_many_seconds_cannot_fold_without_bound() {
    // One stack of 2,000 frames, sampled in 200 different seconds: read by the second, that is
    // 400,000 nodes from a file of a few KB.
    let mut cp = W::new(true);
    cp.long(1).long(0).long(0).long(0);
    cp.out.push(0);
    cp.int(4);
    cp.long(SYMBOL).int(2).long(1).text("a/B").long(2).text("f");
    cp.long(CLASS).int(1).long(1).long(1);
    cp.long(METHOD).int(1).long(1).long(1).long(2);
    cp.long(STACK).int(1).long(1).int(2000);
    for _ in 0..2000 {
        cp.long(1);
    }
    let mut events = vec![cp.out];
    for second in 0..200 {
        let mut e = W::new(true);
        e.long(SAMPLE).long(second * 1_000_000_000).long(0).long(1);
        events.push(e.out);
    }
    let file = chunk(true, &CLASSES, &events);
    assert!(read(&file, "x").is_ok(), "read whole, it is one stack");
    let err = read_in_buckets(&file, "x", 1).expect_err("refused");
    assert!(matches!(err, JfrError::TooLarge(_)), "{err}");
}

#[test]
fn a_class_that_contains_itself_is_refused() {
    let classes: [ClassDef<'_>; 2] = [
        ("Loop", 10, &[("next", 10, false, false)]),
        (
            "jdk.ExecutionSample",
            SAMPLE,
            &[("stackTrace", 10, false, false)],
        ),
    ];
    let mut e = W::new(true);
    e.long(SAMPLE).long(0);
    let err = read(&chunk(true, &classes, &[e.out]), "x").expect_err("refused");
    assert!(err.to_string().contains("nested over"), "{err}");
}

#[test]
fn forged_counts_and_offsets_are_errors() {
    let good = sampled_chunk(true, 1);
    // The metadata offset past the chunk, the chunk longer than the file.
    let mut bad = good.clone();
    bad[24..32].copy_from_slice(&(good.len() as i64 + 5).to_be_bytes());
    assert!(read(&bad, "x")
        .unwrap_err()
        .to_string()
        .contains("has its metadata at"));
    let mut bad = good.clone();
    bad[8..16].copy_from_slice(&i64::MAX.to_be_bytes());
    assert!(read(&bad, "x").unwrap_err().to_string().contains("claims"));
    // Whatever the corruption, an answer or an error.
    for at in HEADER_BYTES..good.len() {
        for flip in [0x01, 0x80, 0xff] {
            let mut bad = good.clone();
            bad[at] ^= flip;
            let _ = read(&bad, "x");
        }
    }
}

/// The JFR fuzzer's seed is this writer's recording (the JDK's are too big to seed with: their
/// metadata alone is ~96 KB). `BLESS=1` rewrites it.
#[test]
fn the_fuzzers_seed_is_the_writers_recording() {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/seeds/jfr/two-chunks.jfr");
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("folder")).expect("mkdir");
        std::fs::write(&path, two_chunks()).expect("write");
    }
    let committed = std::fs::read(&path).expect("BLESS=1 writes the seed");
    assert!(
        committed == two_chunks(),
        "{} is stale: BLESS=1",
        path.display()
    );
}
