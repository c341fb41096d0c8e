//! Shape A: an array of `{profile_location_str, node_id, parent_node_id, self_value, total_value}`.
//!
//! Ids are strings (UUIDs; `""` for the root, whose parent is `"-1"`), in arbitrary order, so
//! parents are resolved after the whole array is read. Elements are streamed into the table one
//! by one; strings are borrowed from the body where they contain no escapes.

use std::borrow::Cow;
use std::collections::hash_map::Entry;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, SeqAccess, Visitor};
use serde::Deserialize;

use super::cursor::Cursor;
use super::num::Num;
use crate::tree::table::{NodeTable, NO_PARENT};
use rustc_hash::FxHashMap;

/// The parent id that marks the root.
const ROOT_PARENT: &str = "-1";
/// Placeholder parent index for unknown parents; past any real row, so the builder drops it.
const UNKNOWN_PARENT: u32 = u32::MAX - 1;

#[derive(Deserialize)]
struct WireNode<'a> {
    #[serde(borrow)]
    profile_location_str: Cow<'a, str>,
    #[serde(borrow)]
    node_id: Cow<'a, str>,
    #[serde(borrow)]
    parent_node_id: Cow<'a, str>,
    #[serde(default)]
    self_value: Num,
    #[serde(default)]
    total_value: Num,
}

/// Decodes a shape-A `result` array into a node table.
pub fn decode(text: &str) -> Result<NodeTable, String> {
    let (table, end) = decode_prefix(text.as_bytes())?;
    match text[end..].trim() {
        "" => Ok(table),
        rest => Err(format!("unexpected text after the array: {:.20}", rest)),
    }
}

/// Decodes the shape-A array at the start of `bytes`, not looking past it; returns the table
/// and the index just after the array (the one-pass reader goes on from there).
pub(super) fn decode_prefix(bytes: &[u8]) -> Result<(NodeTable, usize), String> {
    if let Some(read) = scan_prefix(bytes) {
        return Ok(read);
    }
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<Rows>();
    match stream.next() {
        Some(Ok(Rows(table))) => {
            let end = stream.byte_offset();
            // serde skips unknown members without checking their UTF-8, but the general path
            // takes the array as a `&str` first: refuse what it refuses (the one-pass reader
            // hands this function raw bytes).
            std::str::from_utf8(&bytes[..end]).map_err(|e| e.to_string())?;
            Ok((table, end))
        }
        Some(Err(e)) => Err(e.to_string()),
        None => Err("there is no array".to_string()),
    }
}

/// The fast path of [`decode_prefix`]: a cursor reads elements whose strings have no escapes
/// and whose values are integers, without serde's generic field matching. `None` on anything
/// else (serde then reads the array, and reports what is wrong).
fn scan_prefix(bytes: &[u8]) -> Option<(NodeTable, usize)> {
    let mut c = Cursor::new(bytes);
    let mut sink = Sink::default();
    c.eat(b'[')?;
    if c.peek()? == b']' {
        return Some((sink.finish(), c.i + 1));
    }
    loop {
        sink.push(scan_node(&mut c)?);
        match c.peek()? {
            b',' => c.i += 1,
            b']' => return Some((sink.finish(), c.i + 1)),
            _ => return None,
        }
    }
}

/// One node object (fields in any order, unknown ones skipped, a repeated one refused).
fn scan_node<'a>(c: &mut Cursor<'a>) -> Option<WireNode<'a>> {
    let (mut name, mut id, mut parent) = (None, None, None);
    let (mut self_value, mut total_value) = (None, None);
    let text = |c: &mut Cursor<'a>, slot: &mut Option<&'a str>| {
        let s = std::str::from_utf8(c.plain_str()?).ok()?;
        slot.replace(s).is_none().then_some(())
    };
    let int =
        |c: &mut Cursor<'a>, slot: &mut Option<i64>| slot.replace(c.int()?).is_none().then_some(());
    c.object(|key, c| match key {
        b"profile_location_str" => text(c, &mut name),
        b"node_id" => text(c, &mut id),
        b"parent_node_id" => text(c, &mut parent),
        b"self_value" => int(c, &mut self_value),
        b"total_value" => int(c, &mut total_value),
        _ => c.skip_checked(),
    })?;
    Some(WireNode {
        profile_location_str: Cow::Borrowed(name?),
        node_id: Cow::Borrowed(id?),
        parent_node_id: Cow::Borrowed(parent?),
        self_value: Num(self_value.unwrap_or(0)),
        total_value: Num(total_value.unwrap_or(0)),
    })
}

