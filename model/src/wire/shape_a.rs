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

use super::num::Num;
use crate::fxhash::FxHashMap;
use crate::table::{NodeTable, NO_PARENT};

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
    let mut de = serde_json::Deserializer::from_str(text);
    let mut sink = Sink::default();
    (&mut sink)
        .deserialize(&mut de)
        .map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(sink.finish())
}

/// A node id: UUIDs (what the querier sends) as 128-bit numbers, anything else as text.
/// Numbers hash and compare far faster than 36-character strings.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Id<'a> {
    Uuid(u128),
    Text(Cow<'a, str>),
}

impl<'a> Id<'a> {
    fn new(text: Cow<'a, str>) -> Id<'a> {
        parse_uuid(&text).map_or(Id::Text(text), Id::Uuid)
    }
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (hex, either case) as a number.
fn parse_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut v: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        v = (v << 4) | u128::from((c as char).to_digit(16)?);
    }
    Some(v)
}

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
        assert_eq!(parse_uuid("u1"), None);
        assert_eq!(Id::new("".into()), Id::Text("".into()));
    }

    #[test]
    fn a_missing_field_is_a_specific_error() {
        let err = decode(r#"[{"node_id":"","parent_node_id":"-1"}]"#).unwrap_err();
        assert!(err.contains("profile_location_str"), "{err}");
    }
}
