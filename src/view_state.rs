//! The live view state (signals) and the derivations that run when it changes: the displayed
//! profile (transforms, inversion, search filter), the search result, and the URL.

use std::sync::Arc;

use embers_model::tree::search::{parse_terms, search_funcs, substring_matcher, SearchResult};
use embers_model::tree::transform::{func_set, sandwich, Sandwich};
use embers_model::view::layout::Orientation;
use embers_model::{NodeId, Profile};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::state::{LoadState, Loaded, Metric};
use crate::view::{MetricParam, OrientationParam, SearchSpec, Transform, TreeMode, ViewSpec};

/// Every signal of the view; `Copy`, so components take it by value.
#[derive(Clone, Copy)]
pub struct ViewState {
    /// The query's state and the decoded profile.
    pub load: RwSignal<LoadState>,
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
    /// Zoomed node of the displayed profile.
    pub zoom: RwSignal<NodeId>,
    /// Selected function (by name: names survive transforms), from the table or a click.
    pub selected: RwSignal<Option<String>>,
    /// Function under the pointer in the table.
    pub highlighted: RwSignal<Option<String>>,
    /// Keyboard focus in the graph.
    pub focused: RwSignal<Option<NodeId>>,
    /// Whether the sandwich view of the selected function is open.
    pub sandwich_open: RwSignal<bool>,
    /// The displayed profile (after transforms), `None` until something is loaded.
    pub shown: RwSignal<Option<Arc<Loaded>>>,
    /// The search over the displayed profile, `None` when the box is empty.
    pub found: RwSignal<Option<Arc<SearchResult>>>,
    /// Why the search text is not a valid regular expression.
    pub search_error: RwSignal<Option<String>>,
    /// Zoom path waiting to be applied once the displayed profile exists (from the URL).
    pending_zoom: StoredValue<Vec<String>>,
}

impl ViewState {
    /// A view state with `spec` applied (e.g. from the page URL).
    pub fn new(load: RwSignal<LoadState>, spec: ViewSpec) -> ViewState {
        let v = ViewState {
            load,
            transforms: RwSignal::new(spec.transforms),
            mode: RwSignal::new(spec.mode),
            orientation: RwSignal::new(spec.orientation.0),
            search: RwSignal::new(spec.search),
            metric: RwSignal::new(spec.metric.0),
            zoom: RwSignal::new(0),
            selected: RwSignal::new(spec.sandwich.clone()),
            highlighted: RwSignal::new(None),
            focused: RwSignal::new(None),
            sandwich_open: RwSignal::new(spec.sandwich.is_some()),
            shown: RwSignal::new(None),
            found: RwSignal::new(None),
            search_error: RwSignal::new(None),
            pending_zoom: StoredValue::new(spec.zoom_path),
        };
        v.derive_shown();
        v.derive_search();
        v
    }

    /// The view as plain data (for the URL).
    pub fn spec(&self) -> ViewSpec {
        let zoom_path = self.shown.with(|s| {
            s.as_ref()
                .map(|l| l.profile.name_path(self.zoom.get()))
                .unwrap_or_default()
        });
        ViewSpec {
            transforms: self.transforms.get(),
            mode: self.mode.get(),
            orientation: OrientationParam(self.orientation.get()),
            search: self.search.get(),
            metric: MetricParam(self.metric.get()),
            zoom_path,
            sandwich: if self.sandwich_open.get() {
                self.selected.get()
            } else {
                None
            },
        }
    }

    /// Applies a view read back from the URL (Back/Forward).
    pub fn restore(&self, spec: ViewSpec) {
        self.pending_zoom.set_value(spec.zoom_path.clone());
        self.transforms.set(spec.transforms);
        self.mode.set(spec.mode);
        self.orientation.set(spec.orientation.0);
        self.search.set(spec.search);
        self.metric.set(spec.metric.0);
        self.sandwich_open.set(spec.sandwich.is_some());
        if spec.sandwich.is_some() {
            self.selected.set(spec.sandwich);
        }
        let zoom = self.shown.with_untracked(|s| {
            s.as_ref()
                .map_or(0, |l| l.profile.find_path(&spec.zoom_path))
        });
        self.zoom.set(zoom);
    }

