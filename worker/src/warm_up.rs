//! The worker's warm-up: decodes made-up bodies before the first real answer arrives.
//!
//! The browser compiles wasm in two tiers and recompiles a function with the optimizing
//! compiler only once it has run for a while, and only for its *next* call: a decode is one
//! long call per pass, so a pass that was not recompiled before the first real answer runs
//! that whole answer in the quick first-tier code. The warm-up body therefore looks like a
//! real answer in every way the decoder branches on: a `DESCRIPTION`, `function_types` and
//! `function_values` (each read by its own code), names of every kind, multi-digit values,
//! rows not in tree order (parents after their children) and fan-out as well as chains; and a
//! shape-A body of the same tree, which its own reader (strings, UUID ids, an id map) decodes.

use std::fmt::Write;

use js_sys::Uint8Array;

use crate::{answer, DecodeRequest, Job};

/// How many distinct functions the warm-up bodies name (a real answer has many).
const FUNCTIONS: usize = 96;

/// The made-up tree both bodies describe: node `n`'s parent comes before it (fan-out of 6
/// near the root, chains of 8 below it), totals settled, rows in a scrambled order.
struct Tree {
    rows: usize,
    total: Vec<u64>,
    /// A multiplier coprime with `rows`: row `r` holds node `r * step % rows`, so most
    /// parents come after their children, as in real answers.
    step: usize,
}

impl Tree {
    fn new(rows: usize) -> Tree {
        let rows = rows.max(2);
        let mut total = vec![0u64; rows];
        for n in (0..rows).rev() {
            total[n] += Tree::self_value(n);
            if n > 0 {
                total[Tree::parent(n)] += total[n];
            }
        }
        let step = (1..)
            .map(|k| 7_919 * k + 2)
            .find(|s| gcd(*s, rows) == 1)
            .unwrap_or(1);
        Tree { rows, total, step }
    }

    fn parent(n: usize) -> usize {
        if n < 64 {
            (n - 1) / 6
        } else if n.is_multiple_of(8) {
            n / 9
        } else {
            n - 1
        }
    }

    fn self_value(n: usize) -> u64 {
        (n as u64 % 13) * 10_007
    }

    fn func(n: usize) -> usize {
        if n == 0 {
            0
        } else {
            1 + (n / 8 + n % 8) % (FUNCTIONS - 1)
        }
    }

    /// The nodes in row order.
    fn node_of_rows(&self) -> impl Iterator<Item = usize> + '_ {
        // In u64: `r * step` passes usize::MAX on wasm32 from ~540k rows.
        let (rows, step) = (self.rows as u64, self.step as u64);
        (0..rows).map(move |r| (r * step % rows) as usize)
    }
}

/// The name and `function_types` letter of function `f`, names of every kind.
fn function(f: usize) -> (String, &'static str) {
    match f % 5 {
        _ if f == 0 => ("svc".to_string(), "H"),
        0 => (format!("[k] do_work_{f}"), "K"),
        1 => (format!("[l] libfoo_{f}"), "L"),
        2 => (format!("com.example.Task::run#{f}"), "A"),
        3 => (format!("[t] worker-{f}"), "T"),
        _ => (format!("batch::lookup_{f}"), "A"),
    }
}

