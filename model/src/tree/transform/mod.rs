//! Tree transforms: each takes a profile and returns a new one, so every view (folded threads,
//! hidden, merged or dropped frames, collapsed recursion and libraries, focus, inverted,
//! sandwich) is drawn by the same layout and renderer, and works on both sides of a comparison.
//!
//! Most transforms are one preorder pass of [`rebuild`], which decides per node whether the
//! frame is kept, merged into its parent or an ancestor (its self time and children move up),
//! renamed, made the new root, or left out with its subtree, and whether its self time counts.
//! Sibling frames that end up with the same name merge, exactly like duplicate stacks do. No
//! recursion over depth anywhere. Transforms that act on stacks through a function (keep, drop,
//! merge, focus, recursion, libraries) are in [`stacks`]; the idle-wait table in [`idle`].

use crate::contract::kernel::Tail;
use crate::contract::kind::FrameKind;
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
    /// Drop the frame: its self time and children go to this ancestor's new node (collapsed
    /// recursion: an inner call joins the outermost one).
    MergeInto(NodeId),
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
    rebuild_dyn(profile, root_name, &mut rule, &mut self_of)
}

/// [`rebuild`] through `dyn` closures: one copy of the pass in the wasm bundle for every
/// transform (each closure type would make its own, ~2 KB each); a call through a pointer per
/// node costs a few milliseconds at a million nodes.
fn rebuild_dyn(
    profile: &Profile,
    root_name: &str,
    rule: &mut dyn FnMut(NodeId) -> FrameRule,
    self_of: &mut dyn FnMut(NodeId) -> u64,
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
            FrameRule::MergeInto(ancestor) => {
                map.get(ancestor as usize).copied().unwrap_or(UNMAPPED)
            }
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
    Profile::from_table(prune_empty(table))
}

/// The name of `profile`'s root, empty for an empty profile (which every transform keeps empty).
pub(crate) fn root_name(profile: &Profile) -> String {
    if profile.is_empty() {
        String::new()
    } else {
        profile.name(0).to_string()
    }
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

/// Drops the rows whose total is zero (what filters leave behind) from a table whose rows come
/// after their parents, as [`rebuild`] writes them; the root always stays. One backward pass
/// sums the totals, one forward pass keeps and renumbers rows: a zero total has none below it.
fn prune_empty(mut table: NodeTable) -> NodeTable {
    let n = table.len();
    let mut total: Vec<i64> = table.self_value.clone();
    for i in (1..n).rev() {
        if let Some(p) = total.get(table.parent[i] as usize).copied() {
            total[table.parent[i] as usize] = p.saturating_add(total[i]);
        }
    }
    if total.iter().skip(1).all(|&t| t > 0) {
        return table;
    }
    let mut new_index = vec![NO_PARENT; n];
    let mut kept = 0u32;
    for i in 0..n {
        if i == 0 || total[i] > 0 {
            new_index[i] = kept;
            let parent = table.parent[i];
            let parent = if parent == NO_PARENT {
                NO_PARENT
            } else {
                new_index[parent as usize]
            };
            let k = kept as usize;
            table.func[k] = table.func[i];
            table.parent[k] = parent;
            table.self_value[k] = table.self_value[i];
            table.total_value[k] = 0;
            kept += 1;
        }
    }
    for column in [&mut table.parent, &mut table.func] {
        column.truncate(kept as usize);
    }
    table.self_value.truncate(kept as usize);
    table.total_value.truncate(kept as usize);
    drop_unused_functions(&mut table);
    table
}

/// Keeps only the functions some row names (a function whose frames all went is gone from the
/// profile, as if it never was), renumbering the rows' functions.
fn drop_unused_functions(table: &mut NodeTable) {
    let mut used = vec![false; table.functions.len()];
    for &f in &table.func {
        used[f as usize] = true;
    }
    if used.iter().all(|&u| u) {
        return;
    }
    let old = std::mem::take(&mut table.functions);
    let mut new_id = vec![UNMAPPED; used.len()];
    let (names, kinds) = old.into_columns();
    for (f, (name, kind)) in names.iter().zip(kinds).enumerate() {
        if used[f] {
            let id = table.functions.intern(name);
            table.functions.set_kind(id, kind);
            new_id[f] = id;
        }
    }
    for f in &mut table.func {
        *f = new_id[*f as usize];
    }
}

/// Merges the `[t]` thread layer: threads of one process become one.
pub fn fold_threads(profile: &Profile) -> Profile {
    let root = root_name(profile);
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
    let root = root_name(profile);
    rebuild(profile, &root, |_| FrameRule::Keep, |n| moved[n as usize])
}

/// Collapses runs of unresolved frames (`[/path]`, `[unknown] 0x...`) into their first frame.
pub fn collapse_unresolved(profile: &Profile) -> Profile {
    let unresolved = |n: NodeId| n != 0 && profile.kind(n) == FrameKind::Unresolved;
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |n| merge_if(unresolved(n) && profile.parent(n).is_some_and(unresolved)),
        |n| profile.self_value(n),
    )
}

/// Hides the frames of the given functions, merging what remains.
pub fn hide_functions(profile: &Profile, hidden: &FuncSet) -> Profile {
    let root = root_name(profile);
    rebuild(
        profile,
        &root,
        |n| merge_if(hidden[profile.func(n) as usize]),
        |n| profile.self_value(n),
    )
}

/// A node's self time when it counts, else 0.
pub(crate) fn counted(profile: &Profile, node: NodeId, counts: bool) -> u64 {
    if counts {
        profile.self_value(node)
    } else {
        0
    }
}

pub(crate) fn merge_if(cond: bool) -> FrameRule {
    if cond {
        FrameRule::Merge
    } else {
        FrameRule::Keep
    }
}

pub mod idle;
mod invert;
mod sandwich;
pub mod stacks;

pub use invert::{invert, invert_with_budget, Inverted, INVERT_STEP_BUDGET};
pub use sandwich::{sandwich, Sandwich};
pub use stacks::{
    collapse_library, collapse_recursion, drop_stacks_through, focus_function, keep_stacks_through,
    library_of, Libraries,
};

#[cfg(test)]
mod tests;
