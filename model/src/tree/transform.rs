//! Tree transforms: each takes a profile and returns a new one, so every view (folded threads,
//! hidden frames, focus, inverted, sandwich) is drawn by the same layout and renderer.
//!
//! Most transforms are one preorder pass of [`rebuild`], which decides per node whether the
//! frame is kept, merged into its parent (its self time and children move up), renamed, or made
//! the new root, and whether its self time counts. Sibling frames that end up with the same name
//! merge, exactly like duplicate stacks do. No recursion over depth anywhere.

use crate::contract::kernel::Tail;
use crate::contract::kind::FrameKind;
use crate::tree::build::TreeBuilder;
use crate::tree::profile::{NodeId, Profile};
use crate::tree::table::{NodeTable, NO_PARENT};
use rustc_hash::FxHashMap;

/// A set of functions (by interned id of the profile it was made for).
pub type FuncSet = Vec<bool>;

/// The functions of `profile` whose name satisfies `matches`.
pub fn func_set(profile: &Profile, matches: impl Fn(&str) -> bool) -> FuncSet {
    (0..profile.function_count() as u32)
        .map(|f| matches(profile.function_name(f)))
        .collect()
}

/// What [`rebuild`] does with one frame.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameRule {
    /// Keep the frame.
    Keep,
    /// Drop the frame: its self time and children go to its (new) parent.
    Merge,
    /// Keep the frame under another name (frames renamed alike merge).
    Rename(String),
    /// Make this frame the new root (for views of one function's subtree).
    Root,
    /// Leave this frame and its whole subtree out.
    Skip,
}

const UNMAPPED: u32 = u32::MAX;

/// Rebuilds `profile`: `rule` decides each non-root node's fate, `self_of` how much self time it
/// brings (its own, a share moved to it, or 0 to leave it out). Nodes left with no time are
/// pruned. `root_name` names the new root.
pub fn rebuild(
    profile: &Profile,
    root_name: &str,
    mut rule: impl FnMut(NodeId) -> FrameRule,
    mut self_of: impl FnMut(NodeId) -> u64,
) -> Profile {
    if profile.is_empty() {
        return Profile::default();
    }
    let n = profile.node_count();
    let mut table = NodeTable {
        derive_totals: true,
        ..NodeTable::default()
    };
    let root = table.functions.intern(root_name);
    table.push(root, NO_PARENT, 0, 0);
    let mut func_map = vec![UNMAPPED; profile.function_count()];
    let mut children: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    let mut map = vec![UNMAPPED; n];
    map[0] = 0;
    for node in 1..n as NodeId {
        let parent_new = profile.parent(node).map_or(UNMAPPED, |p| map[p as usize]);
        let decision = rule(node);
        let target = match decision {
            FrameRule::Root => 0,
            FrameRule::Skip => UNMAPPED,
            _ if parent_new == UNMAPPED => UNMAPPED,
            FrameRule::Merge => parent_new,
            FrameRule::Keep => {
                let old = profile.func(node);
                if func_map[old as usize] == UNMAPPED {
                    let f = table.functions.intern(profile.function_name(old));
                    table.functions.set_kind(f, profile.function_kind(old));
                    func_map[old as usize] = f;
                }
                child(
                    &mut table,
                    &mut children,
                    parent_new,
                    func_map[old as usize],
                )
            }
            FrameRule::Rename(name) => {
                let f = table.functions.intern(&name);
                child(&mut table, &mut children, parent_new, f)
            }
        };
        map[node as usize] = target;
        if target != UNMAPPED {
            let slot = &mut table.self_value[target as usize];
            *slot = slot.saturating_add(i64::try_from(self_of(node)).unwrap_or(i64::MAX));
        }
    }
    // Frames merged into the root (or made the root) have already added to its self time.
    let root_self = i64::try_from(self_of(0)).unwrap_or(i64::MAX);
    table.self_value[0] = table.self_value[0].saturating_add(root_self);
    prune_empty(Profile::from_table(table))
}

fn child(
    table: &mut NodeTable,
    children: &mut FxHashMap<(u32, u32), u32>,
    parent: u32,
    func: u32,
) -> u32 {
    let next = table.len() as u32;
    let id = *children.entry((parent, func)).or_insert(next);
    if id == next {
        table.push(func, parent, 0, 0);
    }
    id
}

/// Drops nodes whose total is zero (what filters leave behind). The root always stays.
fn prune_empty(profile: Profile) -> Profile {
    let has_empty = profile.nodes().skip(1).any(|n| profile.total(n) == 0);
    if !has_empty {
        return profile;
    }
    let root = profile.name(0).to_string();
    rebuild(
        &profile,
        &root,
        |n| {
            if profile.total(n) == 0 {
                FrameRule::Skip
            } else {
                FrameRule::Keep
            }
        },
        |n| profile.self_value(n),
    )
}

