//! The peers' input formats, as serialisable structs: Grafana's nested-set DataFrame columns
//! and speedscope's evented profile file.

use serde::Serialize;

use embers_model::synth::SynthProfile;

use crate::tree::preorder;

/// Grafana's flame graph DataFrame, column by column (rows in preorder; labels index `names`).
#[derive(Serialize)]
struct GrafanaFrame<'a> {
    names: &'a [String],
    level: Vec<u32>,
    value: Vec<u64>,
    #[serde(rename = "self")]
    self_value: Vec<u64>,
    label: Vec<u32>,
    unit: &'static str,
}

/// Grafana's nested-set DataFrame columns as one JSON object, and the deepest level.
pub fn grafana_json(p: &SynthProfile) -> (String, u32) {
    let order = preorder(p);
    let max_level = order.iter().map(|&(_, d)| d).max().unwrap_or(0);
    let frame = GrafanaFrame {
        names: &p.functions,
        level: order.iter().map(|&(_, d)| d).collect(),
        value: order.iter().map(|&(n, _)| p.total[n as usize]).collect(),
        self_value: order
            .iter()
            .map(|&(n, _)| p.self_value[n as usize])
            .collect(),
        label: order.iter().map(|&(n, _)| p.func[n as usize]).collect(),
        unit: "µs",
    };
    (to_json(&frame), max_level)
}

#[derive(Serialize)]
struct SpeedscopeFile<'a> {
    #[serde(rename = "$schema")]
    schema: &'static str,
    exporter: &'static str,
    name: &'static str,
    #[serde(rename = "activeProfileIndex")]
    active_profile_index: u32,
    shared: Shared<'a>,
    profiles: [EventedProfile; 1],
}

#[derive(Serialize)]
struct Shared<'a> {
    frames: Vec<Frame<'a>>,
}

#[derive(Serialize)]
struct Frame<'a> {
    name: &'a str,
}

#[derive(Serialize)]
struct EventedProfile {
    #[serde(rename = "type")]
    kind: &'static str,
    name: &'static str,
    unit: &'static str,
    #[serde(rename = "startValue")]
    start_value: u64,
    #[serde(rename = "endValue")]
    end_value: u64,
    events: Vec<Event>,
}

#[derive(Serialize)]
struct Event {
    #[serde(rename = "type")]
    kind: &'static str,
    frame: u32,
    at: u64,
}

/// speedscope's own file format, one "evented" profile: an open and a close event per node
/// (root excluded, as in the folded stacks), in preorder, so the file grows with the node count
/// rather than with stacks × depth as folded stacks do. Each node's children are laid out from
/// its start time; its self time follows them.
pub fn speedscope_json(p: &SynthProfile) -> String {
    let order = preorder(p);
    let mut events = Vec::with_capacity(order.len() * 2);
    // Open stack of (node, end time); close every frame whose subtree is done.
    let mut open: Vec<(u32, u64)> = Vec::new();
    let mut t = 0u64;
    let close = |events: &mut Vec<Event>, (done, end): (u32, u64)| {
        events.push(Event {
            kind: "C",
            frame: p.func[done as usize],
            at: end,
        });
        end
    };
    for &(node, depth) in order.iter().skip(1) {
        // Frames at this depth or deeper are finished: close them (their end times are exact).
        while open.len() >= depth as usize {
            match open.pop() {
                Some(frame) => t = close(&mut events, frame),
                None => break,
            }
        }
        events.push(Event {
            kind: "O",
            frame: p.func[node as usize],
            at: t,
        });
        open.push((node, t + p.total[node as usize]));
    }
    while let Some(frame) = open.pop() {
        close(&mut events, frame);
    }
    to_json(&SpeedscopeFile {
        schema: "https://www.speedscope.app/file-format-schema.json",
        exporter: "embers-bench",
        name: "synthetic-service",
        active_profile_index: 0,
        shared: Shared {
            frames: p.functions.iter().map(|name| Frame { name }).collect(),
        },
        profiles: [EventedProfile {
            kind: "evented",
            name: "synthetic-service",
            unit: "microseconds",
            start_value: 0,
            end_value: p.total[0],
            events,
        }],
    })
}

fn to_json(value: &impl Serialize) -> String {
    // Structs of strings and integers always serialise.
    serde_json::to_string(value).unwrap_or_default()
}
