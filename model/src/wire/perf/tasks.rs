//! Which process a thread belongs to, and what that process is called.
//!
//! perf's `comm` is per thread (`pthread_setname_np` renames one), and plain `perf script`
//! prints only the thread id. A process is named after its main thread (the thread whose id is
//! the process id), learnt from a sample of it (`-F +pid` prints `pid/tid`) or from the task
//! records `perf script --show-task-events` prints, which also tell each thread's process:
//!
//! ```text
//! myapp     0     0.000000: PERF_RECORD_COMM: myapp:21807/21807
//! burner    0     0.000000: PERF_RECORD_COMM: burner:21807/21808
//! myapp 21807  1.5: PERF_RECORD_FORK(21807:21810):(21807:21807)
//! ```

use rustc_hash::FxHashMap;

/// What the capture tells about processes and threads.
#[derive(Debug, Default)]
pub(super) struct Tasks {
    /// Thread id → process id, from task records.
    process_of: FxHashMap<u64, u64>,
    /// Process id → its main thread's name.
    main_name: FxHashMap<u64, String>,
}

impl Tasks {
    /// Reads a `PERF_RECORD_COMM` or `PERF_RECORD_FORK` line; other records are ignored.
    pub(super) fn record(&mut self, line: &str) {
        if let Some((_, rest)) = line.split_once("PERF_RECORD_COMM") {
            // `PERF_RECORD_COMM: name:pid/tid` (or `PERF_RECORD_COMM exec: ...`).
            let Some((_, named)) = rest.split_once(": ") else {
                return;
            };
            let Some((name, ids)) = named.trim().rsplit_once(':') else {
                return;
            };
            if let Some((pid, tid)) = pair(ids, '/') {
                self.process_of.insert(tid, pid);
                if pid == tid {
                    self.main_name.insert(pid, name.to_owned());
                }
            }
        } else if let Some((_, rest)) = line.split_once("PERF_RECORD_FORK(") {
            // `PERF_RECORD_FORK(pid:tid):(ppid:ptid)`: the new thread's ids come first.
            if let Some((pid, tid)) = rest.split_once(')').and_then(|(ids, _)| pair(ids, ':')) {
                self.process_of.insert(tid, pid);
            }
        }
    }

    /// A sample's main thread becomes its process's name (a later record or sample of the
    /// same thread keeps the first: the name while it ran).
    pub(super) fn main_thread_seen(&mut self, pid: u64, name: &str) {
        self.main_name.entry(pid).or_insert_with(|| name.to_owned());
    }

    /// The process of thread `tid`, when the sample printed it or a record told.
    pub(super) fn process_of(&self, pid: Option<u64>, tid: u64) -> Option<u64> {
        pid.or_else(|| self.process_of.get(&tid).copied())
    }

    /// The name of process `pid`'s main thread, when known.
    pub(super) fn name_of(&self, pid: u64) -> Option<&str> {
        self.main_name.get(&pid).map(String::as_str)
    }
}

/// `a<sep>b` as two numbers.
fn pair(text: &str, sep: char) -> Option<(u64, u64)> {
    let (a, b) = text.trim().split_once(sep)?;
    Some((a.trim().parse().ok()?, b.trim().parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_records_name_processes_and_place_threads() {
        let mut t = Tasks::default();
        t.record("myapp     0     0.000000: PERF_RECORD_COMM: myapp:21807/21807");
        t.record("burner     0     0.000000: PERF_RECORD_COMM: burner:21807/21808");
        t.record("a:b 9 1.0: PERF_RECORD_COMM exec: a:b:30/30");
        t.record("myapp 21807 1.5: PERF_RECORD_FORK(21807:21810):(21807:21807)");
        t.record("myapp 21807 1.5: PERF_RECORD_EXIT(21807:21810):(21807:21807)");
        assert_eq!(t.process_of(None, 21808), Some(21807));
        assert_eq!(t.process_of(None, 21810), Some(21807));
        assert_eq!(t.process_of(Some(5), 21808), Some(5));
        assert_eq!(t.process_of(None, 99), None);
        assert_eq!(t.name_of(21807), Some("myapp"));
        assert_eq!(t.name_of(30), Some("a:b"));
        t.main_thread_seen(21807, "renamed");
        assert_eq!(t.name_of(21807), Some("myapp"));
    }
}