    /// Recomputes the displayed profile when the data, transforms, mode or search filter change.
    fn derive_shown(&self) {
        let v = *self;
        let filter_key = Memo::new(move |_| {
            let s = v.search.get();
            (s.filter && s.is_active()).then_some((s.text, s.regex))
        });
        Effect::new(move |_| {
            let base = match v.load.get() {
                LoadState::Loaded(l) => l,
                _ => {
                    v.shown.set(None);
                    return;
                }
            };
            let transforms = v.transforms.get();
            let mode = v.mode.get();
            let filter = filter_key.get();
            let spec = ViewSpec {
                transforms,
                mode,
                search: filter
                    .clone()
                    .map_or_else(SearchSpec::default, |(text, regex)| SearchSpec {
                        text,
                        regex,
                        filter: true,
                    }),
                ..ViewSpec::default()
            };
            let untouched =
                spec.transforms.is_empty() && spec.mode == TreeMode::TopDown && filter.is_none();
            let shown = if untouched {
                base
            } else {
                let applied = spec.apply(&base.profile, |p| {
                    filter
                        .as_ref()
                        .and_then(|(t, r)| matcher_set(p, t, *r).ok())
                });
                let mut loaded = Loaded::new(
                    applied.profile,
                    base.request.clone(),
                    base.shape,
                    base.decode_ms,
                );
                loaded.unit = base.unit;
                loaded.note = applied.note;
                Arc::new(loaded)
            };
            let path = v.pending_zoom.get_value();
            let previous = v
                .shown
                .get_untracked()
                .map(|s| s.profile.name_path(v.zoom.get_untracked()));
            let keep = if path.is_empty() {
                previous.unwrap_or_default()
            } else {
                path
            };
            v.pending_zoom.set_value(Vec::new());
            let zoom = shown.profile.find_path(&keep);
            v.focused.set(None);
            v.shown.set(Some(shown));
            v.zoom.set(zoom);
        });
    }

    /// Recomputes the search result when the text or the displayed profile change.
    fn derive_search(&self) {
        let v = *self;
        Effect::new(move |_| {
            let spec = v.search.get();
            let shown = v.shown.get();
            let (Some(shown), true) = (shown, spec.is_active()) else {
                v.found.set(None);
                v.search_error.set(None);
                return;
            };
            match matcher_set(&shown.profile, &spec.text, spec.regex) {
                Ok(funcs) => {
                    v.search_error.set(None);
                    v.found
                        .set(Some(Arc::new(search_funcs(&shown.profile, funcs))));
                }
                Err(e) => {
                    v.search_error.set(Some(e));
                    v.found.set(None);
                }
            }
        });
    }

    /// The sandwich of the selected function in the displayed profile.
    pub fn sandwich(&self) -> Option<(Arc<Loaded>, Arc<Loaded>)> {
        if !self.sandwich_open.get() {
            return None;
        }
        let shown = self.shown.get()?;
        let name = self.selected.get()?;
        let f = shown.profile.function_id(&name)?;
        let Sandwich { callers, callees } = sandwich(&shown.profile, f);
        let wrap = |p: Profile| {
            let mut l = Loaded::new(p, shown.request.clone(), shown.shape, 0.0);
            l.unit = shown.unit;
            Arc::new(l)
        };
        Some((wrap(callers), wrap(callees)))
    }
}

/// The functions of `p` matching the search text: substring terms, or a browser RegExp.
pub fn matcher_set(p: &Profile, text: &str, regex: bool) -> Result<Vec<bool>, String> {
    if !regex {
        let terms = parse_terms(text);
        return Ok(func_set(p, substring_matcher(&terms)));
    }
    let re = new_regexp(text)?;
    Ok(func_set(p, |name| re.test(name)))
}

/// Compiles a case-insensitive JS regular expression, reporting a syntax error as text.
fn new_regexp(pattern: &str) -> Result<js_sys::RegExp, String> {
    let ctor: js_sys::Function = js_sys::Reflect::get(&js_sys::global(), &"RegExp".into())
        .ok()
        .and_then(|c| c.dyn_into().ok())
        .ok_or("this browser has no RegExp")?;
    let args = js_sys::Array::of2(&pattern.into(), &"i".into());
    js_sys::Reflect::construct(&ctor, &args)
        .map_err(|e| {
            // "Invalid regular expression: /([/i: Unterminated group" → "Unterminated group".
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .map(|m| m.rsplit(": ").next().unwrap_or_default().to_string())
                .unwrap_or_else(|| "invalid regular expression".into())
        })?
        .dyn_into()
        .map_err(|_| "invalid regular expression".into())
}
