//! The live view state: one owner for what is loaded and how it is looked at.
//!
//! Choices (transforms, search, zoom path, selection, ...) are signals; everything computed from
//! them — the page's load state, the displayed profile (a diff when comparing), the zoomed
//! node, the search result, the sandwich — is a [`Memo`] (see [`crate::state::derived`]), so
//! nothing can fall out of step. A new result replaces the old one only through
//! [`ViewState::replace_result`] (or [`ViewState::replace_baseline`]); the zoom is stored as a
//! path of function names (it survives transforms and reloads) and changed only through
//! [`ViewState::zoom_to`].

use std::sync::{Arc, Weak};

use embers_model::tree::diff::DiffMode;
use embers_model::view::layout::Orientation;
use embers_model::view::paint::Metric;
use embers_model::NodeId;
use leptos::prelude::*;

use crate::state::derived::{found_memo, prepare_search, sandwich_memo, shown_memo, Sources};
pub use crate::state::derived::{Found, SandwichPair};
use crate::state::loaded::{LoadState, Loaded};
use crate::state::view_spec::{SearchSpec, Transform, TreeMode, ViewSpec};

/// Keyboard focus: a node of one particular displayed profile.
#[derive(Clone, Debug)]
struct Focus {
    shown: Weak<Loaded>,
    node: NodeId,
}

/// Every signal and derived value of the view; `Copy`, so components take it by value.
#[derive(Clone, Copy)]
pub struct ViewState {
    /// Where the page's question stands: the comparison's state, combined with the baseline's
    /// when comparing (written through the methods below).
    pub load: Memo<LoadState>,
    set_comparison: WriteSignal<LoadState>,
    /// The baseline's state when comparing, `None` otherwise.
    pub baseline: ReadSignal<Option<LoadState>>,
    set_baseline: WriteSignal<Option<LoadState>>,
    /// How a comparison is scaled.
    pub diff_mode: RwSignal<DiffMode>,
    /// Whether the two sides are a wall-clock view (set by the navigator with the baseline).
    pub wall: RwSignal<bool>,
    /// Noise-control steps.
    pub transforms: RwSignal<Vec<Transform>>,
    /// Top-down or inverted.
    pub mode: RwSignal<TreeMode>,
    /// Icicle or flame.
    pub orientation: RwSignal<Orientation>,
    /// The search box.
    pub search: RwSignal<SearchSpec>,
    /// Total or self.
    pub metric: RwSignal<Metric>,
    /// Selected function (by name: names survive transforms), from the table or a click.
    pub selected: RwSignal<Option<String>>,
    /// Function under the pointer in the table.
    pub highlighted: RwSignal<Option<String>>,
    /// Whether the sandwich view of the selected function is open.
    pub sandwich_open: RwSignal<bool>,
    /// Whether the Source panel (the selected function's lines) is open.
    pub source_open: RwSignal<bool>,
    zoom_path: RwSignal<Vec<String>>,
    focus: RwSignal<Option<Focus>>,
    /// What the displayed profile follows (the summary reads the sides from it).
    pub(super) sources: Sources,
    /// Zoom path the next result opens at (from the page URL), once.
    pending_zoom: StoredValue<Vec<String>>,
    /// The displayed profile (after transforms), `None` until something is loaded.
    pub shown: Memo<Option<Arc<Loaded>>>,
    /// The zoomed node of the displayed profile (the root when none).
    pub zoom: Memo<NodeId>,
    /// The frame with keyboard focus in the displayed profile.
    pub focused: Memo<Option<NodeId>>,
    /// The search over the displayed profile.
    pub found: Memo<Found>,
    /// The sandwich of the selected function, when open.
    pub sandwich: Memo<Option<SandwichPair>>,
}

