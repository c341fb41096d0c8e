//! A folded table's stacks as the service stores them (`;`-joined frames below the root, with
//! their values), within bounds: a deep tree of long names would otherwise turn a small
//! profile into gigabytes of text, so every stack's text is charged to the request's
//! [`Budget`] before it is written.

use super::PprofError;
use crate::budget::Budget;
use crate::tree::table::{NodeTable, NO_PARENT};

/// Bounds on each stack [`stacks`] writes out: frames per stack and bytes per frame (the text
/// in all is the request's [`Budget`]'s to bound).
#[derive(Clone, Copy, Debug)]
pub struct StackBounds {
    /// Frames per stack.
    pub max_frames: usize,
    /// Bytes per frame name.
    pub max_frame_bytes: usize,
}

/// Memory a stored stack costs beside its text: the `String` and its value, and the `Sample`
/// it becomes.
const STACK_OVERHEAD: usize = 64;

/// The stacks of a folded table: every node with a value, as its frames below the root joined
/// by `;`, with that value (in row order), within `bounds`, each charged to `budget` before
/// its text is made.
pub fn stacks(
    table: &NodeTable,
    bounds: &StackBounds,
    budget: &Budget,
) -> Result<Vec<(String, u64)>, PprofError> {
    let mut out = Vec::new();
    let mut path: Vec<u32> = Vec::new();
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
        let mut len = path.len().saturating_sub(1);
        for &r in &path {
            let name = table.functions.name(table.func[r as usize]);
            if name.len() > bounds.max_frame_bytes {
                return Err(PprofError::Stack(format!(
                    "a frame is {} bytes long, over the limit of {} bytes per frame \
                     (--max-frame-bytes)",
                    name.len(),
                    bounds.max_frame_bytes
                )));
            }
            len = len.saturating_add(name.len());
        }
        // Charged, and made at its exact size, before a byte of it is written.
        budget.charge(len.saturating_add(STACK_OVERHEAD), "stack text")?;
        let mut stack = String::with_capacity(len);
        for (i, &r) in path.iter().rev().enumerate() {
            if i > 0 {
                stack.push(';');
            }
            stack.push_str(table.functions.name(table.func[r as usize]));
        }
        out.push((stack, value as u64));
    }
    Ok(out)
}
