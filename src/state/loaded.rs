//! What is loaded: a decoded profile with what is derived from it once ([`Loaded`]), and where
//! the query stands ([`LoadState`]), with failures that say where they came from.

use std::sync::{Arc, OnceLock};

use embers_model::contract::event::is_instant;
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::shape::ResultShape;
use embers_model::summary::title::live_label;
use embers_model::tree::diff::wall::{Wall, WallValues};
use embers_model::tree::diff::{Diff, DiffValues};
use embers_model::tree::lines::LineTable;
use embers_model::tree::matches::SearchIndex;
use embers_model::view::color::{frame_color, Palette};
use embers_model::view::format::{measure_name, ValueUnit};
use embers_model::{FrameKind, Profile};

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
    /// When this is the diff of two profiles: each side's values on `profile`'s nodes.
    pub diff: Option<Arc<DiffValues>>,
    /// When this is a wall-clock view: running and waiting time on `profile`'s nodes.
    pub wall: Option<Arc<WallValues>>,
    /// The saved snapshot this came from, if it did.
    pub snapshot: Option<String>,
    /// That snapshot's name (what the page calls it; ids are for links).
    pub snapshot_name: Option<String>,
    /// What the server said about its answer (a success `DESCRIPTION`, such as
    /// `truncated: N of M nodes`): shown in the status line, kept by derived views.
    pub server_notice: Option<String>,
    /// An opened file's source lines per function (the Source panel), when it was a file;
    /// kept by derived views (lines are looked up by function name, which transforms keep).
    pub lines: Option<Arc<LineTable>>,
    /// What searches of `profile` share, made by the first one.
    search_index: OnceLock<SearchIndex>,
}

impl Loaded {
    /// Prepares a profile for display.
    pub fn new(
        profile: Profile,
        request: ProfileRequest,
        shape: Option<ResultShape>,
        decode_ms: f64,
    ) -> Loaded {
        let kinds = profile.kinds_present();
        let unit = ValueUnit::for_event_type(&request.profile_event_type);
        Loaded {
            profile,
            request,
            shape,
            kinds,
            unit,
            decode_ms,
            note: None,
            diff: None,
            wall: None,
            snapshot: None,
            snapshot_name: None,
            server_notice: None,
            lines: None,
            search_index: OnceLock::new(),
        }
    }

    /// The diff of a baseline and this comparison (both already transformed as shown): the
    /// union tree, with the comparison's request, unit and shape.
    pub fn diff_with(&self, diff: Diff) -> Loaded {
        let mut l = self.derived(diff.profile, None);
        l.diff = Some(Arc::new(diff.values));
        l
    }

    /// The wall-clock view of this on-CPU profile and its off-CPU partner (both already
    /// transformed as shown): running + waiting, with this side's request and shape.
    pub fn wall_with(&self, wall: Wall) -> Loaded {
        let mut l = self.derived(wall.profile, None);
        l.wall = Some(Arc::new(wall.values));
        l
    }

    /// A view of this profile (transformed, inverted, a sandwich half): same request, shape,
    /// unit and decode time, another tree.
    pub fn derived(&self, profile: Profile, note: Option<String>) -> Loaded {
        let mut l = Loaded::new(profile, self.request.clone(), self.shape, self.decode_ms);
        l.unit = self.unit;
        l.note = note;
        l.snapshot = self.snapshot.clone();
        l.snapshot_name = self.snapshot_name.clone();
        l.server_notice = self.server_notice.clone();
        l.lines = self.lines.clone();
        l
    }

    /// The search index of `profile`, built on first use (the viewer asks for it once the
    /// page is idle after showing a profile).
    pub fn search_index(&self) -> &SearchIndex {
        self.search_index
            .get_or_init(|| SearchIndex::new(&self.profile))
    }