/// Merges the `[t]` thread layer: threads of one process become one.
pub fn fold_threads(profile: &Profile) -> Profile {
    let root = profile.name(0).to_string();
    rebuild(
        profile,
        &root,
        |n| merge_if(profile.kind(n) == FrameKind::Thread),
        |n| profile.self_value(n),
    )
}

/// Keeps at most `keep` kernel (`[k]`) frames per stack, counted from the user/kernel boundary
/// (trailing `[c]` frames likewise when a stack has no kernel tail); `keep = 0` hides them
/// entirely. The rule is the service's `max_kernel_stack_depth` ([`crate::contract::kernel`]),
/// applied to the stack ending at each node: its self time moves up to the last kept frame.
pub fn cap_kernel_depth(profile: &Profile, keep: u32) -> Profile {
    let mut tails = vec![Tail::default(); profile.node_count()];
    let mut moved = vec![0u64; profile.node_count()];
    for n in profile.nodes() {
        let tail = match profile.parent(n) {
            Some(p) => tails[p as usize].then(profile.kind(n)),
            None => Tail::default(),
        };
        tails[n as usize] = tail;
        let mut target = n;
        for _ in 0..tail.excess(i64::from(keep)) {
            target = profile.parent(target).unwrap_or(target);
        }
        moved[target as usize] = moved[target as usize].saturating_add(profile.self_value(n));
    }
    let root = profile.name(0).to_string();
    rebuild(profile, &root, |_| FrameRule::Keep, |n| moved[n as usize])
}

/// Collapses runs of unresolved frames (`[/path]`, `[unknown] 0x...`) into their first frame.
pub fn collapse_unresolved(profile: &Profile) -> Profile {
    let unresolved = |n: NodeId| n != 0 && profile.kind(n) == FrameKind::Unresolved;
    let root = profile.name(0).to_string();
    rebuild(
        profile,
        &root,
        |n| merge_if(unresolved(n) && profile.parent(n).is_some_and(unresolved)),
        |n| profile.self_value(n),
    )
}

/// Hides the frames of the given functions, merging what remains.
pub fn hide_functions(profile: &Profile, hidden: &FuncSet) -> Profile {
    let root = profile.name(0).to_string();
    rebuild(
        profile,
        &root,
        |n| merge_if(hidden[profile.func(n) as usize]),
        |n| profile.self_value(n),
    )
}

/// Keeps only the stacks that pass through one of `funcs` (ancestors stay for context).
pub fn keep_stacks_through(profile: &Profile, funcs: &FuncSet) -> Profile {
    let through = stacks_through(profile, funcs);
    let root = profile.name(0).to_string();
    rebuild(
        profile,
        &root,
        |_| FrameRule::Keep,
        |n| counted(profile, n, through[n as usize]),
    )
}

/// Per node: whether it or one of its ancestors is one of `funcs`.
fn stacks_through(profile: &Profile, funcs: &FuncSet) -> Vec<bool> {
    let mut through = vec![false; profile.node_count()];
    for n in profile.nodes() {
        let inherited = profile.parent(n).is_some_and(|p| through[p as usize]);
        through[n as usize] = inherited || funcs[profile.func(n) as usize];
    }
    through
}

/// Work limit of [`invert`], in caller frames visited. Inverting costs the sum of the depths of
/// all frames with self time, which for a million-node profile of deep stacks runs to tens of
/// millions; past this budget callers are cut at a common depth (see [`Inverted`]).
pub const INVERT_STEP_BUDGET: u64 = 3_000_000;

/// An inverted profile and how far up the callers it goes.
pub struct Inverted {
    /// The bottom-up tree.
    pub profile: Profile,
    /// `Some(d)` when callers more than `d` frames above a leaf were left out to stay within
    /// [`INVERT_STEP_BUDGET`] (their time stays on the last kept caller).
    pub caller_depth_limit: Option<u32>,
}

/// The bottom-up (inverted) tree: functions with self time become the root's children, their
/// callers grow upwards. Works on function ids (no string hashing) in one pass per leaf.
pub fn invert(profile: &Profile) -> Inverted {
    invert_with_budget(profile, INVERT_STEP_BUDGET)
}

