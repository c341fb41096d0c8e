//! Search as you type on large profiles: the same answers as [`crate::tree::search`] without
//! building the preorder list of every matching node on each keystroke.
//!
//! A [`SearchIndex`] is made once per profile (lower-cased names in one buffer, nodes per
//! function); a [`Matches`] then costs a scan of the name buffer, a sum over functions and a
//! preorder walk that jumps over every counted match's subtree. Stepping to the next or
//! previous match scans the tree from the current node instead of searching a stored list.

use memchr::memmem::Finder;

use crate::tree::profile::{NodeId, Profile};
use crate::tree::search::{contains_ignore_case, FrameMatch};
use crate::tree::transform::FuncSet;

/// What one profile's searches share; build it once per profile.
#[derive(Clone, Debug, Default)]
pub struct SearchIndex {
    /// Every function's name, ASCII-lower-cased, each followed by a NUL.
    lower: Vec<u8>,
    /// Where each function's name ends in `lower` (at its NUL).
    ends: Vec<u32>,
    /// How many nodes each function has.
    counts: Vec<u32>,
    /// Per function, the pairs of adjacent bytes in its lower-cased name, hashed into 64 bits:
    /// a name can hold a needle only if it has all of the needle's pairs, so a keystroke reads
    /// these 8 bytes a name and looks into the few names that pass.
    pairs: Vec<u64>,
}

/// The bit of one pair of adjacent bytes in [`SearchIndex::pairs`].
fn pair_bit(a: u8, b: u8) -> u64 {
    let h = (u32::from(a) << 8 | u32::from(b)).wrapping_mul(0x9E37_79B1);
    1 << (h >> 26)
}

/// The pairs of adjacent bytes in `bytes`, as [`SearchIndex::pairs`] holds them.
fn pair_mask(bytes: &[u8]) -> u64 {
    bytes.windows(2).fold(0, |m, w| m | pair_bit(w[0], w[1]))
}

impl SearchIndex {
    /// Indexes `profile`'s names and counts its nodes per function.
    pub fn new(profile: &Profile) -> SearchIndex {
        let functions = profile.function_count();
        let mut lower = Vec::new();
        let mut ends = Vec::with_capacity(functions);
        let mut pairs = Vec::with_capacity(functions);
        for f in 0..functions as u32 {
            let name = profile.function_name(f).as_bytes();
            let start = lower.len();
            lower.extend(name.iter().map(u8::to_ascii_lowercase));
            pairs.push(pair_mask(&lower[start..]));
            ends.push(lower.len() as u32);
            lower.push(0);
        }
        let mut counts = vec![0u32; functions];
        for node in profile.nodes() {
            counts[profile.func(node) as usize] += 1;
        }
        SearchIndex {
            lower,
            ends,
            counts,
            pairs,
        }
    }

    /// The functions whose name contains any of `terms`, ignoring case (the same set as
    /// `func_set(profile, substring_matcher(terms))`).
    pub fn substring_set(&self, profile: &Profile, terms: &[String]) -> FuncSet {
        let mut funcs = vec![false; self.ends.len()];
        for term in terms.iter().map(|t| t.to_lowercase()) {
            if term.is_ascii() {
                self.mark_ascii(term.as_bytes(), &mut funcs);
            } else {
                // Unicode case folding can change byte lengths: compare name by name.
                for (f, hit) in funcs.iter_mut().enumerate() {
                    *hit = *hit || contains_ignore_case(profile.function_name(f as u32), &term);
                }
            }
        }
        funcs
    }

    /// Marks the functions whose lower-cased name contains `needle` (ASCII, lower case).
    fn mark_ascii(&self, needle: &[u8], funcs: &mut [bool]) {
        if needle.is_empty() {
            funcs.fill(true);
            return;
        }
        if needle.len() == 1 {
            self.scan_ascii(needle, funcs);
            return;
        }
        // Only names with every pair of the needle can hold it: at a million nodes that is
        // 0.4 MB of masks instead of 1.6 MB of names, and a few percent of the names to search.
        let want = pair_mask(needle);
        let finder = Finder::new(needle);
        let mut start = 0usize;
        for ((hit, &pairs), &end) in funcs.iter_mut().zip(&self.pairs).zip(&self.ends) {
            let end = end as usize;
            if pairs & want == want && finder.find(&self.lower[start..end]).is_some() {
                *hit = true;
            }
            start = end + 1;
        }
    }

    /// [`Self::mark_ascii`] by scanning every name (a needle too short for pairs).
    fn scan_ascii(&self, needle: &[u8], funcs: &mut [bool]) {
        let finder = Finder::new(needle);
        let mut from = 0usize;
        let mut func = 0usize;
        while let Some(i) = finder.find(&self.lower[from..]) {
            let at = from + i;
            // The name holding `at`: the first whose end lies past it (hits come in order).
            func += self.ends[func..].partition_point(|&e| (e as usize) < at);
            let Some(&end) = self.ends.get(func) else {
                break;
            };
            let end = end as usize;
            if at + needle.len() <= end {
                funcs[func] = true;
            }
            // One hit per name is enough; a hit across the NUL is in no name.
            from = end + 1;
        }
    }
}

/// The outcome of a search over one profile, without the list of matching nodes.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Matches {
    /// Per function id: whether its name matched.
    pub funcs: FuncSet,
    /// How many nodes matched.
    pub count: usize,
    /// Time covered by matches, each sample counted once even when matches nest.
    pub total: u64,
}

