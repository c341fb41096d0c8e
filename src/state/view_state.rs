//! The live view state: one owner for what is loaded and how it is looked at.
//!
//! Choices (transforms, search, zoom path, selection, ...) are signals; everything computed from
//! them — the displayed profile, the zoomed node, the search result, the sandwich — is a
//! [`Memo`], so nothing can fall out of step. A new result replaces the old one only through
//! [`ViewState::replace_result`]; the zoom is stored as a path of function names (it survives
//! transforms and reloads) and changed only through [`ViewState::zoom_to`].

use std::sync::{Arc, Weak};

use embers_model::tree::search::{search_funcs, SearchResult};
use embers_model::tree::transform::{sandwich, Sandwich};
use embers_model::view::layout::Orientation;
use embers_model::view::paint::Metric;
use embers_model::NodeId;
use leptos::prelude::*;

use crate::state::loaded::{LoadState, Loaded};
use crate::state::matcher::matcher_set;
use crate::state::view_spec::{SearchSpec, Transform, TreeMode, ViewSpec};

/// The search over the displayed profile.
#[derive(Clone, Debug, Default)]
pub enum Found {
    /// The search box is empty.
    #[default]
    Inactive,
    /// The matches (possibly none).
    Matches(Arc<SearchResult>),
    /// The text is not a valid regular expression; why.
    Invalid(String),
}

impl Found {
    /// The matches, when the search is active and valid.
    pub fn matches(&self) -> Option<&Arc<SearchResult>> {
        match self {
            Found::Matches(m) => Some(m),
            _ => None,
        }
    }
}

/// Callers and callees of the selected function, each ready to draw.
#[derive(Clone)]
pub struct SandwichPair {
    /// Callers, inverted (the function at the root).
    pub callers: Arc<Loaded>,
    /// Callees (the function at the root).
    pub callees: Arc<Loaded>,
}

/// Keyboard focus: a node of one particular displayed profile.
#[derive(Clone, Debug)]
struct Focus {
    shown: Weak<Loaded>,
    node: NodeId,
}

/// Every signal and derived value of the view; `Copy`, so components take it by value.
#[derive(Clone, Copy)]
pub struct ViewState {
    /// Where the query stands and what it brought (written through the methods below).
    pub load: ReadSignal<LoadState>,
    set_load: WriteSignal<LoadState>,
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
    zoom_path: RwSignal<Vec<String>>,
    focus: RwSignal<Option<Focus>>,
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
        let (load, set_load) = signal(LoadState::Idle);
        let transforms = RwSignal::new(spec.transforms);
        let mode = RwSignal::new(spec.mode);
        let search = RwSignal::new(spec.search);
        let zoom_path = RwSignal::new(Vec::new());
        let focus = RwSignal::new(None::<Focus>);
        let selected = RwSignal::new(spec.sandwich.clone());
        let sandwich_open = RwSignal::new(spec.sandwich.is_some());
        let shown = shown_memo(load, transforms, mode, search);
        ViewState {
            load,
            set_load,
            transforms,
            mode,
            orientation: RwSignal::new(spec.orientation),
            search,
            metric: RwSignal::new(spec.metric),
            selected,
            highlighted: RwSignal::new(None),
            sandwich_open,
            zoom_path,
            focus,
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
            sandwich: sandwich_memo(shown, selected, sandwich_open),
        }
    }

    /// A new result (or failure, or progress) replaces the old one: zoom and focus start over,
    /// except that the first result opens at the zoom the page URL asked for.
    pub fn replace_result(&self, state: LoadState) {
        let settled = !matches!(state, LoadState::Loading { .. });
        if settled {
            self.zoom_path.set(self.pending_zoom.get_value());
            self.pending_zoom.set_value(Vec::new());
            self.focus.set(None);
        }
        self.set_load.set(state);
    }

    /// Reports progress of the running query without touching what is shown.
    pub fn set_progress(&self, state: LoadState) {
        self.set_load.set(state);
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
            zoom_path: self.zoom_path.get(),
            sandwich: if self.sandwich_open.get() {
                self.selected.get()
            } else {
                None
            },
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
        self.sandwich_open.set(spec.sandwich.is_some());
        if spec.sandwich.is_some() {
            self.selected.set(spec.sandwich);
        }
        self.zoom_path.set(spec.zoom_path);
    }
}

