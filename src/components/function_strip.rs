//! The selected function's timeline, laid over the profile's timeline in the same strip (so the
//! graph below stays where it is when a click selects): its self time and the time in what it
//! calls per bucket (stacked: together its total), or its total by pod or host; a read-out of
//! its self and total over the range. Hover, drag and the chart itself are the timeline's
//! ([`TimelineChart`]). Closing it shows the profile's timeline and keeps the selection.

use embers_model::contract::explore::THREAD;
use embers_model::contract::request::ProfileRequest;
use embers_model::view::format::{format_value, ValueUnit};
use embers_model::view::function_timeline::{as_timeline, sums};
use embers_model::view::timeline::Timeline;
use leptos::prelude::*;

use crate::components::timeline_chart::TimelineChart;
use crate::session::functions::{function_timeline, function_timeline_question};
use crate::session::navigator::Navigator;
use crate::state::fetched::fetched;

/// Groupings offered.
const GROUPS: [&str; 4] = ["", "pod", "host", THREAD];

/// What the strip shows: the function, the request, the grouping asked for, and the answer.
type Shown = (
    String,
    ProfileRequest,
    Result<
        embers_model::contract::explore::FunctionTimelineAnswer,
        crate::session::explore::ApiFailure,
    >,
);

/// The function's timeline while `covering` (a function is selected in a profile that came
/// from a query, and its timeline was not `closed` since); `shown` is the strip's request.
#[component]
pub fn FunctionStrip(
    nav: Navigator,
    shown: Memo<Option<(String, ProfileRequest)>>,
    covering: Memo<bool>,
    closed: RwSignal<bool>,
) -> impl IntoView {
    let view = nav.runner.view;
    let group = RwSignal::new(String::new());
    let data = fetched(move || {
        let (function, shown, group) = (view.selected.get(), shown.get(), group.get());
        let asked = covering.get();
        async move {
            let (base, request) = shown.filter(|_| asked)?;
            let function = function?;
            let q = function_timeline_question(&request, &function, &group);
            let answer = function_timeline(&base, &q).await;
            Some((function, request, answer))
        }
    });
    move || {
        let function = view.selected.get().filter(|_| covering.get())?;
        let answer: Option<Shown> = data.get().flatten().filter(|(f, _, _)| *f == function);
        Some(view! {
            <section class="function-strip" data-testid="function-timeline" aria-label="Timeline of the selected function">
                <div class="timeline-tools">
                    <span class="fn-strip-name" title=function.clone()>{function.clone()}</span>
                    <label class="check">"Group by"
                        <select data-testid="function-group-by" prop:value=move || group.get()
                            on:change=move |e| group.set(event_target_value(&e))>
                            {GROUPS.iter().map(|g| {
                                let chosen = *g;
                                view! { <option value=*g prop:selected=move || group.with(|x| x == chosen)>{if g.is_empty() { "none" } else { g }}</option> }
                            }).collect_view()}
                        </select>
                    </label>
                    <span class="spacer"></span>
                    {answer.clone().map(|(_, request, a)| view! { <Readout request=request answer=a /> })}
                    <button type="button" class="ghost small" data-testid="function-timeline-close"
                        title="Show the whole profile's timeline (the function stays selected)"
                        on:click=move |_| closed.set(true)>"×"</button>
                </div>
                {answer.map(|(_, request, a)| match a {
                    Err(e) => view! { <div class="timeline-error" data-testid="function-timeline-error">{format!("No timeline: {e}")}</div> }.into_any(),
                    Ok(a) => {
                        let t = Timeline::new(&as_timeline(&a), request.time_start, request.time_end);
                        let unit = ValueUnit::for_event_type(&request.profile_event_type);
                        view! { <TimelineChart timeline=t unit=unit on_range=Callback::new(move |(s, e)| nav.open_range(s, e)) /> }.into_any()
                    }
                })}
            </section>
        })
    }
}

/// `self 1.2 s · total 3.4 s` over the range, with the raw values for tests and host pages.
#[component]
fn Readout(
    request: ProfileRequest,
    answer: Result<
        embers_model::contract::explore::FunctionTimelineAnswer,
        crate::session::explore::ApiFailure,
    >,
) -> impl IntoView {
    let Ok(a) = answer else {
        return ().into_any();
    };
    let (self_value, total) = sums(&a);
    let unit = ValueUnit::for_event_type(&request.profile_event_type);
    view! {
        <span class="fn-readout" data-testid="function-readout" data-self=self_value data-total=total>
            {format!("self {} · total {} in this range", format_value(self_value, unit), format_value(total, unit))}
        </span>
    }
    .into_any()
}
