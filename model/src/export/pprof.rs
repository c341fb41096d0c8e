//! A profile written as pprof (`profile.proto`, uncompressed; gzip it to make a `.pb.gz`), so
//! `go tool pprof`, Grafana, Parca and speedscope read what Embers shows.
//!
//! One function and one location per distinct frame name (a fake mapping that says its
//! functions are known, so `go tool pprof` does not try to symbolize), one sample per node with
//! a self value, its locations leaf first; the root (`app_service`) is not a frame but a
//! comment `app_service=NAME`, which [`crate::wire::pprof`] readers of Embers' own files use to
//! name the root again.

use crate::contract::event::Quantity;
use crate::tree::profile::Profile;
use crate::wire::pprof::ROOT_COMMENT;
use crate::wire::protobuf::{put_bytes, put_packed, put_uint};

/// What the values are, and when they were collected.
#[derive(Clone, Copy, Debug)]
pub struct PprofMeta<'a> {
    /// The sample type's name (the event type, e.g. `on-cpu`).
    pub event_type: &'a str,
    /// What the values are a number of.
    pub quantity: Quantity,
    /// Collection start, Unix nanoseconds (0 when unknown).
    pub time_nanos: i64,
    /// Collection length, nanoseconds (0 when unknown).
    pub duration_nanos: i64,
}

/// The unit `go tool pprof` understands for a quantity (it scales time and byte units).
pub(crate) fn pprof_unit(q: Quantity) -> &'static str {
    match q {
        Quantity::Microseconds => "microseconds",
        Quantity::Nanoseconds => "nanoseconds",
        Quantity::Bytes => "bytes",
        Quantity::Samples | Quantity::Objects | Quantity::Goroutines | Quantity::Events => "count",
    }
}

/// `profile` as uncompressed pprof bytes.
pub fn to_pprof(profile: &Profile, meta: &PprofMeta<'_>) -> Vec<u8> {
    let mut out = Vec::new();
    let mut msg = Vec::new();
    let mut scratch = Vec::new();
    // Strings: "", the sample type, its unit, the root comment, then function i at 4 + i.
    const FIRST_FUNCTION_STRING: u64 = 4;
    put_uint(&mut msg, 1, 1);
    put_uint(&mut msg, 2, 2);
    put_bytes(&mut out, 1, &msg);
    if !profile.is_empty() {
        let mut locations = Vec::new();
        for node in profile.nodes() {
            let value = profile.self_value(node);
            if value == 0 {
                continue;
            }
            locations.clear();
            let mut at = node;
            while let Some(parent) = profile.parent(at) {
                // Location (and function) id of function f is f + 1.
                locations.push(u64::from(profile.func(at)) + 1);
                at = parent;
            }
            msg.clear();
            put_packed(&mut msg, 1, &locations, &mut scratch);
            put_packed(&mut msg, 2, &[value], &mut scratch);
            put_bytes(&mut out, 2, &msg);
        }
    }
    // One mapping (id 1) with has_functions, so nothing asks for symbols.
    msg.clear();
    put_uint(&mut msg, 1, 1);
    put_uint(&mut msg, 7, 1);
    put_bytes(&mut out, 3, &msg);
    let functions = profile.function_count() as u64;
    for id in 1..=functions {
        msg.clear();
        put_uint(&mut msg, 1, id);
        put_uint(&mut msg, 2, 1);
        scratch.clear();
        put_uint(&mut scratch, 1, id);
        put_bytes(&mut msg, 4, &scratch);
        put_bytes(&mut out, 4, &msg);
    }
    for id in 1..=functions {
        msg.clear();
        put_uint(&mut msg, 1, id);
        put_uint(&mut msg, 2, FIRST_FUNCTION_STRING + id - 1);
        put_uint(&mut msg, 3, FIRST_FUNCTION_STRING + id - 1);
        put_bytes(&mut out, 5, &msg);
    }
    let root = if profile.is_empty() {
        ""
    } else {
        profile.name(0)
    };
    let comment = format!("{ROOT_COMMENT}{root}");
    for s in [
        "",
        meta.event_type,
        pprof_unit(meta.quantity),
        comment.as_str(),
    ] {
        put_bytes(&mut out, 6, s.as_bytes());
    }
    for f in 0..profile.function_count() as u32 {
        put_bytes(&mut out, 6, profile.function_name(f).as_bytes());
    }
    put_uint(&mut out, 9, meta.time_nanos as u64);
    put_uint(&mut out, 10, meta.duration_nanos as u64);
    put_uint(&mut out, 13, 3);
    out
}
