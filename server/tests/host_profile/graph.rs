//! Reading a graph the service answered (as canonical folded text, root first) the way the
//! tests judge it: a thread's total, a function's share of it, whether a call chain is intact,
//! whether kernel frames lie under a function.

/// One stack: its frames (root first) and its self value.
pub struct Line<'a> {
    /// Frames.
    pub frames: Vec<&'a str>,
    /// Value.
    pub value: u64,
}

/// Parse canonical folded text.
pub fn lines(folded: &str) -> Vec<Line<'_>> {
    folded
        .lines()
        .filter_map(|l| {
            let (stack, value) = l.rsplit_once(' ')?;
            Some(Line {
                frames: stack.split(';').collect(),
                value: value.parse().ok()?,
            })
        })
        .collect()
}

/// Whether `frames` holds each of `chain` in order (not necessarily adjacent).
pub fn holds_in_order(frames: &[&str], chain: &[&str]) -> bool {
    let mut want = chain.iter().peekable();
    for f in frames {
        if want.peek().is_some_and(|w| *w == f) {
            want.next();
        }
    }
    want.peek().is_none()
}

/// The stacks of thread `[t] <thread>` (the second frame, under the process root).
pub fn of_thread<'a>(all: &'a [Line<'a>], thread: &str) -> Vec<&'a Line<'a>> {
    let t = format!("[t] {thread}");
    all.iter()
        .filter(|l| l.frames.get(1) == Some(&t.as_str()))
        .collect()
}

/// Sum of values.
pub fn total(lines: &[&Line<'_>]) -> u64 {
    lines.iter().map(|l| l.value).sum()
}

/// The share of `lines`' value whose stacks pass through `function`.
pub fn share(lines: &[&Line<'_>], function: &str) -> f64 {
    let through: u64 = lines
        .iter()
        .filter(|l| l.frames.contains(&function))
        .map(|l| l.value)
        .sum();
    through as f64 / total(lines).max(1) as f64
}

/// Of the value through `function`, the share with `[k]` frames below it.
pub fn kernel_share_under(lines: &[&Line<'_>], function: &str) -> f64 {
    let mut all = 0;
    let mut kernel = 0;
    for l in lines {
        if let Some(at) = l.frames.iter().position(|f| *f == function) {
            all += l.value;
            if l.frames[at..].iter().any(|f| f.starts_with("[k] ")) {
                kernel += l.value;
            }
        }
    }
    kernel as f64 / all.max(1) as f64
}