impl Matches {
    /// The frames of the functions in `funcs` (a [`FuncSet`] of this profile and `index`).
    pub fn new(profile: &Profile, index: &SearchIndex, funcs: FuncSet) -> Matches {
        let count = funcs
            .iter()
            .zip(&index.counts)
            .filter(|(hit, _)| **hit)
            .map(|(_, &n)| n as usize)
            .sum();
        // A counted match covers its subtree: jump past it (matches inside add no time).
        let mut total = 0u64;
        let mut node: NodeId = 0;
        let end = profile.node_count() as NodeId;
        while node < end {
            if funcs[profile.func(node) as usize] {
                total += profile.total(node);
                node = profile.subtree_end(node);
            } else {
                node += 1;
            }
        }
        Matches {
            funcs,
            count,
            total,
        }
    }

    /// Whether `node` matched.
    pub fn is_match(&self, profile: &Profile, node: NodeId) -> bool {
        self.funcs
            .get(profile.func(node) as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The first match after `node` in preorder, wrapping around.
    pub fn next_after(&self, profile: &Profile, node: Option<NodeId>) -> Option<NodeId> {
        let start = node.map_or(0, |n| n.saturating_add(1));
        let mut after = start..profile.node_count() as NodeId;
        let mut before = 0..start.min(profile.node_count() as NodeId);
        let hit = |n: &NodeId| self.is_match(profile, *n);
        after.find(hit).or_else(|| before.find(hit))
    }

    /// The last match before `node` in preorder, wrapping around.
    pub fn previous_before(&self, profile: &Profile, node: Option<NodeId>) -> Option<NodeId> {
        let count = profile.node_count() as NodeId;
        let start = node.map_or(count, |n| n.min(count));
        let hit = |n: &NodeId| self.is_match(profile, *n);
        (0..start)
            .rev()
            .find(hit)
            .or_else(|| (start..count).rev().find(hit))
    }
}

impl FrameMatch for Matches {
    fn is_match(&self, profile: &Profile, node: NodeId) -> bool {
        Matches::is_match(self, profile, node)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::search::{parse_terms, search, substring_matcher};
    use crate::wire::folded::parse_folded;

    fn folded() -> Profile {
        parse_folded(
            "main;fib;fib;fib 4\nmain;fib 1\nmain;Read 2\nmain;ÜBER_alloc 3\nmain 3\nab;cd 1\n",
            "app",
        )
        .unwrap()
    }

    #[test]
    fn a_hit_must_lie_inside_one_name() {
        let p = folded();
        let index = SearchIndex::new(&p);
        // "bc" spans the end of "ab" and the start of "cd"; "d" is inside "cd".
        for (text, want) in [("bc", vec![]), ("d", vec!["cd", "Read"]), ("b\0c", vec![])] {
            let terms = parse_terms(text);
            let funcs = index.substring_set(&p, &terms);
            let mut got: Vec<&str> = (0..p.function_count() as u32)
                .filter(|&f| funcs[f as usize])
                .map(|f| p.function_name(f))
                .collect();
            got.sort_unstable();
            let mut want = want;
            want.sort_unstable();
            assert_eq!(got, want, "{text:?}");
        }
    }

    #[test]
    fn counts_totals_and_unicode_terms_agree_with_the_full_search() {
        let p = folded();
        let index = SearchIndex::new(&p);
        for text in ["FIB, read", "über", "fib", "APP", "zzz", "f"] {
            let terms = parse_terms(text);
            let funcs = index.substring_set(&p, &terms);
            let full = search(&p, substring_matcher(&terms));
            assert_eq!(funcs, full.funcs, "{text}");
            let m = Matches::new(&p, &index, funcs);
            assert_eq!((m.count, m.total), (full.nodes.len(), full.total), "{text}");
        }
    }

    #[test]
    fn the_pair_filter_finds_what_a_full_scan_finds() {
        // Many names sharing letters in different orders, so masks collide and must not decide.
        let mut folded = String::new();
        let parts = [
            "alloc",
            "lloc",
            "coll",
            "ALLOCATOR",
            "a",
            "ll",
            "_free",
            "x9",
            "oca",
        ];
        for (i, a) in parts.iter().enumerate() {
            for b in parts.iter().skip(i) {
                folded.push_str(&format!("main;{a}{b} 1\nmain;{b}_{a} 2\n"));
            }
        }
        let p = parse_folded(&folded, "app").unwrap();
        let index = SearchIndex::new(&p);
        for text in [
            "alloc", "LLO", "oc", "ca", "a", "_", "coll_a", "x9a", "lloca", "ocaoca", "zz",
        ] {
            let terms = parse_terms(text);
            let full = search(&p, substring_matcher(&terms));
            assert_eq!(index.substring_set(&p, &terms), full.funcs, "{text}");
        }
    }

    #[test]
    fn stepping_wraps_around_like_the_list() {
        let p = parse_folded("a 1\nb 1\nc 1\n", "app").unwrap();
        let index = SearchIndex::new(&p);
        let full = search(&p, |n| n == "a" || n == "c");
        let m = Matches::new(&p, &index, full.funcs.clone());
        let (a, c) = (full.nodes[0], full.nodes[1]);
        assert_eq!(m.next_after(&p, None), Some(a));
        assert_eq!(m.next_after(&p, Some(a)), Some(c));
        assert_eq!(m.next_after(&p, Some(c)), Some(a));
        assert_eq!(m.previous_before(&p, Some(a)), Some(c));
        assert_eq!(m.previous_before(&p, None), Some(c));
        assert_eq!(m.next_after(&p, Some(NodeId::MAX)), Some(a));
        let none = Matches::new(&p, &index, vec![false; p.function_count()]);
        assert_eq!((none.count, none.next_after(&p, None)), (0, None));
        assert_eq!(none.previous_before(&p, Some(a)), None);
    }
}
