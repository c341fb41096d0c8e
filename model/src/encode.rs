//! Encoding a profile as a ProfileTracing `result` (the service's answers and saved exports).
//!
//! Shape B lists functions in order of first appearance in preorder and nodes in preorder (so a
//! parent row precedes its children, which DeepFlow does not promise but clients must accept).
//! Shape A derives each node id from the hash of its path, as DeepFlow does, formatted as a UUID.

use serde_json::{json, Value};

use crate::kind::FrameKind;
use crate::profile::{NodeId, Profile};

/// Which `result` shape to produce.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResultShape {
    /// Node array with string ids (servers up to v6.5).
    A,
    /// Function and node tables (servers from v6.6; the default).
    B,
}

/// Encodes `profile` as the `result` member; `None` or an empty profile is an empty match.
pub fn encode_result(profile: Option<&Profile>, shape: ResultShape) -> Value {
    match (profile.filter(|p| !p.is_empty()), shape) {
        (None, ResultShape::A) => Value::Null,
        (None, ResultShape::B) => json!({
            "functions": null,
            "function_types": null,
            "function_values": {"columns": null, "values": null},
            "node_values": {"columns": null, "values": null},
        }),
        (Some(p), ResultShape::A) => shape_a(p),
        (Some(p), ResultShape::B) => shape_b(p),
    }
}

fn shape_a(p: &Profile) -> Value {
    let mut ids: Vec<String> = Vec::with_capacity(p.node_count());
    let mut hashes: Vec<u64> = Vec::with_capacity(p.node_count());
    let mut out = Vec::with_capacity(p.node_count());
    for node in p.nodes() {
        let parent = p.parent(node);
        let parent_hash = parent.map_or(0, |q| hashes[q as usize]);
        let hash = fnv1a(parent_hash, p.name(node).as_bytes());
        hashes.push(hash);
        let id = if node == 0 {
            String::new()
        } else {
            uuid_like(hash, node)
        };
        let parent_id = match parent {
            None => "-1".to_string(),
            Some(q) => ids[q as usize].clone(),
        };
        out.push(json!({
            "profile_location_str": p.name(node),
            "node_id": id,
            "parent_node_id": parent_id,
            "self_value": p.self_value(node),
            "total_value": p.total(node),
        }));
        ids.push(id);
    }
    Value::Array(out)
}

fn shape_b(p: &Profile) -> Value {
    // Wire function ids: dense, in order of first appearance, root first.
    let mut wire_id = vec![u32::MAX; p.function_count()];
    let mut functions: Vec<&str> = Vec::new();
    let mut types: Vec<&str> = Vec::new();
    let mut values: Vec<[u64; 2]> = Vec::new();
    let mut rows = Vec::with_capacity(p.node_count());
    for node in p.nodes() {
        let f = p.func(node) as usize;
        if wire_id[f] == u32::MAX {
            wire_id[f] = functions.len() as u32;
            functions.push(p.name(node));
            types.push(type_letter(p, node));
            values.push([0, 0]);
        }
        let w = wire_id[f] as usize;
        // The server's function_values add up every node, so recursion counts twice; we match it.
        values[w][0] += p.self_value(node);
        values[w][1] += p.total(node);
        let parent_row = p.parent(node).map_or(-1, i64::from);
        rows.push(json!([w, parent_row, p.self_value(node), p.total(node)]));
    }
    json!({
        "functions": functions,
        "function_types": types,
        "function_values": {"columns": ["self_value", "total_value"], "values": values},
        "node_values": {
            "columns": ["function_id", "parent_node_id", "self_value", "total_value"],
            "values": rows,
        },
    })
}

/// The querier's type letter: `H` for a root named `Total`, `P` for other roots.
fn type_letter(p: &Profile, node: NodeId) -> &'static str {
    if node == 0 {
        return if p.name(0) == "Total" { "H" } else { "P" };
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
    use crate::build::TreeBuilder;
    use crate::wire::decode_result;

    fn sample() -> Profile {
        let mut b = TreeBuilder::new("Total");
        b.add_stack(["[p] redis", "[t] io"], 5);
        b.add_stack(["[p] redis"], 2);
        b.add_stack(["[p] nginx", "[t] nginx"], 3);
        b.finish()
    }

    fn round_trip(shape: ResultShape) -> Profile {
        let v = encode_result(Some(&sample()), shape);
        let text = serde_json::to_string(&v).unwrap();
        let raw: Box<serde_json::value::RawValue> = serde_json::from_str(&text).unwrap();
        decode_result(Some(&raw)).unwrap().profile
    }

    #[test]
    fn both_shapes_round_trip_to_the_same_tree() {
        let original = crate::folded::to_folded(&sample());
        for shape in [ResultShape::A, ResultShape::B] {
            let p = round_trip(shape);
            assert_eq!(crate::folded::to_folded(&p), original, "{shape:?}");
            assert_eq!(p.warnings().total(), 0);
        }
    }

    #[test]
    fn shape_b_types_mark_the_total_root() {
        let v = encode_result(Some(&sample()), ResultShape::B);
        assert_eq!(v["function_types"][0], "H");
        assert_eq!(v["functions"][0], "Total");
        assert_eq!(v["node_values"]["values"][0][1], -1);
    }

    #[test]
    fn shape_a_ids_are_unique_and_root_is_empty() {
        let v = encode_result(Some(&sample()), ResultShape::A);
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
        assert_eq!(encode_result(None, ResultShape::A), Value::Null);
        let b = encode_result(None, ResultShape::B);
        assert_eq!(b["node_values"]["values"], Value::Null);
    }
}
