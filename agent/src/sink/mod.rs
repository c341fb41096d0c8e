//! Where a window's batches go: a [`Sink`]. [`http::HttpSink`] posts them to an Embers service
//! (`--to`), [`PrintSink`] writes folded text to standard output (`--print`), and the service
//! itself implements one that writes straight to its store (`serve --profile-host`).

pub mod backoff;
pub mod buffer;
pub mod http;

use std::io::Write;
use std::time::Duration;

use embers_model::contract::ingest::BatchInput;

use crate::error::AgentError;
use crate::report::WindowReport;

/// Takes each window's batches.
pub trait Sink {
    /// One window's batches, timed `time` (Unix seconds). Must not block for long: sampling
    /// waits meanwhile.
    fn accept(&mut self, time: i64, batches: Vec<BatchInput>);

    /// Send what can still be sent within `deadline`, then stop.
    fn close(&mut self, _deadline: Duration) {}

    /// A line for the stats log.
    fn report(&self) -> String {
        String::new()
    }

    /// What the window just handed over (or an empty one) held: its samples, losses and cut
    /// stacks, for a sink that reports them on.
    fn window(&mut self, _report: &WindowReport) {}

    /// The collector stopped sampling because of `error` (it was logged too).
    fn failed(&mut self, _error: &AgentError) {}
}

/// Request bodies `{"batches": [...]}` of at most `max_bytes` each (a single batch bigger than
/// that goes alone), with how many batches each holds.
pub fn bodies(batches: &[BatchInput], max_bytes: usize) -> Vec<(Vec<u8>, usize)> {
    const HEAD: &[u8] = b"{\"batches\":[";
    const TAIL: &[u8] = b"]}";
    let mut out = Vec::new();
    let mut body = HEAD.to_vec();
    let mut count = 0;
    for batch in batches {
        // A derived Serialize of strings, integers and JSON values cannot fail.
        let Ok(one) = serde_json::to_vec(batch) else {
            continue;
        };
        if count > 0 && body.len() + 1 + one.len() + TAIL.len() > max_bytes {
            body.extend_from_slice(TAIL);
            out.push((std::mem::replace(&mut body, HEAD.to_vec()), count));
            count = 0;
        }
        if count > 0 {
            body.push(b',');
        }
        body.extend_from_slice(&one);
        count += 1;
    }
    if count > 0 {
        body.extend_from_slice(TAIL);
        out.push((body, count));
    }
    out
}

/// Writes each batch as a `# app_service event time` line and its folded text.
pub struct PrintSink;

impl Sink for PrintSink {
    fn accept(&mut self, time: i64, batches: Vec<BatchInput>) {
        let mut out = std::io::stdout().lock();
        for b in batches {
            let _ = writeln!(
                out,
                "# {} {} {time}\n{}",
                b.app_service, b.profile_event_type, b.folded
            );
        }
        let _ = out.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::ingest::Batches;
    use std::collections::BTreeMap;

    fn batch(app: &str, folded: &str) -> BatchInput {
        BatchInput {
            app_service: app.into(),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            profile_value_unit: "microseconds".into(),
            time: Some(1),
            tags: BTreeMap::new(),
            folded: folded.into(),
            details: Vec::new(),
        }
    }

    #[test]
    fn bodies_are_bounded_and_read_back_as_the_contract() {
        let batches: Vec<BatchInput> = (0..10)
            .map(|i| batch(&format!("p{i}"), &"x;y 1\n".repeat(20)))
            .collect();
        let one = serde_json::to_vec(&batches[0]).expect("json").len();
        let out = bodies(&batches, 3 * one + 20);
        assert_eq!(out.iter().map(|(_, n)| n).sum::<usize>(), 10);
        assert!(out.len() >= 4, "{}", out.len());
        let mut names = Vec::new();
        for (body, n) in &out {
            assert!(body.len() <= 3 * one + 20);
            let read: Batches = serde_json::from_slice(body).expect("valid body");
            assert_eq!(read.batches.len(), *n);
            names.extend(read.batches.into_iter().map(|b| b.app_service));
        }
        assert_eq!(names, (0..10).map(|i| format!("p{i}")).collect::<Vec<_>>());
        let big = bodies(&batches[..2], 10);
        assert_eq!(big.len(), 2, "a batch over the limit goes alone");
        assert!(bodies(&[], 100).is_empty());
    }
}
