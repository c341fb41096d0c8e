//! `max_kernel_stack_depth`: trimming the kernel tail of eBPF stacks — one rule for the service
//! (which trims each stored stack) and the viewer's "cap kernel depth" transform (which trims a
//! tree node by node through [`Tail`]).
//!
//! Kernel frames (`[k] `) are the last frames of a stored stack (root→leaf). With a depth `N ≥ 0`
//! a stack keeps at most the first `N` of its trailing `[k]` frames, counted from the user/kernel
//! boundary; the sample's value then lands on the last kept frame. A stack without trailing `[k]`
//! frames gets the same treatment for trailing `[c]` (CUDA) frames. `N < 0` keeps everything.

use crate::contract::kind::FrameKind;

/// The trailing kernel and CUDA runs of a stack, followed frame by frame from the root: the
/// state a tree walk carries from a parent to its child.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Tail {
    /// Consecutive `[k]` frames ending at the current frame.
    kernel: u32,
    /// Consecutive `[c]` frames ending at the current frame.
    cuda: u32,
}

impl Tail {
    /// The runs after one more frame of `kind`.
    pub fn then(self, kind: FrameKind) -> Tail {
        Tail {
            kernel: if kind == FrameKind::Kernel {
                self.kernel + 1
            } else {
                0
            },
            cuda: if kind == FrameKind::Cuda {
                self.cuda + 1
            } else {
                0
            },
        }
    }

    /// How many frames at the end of a stack ending here `max_depth` removes.
    pub fn excess(self, max_depth: i64) -> u32 {
        let Ok(max) = u32::try_from(max_depth) else {
            return 0;
        };
        let tail = if self.kernel > 0 {
            self.kernel
        } else {
            self.cuda
        };
        tail.saturating_sub(max)
    }
}

/// How many leading frames of `frames` (root→leaf) to keep for `max_depth`.
///
/// Returns `frames.len()` when `max_depth < 0` or when nothing needs trimming.
pub fn kept_len(frames: &[&str], max_depth: i64) -> usize {
    let tail = frames
        .iter()
        .fold(Tail::default(), |t, f| t.then(FrameKind::from_name(f)));
    frames.len() - tail.excess(max_depth) as usize
}

/// The frames to keep for `max_depth` (see [`kept_len`]).
pub fn trim<'a, 'b>(frames: &'b [&'a str], max_depth: i64) -> &'b [&'a str] {
    &frames[..kept_len(frames, max_depth)]
}

#[cfg(test)]
mod tests {
    use super::*;

    const STACK: [&str; 6] = [
        "[t] main",
        "main",
        "[l] read",
        "[k] entry_SYSCALL_64",
        "[k] do_syscall_64",
        "[k] vfs_read",
    ];

    #[test]
    fn negative_keeps_everything() {
        assert_eq!(trim(&STACK, -1), &STACK[..]);
        assert_eq!(trim(&STACK, i64::MIN), &STACK[..]);
    }

    #[test]
    fn keeps_the_first_n_kernel_frames_from_the_boundary() {
        assert_eq!(trim(&STACK, 0), &STACK[..3]);
        assert_eq!(trim(&STACK, 1), &STACK[..4]);
        assert_eq!(trim(&STACK, 2), &STACK[..5]);
        assert_eq!(trim(&STACK, 3), &STACK[..]);
        assert_eq!(trim(&STACK, 100), &STACK[..]);
        assert_eq!(trim(&STACK, i64::MAX), &STACK[..]);
    }

    #[test]
    fn user_only_stacks_are_untouched() {
        let s = ["[t] main", "main", "work"];
        assert_eq!(trim(&s, 0), &s[..]);
    }

    #[test]
    fn cuda_frames_are_trimmed_when_there_are_no_kernel_frames() {
        let s = [
            "[t] main",
            "train",
            "[c] cudaLaunchKernel",
            "[c] cuLaunchKernel",
        ];
        assert_eq!(trim(&s, 1), &s[..3]);
        assert_eq!(trim(&s, 0), &s[..2]);
        let mixed = ["[t] main", "[c] cudaMemcpy", "[k] ioctl"];
        assert_eq!(trim(&mixed, 0), &mixed[..2]);
    }

    #[test]
    fn kernel_only_stack_can_trim_to_nothing() {
        let s = ["[k] a", "[k] b"];
        assert!(trim(&s, 0).is_empty());
        assert_eq!(trim(&s, 1), &s[..1]);
    }

    #[test]
    fn only_the_trailing_run_counts() {
        let s = ["[k] early", "main", "[k] a", "[k] b"];
        assert_eq!(trim(&s, 1), &s[..3]);
    }
}
