//! The zoom path in the toolbar: the zoomed frame and its ancestors on one line whose place is
//! fixed from the first view. Ancestors that do not fit fold, oldest first, into a "…" menu at
//! the start of the line, so a zoom never wraps the toolbar (the graph below never moves) and
//! every ancestor stays one click, or Tab and Enter, away.

use embers_model::NodeId;
use leptos::html;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::compare::close_menus;
use crate::components::size::observe_size;
use crate::state::view_state::ViewState;

/// Width of the "…" summary (CSS `.crumb-more summary`), in CSS px.
const MORE_PX: f64 = 26.0;

/// Where each crumb sat with none folded, in px from the line's start: enough to tell how many
/// to fold at any width without laying the whole path out again.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Fit {
    /// Left and right edge of every crumb, root first.
    pub edges: Vec<(f64, f64)>,
}

impl Fit {
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
    let fold = RwSignal::new(0usize);
    let fit = StoredValue::new(None::<Fit>);
    let (place, line) = (NodeRef::<html::Nav>::new(), NodeRef::<html::Div>::new());
    let size = RwSignal::new((0.0, 0.0));
    observe_size(place, size);
    // A new path shows whole first; in the next animation frame (after this update's DOM, before
    // it is painted) its crumbs are measured and the oldest fold, so no frame shows it cut.
    Effect::new(move |_| {
        path.track();
        fit.set_value(None);
        fold.set(0);
        request_animation_frame(move || measure(place, line, fit, fold));
    });
    // A resize refolds from the measures; the place's own width never depends on its contents.
    Effect::new(move |_| {
        let (width, _) = size.get();
        if let Some(k) = fit.with_value(|f| f.as_ref().map(|f| f.folded(width))) {
            fold.set(k);
        }
    });
    let zoom = move |node: NodeId| {
        close_menus();
        view.zoom_to(node);
    };
    view! {
        <nav class="breadcrumbs" data-testid="breadcrumbs" aria-label="Zoom path" node_ref=place>
            {move || {
                let k = fold.get();
                path.with(|p| (k > 0 && k < p.len()).then(|| {
                    let items = p[..k].iter().map(|(node, name)| {
                        let node = *node;
                        view! { <button type="button" title=name.clone() on:click=move |_| zoom(node)>{name.clone()}</button> }
                    }).collect_view();
                    view! {
                        <details class="menu crumb-more" data-testid="crumb-more">
                            <summary title=format!("{k} more: zoom out to an ancestor that does not fit")
                                aria-label=format!("{k} more ancestors")>"…"</summary>
                            <div class="menu-items">{items}</div>
                        </details>
                        <span class="sep" aria-hidden="true">"›"</span>
                    }
                }))
            }}
            <div class="crumbs" node_ref=line>
                {move || {
                    let k = fold.get();
                    path.with(|p| {
                        let last = p.len().saturating_sub(1);
                        p.iter().enumerate().skip(k.min(last)).map(|(i, (node, name))| {
                            let node = *node;
                            view! {
                                {(i > k).then(|| view! { <span class="sep" aria-hidden="true">"›"</span> })}
                                <button type="button" class="crumb" class:current=i == last title=name.clone()
                                    on:click=move |_| zoom(node)>{name.clone()}</button>
                            }
                        }).collect_view()
                    })
                }}
            </div>
        </nav>
    }
}

/// Reads where the crumbs sit (all shown) and folds what does not fit in the path's place.
fn measure(
    place: NodeRef<html::Nav>,
    line: NodeRef<html::Div>,
    fit: StoredValue<Option<Fit>>,
    fold: RwSignal<usize>,
) {
    // The frame may come after the path was taken off the page (a view change): then its
    // references and signals are gone, and there is nothing to measure.
    let (Some(Some(place)), Some(Some(line))) =
        (place.try_get_untracked(), line.try_get_untracked())
    else {
        return;
    };
    let start = line.get_bounding_client_rect().left();
    let Ok(crumbs) = line.query_selector_all(".crumb") else {
        return;
    };
    let edges = (0..crumbs.length())
        .filter_map(|i| crumbs.item(i))
        .map(|c| {
            let r = c
                .unchecked_into::<web_sys::Element>()
                .get_bounding_client_rect();
            (r.left() - start, r.right() - start)
        })
        .collect();
    let measured = Fit { edges };
    let _ = fold.try_set(measured.folded(f64::from(place.client_width())));
    let _ = fit.try_set_value(Some(measured));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Three crumbs of 100 px with 10 px between them (separator and gaps).
    fn three() -> Fit {
        Fit {
            edges: vec![(0.0, 100.0), (110.0, 210.0), (220.0, 320.0)],
        }
    }

    #[test]
    fn folds_the_oldest_first_and_never_the_current_frame() {
        assert_eq!(three().folded(400.0), 0);
        assert_eq!(three().folded(320.0), 0);
        // Folding one: "…" (26) + separator (10) + the last two (210).
        assert_eq!(three().folded(319.0), 1);
        assert_eq!(three().folded(246.0), 1);
        assert_eq!(three().folded(245.0), 2);
        assert_eq!(three().folded(10.0), 2);
        assert_eq!(Fit::default().folded(10.0), 0);
    }
}
