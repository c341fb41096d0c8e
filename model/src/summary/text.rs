//! The pieces both summaries write: values with their unit, shares, names and paths cut to
//! their bounds, and per-function facts of a tree.

use crate::tree::profile::{NodeId, Profile};
use crate::view::format::{elide, format_percent, format_value, measure_name, ValueUnit};

use super::{MAX_NAME_CHARS, MAX_PATH_FRAMES};

/// How a summary writes values: the event type's unit and the measure's name.
pub struct Values {
    unit: ValueUnit,
    /// `CPU time`, `waiting time`, `allocated bytes`, ...
    pub measure: &'static str,
}

impl Values {
    /// For `event_type`'s values.
    pub fn of(event_type: &str) -> Values {
        Values {
            unit: ValueUnit::for_event_type(event_type),
            measure: measure_name(event_type),
        }
    }

    /// `value` with its unit (`4.56 s`, `1.2 MiB`).
    pub fn value(&self, value: u64) -> String {
        format_value(value, self.unit)
    }
}

/// `part` of `whole` as a percentage, right-aligned in 6 characters.
pub fn share(part: u64, whole: u64) -> String {
    format!("{:>6}", format_percent(part, whole))
}

/// A name cut to [`MAX_NAME_CHARS`].
pub fn name(name: &str) -> String {
    match elide(name, MAX_NAME_CHARS) {
        Some(cut) => cut.into_owned(),
        None => name.chars().take(MAX_NAME_CHARS).collect(),
    }
}

/// The frames from the root's child down to `node`, joined by ` > `: at most
/// [`MAX_PATH_FRAMES`] of them (the first two, `…`, the last ones).
pub fn path(profile: &Profile, node: NodeId) -> String {
    let frames: Vec<String> = profile
        .path_to(node)
        .into_iter()
        .skip(1)
        .map(|n| name(profile.name(n)))
        .collect();
    if frames.len() <= MAX_PATH_FRAMES {
        return frames.join(" > ");
    }
    let tail = MAX_PATH_FRAMES - 2;
    let mut shown: Vec<&str> = frames[..2].iter().map(String::as_str).collect();
    shown.push("…");
    shown.extend(frames[frames.len() - tail..].iter().map(String::as_str));
    shown.join(" > ")
}

/// Per function: the smallest depth any of its nodes has (how close to the root it is called).
pub fn min_depths(profile: &Profile) -> Vec<u32> {
    let mut depths = vec![u32::MAX; profile.function_count()];
    for node in profile.nodes() {
        let f = profile.func(node) as usize;
        depths[f] = depths[f].min(profile.depth(node));
    }
    depths
}

/// Whether some node of function `inner` lies below a node of function `outer`.
pub fn called_under(profile: &Profile, inner: u32, outer: u32) -> bool {
    profile
        .nodes()
        .filter(|&n| profile.func(n) == inner)
        .any(|n| {
            let mut cur = profile.parent(n);
            while let Some(p) = cur {
                if profile.func(p) == outer {
                    return true;
                }
                cur = profile.parent(p);
            }
            false
        })
}
