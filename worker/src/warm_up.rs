//! The worker's warm-up: decodes made-up bodies before the first real answer arrives.
//!
//! The browser compiles wasm in two tiers and recompiles a function with the optimizing
//! compiler only once it has run for a while, and only for its *next* call: a decode is one
//! long call per pass, so a pass that was not recompiled before the first real answer runs
//! that whole answer in the quick first-tier code. The warm-up body therefore looks like a
//! real answer in every way the decoder branches on: a `DESCRIPTION`, `function_types` and
//! `function_values` (each read by its own code), names of every kind, multi-digit values,
//! rows not in tree order (parents after their children) and fan-out as well as chains.

use js_sys::Uint8Array;

use crate::{answer, DecodeRequest};

/// A shape-B body of `rows` rows shaped like a real answer (see the module docs).
///
/// Written by hand on purpose: the worker has no JSON serialiser in it, and building this
/// body with the model's encoder (derived `Serialize` + serde_json) adds 11.6 KB to
/// decode_worker.wasm (with the synthetic generator, +28.9 KB) for a body that is only ever
/// decoded a few times and thrown away.
pub fn body(rows: usize) -> Vec<u8> {
    const FUNCTIONS: usize = 96;
    let rows = rows.max(2);
    let mut b = String::with_capacity(rows * 40 + FUNCTIONS * 48 + 512);
    b.push_str(r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"","result":{"functions":["svc""#);
    let mut types = String::from(r#"["H""#);
    for f in 1..FUNCTIONS {
        let (name, kind) = match f % 5 {
            0 => (format!("[k] do_work_{f}"), "K"),
            1 => (format!("[l] libfoo_{f}"), "L"),
            2 => (format!("com.example.Task::run#{f}"), "A"),
            3 => (format!("[t] worker-{f}"), "T"),
            _ => (format!("batch::lookup_{f}"), "A"),
        };
        b.push_str(&format!(r#","{name}""#));
        types.push_str(&format!(r#","{kind}""#));
    }
    b.push_str(r#"],"function_types":"#);
    b.push_str(&types);
    b.push_str(r#"],"function_values":{"columns":["self_value","total_value"],"values":[[0,0]"#);
    for f in 1..FUNCTIONS {
        b.push_str(&format!(",[{},{}]", f * 7_919, f * 1_048_573));
    }
    b.push_str(r#"]},"node_values":{"columns":["function_id","parent_node_id","self_value","total_value"],"values":["#);
    // Node i's parent: fan-out of 6 near the root, chains of 8 below it; parents come first
    // in node order, so totals settle in one backward pass.
    let parent = |i: usize| {
        if i < 64 {
            (i - 1) / 6
        } else if i.is_multiple_of(8) {
            i / 9
        } else {
            i - 1
        }
    };
    let mut total = vec![0u64; rows];
    for i in (0..rows).rev() {
        total[i] += (i as u64 % 13) * 10_007;
        if i > 0 {
            total[parent(i)] += total[i];
        }
    }
    // Rows in a scrambled order (a multiplier coprime with `rows`): row r holds node
    // `r * step % rows`, so most parents come after their children, as in real answers.
    let step = (1..)
        .map(|k| 7_919 * k + 2)
        .find(|s| gcd(*s, rows) == 1)
        .unwrap_or(1);
    let mut row_of_node = vec![0usize; rows];
    for r in 0..rows {
        row_of_node[r * step % rows] = r;
    }
    for r in 0..rows {
        let node = r * step % rows;
        let (func, parent_row) = match node {
            0 => (0, -1),
            n => (
                1 + (n / 8 + n % 8) % (FUNCTIONS - 1),
                row_of_node[parent(n)] as i64,
            ),
        };
        let self_value = (node as u64 % 13) * 10_007;
        let sep = if r == 0 { "" } else { "," };
        b.push_str(&format!(
            "{sep}[{func},{parent_row},{self_value},{}]",
            total[node]
        ));
    }
    b.push_str("]}}}");
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
        status: 200,
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
}
