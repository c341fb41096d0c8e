//! From stored stacks to a ProfileTracing `result`, reusing the web-free `embers-model` crate:
//! [`TreeBuilder`] merges the stacks into the canonical call tree, [`encode_result`] writes shape
//! A or B.

use std::collections::HashMap;

use embers_model::build::TreeBuilder;
use embers_model::encode::{encode_result, ResultShape};
use embers_model::Profile;
use serde_json::Value;

use crate::kernel_depth;

/// Parse a result shape name: `A`/`a` or `B`/`b`.
pub fn parse_shape(name: &str) -> Option<ResultShape> {
    match name.trim() {
        "A" | "a" => Some(ResultShape::A),
        "B" | "b" => Some(ResultShape::B),
        _ => None,
    }
}

/// Whether an event type profiles memory (its leaves are allocated object types, typed `O`).
pub fn is_memory_event(event_type: &str) -> bool {
    event_type.starts_with("mem-") || event_type.starts_with("hbm-")
}

/// Build the call tree named `root` from `(profile_location_str, value)` rows.
///
/// Each stack is split on `;`, trimmed by `max_kernel_stack_depth` (when `trim_kernel`), and
/// added below the root. Returns `None` when there are no rows (an empty match).
pub fn build_profile<'a, I>(root: &str, rows: I, max_kernel_depth: i64) -> Option<Profile>
where
    I: IntoIterator<Item = (&'a str, u64)>,
{
    let mut builder = TreeBuilder::new(root);
    let mut any = false;
    let mut frames: Vec<&str> = Vec::new();
    for (stack, value) in rows {
        any = true;
        frames.clear();
        frames.extend(stack.split(';').filter(|f| !f.is_empty()));
        let kept = kernel_depth::trim(&frames, max_kernel_depth);
        builder.add_stack(kept.iter().copied(), value);
    }
    any.then(|| builder.finish())
}

/// Encode the `result` member. For memory event types, shape B types functions that only ever
/// occur as leaves `O` (allocated object type), as the querier does.
pub fn encode(profile: Option<&Profile>, shape: ResultShape, event_type: &str) -> Value {
    let mut result = encode_result(profile, shape);
    if let (Some(p), ResultShape::B, true) = (profile, shape, is_memory_event(event_type)) {
        mark_object_leaves(p, &mut result);
    }
    result
}

/// Set `function_types[i] = "O"` for every non-root function all of whose nodes are leaves.
fn mark_object_leaves(p: &Profile, result: &mut Value) {
    let mut leaf_only: HashMap<&str, bool> = HashMap::new();
    for node in p.nodes().skip(1) {
        let is_leaf = p.children(node).next().is_none();
        leaf_only
            .entry(p.name(node))
            .and_modify(|all| *all &= is_leaf)
            .or_insert(is_leaf);
    }
    let names: Vec<bool> = match result.get("functions").and_then(Value::as_array) {
        Some(functions) => functions
            .iter()
            .enumerate()
            .map(|(i, f)| {
                i > 0
                    && f.as_str()
                        .and_then(|n| leaf_only.get(n))
                        .copied()
                        .unwrap_or(false)
            })
            .collect(),
        None => return,
    };
    if let Some(types) = result
        .get_mut("function_types")
        .and_then(Value::as_array_mut)
    {
        for (t, is_object) in types.iter_mut().zip(names) {
            if is_object {
                *t = Value::String("O".to_owned());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::folded::to_folded;

    #[test]
    fn builds_merges_and_trims() {
        let rows = [
            ("[t] w;main;[k] a;[k] b", 5u64),
            ("[t] w;main;[k] a;[k] c", 3),
            ("[t] w;main", 2),
        ];
        let p = build_profile("app", rows, -1).expect("non-empty");
        assert_eq!(
            to_folded(&p),
            "app;[t] w;main 2\napp;[t] w;main;[k] a;[k] b 5\napp;[t] w;main;[k] a;[k] c 3\n"
        );
        let p = build_profile("app", rows, 1).expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 2\napp;[t] w;main;[k] a 8\n");
        let p = build_profile("app", rows, 0).expect("non-empty");
        assert_eq!(to_folded(&p), "app;[t] w;main 10\n");
    }

    #[test]
    fn no_rows_is_an_empty_match() {
        assert!(build_profile("app", std::iter::empty(), -1).is_none());
        assert_eq!(encode(None, ResultShape::A, "on-cpu"), Value::Null);
        assert_eq!(
            encode(None, ResultShape::B, "on-cpu")["functions"],
            Value::Null
        );
    }

    #[test]
    fn memory_leaves_are_typed_object() {
        let rows = [
            ("[t] a;main;[l] malloc", 10u64),
            ("[t] a;main;grow;[l] realloc", 4),
        ];
        let p = build_profile("svc", rows, -1).expect("non-empty");
        let v = encode(Some(&p), ResultShape::B, "mem-alloc");
        let functions = v["functions"].as_array().expect("functions");
        let types = v["function_types"].as_array().expect("types");
        for (f, t) in functions.iter().zip(types) {
            let expect = match f.as_str() {
                Some("[l] malloc" | "[l] realloc") => "O",
                Some("svc") => "P",
                Some("[t] a") => "T",
                _ => "A",
            };
            assert_eq!(t, expect, "{f}");
        }
        let cpu = encode(Some(&p), ResultShape::B, "on-cpu");
        assert!(!cpu["function_types"]
            .as_array()
            .expect("types")
            .iter()
            .any(|t| t == "O"));
    }

    #[test]
    fn shape_names() {
        assert_eq!(parse_shape("a"), Some(ResultShape::A));
        assert_eq!(parse_shape("B"), Some(ResultShape::B));
        assert_eq!(parse_shape("c"), None);
    }
}
