//! The zoom path in the toolbar: the zoomed frame and its ancestors on one line whose place is
//! fixed from the first view. Ancestors that do not fit fold, oldest first, into a "…" menu at
//! the start of the line, so a zoom never wraps the toolbar (the graph below never moves) and
//! every ancestor stays one click, or Tab and Enter, away.
//!
//! A zoom costs one DOM update in the task that zoomed: the fold is computed from crumb widths
//! measured earlier, and the crumbs are keyed, so only those that change are created or removed.
//! A crumb never seen before is measured by a `ResizeObserver` in the rendering of the frame
//! that first lays it out (layout is already done there, so reading it forces none), and a
//! different fold is applied in that same frame, before it is painted.

use std::collections::HashMap;

use embers_model::NodeId;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::JsCast;
use web_sys::{ResizeObserver, ResizeObserverEntry};

use crate::components::compare::close_menus;
use crate::components::size::observe_size;
use crate::state::view_state::ViewState;

/// Width of the "…" summary (CSS `.crumb-more summary`), in CSS px.
const MORE_PX: f64 = 26.0;

/// Names whose crumb widths are remembered at most (then forgotten and measured again), so a
/// session of many zooms keeps a bounded cache.
const REMEMBERED: usize = 4096;

/// Where each crumb sits with none folded, in px from the line's start: enough to tell how many
/// to fold at any width without laying the whole path out again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fit {
    /// Left and right edge of every crumb, root first.
    pub edges: Vec<(f64, f64)>,
}

impl Fit {
    /// The crumbs' places from their widths, `step` px apart (a separator and its gaps).
    pub fn from_widths(widths: impl IntoIterator<Item = f64>, step: f64) -> Fit {
        let mut x = 0.0;
        let edges = widths
            .into_iter()
            .map(|w| {
                let edge = (x, x + w);
                x += w + step;
                edge
            })
            .collect();
        Fit { edges }
    }

    /// How many ancestors to fold so the rest fits in `width` px (the whole path's place),
    /// the "…" and its separator included. The current frame never folds: when it alone is too
    /// wide it is cut with an ellipsis.
    pub fn folded(&self, width: f64) -> usize {
        let Some(&(_, end)) = self.edges.last() else {
            return 0;
        };
        // The "…" takes a crumb's separator and gaps besides its own width.
        let sep = match self.edges.as_slice() {
            [(_, r0), (l1, _), ..] => l1 - r0,
            _ => 0.0,
        };
        (0..self.edges.len())
            .find(|&k| {
                let more = if k == 0 { 0.0 } else { MORE_PX + sep };
                more + end - self.edges[k].0 <= width + 0.5
            })
            .unwrap_or(self.edges.len() - 1)
    }
}

/// Crumb widths measured on the page, by name, apart for the current frame's crumb (bold, and
/// never cut at 16em), and the step between two crumbs.
#[derive(Debug, Default)]
pub struct Widths {
    /// `[ancestor, current]`: name → border-box width in CSS px.
    by_name: [HashMap<String, f64>; 2],
    /// From one crumb's right edge to the next one's left edge, once two were on the line.
    step: Option<f64>,
}

impl Widths {
    /// The width of `name`'s crumb, when measured.
    pub fn width(&self, name: &str, current: bool) -> Option<f64> {
        self.by_name[usize::from(current)].get(name).copied()
    }

    /// Notes a measured crumb; whether that is news.
    pub fn learn(&mut self, name: &str, current: bool, width: f64) -> bool {
        let map = &mut self.by_name[usize::from(current)];
        if map.get(name) == Some(&width) {
            return false;
        }
        if map.len() >= REMEMBERED {
            map.clear();
        }
        map.insert(name.to_owned(), width);
        true
    }

    /// Notes the step between two crumbs; whether that is news.
    pub fn learn_step(&mut self, step: f64) -> bool {
        let news = self.step != Some(step);
        self.step = Some(step);
        news
    }

    /// How many ancestors of `names` (root first, the last is the current frame) fold in
    /// `width` px. A crumb not measured yet counts as 0 px and never folds (it must be on the
    /// line to be measured): a first guess that can only grow once it is.
    pub fn fold<'a>(&self, names: impl ExactSizeIterator<Item = &'a str>, width: f64) -> usize {
        if width <= 0.0 {
            return 0;
        }
        let last = names.len().saturating_sub(1);
        let known: Vec<Option<f64>> = names
            .enumerate()
            .map(|(i, name)| self.width(name, i == last))
            .collect();
        let unknown = known
            .iter()
            .position(Option::is_none)
            .unwrap_or(known.len());
        let fit = Fit::from_widths(
            known.iter().map(|w| w.unwrap_or(0.0)),
            self.step.unwrap_or(0.0),
        );
        fit.folded(width).min(unknown)
    }
}

