//! The bottom-up (inverted) tree, within a work budget.

use super::{child, UNMAPPED};
use crate::tree::profile::Profile;
use crate::tree::table::{NodeTable, NO_PARENT};
use rustc_hash::FxHashMap;

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