    /// What the values measure, in words ("CPU time", "samples", ...).
    pub fn measure(&self) -> &'static str {
        if self.wall.is_some() {
            "wall-clock time"
        } else if self.unit == ValueUnit::Samples {
            "samples"
        } else {
            measure_name(&self.request.profile_event_type)
        }
    }

    /// What follows the total in the status line: for an instant (in-use bytes, objects,
    /// goroutines: each process's latest upload) the moment it is read at, ` live at <end> UTC`;
    /// else the measure (` CPU time`), or nothing after a count ("1,234 samples" says it all).
    pub fn value_words(&self) -> String {
        let r = &self.request;
        if is_instant(&r.profile_event_type) && r.time_end > 0 && self.wall.is_none() {
            format!(" {}", live_label(r.time_end))
        } else if self.unit.is_count() {
            String::new()
        } else {
            format!(" {}", self.measure())
        }
    }

    /// CSS colour of function `func` in `palette` (the renderer caches it).
    pub fn color(&self, func: u32, palette: Palette) -> String {
        let p = &self.profile;
        frame_color(p.function_kind(func), p.function_name(func), palette).css()
    }
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
    /// The last query or import failed.
    Failed(Failure),
    /// The user cancelled the last query.
    Cancelled,
}

/// Where a failure came from, so the page can word it ("Query failed", "Import failed").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// A query to the service.
    Query,
    /// An opened or dropped file, or a body handed over by an embedding page.
    Import,
    /// The baseline a comparison is made against.
    Baseline,
}

/// A failed query or import: where it came from and what went wrong, in words a user can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Failure {
    /// Query or import.
    pub origin: Origin,
    /// What went wrong.
    pub message: String,
}

impl Failure {
    /// A failed query.
    pub fn query(message: impl Into<String>) -> Failure {
        Failure {
            origin: Origin::Query,
            message: message.into(),
        }
    }

    /// A failed import.
    pub fn import(message: impl Into<String>) -> Failure {
        Failure {
            origin: Origin::Import,
            message: message.into(),
        }
    }

    /// The same failure, as the baseline's.
    pub fn of_baseline(self) -> Failure {
        Failure {
            origin: Origin::Baseline,
            ..self
        }
    }

    /// "Query failed." and its kin, for the banner.
    pub fn headline(&self) -> &'static str {
        match self.origin {
            Origin::Query => "Query failed. ",
            Origin::Import => "Import failed. ",
            Origin::Baseline => "The baseline failed. ",
        }
    }
}

impl PartialEq for LoadState {
    /// Loaded profiles are equal when they are the same `Arc` (a new answer is a change).
    fn eq(&self, other: &LoadState) -> bool {
        match (self, other) {
            (LoadState::Idle, LoadState::Idle) | (LoadState::Cancelled, LoadState::Cancelled) => {
                true
            }
            (
                LoadState::Loading {
                    started_ms: a,
                    phase: pa,
                },
                LoadState::Loading {
                    started_ms: b,
                    phase: pb,
                },
            ) => a == b && pa == pb,
            (LoadState::Loaded(a), LoadState::Loaded(b)) => Arc::ptr_eq(a, b),
            (LoadState::Failed(a), LoadState::Failed(b)) => a == b,
            _ => false,
        }
    }
}

impl LoadState {
    /// Whether a query is running.
    pub fn is_loading(&self) -> bool {
        matches!(self, LoadState::Loading { .. })
    }

    /// The state of a comparison: both sides done, the first failure (the baseline's says so),
    /// or still running while either runs.
    pub fn combined(comparison: LoadState, baseline: &LoadState) -> LoadState {
        match (comparison, baseline) {
            (LoadState::Failed(f), _) => LoadState::Failed(f),
            (_, LoadState::Failed(f)) => LoadState::Failed(f.clone().of_baseline()),
            (c @ LoadState::Loading { .. }, _) => c,
            (_, b @ LoadState::Loading { .. }) => b.clone(),
            (LoadState::Cancelled, _) | (_, LoadState::Cancelled) => LoadState::Cancelled,
            (c, _) => c,
        }
    }
}