/// One crumb on the line: the frame at depth `index` of the path.
#[derive(Clone)]
struct Crumb {
    index: usize,
    node: NodeId,
    name: String,
    current: bool,
}

type Observer = StoredValue<Option<ResizeObserver>, LocalStorage>;

/// The zoom path of `view`: `data-testid="breadcrumbs"`, one button per frame root first (the
/// folded ones in the "…" menu).
#[component]
pub fn ZoomPath(view: ViewState) -> impl IntoView {
    let path = Memo::new(move |_| {
        view.shown.with(|s| {
            s.as_ref()
                .filter(|l| !l.profile.is_empty())
                .map(|l| {
                    let p = &l.profile;
                    let zoom = view.zoom.get().min(p.node_count() as NodeId - 1);
                    p.path_to(zoom)
                        .into_iter()
                        .map(|n| (n, p.name(n).to_string()))
                        .collect::<Vec<_>>()
                })
                .unwrap_or_default()
        })
    });
    let widths = StoredValue::new(Widths::default());
    // Bumped when a width is learnt: the fold is computed again.
    let learnt = RwSignal::new(0u32);
    let (place, line) = (NodeRef::<html::Nav>::new(), NodeRef::<html::Div>::new());
    let size = RwSignal::new((0.0, 0.0));
    observe_size(place, size);
    // A memo: equal folds (most zooms) change nothing on the page.
    let fold = Memo::new(move |_| {
        learnt.track();
        let width = size.with(|s| s.0);
        path.with(|p| widths.with_value(|w| w.fold(p.iter().map(|(_, n)| n.as_str()), width)))
    });
    let observer = crumb_observer(line, widths, learnt);
    let zoom = Callback::new(move |node: NodeId| {
        close_menus();
        view.zoom_to(node);
    });
    let on_line = move || {
        let k = fold.get();
        path.with(|p| {
            let last = p.len().saturating_sub(1);
            p.iter()
                .enumerate()
                .skip(k.min(last))
                .map(|(index, (node, name))| Crumb {
                    index,
                    node: *node,
                    name: name.clone(),
                    current: index == last,
                })
                .collect::<Vec<_>>()
        })
    };
    view! {
        <nav class="breadcrumbs" data-testid="breadcrumbs" aria-label="Zoom path" node_ref=place>
            <FoldedMenu path=path fold=fold zoom=zoom />
            <div class="crumbs" node_ref=line>
                // Keyed by frame, name and whether it is the current one (which styles it):
                // a zoom adds and removes only the crumbs that differ.
                <For each=on_line key=|c| (c.node, c.name.clone(), c.current) let:crumb>
                    <CrumbButton crumb=crumb fold=fold observer=observer zoom=zoom />
                </For>
            </div>
        </nav>
    }
}

/// The "…" menu of the folded ancestors, there while any are folded.
#[component]
fn FoldedMenu(
    path: Memo<Vec<(NodeId, String)>>,
    fold: Memo<usize>,
    zoom: Callback<NodeId>,
) -> impl IntoView {
    let count = Memo::new(move |_| {
        let k = fold.get();
        path.with(|p| if k < p.len() { k } else { 0 })
    });
    let items = move || path.with(|p| p[..count.get().min(p.len())].to_vec());
    let any = Memo::new(move |_| count.get() > 0);
    move || {
        any.get().then(|| {
            view! {
                <details class="menu crumb-more" data-testid="crumb-more">
                    <summary title=move || format!("{} more: zoom out to an ancestor that does not fit", count.get())
                        aria-label=move || format!("{} more ancestors", count.get())>"…"</summary>
                    <div class="menu-items">
                        <For each=items key=|item| item.clone()
                            children=move |(node, name): (NodeId, String)| view! {
                                <button type="button" title=name.clone() on:click=move |_| zoom.run(node)>{name.clone()}</button>
                            } />
                    </div>
                </details>
                <span class="sep" aria-hidden="true">"›"</span>
            }
        })
    }
}

/// A crumb on the line, measured by `observer` once it is laid out.
#[component]
fn CrumbButton(
    crumb: Crumb,
    fold: Memo<usize>,
    observer: Observer,
    zoom: Callback<NodeId>,
) -> impl IntoView {
    let el = NodeRef::<html::Button>::new();
    Effect::new(move |_| {
        if let Some(button) = el.get() {
            // `try_`: the path may have left the page (a view change) before this runs.
            observer.try_with_value(|o| o.iter().for_each(|o| o.observe(&button)));
        }
    });
    let Crumb {
        index,
        node,
        name,
        current,
    } = crumb;
    view! {
        {move || (index > fold.get()).then(|| view! { <span class="sep" aria-hidden="true">"›"</span> })}
        <button type="button" class="crumb" class:current=current title=name.clone() node_ref=el
            on:click=move |_| zoom.run(node)>{name.clone()}</button>
    }
}