/// A whole shape-A array, read into a table.
struct Rows(NodeTable);

impl<'de> Deserialize<'de> for Rows {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Rows, D::Error> {
        let mut sink = Sink::default();
        (&mut sink).deserialize(d)?;
        Ok(Rows(sink.finish()))
    }
}

/// A node id: UUIDs (what the querier sends) as 128-bit numbers, anything else as text.
/// Numbers hash and compare far faster than 36-character strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id<'a> {
    /// The 128 bits as two halves: 8-byte alignment keeps ids, map entries and the per-row
    /// parent list a third smaller than a `u128` would (a million of each).
    Uuid(u64, u64),
    Text(Cow<'a, str>),
}

impl<'a> Id<'a> {
    fn new(text: Cow<'a, str>) -> Id<'a> {
        parse_uuid(&text).map_or(Id::Text(text), |v| Id::Uuid((v >> 64) as u64, v as u64))
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, either case) as a number. Two million of
/// these per million-node answer: a table lookup per digit, and 64-bit halves (128-bit
/// shifts are slow in wasm).
fn parse_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 || [8, 13, 18, 23].iter().any(|&i| b[i] != b'-') {
        return None;
    }
    let (mut hi, mut lo, mut digits) = (0u64, 0u64, 0);
    for &c in b {
        if c == b'-' {
            continue;
        }
        let v = u64::from(HEX_VALUE[c as usize]);
        if v > 15 {
            return None;
        }
        if digits < 16 {
            hi = (hi << 4) | v;
        } else {
            lo = (lo << 4) | v;
        }
        digits += 1;
    }
    (digits == 32).then_some((u128::from(hi) << 64) | u128::from(lo))
}

/// The value of each hex digit byte; 255 for every other byte.
const HEX_VALUE: [u8; 256] = {
    let mut t = [255u8; 256];
    let mut i = 0;
    while i < 10 {
        t[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        t[b'a' as usize + i] = 10 + i as u8;
        t[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    t
};

/// Collects rows while streaming; parent ids are kept until every id is known.
#[derive(Default)]
struct Sink<'a> {
    table: NodeTable,
    ids: FxHashMap<Id<'a>, u32>,
    /// Per row: the parent's id, `None` for a root (`"-1"`).
    parents: Vec<Option<Id<'a>>>,
}

impl<'a> Sink<'a> {
    fn push(&mut self, node: WireNode<'a>) {
        let row = self.table.len() as u32;
        match self.ids.entry(Id::new(node.node_id)) {
            Entry::Occupied(_) => {
                self.table.issues.duplicate_ids += 1;
                return;
            }
            Entry::Vacant(slot) => {
                slot.insert(row);
            }
        }
        let func = self.table.functions.intern(&node.profile_location_str);
        self.table
            .push(func, NO_PARENT, node.self_value.0, node.total_value.0);
        let parent = (node.parent_node_id != ROOT_PARENT).then(|| Id::new(node.parent_node_id));
        self.parents.push(parent);
    }

    fn finish(mut self) -> NodeTable {
        for (row, parent) in self.parents.iter().enumerate() {
            self.table.parent[row] = match parent {
                None => NO_PARENT,
                Some(id) => self.ids.get(id).copied().unwrap_or(UNKNOWN_PARENT),
            };
        }
        self.table
    }
}

impl<'de> DeserializeSeed<'de> for &mut Sink<'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for &mut Sink<'de> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("an array of flame-graph node objects")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(node) = seq.next_element::<WireNode<'de>>()? {
            self.push(node);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Profile;

    const NODE: &str = r#"{"profile_location_str":"NAME","node_id":"ID","parent_node_id":"PARENT","self_value":S,"total_value":T}"#;

    fn node(name: &str, id: &str, parent: &str, s: i64, t: i64) -> String {
        NODE.replace("NAME", name)
            .replace("PARENT", parent)
            .replace("ID", id)
            .replace("S,", &format!("{s},"))
            .replace(":T}", &format!(":{t}}}"))
    }

    #[test]
    fn shuffled_nodes_with_uuid_ids_build_the_tree() {
        let text = format!(
            "[{},{},{},{}]",
            node("leaf", "u2", "u1", 4, 4),
            node("app", "", "-1", 0, 6),
            node("mid", "u1", "", 1, 5),
            node("other", "u3", "", 1, 1)
        );
        let p = Profile::from_table(decode(&text).unwrap());
        let names: Vec<_> = p.nodes().map(|n| p.name(n)).collect();
        assert_eq!(names, ["app", "mid", "leaf", "other"]);
        assert_eq!(p.root_total(), 6);
        assert_eq!(p.warnings().total(), 0);
    }

    #[test]
    fn duplicate_ids_and_unknown_parents_are_counted() {
        let text = format!(
            "[{},{},{},{}]",
            node("app", "", "-1", 0, 2),
            node("a", "u1", "", 1, 1),
            node("b", "u1", "", 1, 1),
            node("c", "u9", "nope", 1, 1)
        );
        let p = Profile::from_table(decode(&text).unwrap());
        assert_eq!(p.node_count(), 2);
        assert_eq!(p.warnings().duplicate_ids, 1);
        assert_eq!(p.warnings().unreachable_rows, 1);
    }

    #[test]
    fn uuids_parse_as_numbers_and_other_ids_stay_text() {
        assert_eq!(
            parse_uuid("2dad06a1-75f5-55fe-8b34-c882168bf68f"),
            Some(0x2dad06a1_75f5_55fe_8b34_c882168bf68f)
        );
        assert_eq!(
            parse_uuid("2DAD06A1-75F5-55FE-8B34-C882168BF68F"),
            parse_uuid("2dad06a1-75f5-55fe-8b34-c882168bf68f")
        );
        assert_eq!(parse_uuid("2dad06a1x75f5-55fe-8b34-c882168bf68f"), None);
        assert_eq!(parse_uuid("2dad06a1-75f5-55fe-8b34-c882168b-68f"), None);
        assert_eq!(parse_uuid("2dad06a1-75f5-55fe-8b34-c882168bf6g8"), None);
        assert_eq!(parse_uuid("00000000-0000-0000-0000-000000000001"), Some(1));
        assert_eq!(
            parse_uuid("ffffffff-ffff-ffff-ffff-ffffffffffff"),
            Some(u128::MAX)
        );
        assert_eq!(parse_uuid("u1"), None);
        assert_eq!(Id::new("".into()), Id::Text("".into()));
    }

    /// Fuzz regression (target `response`): serde's fallback skips an unknown member without
    /// checking its UTF-8, so raw bytes from the one-pass reader got through.
    #[test]
    fn the_fallback_refuses_bytes_that_are_not_utf8() {
        let mut text =
            br#"[{"profile_location_str":"r","node_id":"","x":"?","parent_node_id":"-1"}]"#
                .to_vec();
        let at = text.iter().position(|&b| b == b'?').expect("marker");
        text[at] = 0xff;
        assert!(decode_prefix(&text).is_err());
        text[at] = b'y';
        assert!(decode_prefix(&text).is_ok());
    }

    #[test]
    fn a_missing_field_is_a_specific_error() {
        let err = decode(r#"[{"node_id":"","parent_node_id":"-1"}]"#).unwrap_err();
        assert!(err.contains("profile_location_str"), "{err}");
    }
}
