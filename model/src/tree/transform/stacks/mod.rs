//! Transforms that act on the stacks through chosen functions, each one [`rebuild`] pass:
//!
//! - [`keep_stacks_through`]: only the samples whose stack has one of the functions stay;
//! - [`drop_stacks_through`]: those samples go (the complement: kept + dropped = the whole);
//! - merging a function is [`super::hide_functions`] with an exact set: the frame goes, its
//!   children and self time move up to its parent, totals stay;
//! - [`focus_function`]: the function becomes the root, merged over every place it occurs;
//! - [`collapse_recursion`]: a call of a function inside itself (directly or through other
//!   frames) joins the outermost call: `A;X;B;X;C` becomes `A;X;C`, totals stay;
//! - [`collapse_library`]: consecutive `[l]` frames of one library become their first frame.
//!
//! **How a library is recognised.** DeepFlow names library frames `[l] <function>` without the
//! library's file, so a library is the package of the function's name
//! ([`crate::tree::symbol::package_of`]): the top-level namespace of a C++ or Rust name (`std`,
//! `boost`, `tokio`), the package of a Java or Go name. C has no namespaces, and a C++ class at
//! global scope (libjvm's `JavaThread::run`) is not one: such frames count as one library,
//! [`UNSCOPED_LIBRARY`] — a run of them is almost always one library calling into itself (libc,
//! libjvm), and the names cannot tell the rest apart.

use super::{counted, merge_if, rebuild, root_name, FrameRule, FuncSet};
use crate::contract::kind::FrameKind;
use crate::tree::profile::{NodeId, Profile};
use crate::tree::symbol::package_of;
use rustc_hash::FxHashMap;

/// The library key of `[l]` frames whose names have no namespace (C symbols, global classes).
pub const UNSCOPED_LIBRARY: &str = "C";

/// Keeps only the stacks that pass through one of `funcs` (ancestors stay for context).
pub fn keep_stacks_through(profile: &Profile, funcs: &FuncSet) -> Profile {
    let through = stacks_through(profile, funcs);
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |_| FrameRule::Keep,
        |n| counted(profile, n, through[n as usize]),
    )
}

/// Drops every sample whose stack passes through one of `funcs`: unlike hiding or merging,
/// the totals shrink by what those stacks held.
pub fn drop_stacks_through(profile: &Profile, funcs: &FuncSet) -> Profile {
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |n| {
            if funcs[profile.func(n) as usize] {
                FrameRule::Skip
            } else {
                FrameRule::Keep
            }
        },
        |n| profile.self_value(n),
    )
}

/// Per node: whether it or one of its ancestors is one of `funcs`.
pub(super) fn stacks_through(profile: &Profile, funcs: &FuncSet) -> Vec<bool> {
    let mut through = vec![false; profile.node_count()];
    for n in profile.nodes() {
        let inherited = profile.parent(n).is_some_and(|p| through[p as usize]);
        through[n as usize] = inherited || funcs[profile.func(n) as usize];
    }
    through
}

/// The outermost occurrences of `funcs`: nodes of one of them with no such ancestor, and per
/// node whether it lies inside one.
pub(super) fn outermost(profile: &Profile, funcs: &FuncSet) -> (Vec<NodeId>, Vec<bool>) {
    let mut inside = vec![false; profile.node_count()];
    let mut outer = Vec::new();
    for n in profile.nodes() {
        let parent_inside = profile.parent(n).is_some_and(|p| inside[p as usize]);
        let is_f = funcs[profile.func(n) as usize];
        if is_f && !parent_inside && n != 0 {
            outer.push(n);
        }
        inside[n as usize] = parent_inside || (is_f && n != 0);
    }
    (outer, inside)
}

/// The subtree below every outermost occurrence of `funcs`, merged under one root named
/// `root_name` (the function's name): what the function does wherever it is called from.
pub fn focus_function(profile: &Profile, funcs: &FuncSet, root_name: &str) -> Profile {
    let (outer, inside) = outermost(profile, funcs);
    let mut is_outer = vec![false; profile.node_count()];
    for n in outer {
        is_outer[n as usize] = true;
    }
    rebuild(
        profile,
        root_name,
        |n| {
            if is_outer[n as usize] {
                FrameRule::Root
            } else {
                FrameRule::Keep
            }
        },
        |n| counted(profile, n, inside[n as usize]),
    )
}

/// Collapses recursion of `funcs` (`None`: of every function): a frame whose function is
/// already on its stack merges into the outermost such frame, with its children and self
/// time, so `A;X;B;X;C` becomes `A;X;C` (and `A;X;B` stays). The root total is unchanged.
pub fn collapse_recursion(profile: &Profile, funcs: Option<&FuncSet>) -> Profile {
    const NONE: NodeId = NodeId::MAX;
    let mut outer = vec![NONE; profile.function_count()];
    let mut open: Vec<NodeId> = Vec::new();
    let mut into = vec![NONE; profile.node_count()];
    for n in profile.nodes().skip(1) {
        // Leave the frames whose subtree ended (preorder: they are on top of the stack).
        while let Some(&top) = open.last() {
            if profile.subtree_end(top) > n {
                break;
            }
            open.pop();
            let f = profile.func(top) as usize;
            if outer[f] == top {
                outer[f] = NONE;
            }
        }
        let f = profile.func(n) as usize;
        if outer[f] == NONE {
            outer[f] = n;
        } else if funcs.is_none_or(|s| s[f]) {
            into[n as usize] = outer[f];
        }
        open.push(n);
    }
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |n| match into[n as usize] {
            NONE => FrameRule::Keep,
            ancestor => FrameRule::MergeInto(ancestor),
        },
        |n| profile.self_value(n),
    )
}

/// The library of a frame: its package for an `[l]` frame with a namespace,
/// [`UNSCOPED_LIBRARY`] for other `[l]` frames; `None` for frames that are not library frames.
pub fn library_of(name: &str, kind: FrameKind) -> Option<&str> {
    (kind == FrameKind::Library).then(|| package_of(name).unwrap_or(UNSCOPED_LIBRARY))
}

/// Which libraries [`collapse_library`] collapses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Libraries<'a> {
    /// Every library.
    All,
    /// The library with this key (see [`library_of`]).
    Named(&'a str),
}

/// Collapses each run of consecutive `[l]` frames of one library (of the chosen ones) into
/// its first frame, where the program entered the library; the callees inside the library
/// and their self time merge into it. Totals stay.
pub fn collapse_library(profile: &Profile, which: Libraries<'_>) -> Profile {
    // Per function: an id of its library when it is one of the chosen, else NONE.
    const NONE: u32 = u32::MAX;
    let mut ids: FxHashMap<&str, u32> = FxHashMap::default();
    let lib: Vec<u32> = (0..profile.function_count() as u32)
        .map(|f| {
            let key = library_of(profile.function_name(f), profile.function_kind(f));
            match (key, which) {
                (Some(k), Libraries::All) => {
                    let next = ids.len() as u32;
                    *ids.entry(k).or_insert(next)
                }
                (Some(k), Libraries::Named(want)) if k == want => 0,
                _ => NONE,
            }
        })
        .collect();
    let of = |n: NodeId| {
        if n == 0 {
            NONE
        } else {
            lib[profile.func(n) as usize]
        }
    };
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |n| {
            let l = of(n);
            merge_if(l != NONE && profile.parent(n).is_some_and(|p| of(p) == l))
        },
        |n| profile.self_value(n),
    )
}

#[cfg(test)]
mod tests;
