//! The sandwich view of one function: its callers and its callees, merged over every place it
//! occurs.

use super::stacks::{focus_function, outermost};
use super::FuncSet;
use crate::tree::build::TreeBuilder;
use crate::tree::profile::Profile;

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
    let funcs: FuncSet = (0..profile.function_count() as u32)
        .map(|f| f == func)
        .collect();
    let (outer, _) = outermost(profile, &funcs);
    let mut callers = TreeBuilder::new(&name);
    let mut frames: Vec<&str> = Vec::new();
    for &n in &outer {
        frames.clear();
        let mut cur = profile.parent(n);
        while let Some(c) = cur.filter(|&c| c != 0) {
            frames.push(profile.name(c));
            cur = profile.parent(c);
        }
        callers.add_stack(frames.iter().copied(), profile.total(n));
    }
    Sandwich {
        callers: callers.finish(),
        callees: focus_function(profile, &funcs, &name),
    }
}