/// A shape-B body of `rows` rows shaped like a real answer (see the module docs).
///
/// Written by hand on purpose: the worker has no JSON serialiser in it, and building this
/// body with the model's encoder (derived `Serialize` + serde_json) adds 11.6 KB to
/// decode_worker.wasm (with the synthetic generator, +28.9 KB) for a body that is only ever
/// decoded a few times and thrown away.
pub fn body(rows: usize) -> Vec<u8> {
    let tree = Tree::new(rows);
    let mut b = String::with_capacity(tree.rows * 40 + FUNCTIONS * 48 + 512);
    b.push_str(r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{"functions":["#);
    let mut types = String::from("[");
    for f in 0..FUNCTIONS {
        let (name, kind) = function(f);
        let sep = if f == 0 { "" } else { "," };
        let _ = write!(b, r#"{sep}"{name}""#);
        let _ = write!(types, r#"{sep}"{kind}""#);
    }
    b.push_str(r#"],"function_types":"#);
    b.push_str(&types);
    b.push_str(r#"],"function_values":{"columns":["self_value","total_value"],"values":[[0,0]"#);
    for f in 1..FUNCTIONS {
        let _ = write!(b, ",[{},{}]", f * 7_919, f * 1_048_573);
    }
    b.push_str(r#"]},"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":["#);
    let mut row_of_node = vec![0usize; tree.rows];
    for (r, n) in tree.node_of_rows().enumerate() {
        row_of_node[n] = r;
    }
    for (r, n) in tree.node_of_rows().enumerate() {
        let parent_row = if n == 0 {
            -1
        } else {
            row_of_node[Tree::parent(n)] as i64
        };
        let sep = if r == 0 { "" } else { "," };
        let (func, s, t) = (Tree::func(n), Tree::self_value(n), tree.total[n]);
        let _ = write!(b, "{sep}[{func},{parent_row},{s},{t}]");
    }
    b.push_str("]}}}");
    b.into_bytes()
}

/// A shape-A body (one object per node, UUID ids, the root's id empty) of the same tree.
pub fn body_a(rows: usize) -> Vec<u8> {
    let tree = Tree::new(rows);
    let names: Vec<String> = (0..FUNCTIONS).map(|f| function(f).0).collect();
    let uuid = |n: usize| match n {
        0 => String::new(),
        n => {
            // Decimal digits are hex digits too, and hex formatting would add its code to the
            // worker for this alone.
            let h = (n as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 16;
            format!(
                "{:08}-{:04}-5{:03}-8{:03}-{n:012}",
                h % 100_000_000,
                h % 10_000,
                n % 1_000,
                (h >> 20) % 1_000
            )
        }
    };
    let mut b = String::with_capacity(tree.rows * 190 + 128);
    b.push_str(r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":["#);
    for (r, n) in tree.node_of_rows().enumerate() {
        let parent = if n == 0 {
            "-1".to_string()
        } else {
            uuid(Tree::parent(n))
        };
        let sep = if r == 0 { "" } else { "," };
        let _ = write!(
            b,
            r#"{sep}{{"profile_location_str":"{}","node_id":"{}","parent_node_id":"{parent}","self_value":{},"total_value":{}}}"#,
            names[Tree::func(n)],
            uuid(n),
            Tree::self_value(n),
            tree.total[n]
        );
    }
    b.push_str("]}");
    b.into_bytes()
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Decodes `body` (from [`body`]) once and throws the result away.
pub fn decode(body: &[u8]) {
    let request = DecodeRequest {
        id: 0,
        job: Job::Answer { status: 200 },
        chunks: vec![Uint8Array::from(body)],
    };
    let (msg, _) = request.to_js();
    let _ = answer(&msg);
}

#[cfg(test)]
mod tests {
    use embers_model::wire::decode_response_table;

    #[test]
    fn the_warm_up_body_is_a_sound_answer_with_rows_out_of_tree_order() {
        let body = super::body(10_000);
        let table = decode_response_table(200, &body).expect("decodes");
        let raw = table.table.as_ref().expect("a node table");
        let parent_after_child = (0..raw.len())
            .filter(|&r| (raw.parent[r] as usize) < raw.len() && raw.parent[r] as usize > r)
            .count();
        assert!(parent_after_child > 1_000, "{parent_after_child}");
        assert!(raw.server_function_values.is_some());
        let decoded = table.build();
        let warnings = decoded.profile.warnings();
        // A few siblings share a function and merge (a path real answers take too).
        let merged = warnings.merged_siblings as usize;
        assert_eq!(decoded.profile.node_count() + merged, 10_000);
        assert_eq!(warnings.total() as usize, merged);
        assert!(decoded.profile.root_total() > 0);
    }

    #[test]
    fn the_shape_a_warm_up_body_is_the_same_tree() {
        let (b, a) = (super::body(3_000), super::body_a(3_000));
        let b = decode_response_table(200, &b).expect("decodes").build();
        let a = decode_response_table(200, &a).expect("decodes").build();
        assert_eq!(a.shape, Some(embers_model::contract::shape::ResultShape::A));
        assert_eq!(a.profile.warnings(), b.profile.warnings());
        assert_eq!(a.profile.into_parts().total, b.profile.into_parts().total);
    }
}
