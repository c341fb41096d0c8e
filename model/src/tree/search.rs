//! Search: which frames match, how much time they cover, and the order to step through them.
//!
//! Matching is by function name and left to the caller (a substring matcher is provided; the
//! viewer passes the browser's RegExp for regex searches), so this module stays pure.

use crate::tree::profile::{NodeId, Profile};
use crate::tree::transform::{func_set, FuncSet};

/// Whether a frame matches a search (what drawing needs of a search's outcome).
pub trait FrameMatch: std::fmt::Debug {
    /// Whether `node` of `profile` matched.
    fn is_match(&self, profile: &Profile, node: NodeId) -> bool;
}

/// The outcome of a search over one profile.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SearchResult {
    /// Per function id: whether its name matched.
    pub funcs: FuncSet,
    /// Every matching node, in preorder (left to right, top down within a subtree).
    pub nodes: Vec<NodeId>,
    /// Time covered by matches, each sample counted once even when matches nest.
    pub total: u64,
}

impl SearchResult {
    /// Whether `node` matched.
    pub fn is_match(&self, profile: &Profile, node: NodeId) -> bool {
        self.funcs
            .get(profile.func(node) as usize)
            .copied()
            .unwrap_or(false)
    }

    /// The first match after `node` in preorder, wrapping around.
    pub fn next_after(&self, node: Option<NodeId>) -> Option<NodeId> {
        let i = node.map_or(0, |n| self.nodes.partition_point(|&m| m <= n));
        self.nodes.get(i).or_else(|| self.nodes.first()).copied()
    }

    /// The last match before `node` in preorder, wrapping around.
    pub fn previous_before(&self, node: Option<NodeId>) -> Option<NodeId> {
        let i = node.map_or(self.nodes.len(), |n| self.nodes.partition_point(|&m| m < n));
        i.checked_sub(1)
            .and_then(|i| self.nodes.get(i))
            .or_else(|| self.nodes.last())
            .copied()
    }
}

impl FrameMatch for SearchResult {
    fn is_match(&self, profile: &Profile, node: NodeId) -> bool {
        SearchResult::is_match(self, profile, node)
    }
}

/// Splits a search box's text into terms: comma-separated, trimmed, empty ones dropped.
pub fn parse_terms(input: &str) -> Vec<String> {
    input
        .split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect()
}

/// A case-insensitive substring matcher for any of `terms`. ASCII terms (the usual case) are
/// compared byte-wise without allocating, which keeps search-as-you-type cheap on profiles
/// with tens of thousands of functions.
pub fn substring_matcher(terms: &[String]) -> impl Fn(&str) -> bool + '_ {
    let lowered: Vec<String> = terms.iter().map(|t| t.to_lowercase()).collect();
    move |name: &str| lowered.iter().any(|t| contains_ignore_case(name, t))
}

/// Whether `haystack` contains `needle_lower` (already lower-cased), ignoring case.
pub(crate) fn contains_ignore_case(haystack: &str, needle_lower: &str) -> bool {
    if needle_lower.is_ascii() {
        let n = needle_lower.as_bytes();
        return n.is_empty()
            || haystack
                .as_bytes()
                .windows(n.len())
                .any(|w| w.eq_ignore_ascii_case(n));
    }
    haystack.to_lowercase().contains(needle_lower)
}

/// Finds the frames whose function name satisfies `matches`.
pub fn search(profile: &Profile, matches: impl Fn(&str) -> bool) -> SearchResult {
    search_funcs(profile, func_set(profile, matches))
}

/// Finds the frames of the functions in `funcs` (a [`FuncSet`] of this profile).
pub fn search_funcs(profile: &Profile, funcs: FuncSet) -> SearchResult {
    let mut nodes = Vec::new();
    let mut total = 0u64;
    // Matches inside a counted match's subtree add no time: skip to the subtree's end.
    let mut counted_until: NodeId = 0;
    for node in profile.nodes() {
        if !funcs[profile.func(node) as usize] {
            continue;
        }
        nodes.push(node);
        if node >= counted_until {
            total += profile.total(node);
            counted_until = profile.subtree_end(node);
        }
    }
    SearchResult {
        funcs,
        nodes,
        total,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::folded::parse_folded;

    #[test]
    fn nested_matches_count_once_and_terms_combine() {
        let p = parse_folded(
            "main;fib;fib;fib 4\nmain;fib 1\nmain;Read 2\nmain 3\n",
            "app",
        )
        .unwrap();
        let terms = parse_terms(" FIB , ,read");
        assert_eq!(terms, ["FIB", "read"]);
        let r = search(&p, substring_matcher(&terms));
        assert_eq!(r.nodes.len(), 4);
        assert_eq!(r.total, 7);
        assert!(r.is_match(&p, r.nodes[0]));
    }

    #[test]
    fn case_insensitive_matching_handles_ascii_and_unicode() {
        assert!(contains_ignore_case("JavaThread::run", "thread::r"));
        assert!(!contains_ignore_case("main", "mainx"));
        assert!(contains_ignore_case("ÜBER_alloc", "über"));
        assert!(contains_ignore_case("x", ""));
    }

    #[test]
    fn stepping_wraps_around() {
        let p = parse_folded("a 1\nb 1\nc 1\n", "app").unwrap();
        let r = search(&p, |n| n == "a" || n == "c");
        let (a, c) = (r.nodes[0], r.nodes[1]);
        assert_eq!(r.next_after(None), Some(a));
        assert_eq!(r.next_after(Some(a)), Some(c));
        assert_eq!(r.next_after(Some(c)), Some(a));
        assert_eq!(r.previous_before(Some(a)), Some(c));
        assert_eq!(r.previous_before(None), Some(c));
    }

    #[test]
    fn no_match_is_empty() {
        let p = parse_folded("a 1\n", "app").unwrap();
        let r = search(&p, |_| false);
        assert_eq!((r.nodes.len(), r.total, r.next_after(None)), (0, 0, None));
    }
}
