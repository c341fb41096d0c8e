//! `--demo`: six hours of realistic, deterministic profiles ending now, so every viewer feature
//! — the flame graph and the explore views — has something to show.
//!
//! - **Fleet** ([`fleet`]): four hosts (node-a, node-b in cn-north-1; node-c, node-d in
//!   eu-west-1) running eleven services in 34 pods (at least three each): redis-server, nginx (node-a and node-b only),
//!   java (every pod in namespace `team-o'brien`, so a quoted filter `pod_ns='team-o''brien'` can
//!   be shown), python3, api-gateway, postgres, deepflow-agent (one per host), checkout,
//!   search-api, payment, kafka. Every sample carries its pod's tags: host, pod, pod_ns, region,
//!   az, host_ip, agent, `k8s.label.app`, `k8s.label.version`, `cloud.tag.team`, ...
//! - **Stacks**: on-CPU for every service; off-CPU for redis-server, nginx, java, postgres;
//!   mem-alloc for redis-server, java, python3, api-gateway. Every per-process stack starts with
//!   its thread frame `[t] name` and mixes `[l]` library, `[k]` kernel, application, unresolved
//!   (`[/usr/lib/x.so]`, `[unknown] 0x...`) and a little `[c]` CUDA. checkout and search-api have
//!   thousands of distinct stacks ([`synth`]). Per-host `Total` stacks (`[p] proc;[t] thread`,
//!   or `[p] proc` for a process's main thread) are derived from the on-CPU samples.
//! - **Load** ([`load`]): a slow wave; a spike of the user-facing services about four hours ago
//!   (3.5× for 15 minutes); a quiet period about three hours ago (a 40-minute maintenance
//!   window at 15 %); the last hour is ordinary.
//! - **The regression to find**: in the last 20 minutes, api-gateway spends most of its time in
//!   [`REGRESSION_FUNCTION`] (`github.com/example/gateway/render.jsonEncodeResponse`), which was
//!   a small part of it before, and its CPU use nearly doubles.
//!
//! Everything comes from a fixed-seed SplitMix64 generator, so the data depend only on `now`.

mod fleet;
pub mod live;
mod synth;
mod tags;
mod templates;

use std::collections::BTreeMap;
use std::ops::Range;

use crate::store::{Batch, Sample};
use fleet::{Event, Pod, Source};

/// Seed of the demo generator.
const SEED: u64 = 0x000e_3be1_25d3_0001;
/// µs per on-CPU sample at 99 Hz.
const TICK_US: u64 = 10_101;
/// Length of the demo window in seconds (six hours).
pub const WINDOW_S: i64 = 6 * 3600;
/// The service whose CPU regresses at the end of the window.
pub const REGRESSION_SERVICE: &str = "api-gateway";
/// The function that gets hotter in the last [`REGRESSION_S`] seconds.
pub const REGRESSION_FUNCTION: &str = "github.com/example/gateway/render.jsonEncodeResponse";
/// How long before `now` the regression starts.
pub const REGRESSION_S: i64 = 20 * 60;

/// A small deterministic PRNG (SplitMix64).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`0` when `n == 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with probability `percent`/100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// A weighted stack of a template text.
struct Template {
    weight: u64,
    stack: &'static str,
}

fn templates(text: &'static str) -> Vec<Template> {
    text.lines()
        .filter_map(|line| {
            let (weight, stack) = line.trim().split_once(' ')?;
            Some(Template {
                weight: weight.parse().ok()?,
                stack,
            })
        })
        .collect()
}

fn pick<'t>(rng: &mut Rng, list: &'t [Template]) -> Option<&'t Template> {
    let sum: u64 = list.iter().map(|t| t.weight).sum();
    let mut r = rng.below(sum);
    for t in list {
        if r < t.weight {
            return Some(t);
        }
        r -= t.weight;
    }
    list.last()
}

