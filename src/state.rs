//! View state shared by the components: what is loaded and how it is being looked at.

use std::sync::Arc;

use embers_model::contract::request::ProfileRequest;
use embers_model::contract::shape::ResultShape;
use embers_model::view::color::{frame_color, Palette};
use embers_model::view::format::{measure_name, ValueUnit};
use embers_model::{FrameKind, Profile};

/// Which value labels, tooltips and shading lead with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Metric {
    /// Time through a frame (its width).
    #[default]
    Total,
    /// Time in the frame itself; bars are shaded by it so hot leaves stand out.
    Self_,
}

impl Metric {
    /// The other metric.
    pub fn toggled(self) -> Metric {
        match self {
            Metric::Total => Metric::Self_,
            Metric::Self_ => Metric::Total,
        }
    }

    /// Lower-case name for attributes and URLs.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::Total => "total",
            Metric::Self_ => "self",
        }
    }
}

/// A decoded profile with everything derived from it once, for drawing.
pub struct Loaded {
    /// The call tree.
    pub profile: Profile,
    /// The request that produced it.
    pub request: ProfileRequest,
    /// The result shape the server used (`None` for an empty result).
    pub shape: Option<ResultShape>,
    /// Frame kinds that occur, in legend order.
    pub kinds: Vec<FrameKind>,
    /// What the values are in.
    pub unit: ValueUnit,
    /// Milliseconds spent decoding and preparing.
    pub decode_ms: f64,
    /// A remark about how this view was derived (shown next to the status line).
    pub note: Option<String>,
}

impl Loaded {
    /// Prepares a profile for display.
    pub fn new(
        profile: Profile,
        request: ProfileRequest,
        shape: Option<ResultShape>,
        decode_ms: f64,
    ) -> Loaded {
        let mut present = [false; FrameKind::ALL.len()];
        for node in profile.nodes() {
            present[kind_index(profile.kind(node))] = true;
        }
        let kinds = FrameKind::ALL
            .into_iter()
            .filter(|k| present[kind_index(*k)])
            .collect();
        let unit = ValueUnit::for_event_type(&request.profile_event_type);
        Loaded {
            profile,
            request,
            shape,
            kinds,
            unit,
            decode_ms,
            note: None,
        }
    }

    /// What the values measure, in words ("CPU time", "samples", ...).
    pub fn measure(&self) -> &'static str {
        if self.unit == ValueUnit::Samples {
            "samples"
        } else {
            measure_name(&self.request.profile_event_type)
        }
    }

    /// CSS colour of function `func` in `palette` (the renderer caches it).
    pub fn color(&self, func: u32, palette: Palette) -> String {
        let p = &self.profile;
        frame_color(p.function_kind(func), p.function_name(func), palette).css()
    }
}

/// The root bar's colour (neutral: it is the whole).
pub const ROOT_COLOR: &str = "#b9ada1";

fn kind_index(kind: FrameKind) -> usize {
    FrameKind::ALL.iter().position(|k| *k == kind).unwrap_or(0)
}

/// Where the query stands.
#[derive(Clone, Default)]
pub enum LoadState {
    /// Nothing asked yet.
    #[default]
    Idle,
    /// A query is running since `started_ms`.
    Loading {
        /// `Date.now()` when it started.
        started_ms: f64,
        /// What is happening now, when past waiting for the answer (e.g. "Decoding 26.1 MB").
        phase: Option<String>,
    },
    /// A profile (possibly empty) is shown.
    Loaded(Arc<Loaded>),
    /// The last query failed; the message says why.
    Failed(String),
    /// The user cancelled the last query.
    Cancelled,
}
