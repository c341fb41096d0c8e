//! Deterministic synthetic profiles of any size, for benchmarks and scale tests.
//!
//! The shape imitates real eBPF profiles: a thread layer, long call chains (deep stacks), bushy
//! fan-out near hot frames, a few thousand to tens of thousands of distinct functions with
//! kernel/library/application prefixes, and self time mostly on leaves. Rows are emitted
//! children-first, as the querier does, so decoders meet their worst case.

use std::fmt::Write as _;

use crate::contract::envelope::{Envelope, SUCCESS};
use crate::contract::kind::FrameKind;
use crate::export::encode::{
    EncodedResult, NodeA, ShapeB, ValueTable, FUNCTION_COLUMNS, NODE_COLUMNS,
};

/// Knobs for [`SynthProfile::generate`]. `SynthOptions::default()` documents the defaults.
#[derive(Clone, Copy, Debug)]
pub struct SynthOptions {
    /// Nodes including the root. Default 100,000.
    pub nodes: usize,
    /// Distinct function names to draw from. Default nodes / 18 (≈57k at 1M nodes), at least 64.
    pub functions: Option<usize>,
    /// Deepest level. Default 230.
    pub max_depth: u32,
    /// PRNG seed. Default 1.
    pub seed: u64,
}

impl Default for SynthOptions {
    fn default() -> Self {
        SynthOptions {
            nodes: 100_000,
            functions: None,
            max_depth: 230,
            seed: 1,
        }
    }
}

/// A generated node table: parents precede children in these arrays (creation order).
#[derive(Clone, Debug)]
pub struct SynthProfile {
    /// Function names, index = function id; 0 is the root.
    pub functions: Vec<String>,
    /// Per node: function id.
    pub func: Vec<u32>,
    /// Per node: parent node (the root's is -1).
    pub parent: Vec<i64>,
    /// Per node: self value (µs).
    pub self_value: Vec<u64>,
    /// Per node: total value (µs).
    pub total: Vec<u64>,
}

/// xorshift64*: small, fast, and identical everywhere.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const SAMPLE_US: u64 = 10_101;

