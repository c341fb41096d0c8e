//! The wall-clock view of one process: its on-CPU profile (time running) and its off-CPU
//! profile (time waiting) of the same range, merged into one tree whose every node is as wide
//! as running + waiting. Both are microseconds, so they add up: the union is the diff's
//! (absolute mode, no scaling), whose node values are exactly the sum of the two sides', and
//! each side's values stay on the nodes so every bar can say how much of it ran.

use crate::tree::diff::{Diff, DiffMode, SideValues};
use crate::tree::profile::{NodeId, Profile};

/// Running and waiting time per node of a wall-clock tree.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WallValues {
    /// On-CPU values (time running).
    pub running: SideValues,
    /// Off-CPU values (time waiting).
    pub waiting: SideValues,
}

/// A wall-clock tree and its running and waiting values.
#[derive(Clone, Debug)]
pub struct Wall {
    /// The merged tree: every node's self and total are running + waiting.
    pub profile: Profile,
    /// Each side's values on its nodes.
    pub values: WallValues,
}

/// Merges a process's on-CPU (`running`) and off-CPU (`waiting`) profiles of one range.
pub fn wall(running: &Profile, waiting: &Profile) -> Wall {
    let diff = Diff::new(waiting, running, DiffMode::Absolute);
    Wall {
        profile: diff.profile,
        values: WallValues {
            running: diff.values.comparison,
            waiting: diff.values.baseline,
        },
    }
}

impl WallValues {
    /// A node's (running, waiting) total, or self values with `own`.
    pub fn split(&self, node: NodeId, own: bool) -> (u64, u64) {
        let i = node as usize;
        let side = |s: &SideValues| {
            let v = if own { &s.self_value } else { &s.total };
            v.get(i).copied().unwrap_or(0)
        };
        (side(&self.running), side(&self.waiting))
    }

    /// The share of a node's time that it ran (0 when it has none), of its total or self.
    pub fn running_share(&self, node: NodeId, own: bool) -> f64 {
        let (r, w) = self.split(node, own);
        if r + w == 0 {
            0.0
        } else {
            r as f64 / (r + w) as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::folded::to_folded;
    use crate::wire::folded::parse_folded;
    use std::collections::BTreeMap;

    fn stacks(p: &Profile) -> BTreeMap<String, u64> {
        to_folded(p)
            .lines()
            .filter_map(|l| l.rsplit_once(' '))
            .map(|(s, v)| (s.to_string(), v.parse().unwrap_or(0)))
            .collect()
    }

    #[test]
    fn every_stack_of_the_wall_view_is_running_plus_waiting() {
        let on = parse_folded("main;work 30\nmain;io;read 5\nmain 2\n", "redis").unwrap();
        let off = parse_folded(
            "main;io;read;[k] schedule 40\nmain;idle 20\nmain 1\n",
            "redis",
        )
        .unwrap();
        let w = wall(&on, &off);
        let mut want = stacks(&on);
        for (stack, v) in stacks(&off) {
            *want.entry(stack).or_default() += v;
        }
        assert_eq!(stacks(&w.profile), want);
        assert_eq!(w.profile.root_total(), on.root_total() + off.root_total());
        let read = w.profile.find_path(&["main", "io", "read"]);
        assert_eq!(w.values.split(read, false), (5, 40));
        assert_eq!(w.values.split(read, true), (5, 0));
        assert_eq!(w.profile.total(read), 45);
        assert!((w.values.running_share(read, false) - 5.0 / 45.0).abs() < 1e-12);
        let idle = w.profile.find_path(&["main", "idle"]);
        assert_eq!(w.values.running_share(idle, false), 0.0);
        for n in w.profile.nodes() {
            let (r, wt) = w.values.split(n, false);
            assert_eq!(w.profile.total(n), r + wt, "{}", w.profile.name(n));
        }
    }

    #[test]
    fn a_missing_side_leaves_the_other() {
        let on = parse_folded("main;work 3\n", "app").unwrap();
        let w = wall(&on, &Profile::default());
        assert_eq!(to_folded(&w.profile), to_folded(&on));
        assert_eq!(w.values.running_share(0, false), 1.0);
    }
}