impl ViewState {
    /// A view state with `spec` applied (e.g. from the page URL); its zoom path is applied to
    /// the first result.
    pub fn new(spec: ViewSpec) -> ViewState {
        let (comparison, set_comparison) = signal(LoadState::Idle);
        let (baseline, set_baseline) = signal(None::<LoadState>);
        let search = RwSignal::new(spec.search);
        let sources = Sources {
            comparison,
            baseline,
            transforms: RwSignal::new(spec.transforms),
            mode: RwSignal::new(spec.mode),
            diff_mode: RwSignal::new(spec.diff_mode),
            wall: RwSignal::new(false),
            filter: Memo::new(move |_| {
                let s = search.get();
                (s.filter && s.is_active()).then_some((s.text, s.regex))
            }),
        };
        let zoom_path = RwSignal::new(Vec::new());
        let focus = RwSignal::new(None::<Focus>);
        let selected = RwSignal::new(spec.sandwich.clone().or(spec.select.clone()));
        let sandwich_open = RwSignal::new(spec.sandwich.is_some());
        let shown = shown_memo(sources);
        prepare_search(shown);
        ViewState {
            load: Memo::new(move |_| match baseline.get() {
                None => comparison.get(),
                Some(b) => LoadState::combined(comparison.get(), &b),
            }),
            set_comparison,
            baseline,
            set_baseline,
            diff_mode: sources.diff_mode,
            wall: sources.wall,
            transforms: sources.transforms,
            mode: sources.mode,
            orientation: RwSignal::new(spec.orientation),
            search,
            metric: RwSignal::new(spec.metric),
            selected,
            highlighted: RwSignal::new(None),
            sandwich_open,
            source_open: RwSignal::new(spec.source),
            zoom_path,
            focus,
            sources,
            pending_zoom: StoredValue::new(spec.zoom_path),
            shown,
            zoom: Memo::new(move |_| {
                let path = zoom_path.get();
                shown.with(|s| s.as_ref().map_or(0, |l| l.profile.find_path(&path)))
            }),
            focused: Memo::new(move |_| {
                let current = shown.get()?;
                focus.with(|f| {
                    f.as_ref()
                        .filter(|f| std::ptr::eq(f.shown.as_ptr(), Arc::as_ptr(&current)))
                        .map(|f| f.node)
                })
            }),
            found: found_memo(shown, search),
            sandwich: sandwich_memo(sources, shown, selected, sandwich_open),
        }
    }

    /// A new result (or failure, or progress) replaces the old one: zoom and focus start over,
    /// except that the first result opens at the zoom the page URL asked for.
    pub fn replace_result(&self, state: LoadState) {
        self.settle(&state);
        self.set_comparison.set(state);
    }

    /// A new baseline (or `None`: no comparison) replaces the old one, as
    /// [`ViewState::replace_result`] does for the comparison.
    pub fn replace_baseline(&self, state: Option<LoadState>) {
        if let Some(s) = &state {
            self.settle(s);
        }
        self.set_baseline.set(state);
    }

    fn settle(&self, state: &LoadState) {
        if !state.is_loading() {
            self.zoom_path.set(self.pending_zoom.get_value());
            self.pending_zoom.set_value(Vec::new());
            self.focus.set(None);
        }
    }

    /// Reports progress of the running comparison query without touching what is shown.
    pub fn set_progress(&self, state: LoadState) {
        self.set_comparison.set(state);
    }

    /// Reports progress of the running baseline query.
    pub fn set_baseline_progress(&self, state: LoadState) {
        self.set_baseline.set(Some(state));
    }

    /// Zooms to `node` of the displayed profile (0 resets).
    pub fn zoom_to(&self, node: NodeId) {
        let path = self.shown.with_untracked(|s| {
            s.as_ref()
                .map(|l| l.profile.name_path(node))
                .unwrap_or_default()
        });
        self.zoom_path.set(path);
    }

    /// Moves the keyboard focus to `node` of the displayed profile, or clears it.
    pub fn set_focus(&self, node: Option<NodeId>) {
        let focus = node.and_then(|node| {
            let shown = self.shown.get_untracked()?;
            Some(Focus {
                shown: Arc::downgrade(&shown),
                node,
            })
        });
        self.focus.set(focus);
    }

    /// The view as plain data (for the URL).
    pub fn spec(&self) -> ViewSpec {
        ViewSpec {
            transforms: self.transforms.get(),
            mode: self.mode.get(),
            orientation: self.orientation.get(),
            search: self.search.get(),
            metric: self.metric.get(),
            diff_mode: self.diff_mode.get(),
            zoom_path: self.zoom_path.get(),
            sandwich: if self.sandwich_open.get() {
                self.selected.get()
            } else {
                None
            },
            select: if self.sandwich_open.get() {
                None
            } else {
                self.selected.get()
            },
            source: self.source_open.get(),
        }
    }

    /// Applies a view read back from the URL for the result that is about to replace the
    /// current one (Back/Forward to another question): its zoom waits for that result.
    pub fn restore_for_next(&self, spec: ViewSpec) {
        self.pending_zoom.set_value(spec.zoom_path.clone());
        self.restore(ViewSpec {
            zoom_path: Vec::new(),
            ..spec
        });
    }

    /// Applies a view read back from the URL (Back/Forward).
    pub fn restore(&self, spec: ViewSpec) {
        self.transforms.set(spec.transforms);
        self.mode.set(spec.mode);
        self.orientation.set(spec.orientation);
        self.search.set(spec.search);
        self.metric.set(spec.metric);
        self.diff_mode.set(spec.diff_mode);
        self.sandwich_open.set(spec.sandwich.is_some());
        self.source_open.set(spec.source);
        // The URL says what is selected (or that nothing is): Back/Forward must not leave a
        // selection the address does not name, or the next write would differ from it.
        self.selected.set(spec.sandwich.or(spec.select));
        self.zoom_path.set(spec.zoom_path);
    }
}
