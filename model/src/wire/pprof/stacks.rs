//! A folded table's stacks as the service stores them (`;`-joined frames below the root, with
//! their values), within bounds: a deep tree of long names would otherwise turn a small
//! profile into gigabytes of text.

use super::PprofError;
use crate::tree::table::{NodeTable, NO_PARENT};

/// Bounds on the stacks [`stacks`] writes out: frames per stack, bytes per frame, and bytes of
/// text in all (a deep tree of long names would otherwise turn a small profile into gigabytes).
#[derive(Clone, Copy, Debug)]
pub struct StackBounds {
    /// Frames per stack.
    pub max_frames: usize,
    /// Bytes per frame name.
    pub max_frame_bytes: usize,
    /// Bytes of stack text in all.
    pub max_total_bytes: usize,
}

/// The stacks of a folded table: every node with a value, as its frames below the root joined
/// by `;`, with that value (in row order), within `bounds`.
pub fn stacks(table: &NodeTable, bounds: &StackBounds) -> Result<Vec<(String, u64)>, PprofError> {
    let mut out = Vec::new();
    let mut path: Vec<u32> = Vec::new();
    let mut total = 0usize;
    for row in 1..table.len() {
        let value = table.self_value[row];
        if value <= 0 {
            continue;
        }
        path.clear();
        let mut at = row as u32;
        // Rows are added after their parents, so this walk ends at the root.
        while at != 0 && at != NO_PARENT {
            path.push(at);
            at = table.parent[at as usize];
        }
        if path.len() > bounds.max_frames {
            return Err(PprofError::Stack(format!(
                "a stack has {} frames, over the limit of {} frames per stack \
                 (--max-stack-frames)",
                path.len(),
                bounds.max_frames
            )));
        }
        let mut stack = String::new();
        for (i, &r) in path.iter().rev().enumerate() {
            let name = table.functions.name(table.func[r as usize]);
            if name.len() > bounds.max_frame_bytes {
                return Err(PprofError::Stack(format!(
                    "a frame is {} bytes long, over the limit of {} bytes per frame \
                     (--max-frame-bytes)",
                    name.len(),
                    bounds.max_frame_bytes
                )));
            }
            if i > 0 {
                stack.push(';');
            }
            stack.push_str(name);
        }
        total = total.saturating_add(stack.len());
        if total > bounds.max_total_bytes {
            return Err(PprofError::Stack(format!(
                "the profile's stacks add up to more than {} bytes of text; send it in parts",
                bounds.max_total_bytes
            )));
        }
        out.push((stack, value as u64));
    }
    Ok(out)
}