/// [`invert`] with an explicit work budget (for tests).
pub fn invert_with_budget(profile: &Profile, budget: u64) -> Inverted {
    if profile.is_empty() {
        return Inverted {
            profile: Profile::default(),
            caller_depth_limit: None,
        };
    }
    let limit = caller_depth_limit(profile, budget);
    let mut table = NodeTable {
        derive_totals: true,
        ..NodeTable::default()
    };
    let root = table.functions.intern(profile.name(0));
    table.push(root, NO_PARENT, 0, 0);
    let mut func_map = vec![UNMAPPED; profile.function_count()];
    let mut children: FxHashMap<(u32, u32), u32> = FxHashMap::default();
    for n in profile.nodes().skip(1) {
        let value = profile.self_value(n);
        if value == 0 {
            continue;
        }
        let (mut cur, mut steps) = (0u32, 0u32);
        let mut frame = Some(n);
        while let Some(c) = frame.filter(|&c| c != 0 && limit.is_none_or(|l| steps < l)) {
            let old = profile.func(c);
            if func_map[old as usize] == UNMAPPED {
                let f = table.functions.intern(profile.function_name(old));
                table.functions.set_kind(f, profile.function_kind(old));
                func_map[old as usize] = f;
            }
            cur = child(&mut table, &mut children, cur, func_map[old as usize]);
            steps += 1;
            frame = profile.parent(c);
        }
        let slot = &mut table.self_value[cur as usize];
        *slot = slot.saturating_add(value as i64);
    }
    table.self_value[0] = table.self_value[0].saturating_add(profile.self_value(0) as i64);
    Inverted {
        profile: Profile::from_table(table),
        caller_depth_limit: limit,
    }
}

/// The deepest caller level that keeps inverting within `budget` steps, or `None` if the whole
/// tree fits.
fn caller_depth_limit(profile: &Profile, budget: u64) -> Option<u32> {
    // How many frames with self time sit at each depth.
    let mut at_depth = vec![0u64; profile.max_depth() as usize + 1];
    for n in profile.nodes().skip(1) {
        if profile.self_value(n) > 0 {
            at_depth[profile.depth(n) as usize] += 1;
        }
    }
    let cost = |limit: u64| -> u64 {
        at_depth
            .iter()
            .enumerate()
            .map(|(d, &c)| c * (d as u64).min(limit))
            .sum()
    };
    if cost(u64::MAX) <= budget {
        return None;
    }
    // cost() grows with the limit: the largest limit within budget, at least one level.
    let (mut lo, mut hi) = (1u64, profile.max_depth() as u64);
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if cost(mid) <= budget {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    Some(lo as u32)
}

/// The sandwich view of one function: who calls it and what it calls, merged over every place
/// it occurs (outermost occurrences only, so recursion counts each sample once).
pub struct Sandwich {
    /// Callers, inverted: the function at the root, its callers above it.
    pub callers: Profile,
    /// Callees: the function at the root, everything it calls below.
    pub callees: Profile,
}

/// Builds the [`Sandwich`] of function `func`.
pub fn sandwich(profile: &Profile, func: u32) -> Sandwich {
    let name = profile.function_name(func).to_string();
    let is_f = |n: NodeId| profile.func(n) == func;
    // Outermost occurrences: a node of `func` with no `func` ancestor.
    let mut inside = vec![false; profile.node_count()];
    let mut outermost = Vec::new();
    for n in profile.nodes() {
        let parent_inside = profile.parent(n).is_some_and(|p| inside[p as usize]);
        if is_f(n) && !parent_inside {
            outermost.push(n);
        }
        inside[n as usize] = parent_inside || is_f(n);
    }
    let mut callers = TreeBuilder::new(&name);
    let mut frames: Vec<&str> = Vec::new();
    for &n in &outermost {
        frames.clear();
        let mut cur = profile.parent(n);
        while let Some(c) = cur.filter(|&c| c != 0) {
            frames.push(profile.name(c));
            cur = profile.parent(c);
        }
        callers.add_stack(frames.iter().copied(), profile.total(n));
    }
    let outer: std::collections::HashSet<NodeId> = outermost.iter().copied().collect();
    let callees = rebuild(
        profile,
        &name,
        |n| {
            if outer.contains(&n) {
                FrameRule::Root
            } else {
                FrameRule::Keep
            }
        },
        |n| counted(profile, n, inside[n as usize]),
    );
    Sandwich {
        callers: callers.finish(),
        callees,
    }
}

/// A node's self time when it counts, else 0.
fn counted(profile: &Profile, node: NodeId, counts: bool) -> u64 {
    if counts {
        profile.self_value(node)
    } else {
        0
    }
}

fn merge_if(cond: bool) -> FrameRule {
    if cond {
        FrameRule::Merge
    } else {
        FrameRule::Keep
    }
}

#[cfg(test)]
mod tests;
