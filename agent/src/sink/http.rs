//! Sending windows to an Embers service: `POST <to>/v1/profile/ingest` with a JSON body of at
//! most `max_request_bytes`, a bearer token when one is given, from a thread of its own so a
//! slow or absent service never stalls sampling. Bodies wait in a bounded [`Buffer`]; a failed
//! send is retried with backoff (a 5xx or a dropped connection; `Retry-After` is honoured), a
//! 4xx is logged with the service's message and dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant, SystemTime};

use embers_model::contract::ingest::BatchInput;

use super::backoff::{self, Attempt, Next};
use super::buffer::{Buffer, Dropped, Pending};
use super::{bodies, Sink};

/// Where and how to send.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// The service's base URL (`http://host:port`).
    pub to: String,
    /// Bearer token for the ingest endpoint.
    pub token: Option<String>,
    /// Most bytes waiting to be sent.
    pub buffer_bytes: usize,
    /// Most bytes in one request body.
    pub max_request_bytes: usize,
    /// Time limit of one request.
    pub timeout: Duration,
}

/// Counters of the sender.
#[derive(Debug, Default)]
pub struct SendCounters {
    /// Requests the service took.
    pub sent: AtomicU64,
    /// Bodies dropped because the buffer was full.
    pub dropped: AtomicU64,
    /// Bodies the service refused (4xx).
    pub refused: AtomicU64,
    /// Attempts that failed and were retried.
    pub retries: AtomicU64,
}

struct Shared {
    state: Mutex<State>,
    wake: Condvar,
    counters: SendCounters,
}

struct State {
    buffer: Buffer,
    closing: Option<Instant>,
}

/// The sink; its sender thread runs until [`Sink::close`].
pub struct HttpSink {
    shared: Arc<Shared>,
    max_request_bytes: usize,
    thread: Option<JoinHandle<()>>,
}

impl HttpSink {
    /// Start the sender thread.
    pub fn start(options: HttpOptions) -> Result<HttpSink, String> {
        let url = format!("{}/v1/profile/ingest", options.to.trim_end_matches('/'));
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                buffer: Buffer::new(options.buffer_bytes),
                closing: None,
            }),
            wake: Condvar::new(),
            counters: SendCounters::default(),
        });
        let (ready, built) = std::sync::mpsc::channel();
        let for_thread = shared.clone();
        let (timeout, token) = (options.timeout, options.token);
        // The blocking client runs a runtime of its own: it is built (and dropped) on the
        // sender's thread, never on a caller's async one.
        let thread = std::thread::Builder::new()
            .name("embers-send".into())
            .spawn(move || {
                let client = reqwest::blocking::Client::builder()
                    .timeout(timeout)
                    .build();
                let client = match client {
                    Ok(c) => {
                        let _ = ready.send(Ok(()));
                        c
                    }
                    Err(e) => {
                        let _ = ready.send(Err(format!("cannot build the HTTP client: {e}")));
                        return;
                    }
                };
                let sender = Sender {
                    shared: for_thread,
                    client,
                    url,
                    token,
                };
                sender.run();
            })
            .map_err(|e| format!("cannot start the sender thread: {e}"))?;
        built
            .recv()
            .map_err(|_| "the sender thread ended at once".to_owned())??;
        Ok(HttpSink {
            shared,
            max_request_bytes: options.max_request_bytes,
            thread: Some(thread),
        })
    }

    /// The sender's counters.
    pub fn counters(&self) -> &SendCounters {
        &self.shared.counters
    }
}

fn lock(shared: &Shared) -> MutexGuard<'_, State> {
    shared.state.lock().unwrap_or_else(|p| p.into_inner())
}

fn log_dropped(d: Dropped, counters: &SendCounters) {
    if d.bodies == 0 {
        return;
    }
    counters
        .dropped
        .fetch_add(d.bodies as u64, Ordering::Relaxed);
    tracing::warn!(
        "the send buffer is full (--buffer): dropped the oldest {} request(s) ({} batches, windows up to {}) while the service is unreachable",
        d.bodies,
        d.batches,
        d.newest_time.unwrap_or_default()
    );
}

impl Sink for HttpSink {
    fn accept(&mut self, time: i64, batches: Vec<BatchInput>) {
        for (body, batches) in bodies(&batches, self.max_request_bytes) {
            let d = lock(&self.shared).buffer.push(Pending {
                body,
                time,
                batches,
            });
            log_dropped(d, &self.shared.counters);
        }
        self.shared.wake.notify_all();
    }