/// The displayed profile: the loaded one with transforms, inversion and the search filter
/// applied; the same `Arc` when nothing applies.
fn shown_memo(
    load: ReadSignal<LoadState>,
    transforms: RwSignal<Vec<Transform>>,
    mode: RwSignal<TreeMode>,
    search: RwSignal<SearchSpec>,
) -> Memo<Option<Arc<Loaded>>> {
    // The search text matters here only while filtering, so typing does not rebuild the tree.
    let filter = Memo::new(move |_| {
        let s = search.get();
        (s.filter && s.is_active()).then_some((s.text, s.regex))
    });
    Memo::new_with_compare(
        move |_| {
            let LoadState::Loaded(base) = load.get() else {
                return None;
            };
            let filter = filter.get();
            let spec = ViewSpec {
                transforms: transforms.get(),
                mode: mode.get(),
                search: filter
                    .clone()
                    .map_or_else(SearchSpec::default, |(text, regex)| SearchSpec {
                        text,
                        regex,
                        filter: true,
                    }),
                ..ViewSpec::default()
            };
            if spec.transforms.is_empty() && spec.mode == TreeMode::TopDown && filter.is_none() {
                return Some(base);
            }
            let applied = spec.apply(&base.profile, |p| {
                filter
                    .as_ref()
                    .and_then(|(t, r)| matcher_set(p, t, *r).ok())
            });
            Some(Arc::new(base.derived(applied.profile, applied.note)))
        },
        arc_changed,
    )
}

fn found_memo(shown: Memo<Option<Arc<Loaded>>>, search: RwSignal<SearchSpec>) -> Memo<Found> {
    Memo::new_with_compare(
        move |_| {
            let spec = search.get();
            let Some(shown) = shown.get().filter(|_| spec.is_active()) else {
                return Found::Inactive;
            };
            match matcher_set(&shown.profile, &spec.text, spec.regex) {
                Ok(funcs) => Found::Matches(Arc::new(search_funcs(&shown.profile, funcs))),
                Err(e) => Found::Invalid(e),
            }
        },
        |old, new| match (old, new) {
            (Some(Found::Matches(a)), Some(Found::Matches(b))) => !Arc::ptr_eq(a, b),
            (Some(Found::Invalid(a)), Some(Found::Invalid(b))) => a != b,
            (Some(Found::Inactive), Some(Found::Inactive)) => false,
            _ => true,
        },
    )
}

fn sandwich_memo(
    shown: Memo<Option<Arc<Loaded>>>,
    selected: RwSignal<Option<String>>,
    open: RwSignal<bool>,
) -> Memo<Option<SandwichPair>> {
    Memo::new_with_compare(
        move |_| {
            if !open.get() {
                return None;
            }
            let shown = shown.get()?;
            let f = selected.with(|s| s.as_deref().and_then(|n| shown.profile.function_id(n)))?;
            let Sandwich { callers, callees } = sandwich(&shown.profile, f);
            Some(SandwichPair {
                callers: Arc::new(shown.derived(callers, None)),
                callees: Arc::new(shown.derived(callees, None)),
            })
        },
        |old, new| match (old, new) {
            (Some(Some(a)), Some(Some(b))) => !Arc::ptr_eq(&a.callers, &b.callers),
            (Some(None), Some(None)) => false,
            _ => true,
        },
    )
}

/// Memo comparison for shared profiles: a new `Arc` is a change, the same one is not.
fn arc_changed(old: Option<&Option<Arc<Loaded>>>, new: Option<&Option<Arc<Loaded>>>) -> bool {
    match (old, new) {
        (Some(Some(a)), Some(Some(b))) => !Arc::ptr_eq(a, b),
        (Some(None), Some(None)) => false,
        _ => true,
    }
}
