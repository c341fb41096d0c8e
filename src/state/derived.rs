//! The values the view derives from what is loaded and how it is looked at, as memos: the
//! displayed profile (transforms, inversion, search filter — and, when comparing, the diff of
//! both sides after the same steps), the search result, and the sandwich.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Duration;

use embers_model::contract::event::Measure;
use embers_model::tree::diff::wall::wall;
use embers_model::tree::diff::{Diff, DiffMode};
use embers_model::tree::matches::Matches;
use embers_model::tree::transform::{sandwich, Sandwich};
use embers_model::view::format::{format_percent, format_value};
use embers_model::Profile;
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
    Matches(Arc<Matches>),
    /// The text is not a valid regular expression; why.
    Invalid(String),
}

impl Found {
    /// The matches, when the search is active and valid.
    pub fn matches(&self) -> Option<&Arc<Matches>> {
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

/// The signals the displayed profile follows.
#[derive(Clone, Copy)]
pub(super) struct Sources {
    pub comparison: ReadSignal<LoadState>,
    /// `None` when not comparing.
    pub baseline: ReadSignal<Option<LoadState>>,
    pub transforms: RwSignal<Vec<Transform>>,
    pub mode: RwSignal<TreeMode>,
    pub diff_mode: RwSignal<DiffMode>,
    /// Whether the two sides make a wall-clock view (on-CPU + off-CPU) rather than a diff.
    pub wall: RwSignal<bool>,
    /// The search text and regex flag while it filters (typing does not rebuild the tree).
    pub filter: Memo<Option<(String, bool)>>,
}

impl Sources {
    /// The view steps that change the tree (transforms, inversion, search filter).
    pub(super) fn spec(&self) -> ViewSpec {
        let filter = self.filter.get();
        ViewSpec {
            transforms: self.transforms.get(),
            mode: self.mode.get(),
            search: filter.map_or_else(SearchSpec::default, |(text, regex)| SearchSpec {
                text,
                regex,
                filter: true,
            }),
            ..ViewSpec::default()
        }
    }

    /// What is loaded: the comparison, and the baseline when comparing; `None` while either
    /// side has nothing to show.
    pub(super) fn loaded(&self) -> Option<(Arc<Loaded>, Option<Arc<Loaded>>)> {
        let LoadState::Loaded(c) = self.comparison.get() else {
            return None;
        };
        match self.baseline.get() {
            None => Some((c, None)),
            Some(LoadState::Loaded(b)) => Some((c, Some(b))),
            Some(_) => None,
        }
    }
}

/// A side with the view's tree-changing steps applied: the profile (borrowed when none apply),
/// a note, and what steps that drop samples removed of how much.
pub(super) struct Side<'a> {
    pub(super) profile: Cow<'a, Profile>,
    note: Option<String>,
    dropped: Option<(u64, u64)>,
}

pub(super) fn transformed<'a>(l: &'a Loaded, spec: &ViewSpec) -> Side<'a> {
    let untouched = spec.transforms.is_empty()
        && spec.mode == TreeMode::TopDown
        && !(spec.search.filter && spec.search.is_active());
    if untouched {
        return Side {
            profile: Cow::Borrowed(&l.profile),
            note: None,
            dropped: None,
        };
    }
    let applied = spec.apply(&l.profile, |p| {
        matcher_set(p, None, &spec.search.text, spec.search.regex).ok()
    });
    Side {
        profile: Cow::Owned(applied.profile),
        note: applied.note,
        dropped: applied.dropped,
    }
}

