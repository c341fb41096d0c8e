//! The page's side of the Source panel: it sends the panel the selected function, the metric,
//! the unit and where the lines come from — the opened file's line table (summed by the file
//! reader), or the service that answered the profile — and carries out what the panel asks
//! (closing it, which the URL keeps as `source` gone). The panel itself is an on-demand module
//! (`source_view`, see `crate::on_demand`): this side never names it.

use std::sync::Arc;

use embers_model::tree::stats::function_stats;
use embers_model::view::format::ValueUnit;
use embers_model::view::paint::Metric;
use leptos::prelude::*;

use super::interface::{LinesFrom, SourceEvent, SourceInput, SOURCE_VIEW};
use crate::on_demand::host::OnDemand;
use crate::session::navigator::Navigator;
use crate::state::loaded::Loaded;
use crate::state::view_state::ViewState;

/// The Source panel of `view`'s selected function, loaded on demand.
#[component]
pub fn SourceView(view: ViewState) -> impl IntoView {
    let nav = use_context::<Navigator>();
    // A memo: the selection or the metric set again to an equal value sends nothing.
    let input = Memo::new(move |_| {
        let base_url = nav.map(|n| n.form.base_url.get()).unwrap_or_default();
        let function = view.selected.get();
        let input = view.shown.with(|shown| match shown {
            Some(l) => input_for(l, function, view.metric.get(), base_url),
            None => SourceInput::default(),
        });
        // Plain data of strings and numbers: it always serializes.
        serde_json::to_string(&input).unwrap_or_default()
    });
    let on_event =
        Callback::new(
            move |json: String| match serde_json::from_str::<SourceEvent>(&json) {
                Ok(SourceEvent::Close) => view.source_open.set(false),
                Err(e) => web_sys::console::error_1(&format!("Source view event: {e}").into()),
            },
        );
    view! { <OnDemand module=SOURCE_VIEW input=input on_event=on_event /> }
}

/// What the panel is sent for `function` of the shown profile `l`.
fn input_for(
    l: &Arc<Loaded>,
    function: Option<String>,
    metric: Metric,
    base_url: String,
) -> SourceInput {
    let from = match (&function, &l.lines) {
        (None, _) => LinesFrom::Unavailable,
        (Some(f), Some(table)) => LinesFrom::File {
            rows: table.of(f),
            function_total: l
                .profile
                .function_id(f)
                .and_then(|id| function_stats(&l.profile).get(id as usize).map(|s| s.total))
                .unwrap_or(0),
            why_none: table.is_empty().then(|| table.why_none.clone()).flatten(),
        },
        // A comparison, a wall-clock pair, a snapshot or a file without a line table: no
        // service question reproduces their values.
        _ if l.diff.is_some()
            || l.wall.is_some()
            || l.snapshot.is_some()
            || l.request.time_end == 0 =>
        {
            LinesFrom::Unavailable
        }
        (Some(_), None) => LinesFrom::Service {
            base_url,
            request: l.request.clone(),
        },
    };
    SourceInput {
        function,
        by_self: metric == Metric::Self_,
        event_type: l.request.profile_event_type.clone(),
        samples: l.unit == ValueUnit::Samples,
        language: l.request.profile_language_type.clone(),
        from,
    }
}
