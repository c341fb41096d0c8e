//! Turning a decoded [`NodeTable`] into a [`Profile`]: find the root, index and sort every
//! row's children once ([`ChildIndex`]), then build level by level ([`level_order`]).

use super::child_index::ChildIndex;
use super::{level_order, Profile, Warnings};
use crate::tree::table::{NodeTable, NO_PARENT};

/// Builds the canonical tree of `table`, repairing and counting what is wrong with it.
/// With `map_rows`, also the node each table row became (see [`Profile::from_table_mapped`]).
pub(super) fn build(mut table: NodeTable, map_rows: bool) -> (Profile, Option<Vec<u32>>) {
    let mut warnings = Warnings {
        duplicate_ids: table.issues.duplicate_ids,
        bad_function_ids: table.issues.bad_function_ids,
        ..Warnings::default()
    };
    let rows = table.len();
    let mut roots = (0..rows as u32).filter(|&r| table.parent[r as usize] == NO_PARENT);
    let root = roots.next();
    warnings.extra_roots = roots.count() as u32;
    let Some(root) = root else {
        warnings.unreachable_rows = rows as u32;
        let profile = Profile {
            warnings,
            ..Profile::default()
        };
        return (profile, map_rows.then(|| vec![u32::MAX; rows]));
    };
    let functions = std::mem::take(&mut table.functions);
    let server_function_values = table.server_function_values.take();
    let children = ChildIndex::new(&table, &functions);
    let (mut profile, reached, node_of_row) =
        level_order::build(table, children, root, &mut warnings, map_rows);
    // Placeholder rows for bad function ids are already counted as such.
    warnings.unreachable_rows = (rows as u32)
        .saturating_sub(reached as u32)
        .saturating_sub(warnings.extra_roots)
        .saturating_sub(warnings.bad_function_ids);
    let (names, kinds) = functions.into_columns();
    profile.names = names;
    profile.kinds = kinds;
    profile.server_function_values = server_function_values;
    profile.warnings = warnings;
    (profile, node_of_row)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::table::NodeTable;

    /// Builds a table from `(name, parent_row, self, total)` rows.
    fn table(rows: &[(&str, i64, i64, i64)]) -> NodeTable {
        let mut t = NodeTable::default();
        for &(name, parent, s, total) in rows {
            let f = t.functions.intern(name);
            let p = if parent < 0 { NO_PARENT } else { parent as u32 };
            t.push(f, p, s, total);
        }
        t
    }

    fn names(p: &Profile) -> Vec<&str> {
        p.nodes().map(|n| p.name(n)).collect()
    }

    #[test]
    fn children_before_parents_build_a_sorted_preorder_tree() {
        // Rows leaf-first, as shape B sends them.
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 30),
            ("b-leaf", 3, 10, 10),
            ("a", 0, 20, 20),
            ("b", 0, 0, 10),
        ]));
        assert_eq!(names(&p), ["root", "a", "b", "b-leaf"]);
        assert_eq!(p.root_total(), 30);
        assert_eq!(p.depth(3), 2);
        assert_eq!(p.start(2), 20);
        assert_eq!(p.start(3), 20);
        assert_eq!(p.subtree_end(0), 4);
        assert_eq!(p.subtree_end(1), 2);
        assert_eq!(p.children(0).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(p.row(1), [1, 2]);
        assert_eq!(p.row(2), [3]);
        assert_eq!(p.max_depth(), 2);
        assert_eq!(p.warnings().total(), 0);
        assert_eq!(p.path_to(3), [0, 2, 3]);
        assert_eq!(p.name_path(3), ["b", "b-leaf"]);
        assert_eq!(p.find_path(&["b", "b-leaf"]), 3);
        assert_eq!(p.find_path(&["b", "nope"]), 2);
        assert_eq!(p.find_path(&["nope"]), 0);
        assert_eq!(p.function_id("a"), Some(2));
        assert_eq!(p.function_id("zz"), None);
    }

    #[test]
    fn cycles_orphans_and_unknown_parents_are_dropped_not_followed() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 5),
            ("a", 0, 5, 5),
            ("cycle1", 3, 1, 1),
            ("cycle2", 2, 1, 1),
            ("self-loop", 4, 1, 1),
            ("unknown-parent", 99, 1, 1),
        ]));
        assert_eq!(names(&p), ["root", "a"]);
        assert_eq!(p.warnings().unreachable_rows, 4);
    }

    #[test]
    fn duplicate_siblings_merge_with_their_subtrees() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 6),
            ("a", 0, 1, 3),
            ("a", 0, 1, 3),
            ("x", 1, 2, 2),
            ("x", 2, 2, 2),
        ]));
        assert_eq!(names(&p), ["root", "a", "x"]);
        assert_eq!(p.self_value(1), 2);
        assert_eq!(p.total(1), 6);
        assert_eq!(p.total(2), 4);
        assert_eq!(p.warnings().merged_siblings, 2);
    }

    #[test]
    fn negative_and_inconsistent_values_are_repaired_and_counted() {
        let p = Profile::from_table(table(&[
            ("root", -1, 0, 1),
            ("a", 0, -5, 3),
            ("b", 0, 4, 2),
        ]));
        assert_eq!(p.self_value(1), 0);
        assert_eq!(p.total(2), 4);
        assert_eq!(p.root_total(), 7);
        assert_eq!(p.warnings().negative_values, 1);
        assert_eq!(p.warnings().inconsistent_totals, 2);
    }

    #[test]
    fn no_root_means_empty_profile_with_a_warning() {
        let p = Profile::from_table(table(&[("a", 1, 0, 1), ("b", 0, 0, 1)]));
        assert!(p.is_empty());
        assert!(p.path_to(0).is_empty());
        assert!(p.name_path(0).is_empty());
        assert_eq!(p.find_path(&["a"]), 0);
        assert_eq!(p.warnings().unreachable_rows, 2);
        assert_eq!(p.max_depth(), 0);
        assert!(p.row(0).is_empty());
    }

    #[test]
    fn very_deep_chains_do_not_overflow_the_stack() {
        let mut rows = vec![("root".to_string(), -1i64, 0i64, 1i64)];
        for d in 1..20_000i64 {
            rows.push((format!("f{d}"), d - 1, if d == 19_999 { 1 } else { 0 }, 1));
        }
        let borrowed: Vec<(&str, i64, i64, i64)> = rows
            .iter()
            .map(|(n, p, s, t)| (n.as_str(), *p, *s, *t))
            .collect();
        let p = Profile::from_table(table(&borrowed));
        assert_eq!(p.max_depth(), 19_999);
        assert_eq!(p.path_to(19_999).len(), 20_000);
    }
}