/// The note of a shown profile: its own, and what dropping steps removed ("dropped 1.2 s
/// (27%) of 4.5 s") — both sides' together in a wall-clock view.
fn note_of(l: &Loaded, sides: &[&Side<'_>]) -> Option<String> {
    let note = sides.first().and_then(|s| s.note.clone());
    let dropped = sides
        .iter()
        .filter_map(|s| s.dropped)
        .reduce(|a, b| (a.0 + b.0, a.1 + b.1));
    let removed = dropped.map(|(removed, of)| {
        format!(
            "dropped {} ({}) of {}",
            format_value(removed, l.unit),
            format_percent(removed, of),
            format_value(of, l.unit)
        )
    });
    match (note, removed) {
        (Some(n), Some(r)) => Some(format!("{n}; {r}")),
        (n, r) => n.or(r),
    }
}

/// The two sides shown as one: a wall-clock view (the off-CPU side waiting, the other running)
/// or a diff of baseline and comparison.
fn combined(s: &Sources, c: &Loaded, cp: &Profile, b: &Loaded, bp: &Profile) -> Loaded {
    if s.wall.get() {
        let off_cpu = |l: &Loaded| measure_of(l) == Measure::WaitingTime;
        let (running, waiting) = if off_cpu(c) && !off_cpu(b) {
            (bp, cp)
        } else {
            (cp, bp)
        };
        return c.wall_with(wall(running, waiting));
    }
    c.diff_with(Diff::new(bp, cp, s.diff_mode.get()))
}

fn measure_of(l: &Loaded) -> Measure {
    embers_model::contract::event::measure(&l.request.profile_event_type)
}

/// The displayed profile; the loaded `Arc` itself when nothing applies.
pub(super) fn shown_memo(s: Sources) -> Memo<Option<Arc<Loaded>>> {
    Memo::new_with_compare(
        move |_| {
            let (c, b) = s.loaded()?;
            let spec = s.spec();
            let cs = transformed(&c, &spec);
            match b {
                None if matches!(cs.profile, Cow::Borrowed(_)) => Some(c),
                None => {
                    let note = note_of(&c, &[&cs]);
                    Some(Arc::new(c.derived(cs.profile.into_owned(), note)))
                }
                Some(b) => {
                    let bs = transformed(&b, &spec);
                    let mut shown = combined(&s, &c, &cs.profile, &b, &bs.profile);
                    let sides: &[&Side<'_>] = if s.wall.get() { &[&cs, &bs] } else { &[&cs] };
                    shown.note = note_of(&c, sides);
                    Some(Arc::new(shown))
                }
            }
        },
        arc_changed,
    )
}

pub(super) fn found_memo(
    shown: Memo<Option<Arc<Loaded>>>,
    search: RwSignal<SearchSpec>,
) -> Memo<Found> {
    Memo::new_with_compare(
        move |_| {
            let spec = search.get();
            let Some(shown) = shown.get().filter(|_| spec.is_active()) else {
                return Found::Inactive;
            };
            let (profile, index) = (&shown.profile, shown.search_index());
            // Counts and the covered total only: stepping scans from the focused frame, so no
            // keystroke lists every matching node.
            match matcher_set(profile, Some(index), &spec.text, spec.regex) {
                Ok(funcs) => Found::Matches(Arc::new(Matches::new(profile, index, funcs))),
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

/// Builds each shown profile's search index while the page is idle, so the first keystroke
/// does not pay for it (milliseconds at a million nodes). Holds the profile weakly: one replaced
/// before the page was idle is not kept for it.
pub(super) fn prepare_search(shown: Memo<Option<Arc<Loaded>>>) {
    Effect::new(move |_| {
        let Some(loaded) = shown.get() else {
            return;
        };
        let weak = Arc::downgrade(&loaded);
        let build = move || {
            if let Some(l) = weak.upgrade() {
                l.search_index();
            }
        };
        // Safari has no requestIdleCallback: then right after this task.
        if request_idle_callback_with_handle(build.clone()).is_err() {
            set_timeout(build, Duration::ZERO);
        }
    });
}

/// Callers and callees of the selected function; when comparing (or in a wall-clock view), each
/// half is the two sides' halves combined.
pub(super) fn sandwich_memo(
    s: Sources,
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
            let name = selected.get()?;
            let halves = |p: &Profile| {
                let f = p.function_id(&name)?;
                Some(sandwich(p, f))
            };
            if shown.diff.is_none() && shown.wall.is_none() {
                let Sandwich { callers, callees } = halves(&shown.profile)?;
                return Some(SandwichPair {
                    callers: Arc::new(shown.derived(callers, None)),
                    callees: Arc::new(shown.derived(callees, None)),
                });
            }
            let (c, b) = s.loaded()?;
            let spec = s.spec();
            let side = |l: &Loaded| {
                halves(&transformed(l, &spec).profile).unwrap_or(Sandwich {
                    callers: Profile::default(),
                    callees: Profile::default(),
                })
            };
            let b = b?;
            let (cs, bs) = (side(&c), side(&b));
            Some(SandwichPair {
                callers: Arc::new(combined(&s, &c, &cs.callers, &b, &bs.callers)),
                callees: Arc::new(combined(&s, &c, &cs.callees, &b, &bs.callees)),
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
