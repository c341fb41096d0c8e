//! How much text one request may turn into. A few bytes of protobuf can point at a long string
//! many times (a stack of 4,096 locations, a row per second of the same stack, a batch per
//! trace with the resource's tags), so the names and tags a request expands to are counted
//! against [`Bounds::max_text`] (what is left of the request's memory budget once it is
//! decoded) as they are made, and the request is refused past it.

use super::OtlpError;
use crate::limits::StackLimits;

/// What one request may cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Frames per stack and bytes per frame (`--max-stack-frames`, `--max-frame-bytes`).
    pub stacks: StackLimits,
    /// Bytes of frame names, stacks and tags the request may expand to.
    pub max_text: usize,
}

/// The text left to make.
#[derive(Debug)]
pub(super) struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    pub fn new(limit: usize) -> Budget {
        Budget { left: limit, limit }
    }

    /// Spend `bytes`, or refuse the request.
    pub fn take(&mut self, bytes: usize) -> Result<(), OtlpError> {
        self.left = self
            .left
            .checked_sub(bytes)
            .ok_or(OtlpError::Expands { limit: self.limit })?;
        Ok(())
    }
}