impl SynthProfile {
    /// Generates a profile.
    pub fn generate(opts: SynthOptions) -> SynthProfile {
        let n = opts.nodes.max(2);
        let f_count = opts.functions.unwrap_or(n / 18).max(64);
        let mut rng = Rng(opts.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let functions = function_names(f_count, &mut rng);
        let mut func = vec![0u32];
        let mut parent = vec![-1i64];
        let mut depth = vec![0u32];
        let mut child_count = vec![0u32];
        let mut last = 0usize;
        for i in 1..n {
            // Mostly extend the newest chain (deep stacks); sometimes branch from anywhere.
            let roll = rng.below(100);
            let mut p = if roll < 72 {
                last
            } else if roll < 90 {
                rng.below(i).max(i.saturating_sub(64))
            } else {
                rng.below(i)
            };
            if depth[p] >= opts.max_depth {
                p = rng.below(i.min(256));
            }
            let d = depth[p] + 1;
            // Siblings get distinct names: (parent, child index) picks the function.
            let k = child_count[p];
            child_count[p] += 1;
            let f = if d == 1 {
                // The thread layer: a handful of named threads.
                1 + (k as usize % 8)
            } else {
                9 + (mix(p as u64, u64::from(k)) % (f_count as u64 - 9)) as usize
            };
            func.push(f as u32);
            parent.push(p as i64);
            depth.push(d);
            child_count.push(0);
            last = i;
        }
        let mut self_value = vec![0u64; n];
        for i in 1..n {
            if child_count[i] == 0 || rng.below(10) == 0 {
                self_value[i] = SAMPLE_US * (1 + rng.below(20) as u64);
            }
        }
        let mut total = self_value.clone();
        for i in (1..n).rev() {
            total[parent[i] as usize] += total[i];
        }
        SynthProfile {
            functions,
            func,
            parent,
            self_value,
            total,
        }
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.func.len()
    }

    /// Whether there are no nodes (never, for a generated profile).
    pub fn is_empty(&self) -> bool {
        self.func.is_empty()
    }

    /// A full shape-B response body. Node rows are written children-first (reverse creation
    /// order), so parent row indices point forward, as in the querier's discovery order.
    pub fn to_shape_b_json(&self) -> String {
        let n = self.len();
        let row_of = |node: usize| (n - 1 - node) as i64;
        let mut function_values = vec![[0u64; 2]; self.functions.len()];
        for i in 0..n {
            let e = &mut function_values[self.func[i] as usize];
            e[0] += self.self_value[i];
            e[1] += self.total[i];
        }
        let rows = (0..n).map(|row| n - 1 - row).map(|node| {
            let parent = usize::try_from(self.parent[node]).map_or(-1, row_of);
            (
                self.func[node],
                parent,
                self.self_value[node],
                self.total[node],
            )
        });
        let types = self.functions.iter().enumerate().map(|(i, f)| {
            if i == 0 {
                "P"
            } else {
                FrameKind::from_name(f).type_letter()
            }
        });
        response_json(EncodedResult::B(ShapeB {
            functions: Some(self.functions.iter().map(String::as_str).collect()),
            function_types: Some(types.collect()),
            function_values: ValueTable {
                columns: Some(FUNCTION_COLUMNS),
                values: Some(function_values),
            },
            node_values: ValueTable {
                columns: Some(NODE_COLUMNS),
                values: Some(rows.collect()),
            },
        }))
    }

    /// A full shape-A response body (UUID-like ids, root first, the rest reversed).
    pub fn to_shape_a_json(&self) -> String {
        let id = |node: usize| -> String {
            if node == 0 {
                String::new()
            } else {
                let h = mix(node as u64, 0x5eed);
                format!(
                    "{:08x}-{:04x}-5{:03x}-8{:03x}-{:012x}",
                    h >> 32,
                    (h >> 16) & 0xffff,
                    h & 0xfff,
                    node & 0xfff,
                    node
                )
            }
        };
        let order = std::iter::once(0).chain((1..self.len()).rev());
        let nodes = order.map(|node| NodeA {
            profile_location_str: &self.functions[self.func[node] as usize],
            node_id: id(node),
            parent_node_id: usize::try_from(self.parent[node]).map_or_else(|_| "-1".into(), id),
            self_value: self.self_value[node],
            total_value: self.total[node],
        });
        response_json(EncodedResult::A(Some(nodes.collect())))
    }

    /// Folded stacks, one line per node with self time (root excluded from the frames).
    pub fn to_folded(&self) -> String {
        let mut out = String::new();
        let mut path: Vec<usize> = Vec::new();
        for node in 1..self.len() {
            if self.self_value[node] == 0 {
                continue;
            }
            path.clear();
            let mut cur = node;
            while cur != 0 {
                path.push(cur);
                cur = self.parent[cur] as usize;
            }
            for (k, &f) in path.iter().rev().enumerate() {
                if k > 0 {
                    out.push(';');
                }
                out.push_str(&self.functions[self.func[f] as usize]);
            }
            let _ = writeln!(out, " {}", self.self_value[node]);
        }
        out
    }
}

fn mix(a: u64, b: u64) -> u64 {
    let mut h = a.wrapping_mul(0x9e37_79b9_7f4a_7c15) ^ b.wrapping_mul(0xc2b2_ae3d_27d4_eb4f);
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

fn function_names(count: usize, rng: &mut Rng) -> Vec<String> {
    const PARTS: [&str; 16] = [
        "handle", "process", "read", "write", "encode", "decode", "parse", "flush", "poll",
        "lookup", "insert", "compress", "hash", "alloc", "dispatch", "schedule",
    ];
    const NOUNS: [&str; 12] = [
        "request", "buffer", "frame", "table", "entry", "batch", "socket", "page", "block",
        "record", "index", "task",
    ];
    let mut names = vec!["synthetic-service".to_string()];
    for t in 0..8 {
        names.push(format!("[t] worker-{t}"));
    }
    for i in names.len()..count {
        let (a, b) = (PARTS[rng.below(PARTS.len())], NOUNS[rng.below(NOUNS.len())]);
        names.push(match rng.below(10) {
            0 | 1 => format!("[k] {a}_{b}_{i}"),
            2 => format!("[l] lib{b}_{a}_{i}"),
            3 => format!(
                "com.example.{b}.{}{}::{a}#{i}",
                b[..1].to_uppercase(),
                &b[1..]
            ),
            _ => format!("{b}::{a}_{i}"),
        });
    }
    names
}

/// A success envelope around `result`, as the querier writes it.
fn response_json(result: EncodedResult<'_>) -> String {
    let envelope = Envelope {
        opt_status: SUCCESS,
        description: "",
        result,
        debug: (),
    };
    // Serialising plain structs of strings and integers cannot fail.
    serde_json::to_string(&envelope).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::decode_response;

    #[test]
    fn shapes_a_b_and_folded_describe_the_same_tree() {
        let synth = SynthProfile::generate(SynthOptions {
            nodes: 3_000,
            ..SynthOptions::default()
        });
        let b = decode_response(200, &synth.to_shape_b_json())
            .unwrap()
            .profile;
        let a = decode_response(200, &synth.to_shape_a_json())
            .unwrap()
            .profile;
        let f = crate::wire::folded::parse_folded(&synth.to_folded(), "synthetic-service").unwrap();
        assert_eq!(b.root_total(), synth.total[0]);
        let folded = crate::export::folded::to_folded(&b);
        assert_eq!(crate::export::folded::to_folded(&a), folded);
        assert_eq!(crate::export::folded::to_folded(&f), folded);
        assert_eq!(b.warnings().inconsistent_totals, 0);
        assert!(b.max_depth() > 50, "deep stacks: {}", b.max_depth());
    }
}