/// The load of minute `minute` (0 = six hours ago, 359 = the last one) as a factor.
pub fn load(minute: i64, frontend: bool) -> f64 {
    let wave = 1.0 + 0.2 * (minute as f64 * std::f64::consts::TAU / 150.0).sin();
    let quiet = if (170..210).contains(&minute) {
        0.15
    } else {
        1.0
    };
    let spike = if frontend && (110..125).contains(&minute) {
        3.5
    } else {
        1.0
    };
    wave * quiet * spike
}

/// The stack sources of one profile: its templates before the regression and during it.
struct Profile {
    normal: Vec<Template>,
    regressed: Vec<Template>,
    synth: Option<&'static synth::Synth>,
}

fn profile(p: &Pod, event: Event, source: Source) -> Profile {
    let (text, synth) = match source {
        Source::Text(text) => (text, None),
        Source::Synth(s) => ("", Some(s)),
    };
    let mut normal = templates(text);
    let mut regressed = templates(text);
    if p.workload.app == REGRESSION_SERVICE && event == Event::OnCpu {
        let encode = |weight| Template {
            weight,
            stack: templates::GATEWAY_ENCODE,
        };
        normal.push(encode(6));
        regressed.push(encode(110));
    }
    Profile {
        normal,
        regressed,
        synth,
    }
}

/// Per-host `Total` values: (host, time, `[p] proc;[t] thread`) -> value.
type Totals = BTreeMap<(usize, i64, String), u64>;

/// Per-host `Total` samples are summed per slot of this many seconds (one row per slot and
/// stack instead of one per sample); a slot shorter than the finest usual timeline bucket on a
/// page (30 s for the last hour) leaves no empty buckets in the host's timeline.
const TOTAL_SLOT_S: i64 = 10;

/// The time a per-host sample summed into the slot holding `time` is stored at: the slot's middle.
fn total_slot(start: i64, time: i64) -> i64 {
    start + (time - start).div_euclid(TOTAL_SLOT_S) * TOTAL_SLOT_S + TOTAL_SLOT_S / 2
}

/// Generate the demo batches for the six hours ending at `now` (Unix seconds).
pub fn generate(now: i64) -> Vec<Batch> {
    generate_minutes(now - WINDOW_S + 1, 0..WINDOW_S / 60)
}

