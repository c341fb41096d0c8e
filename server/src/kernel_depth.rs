//! `max_kernel_stack_depth`: trimming the kernel tail of eBPF stacks.
//!
//! Kernel frames (`[k] `) are the last frames of a stored stack (root→leaf). With a depth `N ≥ 0`
//! a stack keeps at most the first `N` of its trailing `[k]` frames, counted from the user/kernel
//! boundary; the sample's value then lands on the last kept frame. A stack without `[k]` frames
//! gets the same treatment for trailing `[c]` (CUDA) frames. `N < 0` keeps everything.

/// Prefix of kernel (or CUDA library) frames.
pub const KERNEL_PREFIX: &str = "[k] ";
/// Prefix of CUDA frames.
pub const CUDA_PREFIX: &str = "[c] ";

/// How many leading frames of `frames` (root→leaf) to keep for `max_depth`.
///
/// Returns `frames.len()` when `max_depth < 0` or when nothing needs trimming.
pub fn kept_len(frames: &[&str], max_depth: i64) -> usize {
    let Ok(max) = usize::try_from(max_depth) else {
        return frames.len();
    };
    let trailing = |prefix: &str| {
        frames
            .iter()
            .rev()
            .take_while(|f| f.starts_with(prefix))
            .count()
    };
    let mut tail = trailing(KERNEL_PREFIX);
    if tail == 0 {
        tail = trailing(CUDA_PREFIX);
    }
    frames.len() - tail + tail.min(max)
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
}
