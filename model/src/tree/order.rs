//! One stable sort for the viewer's small, cold sorts (tables, timeline series, exported lines).
//! Each `sort_by` closure and each element type is its own copy of the standard library's
//! driftsort in the wasm (3–7 KB each before compression); here every caller sorts `u32`
//! indices behind a `dyn` order, so the page carries one copy. Hot sorts (the tree builder's)
//! keep their own, inlined comparison.

use std::cmp::Ordering;

/// Sorts `items` stably by `cmp`, like `items.sort_by(cmp)`.
pub fn sort_by_dyn<T>(items: &mut Vec<T>, cmp: &dyn Fn(&T, &T) -> Ordering) {
    let order = stable_order(items.len(), &|a, b| cmp(&items[a], &items[b]));
    let mut slots: Vec<Option<T>> = std::mem::take(items).into_iter().map(Some).collect();
    // `order` is a permutation of the indices, so every slot is taken exactly once.
    items.extend(order.iter().filter_map(|&i| slots[i as usize].take()));
}

/// The indices `0..len` in the stable order `cmp` gives them. Not generic: the one instance of
/// the sort.
#[inline(never)]
fn stable_order(len: usize, cmp: &dyn Fn(usize, usize) -> Ordering) -> Vec<u32> {
    let mut order: Vec<u32> = (0..len as u32).collect();
    order.sort_by(|&a, &b| cmp(a as usize, b as usize));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_like_sort_by_and_keeps_equal_items_in_order() {
        let mut items: Vec<(u32, &str)> =
            vec![(3, "a"), (1, "b"), (3, "c"), (2, "d"), (1, "e"), (0, "f")];
        let mut want = items.clone();
        want.sort_by_key(|a| a.0);
        sort_by_dyn(&mut items, &|a, b| a.0.cmp(&b.0));
        assert_eq!(items, want);
        assert_eq!(
            items.iter().map(|i| i.1).collect::<String>(),
            "fbedac",
            "stable: b before e, a before c"
        );
    }

    #[test]
    fn sorts_owned_strings_in_reverse_and_handles_empty_and_single() {
        let mut lines: Vec<String> = ["b", "c", "a"].map(String::from).to_vec();
        sort_by_dyn(&mut lines, &|a, b| b.cmp(a));
        assert_eq!(lines, ["c", "b", "a"]);
        let mut empty: Vec<String> = Vec::new();
        sort_by_dyn(&mut empty, &|a, b| a.cmp(b));
        assert!(empty.is_empty());
        let mut one = vec![7];
        sort_by_dyn(&mut one, &|a: &i32, b| a.cmp(b));
        assert_eq!(one, [7]);
    }
}