/// The demo's minutes `minutes` (0 = the first of the six hours starting at `start`; later
/// minutes continue the pattern: the wave goes on, the regression stays), each minute's
/// samples inside it. Deterministic for given arguments.
pub fn generate_minutes(start: i64, minutes: Range<i64>) -> Vec<Batch> {
    // Minute 0 keeps the original seed, so the six-hour window is what it always was.
    let mut rng = Rng::new(SEED ^ (minutes.start as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let mut batches = Vec::new();
    let mut totals = Totals::new();
    for p in &fleet::PODS {
        for &(event, source) in p.workload.profiles {
            let at = Span {
                start,
                minutes: minutes.clone(),
            };
            let samples = samples(&mut rng, p, event, source, &at, &mut totals);
            batches.push(Batch {
                meta: tags::pod_meta(p, event),
                samples,
            });
        }
    }
    for &(host, name, ticks) in &fleet::HOST_ONLY {
        for minute in minutes.clone() {
            let per_minute = ticks * TICK_US;
            let value = per_minute / 2 + rng.below(per_minute) / TICK_US * TICK_US;
            // Spread over the minute's slots, so the host's timeline has no holes.
            let slots = (60 / TOTAL_SLOT_S) as u64;
            for slot in 0..slots {
                let part = value / slots + u64::from(slot < value % slots);
                let at = start + minute * 60 + slot as i64 * TOTAL_SLOT_S + TOTAL_SLOT_S / 2;
                *totals.entry((host, at, name.to_owned())).or_insert(0) += part;
            }
        }
    }
    for (h, host) in fleet::HOSTS.iter().enumerate() {
        let samples = totals
            .iter()
            .filter(|((hh, _, _), _)| *hh == h)
            .map(|((_, time, stack), &value)| Sample {
                time: *time,
                stack: stack.clone(),
                value,
                detail: None,
            })
            .collect();
        batches.push(Batch {
            meta: tags::host_meta(host),
            samples,
        });
    }
    batches
}

/// Which minutes to generate, counted from `start`.
struct Span {
    start: i64,
    minutes: Range<i64>,
}

/// The samples of one pod's profile in the span; on-CPU ones also add to `totals`.
fn samples(
    rng: &mut Rng,
    p: &Pod,
    event: Event,
    source: Source,
    at: &Span,
    totals: &mut Totals,
) -> Vec<Sample> {
    let profile = profile(p, event, source);
    let regression_from = WINDOW_S / 60 - REGRESSION_S / 60;
    let regressing = p.workload.app == REGRESSION_SERVICE && event == Event::OnCpu;
    let start = at.start;
    let mut out = Vec::new();
    for minute in at.minutes.clone() {
        let in_regression = regressing && minute >= regression_from;
        let base = match event {
            Event::OnCpu => p.rate,
            Event::OffCpu => p.rate / 2,
            Event::MemAlloc => p.rate / 3,
        };
        let factor = load(minute, p.workload.frontend) * if in_regression { 1.8 } else { 1.0 };
        let per_minute = (base as f64 * factor).round() as u64;
        let n = per_minute / 2 + rng.below(per_minute + 1);
        let list = if in_regression {
            &profile.regressed
        } else {
            &profile.normal
        };
        for _ in 0..n {
            let stack = match (profile.synth, pick(rng, list)) {
                (Some(s), _) => s.stack(rng),
                (None, Some(t)) => t.stack.to_owned(),
                (None, None) => continue,
            };
            let stack = maybe_truncate(rng, stack, event);
            let time = start + minute * 60 + i64::try_from(rng.below(60)).unwrap_or(0);
            let value = sample_value(rng, event);
            if event == Event::OnCpu {
                let bucket = total_slot(start, time);
                *totals
                    .entry((p.host, bucket, host_stack(p.workload.app, &stack)))
                    .or_insert(0) += value;
            }
            out.push(Sample {
                time,
                stack,
                value,
                detail: None,
            });
        }
    }
    out
}

/// The per-host stack of a process sample: `[p] app;[t] thread`, or `[p] app` for the main
/// thread (named like the process).
fn host_stack(app: &str, stack: &str) -> String {
    let thread = stack
        .split(';')
        .next()
        .and_then(|f| f.strip_prefix("[t] "))
        .unwrap_or(app);
    if thread == app {
        format!("[p] {app}")
    } else {
        format!("[p] {app};[t] {thread}")
    }
}

/// Occasionally cut an on-CPU stack short, so inner frames carry self time too (keeping the
/// thread and one more frame; memory and off-CPU stacks keep their leaf).
fn maybe_truncate(rng: &mut Rng, stack: String, event: Event) -> String {
    let frames = stack.matches(';').count() + 1;
    if event != Event::OnCpu || frames <= 3 || !rng.chance(15) {
        return stack;
    }
    let keep = 2 + usize::try_from(rng.below(frames as u64 - 2)).unwrap_or(0);
    match stack.match_indices(';').nth(keep - 1) {
        Some((at, _)) => stack[..at].to_owned(),
        None => stack,
    }
}

fn sample_value(rng: &mut Rng, event: Event) -> u64 {
    match event {
        Event::OnCpu => TICK_US * (1 + rng.below(4)),
        Event::OffCpu => {
            200 + rng.below(40_000) + if rng.chance(5) { rng.below(900_000) } else { 0 }
        }
        Event::MemAlloc => 1u64 << (5 + rng.below(16)),
    }
}

#[cfg(test)]
mod tests;