/// Random tables against an obviously correct reference: a node is the set of reachable rows
/// sharing one root-to-node name path, and preorder with children sorted by name is simply
/// the lexicographic order of those paths.
#[cfg(test)]
mod reference {
    use std::collections::BTreeMap;

    use super::*;

    /// xorshift, so failures reproduce.
    struct Rng(u64);
    impl Rng {
        fn below(&mut self, n: u64) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0 % n
        }
    }

    /// A random tree of `n` rows in shuffled order, with repeated siblings (when `repeats`),
    /// negative values, totals below their parts, a cycle, an orphan and an extra root.
    fn random_table(n: usize, seed: u64, repeats: bool) -> NodeTable {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let mut parent = vec![usize::MAX];
        let mut name = vec![0u64];
        let mut sibling_names: Vec<Vec<u64>> = vec![Vec::new()];
        while parent.len() < n {
            let p = if rng.below(4) == 0 {
                rng.below(parent.len() as u64) as usize
            } else {
                parent.len() - 1
            };
            let f = 1 + rng.below(12);
            if !repeats && sibling_names[p].contains(&f) {
                continue;
            }
            sibling_names[p].push(f);
            parent.push(p);
            name.push(f);
            sibling_names.push(Vec::new());
        }
        let mut row_of: Vec<usize> = (0..n).collect();
        for i in (1..n).rev() {
            row_of.swap(i, rng.below(i as u64 + 1) as usize);
        }
        let mut rows = vec![(0u64, NO_PARENT, 0i64, 0i64); n];
        for node in 0..n {
            let p = match parent[node] {
                usize::MAX => NO_PARENT,
                p => row_of[p] as u32,
            };
            let self_value = rng.below(5) as i64 - 3 * i64::from(rng.below(20) == 0);
            let total = self_value + rng.below(30) as i64;
            rows[row_of[node]] = (name[node], p, self_value, total);
        }
        let mut t = NodeTable::default();
        for (f, p, s, total) in rows {
            let id = t.functions.intern(&format!("fn{f}"));
            t.push(id, p, s, total);
        }
        let (first, f) = (t.len() as u32, t.functions.intern("trouble"));
        t.push(f, first + 1, 1, 1); // a cycle of two rows
        t.push(f, first, 1, 1);
        t.push(f, 99_999, 1, 1); // an unknown parent
        t.push(f, NO_PARENT, 1, 1); // an extra root
        t
    }

    /// `(name path, self, total)` per node in preorder, and the number of reachable rows.
    fn expected(t: &NodeTable) -> (Vec<(Vec<String>, u64, u64)>, usize) {
        let n = t.len();
        let root = (0..n).find(|&r| t.parent[r] == NO_PARENT).expect("a root");
        let mut nodes: BTreeMap<Vec<String>, (u64, u64)> = BTreeMap::new();
        let mut reachable = 0;
        for row in 0..n {
            let (mut path, mut cur, mut steps) = (Vec::new(), row, 0);
            while cur != root && steps <= n {
                let p = t.parent[cur] as usize;
                if p >= n {
                    break;
                }
                path.push(t.functions.name(t.func[cur]).to_string());
                (cur, steps) = (p, steps + 1);
            }
            if cur != root {
                continue;
            }
            reachable += 1;
            path.reverse();
            let e = nodes.entry(path).or_default();
            e.0 += t.self_value[row].max(0) as u64;
            e.1 += t.total_value[row].max(0) as u64;
        }
        // Children sort after their parent: settle totals in reverse.
        let mut children_sum: BTreeMap<Vec<String>, u64> = BTreeMap::new();
        for (path, (s, total)) in nodes.iter_mut().rev() {
            *total = (*total).max(*s + children_sum.get(path).copied().unwrap_or(0));
            if let Some((_, parent)) = path.split_last() {
                *children_sum.entry(parent.to_vec()).or_default() += *total;
            }
        }
        let nodes = nodes.into_iter().map(|(p, (s, t))| (p, s, t)).collect();
        (nodes, reachable)
    }

    fn check(t: NodeTable, what: &str) {
        let (want, reachable) = expected(&t);
        let rows = t.len();
        let row_names: Vec<String> = (0..rows)
            .map(|r| t.functions.name(t.func[r]).to_owned())
            .collect();
        let (p, node_of_row) = build(t, true);
        let node_of_row = node_of_row.expect("asked for");
        // Every reached row maps to a node of its own function; the others to none.
        let mapped: Vec<(usize, u32)> = (0..rows)
            .filter(|&r| node_of_row[r] != u32::MAX)
            .map(|r| (r, node_of_row[r]))
            .collect();
        assert_eq!(mapped.len(), reachable, "{what}");
        for (r, node) in mapped {
            assert_eq!(p.name(node), row_names[r], "{what}: row {r}");
        }
        let got: Vec<(Vec<String>, u64, u64)> = p
            .nodes()
            .map(|n| (p.name_path(n), p.self_value(n), p.total(n)))
            .collect();
        assert_eq!(got, want, "{what}");
        let w = p.warnings();
        assert_eq!(
            w.merged_siblings as usize,
            reachable - p.node_count(),
            "{what}"
        );
        assert_eq!(w.extra_roots, 1, "{what}");
        assert_eq!(w.unreachable_rows as usize, rows - reachable - 1, "{what}");
        for node in p.nodes().skip(1) {
            let parent = p.parent(node).expect("a parent");
            assert_eq!(p.depth(node), p.depth(parent) + 1, "{what}");
            assert!(p.is_in_subtree(node, parent), "{what}");
        }
        let children_start: Vec<u64> = p.children(0).map(|c| p.start(c)).collect();
        assert!(children_start.windows(2).all(|w| w[0] <= w[1]), "{what}");
    }

    #[test]
    fn random_tables_build_the_reference_tree() {
        for seed in 1..30 {
            for n in [1, 2, 7, 60, 400] {
                check(random_table(n, seed, false), &format!("seed {seed}, n {n}"));
                check(
                    random_table(n, seed, true),
                    &format!("seed {seed}, n {n}, repeats"),
                );
            }
        }
    }
}
