//! Encoding a profile as a ProfileTracing `result` (the service's answers and saved exports).
//!
//! Shape B lists functions in order of first appearance in preorder and nodes in preorder (so a
//! parent row precedes its children, which DeepFlow does not promise but clients must accept).
//! Shape A derives each node id from the hash of its path, as DeepFlow does, formatted as a UUID.
//! Members are written in the querier's order (the structs' declaration order).

use serde::Serialize;

use crate::contract::event::{is_memory_event, TOTAL_APP_SERVICE};
use crate::contract::kind::FrameKind;
use crate::contract::shape::ResultShape;
use crate::tree::profile::{NodeId, Profile};

/// A `result` member, ready to serialise.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum EncodedResult<'a> {
    /// Shape A: the node array, or null for an empty match.
    A(Option<Vec<NodeA<'a>>>),
    /// Shape B: the tables (every member null for an empty match).
    B(ShapeB<'a>),
}

/// One node of shape A.
#[derive(Debug, Serialize)]
pub struct NodeA<'a> {
    /// The frame's name.
    pub profile_location_str: &'a str,
    /// A UUID-like id (empty for the root).
    pub node_id: String,
    /// The parent's id (`"-1"` for the root).
    pub parent_node_id: String,
    /// Value of the stacks ending here.
    pub self_value: u64,
    /// Value of the stacks through here.
    pub total_value: u64,
}

/// Shape B's tables.
#[derive(Debug, Serialize)]
pub struct ShapeB<'a> {
    /// Function names; the index is the function id, 0 the root.
    pub functions: Option<Vec<&'a str>>,
    /// One type letter per function.
    pub function_types: Option<Vec<&'static str>>,
    /// Per function: `[self_value, total_value]` summed over its nodes.
    pub function_values: ValueTable<[u64; 2]>,
    /// Per node: `[function_id, parent_row, self_value, total_value]`.
    pub node_values: ValueTable<(u32, i64, u64, u64)>,
}

/// A `{columns, values}` member: both null for an empty match.
#[derive(Debug, Serialize)]
pub struct ValueTable<Row> {
    /// Column names.
    pub columns: Option<&'static [&'static str]>,
    /// Rows.
    pub values: Option<Vec<Row>>,
}

impl<Row> ValueTable<Row> {
    fn null() -> ValueTable<Row> {
        ValueTable {
            columns: None,
            values: None,
        }
    }
}

/// Encodes `profile` as the `result` member; `None` or an empty profile is an empty match. For
/// memory event types, shape B types functions that only ever occur as leaves `O` (allocated
/// object type), as the querier does.
pub fn encode_result<'a>(
    profile: Option<&'a Profile>,
    shape: ResultShape,
    event_type: &str,
) -> EncodedResult<'a> {
    match (profile.filter(|p| !p.is_empty()), shape) {
        (None, ResultShape::A) => EncodedResult::A(None),
        (None, ResultShape::B) => EncodedResult::B(ShapeB {
            functions: None,
            function_types: None,
            function_values: ValueTable::null(),
            node_values: ValueTable::null(),
        }),
        (Some(p), ResultShape::A) => EncodedResult::A(Some(shape_a(p))),
        (Some(p), ResultShape::B) => EncodedResult::B(shape_b(p, is_memory_event(event_type))),
    }
}

fn shape_a(p: &Profile) -> Vec<NodeA<'_>> {
    let mut hashes: Vec<u64> = Vec::with_capacity(p.node_count());
    let mut out: Vec<NodeA<'_>> = Vec::with_capacity(p.node_count());
    for node in p.nodes() {
        let parent = p.parent(node);
        let parent_hash = parent.map_or(0, |q| hashes[q as usize]);
        let hash = fnv1a(parent_hash, p.name(node).as_bytes());
        hashes.push(hash);
        let node_id = if node == 0 {
            String::new()
        } else {
            uuid_like(hash, node)
        };
        let parent_node_id = match parent {
            None => "-1".to_string(),
            Some(q) => out[q as usize].node_id.clone(),
        };
        out.push(NodeA {
            profile_location_str: p.name(node),
            node_id,
            parent_node_id,
            self_value: p.self_value(node),
            total_value: p.total(node),
        });
    }
    out
}

