//! Keyboard navigation over a laid-out graph: where an arrow key moves the focus. Pure, so the
//! rules are tested natively; the viewer maps keys to [`Step`]s.

use crate::tree::profile::{NodeId, Profile};
use crate::view::layout::Orientation;

/// A navigation key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The previous frame in the row.
    Left,
    /// The next frame in the row.
    Right,
    /// Up on screen: the parent in an icicle graph, the widest child in a flame graph.
    Up,
    /// Down on screen: the widest child in an icicle graph, the parent in a flame graph.
    Down,
    /// Back to the zoomed frame.
    Home,
}

impl Step {
    /// The step a `KeyboardEvent.key` names, if any.
    pub fn from_key(key: &str) -> Option<Step> {
        Some(match key {
            "ArrowLeft" => Step::Left,
            "ArrowRight" => Step::Right,
            "ArrowUp" => Step::Up,
            "ArrowDown" => Step::Down,
            "Home" => Step::Home,
            _ => return None,
        })
    }
}

/// Where `step` moves the focus from `from`: along the row, to the parent, or to the widest child
/// (ties: the leftmost), staying inside the zoomed subtree of `zoom`.
pub fn step(
    p: &Profile,
    from: NodeId,
    zoom: NodeId,
    step: Step,
    orientation: Orientation,
) -> NodeId {
    let toward_root = match (step, orientation) {
        (Step::Up, Orientation::Icicle) | (Step::Down, Orientation::Flame) => true,
        (Step::Down, Orientation::Icicle) | (Step::Up, Orientation::Flame) => false,
        (Step::Left | Step::Right, _) => return along_row(p, from, zoom, step == Step::Left),
        (Step::Home, _) => return zoom,
    };
    if toward_root {
        p.parent(from)
            .filter(|&q| p.is_in_subtree(q, zoom))
            .unwrap_or(from)
    } else {
        p.children(from)
            .max_by_key(|&c| (p.total(c), std::cmp::Reverse(c)))
            .unwrap_or(from)
    }
}

fn along_row(p: &Profile, from: NodeId, zoom: NodeId, left: bool) -> NodeId {
    let row = p.row(p.depth(from));
    let i = row.partition_point(|&n| n < from);
    let candidate = if left {
        i.checked_sub(1).and_then(|i| row.get(i))
    } else {
        row.get(i + 1)
    };
    candidate
        .copied()
        .filter(|&n| p.is_in_subtree(n, zoom))
        .unwrap_or(from)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::build::TreeBuilder;

    fn sample() -> Profile {
        let mut b = TreeBuilder::new("app");
        b.add_stack(["a", "x"], 1);
        b.add_stack(["b", "y"], 5);
        b.add_stack(["b", "z"], 2);
        b.finish()
    }

    #[test]
    fn arrows_follow_rows_parents_and_widest_children() {
        let p = sample();
        let id = |name: &str| p.nodes().find(|&n| p.name(n) == name).unwrap();
        let (a, b, y) = (id("a"), id("b"), id("y"));
        let icicle = Orientation::Icicle;
        assert_eq!(step(&p, a, 0, Step::Right, icicle), b);
        assert_eq!(
            step(&p, a, 0, Step::Left, icicle),
            a,
            "stays at the row's start"
        );
        assert_eq!(step(&p, b, 0, Step::Down, icicle), y, "widest child");
        assert_eq!(step(&p, y, 0, Step::Up, icicle), b);
        assert_eq!(step(&p, y, 0, Step::Down, Orientation::Flame), b);
        assert_eq!(step(&p, y, b, Step::Home, icicle), b);
        assert_eq!(step(&p, b, b, Step::Up, icicle), b, "stays inside the zoom");
        assert_eq!(
            step(&p, y, b, Step::Left, icicle),
            y,
            "x is outside the zoom"
        );
        assert_eq!(Step::from_key("ArrowUp"), Some(Step::Up));
        assert_eq!(Step::from_key("Enter"), None);
    }
}