    fn close(&mut self, deadline: Duration) {
        lock(&self.shared).closing = Some(Instant::now() + deadline);
        self.shared.wake.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let left = lock(&self.shared).buffer.len();
        if left > 0 {
            tracing::warn!("{left} request(s) not sent before shutting down");
        }
    }

    fn report(&self) -> String {
        let c = &self.shared.counters;
        let queued = lock(&self.shared).buffer.bytes();
        format!(
            "sent {} requests, {} retries, {} dropped (buffer full), {} refused, {queued} bytes waiting",
            c.sent.load(Ordering::Relaxed),
            c.retries.load(Ordering::Relaxed),
            c.dropped.load(Ordering::Relaxed),
            c.refused.load(Ordering::Relaxed)
        )
    }
}

struct Sender {
    shared: Arc<Shared>,
    client: reqwest::blocking::Client,
    url: String,
    token: Option<String>,
}

impl Sender {
    fn run(self) {
        let mut attempt = 0u32;
        let mut seed = u64::from(std::process::id()) | 1;
        loop {
            let Some(pending) = self.next_body() else {
                return;
            };
            let (outcome, problem) = self.post(&pending.body);
            // Every failure of a first try, then fewer: a service away for an hour does not
            // fill the log.
            if let Some(problem) = problem {
                if attempt.is_power_of_two() || attempt == 0 {
                    tracing::warn!("{problem} (attempt {})", attempt + 1);
                }
            }
            // xorshift: spreads the retries of many agents without a random-number crate.
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let jitter = (seed % 1000) as f64 / 1000.0;
            match backoff::next(&outcome, attempt, jitter, SystemTime::now()) {
                Next::Done => {
                    attempt = 0;
                    self.shared.counters.sent.fetch_add(1, Ordering::Relaxed);
                }
                Next::GiveUp => {
                    attempt = 0;
                    self.shared.counters.refused.fetch_add(1, Ordering::Relaxed);
                }
                Next::Retry(delay) => {
                    attempt = attempt.saturating_add(1);
                    self.shared.counters.retries.fetch_add(1, Ordering::Relaxed);
                    let d = lock(&self.shared).buffer.unpop(pending);
                    log_dropped(d, &self.shared.counters);
                    if !self.pause(delay) {
                        return;
                    }
                }
            }
        }
    }

    /// The oldest body, waiting for one; `None` when closing and nothing is left (or the
    /// closing deadline passed).
    fn next_body(&self) -> Option<Pending> {
        let mut state = lock(&self.shared);
        loop {
            if let Some(deadline) = state.closing {
                if Instant::now() >= deadline {
                    return None;
                }
            }
            if let Some(p) = state.buffer.pop() {
                return Some(p);
            }
            if state.closing.is_some() {
                return None;
            }
            state = self
                .shared
                .wake
                .wait(state)
                .unwrap_or_else(|p| p.into_inner());
        }
    }

    /// Sleep before a retry; false when closing cut it short past the deadline.
    fn pause(&self, delay: Duration) -> bool {
        let until = Instant::now() + delay;
        let mut state = lock(&self.shared);
        loop {
            let now = Instant::now();
            if state.closing.is_some_and(|d| now >= d) {
                return false;
            }
            if now >= until {
                return true;
            }
            let wait = state.closing.map_or(until, |d| d.min(until)) - now;
            state = self
                .shared
                .wake
                .wait_timeout(state, wait)
                .map(|(s, _)| s)
                .unwrap_or_else(|p| p.into_inner().0);
        }
    }

    /// One try, and what went wrong with it, if anything.
    fn post(&self, body: &[u8]) -> (Attempt, Option<String>) {
        let mut request = self
            .client
            .post(&self.url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.to_vec());
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        match request.send() {
            Ok(response) => {
                let status = response.status().as_u16();
                let retry_after = response
                    .headers()
                    .get(reqwest::header::RETRY_AFTER)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let problem = (!response.status().is_success()).then(|| {
                    let text = response.text().unwrap_or_default();
                    let text: String = text.chars().take(300).collect();
                    format!("{} answered {status}: {text}", self.url)
                });
                let attempt = Attempt::Answered {
                    status,
                    retry_after,
                };
                (attempt, problem)
            }
            Err(e) => (
                Attempt::Failed,
                Some(format!("cannot reach {}: {e}", self.url)),
            ),
        }
    }
}