/// The columns of shape B's `function_values`.
pub const FUNCTION_COLUMNS: &[&str] = &["self_value", "total_value"];
/// The columns of shape B's `node_values`.
pub const NODE_COLUMNS: &[&str] = &["function_id", "parent_node_id", "self_value", "total_value"];

fn shape_b(p: &Profile, memory: bool) -> ShapeB<'_> {
    let objects = if memory {
        leaf_only_functions(p)
    } else {
        Vec::new()
    };
    // Wire function ids: dense, in order of first appearance, root first.
    let mut wire_id = vec![u32::MAX; p.function_count()];
    let mut functions: Vec<&str> = Vec::new();
    let mut types: Vec<&'static str> = Vec::new();
    let mut values: Vec<[u64; 2]> = Vec::new();
    let mut rows = Vec::with_capacity(p.node_count());
    for node in p.nodes() {
        let f = p.func(node) as usize;
        if wire_id[f] == u32::MAX {
            wire_id[f] = functions.len() as u32;
            functions.push(p.name(node));
            let object = node != 0 && objects.get(f).copied().unwrap_or(false);
            types.push(if object { "O" } else { type_letter(p, node) });
            values.push([0, 0]);
        }
        let w = wire_id[f] as usize;
        // The server's function_values add up every node, so recursion counts twice; we match it.
        values[w][0] += p.self_value(node);
        values[w][1] += p.total(node);
        let parent_row = p.parent(node).map_or(-1, i64::from);
        rows.push((w as u32, parent_row, p.self_value(node), p.total(node)));
    }
    ShapeB {
        functions: Some(functions),
        function_types: Some(types),
        function_values: ValueTable {
            columns: Some(FUNCTION_COLUMNS),
            values: Some(values),
        },
        node_values: ValueTable {
            columns: Some(NODE_COLUMNS),
            values: Some(rows),
        },
    }
}

/// Per function id: whether every node of it is a leaf (the root's function excluded).
fn leaf_only_functions(p: &Profile) -> Vec<bool> {
    let mut leaf_only = vec![true; p.function_count()];
    let mut seen = vec![false; p.function_count()];
    for node in p.nodes().skip(1) {
        let f = p.func(node) as usize;
        seen[f] = true;
        leaf_only[f] &= p.children(node).next().is_none();
    }
    leaf_only.iter().zip(seen).map(|(&l, s)| l && s).collect()
}

/// The querier's type letter: `H` for a root named `Total`, `P` for other roots.
fn type_letter(p: &Profile, node: NodeId) -> &'static str {
    if node == 0 {
        return if p.name(0) == TOTAL_APP_SERVICE {
            "H"
        } else {
            "P"
        };
    }
    match p.kind(node) {
        FrameKind::Root => "P",
        k => k.type_letter(),
    }
}

fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325u64 ^ seed.rotate_left(17);
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Formats a 128-bit value from the path hash (and the node index, to stay unique even on a
/// hash collision) as a version-5-looking UUID.
fn uuid_like(hash: u64, node: NodeId) -> String {
    let lo = fnv1a(hash, &node.to_le_bytes());
    format!(
        "{:08x}-{:04x}-5{:03x}-{:04x}-{:012x}",
        hash >> 32,
        (hash >> 16) & 0xffff,
        hash & 0xfff,
        0x8000 | ((lo >> 48) & 0x3fff),
        lo & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::build::TreeBuilder;
    use crate::wire::decode_result;
    use serde_json::Value;

    fn sample() -> Profile {
        let mut b = TreeBuilder::new("Total");
        b.add_stack(["[p] redis", "[t] io"], 5);
        b.add_stack(["[p] redis"], 2);
        b.add_stack(["[p] nginx", "[t] nginx"], 3);
        b.finish()
    }

    fn json(profile: Option<&Profile>, shape: ResultShape, event: &str) -> Value {
        serde_json::to_value(encode_result(profile, shape, event)).unwrap()
    }

    fn round_trip(shape: ResultShape) -> Profile {
        let sample = sample();
        let text = serde_json::to_string(&encode_result(Some(&sample), shape, "on-cpu")).unwrap();
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(&text).unwrap();
        decode_result(Some(&raw)).unwrap().profile
    }

    #[test]
    fn both_shapes_round_trip_to_the_same_tree() {
        let original = crate::export::folded::to_folded(&sample());
        for shape in [ResultShape::A, ResultShape::B] {
            let p = round_trip(shape);
            assert_eq!(crate::export::folded::to_folded(&p), original, "{shape:?}");
            assert_eq!(p.warnings().total(), 0);
        }
    }

    #[test]
    fn shape_b_types_mark_the_total_root() {
        let v = json(Some(&sample()), ResultShape::B, "on-cpu");
        assert_eq!(v["function_types"][0], "H");
        assert_eq!(v["functions"][0], "Total");
        assert_eq!(v["node_values"]["values"][0][1], -1);
    }

    #[test]
    fn shape_a_ids_are_unique_and_root_is_empty() {
        let v = json(Some(&sample()), ResultShape::A, "on-cpu");
        let arr = v.as_array().unwrap();
        assert_eq!(arr[0]["node_id"], "");
        assert_eq!(arr[0]["parent_node_id"], "-1");
        assert_eq!(arr[1]["parent_node_id"], "");
        let mut ids: Vec<_> = arr.iter().map(|n| n["node_id"].as_str().unwrap()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), arr.len());
    }

    #[test]
    fn empty_results_use_the_null_forms() {
        assert_eq!(json(None, ResultShape::A, "on-cpu"), Value::Null);
        let b = json(None, ResultShape::B, "on-cpu");
        assert_eq!(b["node_values"]["values"], Value::Null);
        assert_eq!(b["functions"], Value::Null);
    }

    #[test]
    fn members_follow_the_queriers_order() {
        let text = serde_json::to_string(&encode_result(Some(&sample()), ResultShape::B, "on-cpu"))
            .unwrap();
        let order = [
            "functions",
            "function_types",
            "function_values",
            "node_values",
        ];
        let at: Vec<usize> = order.iter().map(|k| text.find(k).unwrap()).collect();
        assert!(at.windows(2).all(|w| w[0] < w[1]), "{text}");
        let a = serde_json::to_string(&encode_result(Some(&sample()), ResultShape::A, "on-cpu"))
            .unwrap();
        assert!(a.starts_with(
            r#"[{"profile_location_str":"Total","node_id":"","parent_node_id":"-1","#
        ));
    }

    #[test]
    fn memory_leaves_are_typed_object() {
        let mut b = TreeBuilder::new("svc");
        b.add_stack(["[t] a", "main", "[l] malloc"], 10);
        b.add_stack(["[t] a", "main", "grow", "[l] realloc"], 4);
        let p = b.finish();
        let v = json(Some(&p), ResultShape::B, "mem-alloc");
        let functions = v["functions"].as_array().unwrap();
        let types = v["function_types"].as_array().unwrap();
        for (f, t) in functions.iter().zip(types) {
            let expect = match f.as_str() {
                Some("[l] malloc" | "[l] realloc") => "O",
                Some("svc") => "P",
                Some("[t] a") => "T",
                _ => "A",
            };
            assert_eq!(t, expect, "{f}");
        }
        let cpu = json(Some(&p), ResultShape::B, "on-cpu");
        assert!(!cpu["function_types"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "O"));
    }
}