/// The observer that measures each new crumb once: in the frame that lays it out, after layout,
/// so its width is read without forcing one; a fold that changes is applied in the same frame.
fn crumb_observer(
    line: NodeRef<html::Div>,
    widths: StoredValue<Widths>,
    learnt: RwSignal<u32>,
) -> Observer {
    let callback = Closure::<dyn FnMut(js_sys::Array, ResizeObserver)>::new(
        move |entries: js_sys::Array, observer: ResizeObserver| {
            let mut news = false;
            for entry in entries.iter() {
                let target = entry.unchecked_into::<ResizeObserverEntry>().target();
                // Measured once: a later change of its size (the current crumb cut to a
                // narrower line) must not report again.
                observer.unobserve(&target);
                let width = target.get_bounding_client_rect().width();
                // 0: taken off the page before its first report.
                let Some(name) = target.get_attribute("title").filter(|_| width > 0.0) else {
                    continue;
                };
                let current = target.class_name().split(' ').any(|c| c == "current");
                news |= widths
                    .try_update_value(|w| w.learn(&name, current, width))
                    .unwrap_or(false);
            }
            if let Some(step) = line
                .try_get_untracked()
                .flatten()
                .and_then(|l| crumb_step(&l))
            {
                news |= widths
                    .try_update_value(|w| w.learn_step(step))
                    .unwrap_or(false);
            }
            if news {
                let _ = learnt.try_update(|n| *n = n.wrapping_add(1));
            }
        },
    );
    let observer =
        StoredValue::new_local(ResizeObserver::new(callback.as_ref().unchecked_ref()).ok());
    // The observer owns the callback for the component's life; disconnecting on cleanup stops
    // it from firing, so leaking this small closure is bounded by mounts.
    callback.forget();
    on_cleanup(move || {
        observer.try_with_value(|o| o.iter().for_each(ResizeObserver::disconnect));
    });
    observer
}

/// The distance between the first two crumbs on the line (a separator and its gaps).
fn crumb_step(line: &web_sys::HtmlDivElement) -> Option<f64> {
    let crumbs = line.query_selector_all(".crumb").ok()?;
    let rect = |i| {
        crumbs.item(i).map(|c| {
            c.unchecked_into::<web_sys::Element>()
                .get_bounding_client_rect()
        })
    };
    let (a, b) = (rect(0)?, rect(1)?);
    Some(b.left() - a.right())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three crumbs of 100 px with 10 px between them (separator and gaps).
    fn three() -> Fit {
        Fit::from_widths([100.0, 100.0, 100.0], 10.0)
    }

    #[test]
    fn folds_the_oldest_first_and_never_the_current_frame() {
        assert_eq!(
            three().edges,
            vec![(0.0, 100.0), (110.0, 210.0), (220.0, 320.0)]
        );
        assert_eq!(three().folded(400.0), 0);
        assert_eq!(three().folded(320.0), 0);
        // Folding one: "…" (26) + separator (10) + the last two (210).
        assert_eq!(three().folded(319.0), 1);
        assert_eq!(three().folded(246.0), 1);
        assert_eq!(three().folded(245.0), 2);
        assert_eq!(three().folded(10.0), 2);
        assert_eq!(Fit::default().folded(10.0), 0);
    }

    #[test]
    fn unmeasured_crumbs_stay_on_the_line_until_measured() {
        let names = ["root", "a", "b"];
        let mut w = Widths::default();
        // Nothing measured: nothing folds.
        assert_eq!(w.fold(names.into_iter(), 100.0), 0);
        assert!(w.learn("root", false, 100.0));
        assert!(w.learn("b", true, 100.0));
        assert!(w.learn_step(10.0));
        // "a" unmeasured: it stays on the line (and so does what follows it), though 100 px
        // would fold it once known.
        assert_eq!(w.fold(names.into_iter(), 100.0), 1);
        assert!(w.learn("a", false, 100.0));
        assert!(
            !w.learn("a", false, 100.0),
            "the same width again is no news"
        );
        assert_eq!(w.fold(names.into_iter(), 100.0), 2);
        assert_eq!(w.fold(names.into_iter(), 319.0), 1);
        assert_eq!(w.fold(names.into_iter(), 400.0), 0);
        // No room known yet (not laid out): nothing folds.
        assert_eq!(w.fold(names.into_iter(), 0.0), 0);
        // The current frame's crumb is measured apart (bold, never cut at 16em).
        assert_eq!(w.width("b", false), None);
        assert_eq!(w.fold(["root", "a", "b", "c"].into_iter(), 1000.0), 0);
    }
}
