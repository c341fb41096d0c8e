//! The timeline strip above a profile: its value per bucket over the queried range, stacked by
//! group when grouped (pod, host, thread, process, any tag); while a function is selected, that
//! function's timeline in its place ([`FunctionStrip`]). Hover reads a bucket; dragging
//! selects a sub-range and queries it (Back returns); a legend entry narrows the query to its
//! group. Layout decisions are `embers_model::view::timeline`'s; this only renders them.

use embers_model::contract::event::{is_instant, TOTAL_APP_SERVICE};
use embers_model::contract::explore::{TagsRequest, TimelineRequest, OTHER_GROUP, THREAD};
use embers_model::contract::request::ProfileRequest;
use embers_model::view::format::{format_value, measure_name, ValueUnit};
use embers_model::view::timeline::{zoomed_out, Timeline};
use leptos::prelude::*;

use embers_model::view::color::series_color;

use crate::components::function_strip::FunctionStrip;
use crate::components::theme::theme_state;
use crate::components::timeline_chart::TimelineChart;
use crate::session::compare::BaselineSpec;
use crate::session::explore::{self, ApiFailure};
use crate::session::navigator::Navigator;
use crate::state::fetched::fetched;
use crate::state::loaded::LoadState;
use crate::state::view_spec::Transform;

/// Groupings offered before the tags found in the range.
const COMMON_GROUPS: [&str; 3] = ["pod", "host", THREAD];

/// The request the strip charts: the loaded profile's (when it came from a query), else the one
/// running.
fn charted(nav: Navigator) -> Option<(String, ProfileRequest)> {
    match nav.runner.view.load.get() {
        LoadState::Loaded(l) if l.request.time_start > 0 => {
            let base = nav.current.with(|c| c.as_ref().map(|(b, _)| b.clone()));
            Some((base.unwrap_or_default(), l.request.clone()))
        }
        LoadState::Loading { .. } => nav.current.get(),
        _ => None,
    }
}

/// What the strip asks the service: per-process breakdowns of the whole host read every
/// process on it (the `Total` pseudo-process itself has one group).
fn timeline_request(request: &ProfileRequest, group_by: &str) -> TimelineRequest {
    let whole_host = request.app_service.as_deref() == Some(TOTAL_APP_SERVICE);
    let mut profile = request.clone();
    profile.max_kernel_stack_depth = None;
    if whole_host && group_by == "app_service" {
        profile.app_service = None;
    }
    TimelineRequest {
        profile,
        interval: None,
        group_by: (!group_by.is_empty()).then(|| group_by.to_owned()),
        group_limit: None,
    }
}

/// The strip above a profile.
#[component]
pub fn TimelineStrip(nav: Navigator) -> impl IntoView {
    // A memo: the answer replacing "loading" names the same request, and must not make the
    // strip (and its tag list) ask the service a second time.
    let shown = Memo::new(move |_| charted(nav));
    // Without the explore endpoints the strip says so once (on the profile it found out on),
    // quietly, and is gone from then on. A memo of what to show: the strip is not rebuilt for
    // each profile.
    let strip = Memo::new(move |_| match nav.explore_missing.get() {
        None => Strip::Timeline,
        Some(Some(on)) if shown.with(|s| s.as_ref().map(|(_, r)| r) == Some(&on)) => Strip::Note,
        Some(_) => Strip::Gone,
    });
    // The selected function's timeline covers the profile's, in the same place: the graph below
    // never moves when a click selects (a strip of its own pushed it down under the pointer).
    // Closing it shows the profile's again and keeps the selection; selecting (again) reopens it.
    let selected = nav.runner.view.selected;
    let closed = RwSignal::new(false);
    Effect::new(move |_| {
        selected.track();
        closed.set(false);
    });
    let covering = Memo::new(move |_| {
        selected.with(Option::is_some) && !closed.get() && shown.with(Option::is_some)
    });
    move || match strip.get() {
        Strip::Timeline => Some(
            view! {
                <section class="timeline-strip" aria-label="Timeline">
                    <div class="timeline-main" class:covered=move || covering.get()>
                        <TimelinePanel nav=nav shown=shown group="" />
                    </div>
                    <FunctionStrip nav=nav shown=shown covering=covering closed=closed />
                </section>
            }
            .into_any(),
        ),
        Strip::Note => Some(
            view! {
                <section class="timeline-strip quiet" aria-label="Timeline">
                    <p class="explore-note" data-testid="explore-missing">{EXPLORE_MISSING}</p>
                </section>
            }
            .into_any(),
        ),
        Strip::Gone => None,
    }
}

/// What the strip above a profile shows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strip {
    /// The timeline.
    Timeline,
    /// That the service has no timeline (once).
    Note,
    /// Nothing.
    Gone,
}

/// What the page says once when the service has no explore endpoints.
pub const EXPLORE_MISSING: &str = "No timeline here: this service answers profile queries only. \
    The timeline and the services overview need the Embers service (embers-server, or \
    embers-server --upstream in front of DeepFlow).";

/// The chart of every service of `language` in the home view's range, by service (a timeline
/// names one language; home lists them all); none until the language is known.
#[component]
pub fn HomeTimeline(
    nav: Navigator,
    #[prop(into)] language: Signal<Option<String>>,
) -> impl IntoView {
    let shown = Signal::derive(move || {
        let q = nav.home.get()?;
        let s = q.services;
        let request = ProfileRequest {
            app_service: None,
            profile_language_type: language.get()?,
            profile_event_type: s.profile_event_type.unwrap_or_default(),
            tag_filter: s.tag_filter,
            time_start: s.time_start,
            time_end: s.time_end,
            max_kernel_stack_depth: None,
        };
        Some((q.base_url, request))
    });
    view! { <TimelinePanel nav=nav shown=shown group="app_service" /> }
}

/// What the strip shows: a timeline answer laid over its request's range.
/// The timeline answer with the question it answers and the grouping it was asked for: the
/// legend names its dimension from the answer, not from the select, which may already have moved
/// on while the next answer is on its way.
type Charted = Option<Result<(Timeline, ProfileRequest, String), ApiFailure>>;

/// Tools, chart and legend of the timeline of `shown`, grouped by `group` at first.
#[component]
fn TimelinePanel(
    nav: Navigator,
    #[prop(into)] shown: Signal<Option<(String, ProfileRequest)>>,
    group: &'static str,
) -> impl IntoView {
    let group_by = RwSignal::new(group.to_owned());
    let data = fetched(move || {
        let (shown, group) = (shown.get(), group_by.get());
        let known_missing = nav.explore_missing.with_untracked(Option::is_some);
        async move {
            let (base, request) = shown.filter(|_| !known_missing)?;
            let answer = explore::timeline(&base, &timeline_request(&request, &group)).await;
            Some(answer.map(|a| {
                (
                    Timeline::new(&a, request.time_start, request.time_end),
                    request,
                    group,
                )
            }))
        }
    });
    let charted = Signal::derive(move || data.get().flatten());
    view! {
        <TimelineTools nav=nav shown=shown group_by=group_by charted=charted />
        {move || charted.get().map(|answer| match answer {
            Err(e) if e.is_missing_endpoint() => {
                let on = shown.get_untracked().map(|(_, r)| r).filter(|_| group != "app_service");
                nav.note_explore_missing(on);
                ().into_any()
            }
            Err(e) => view! { <TimelineError failure=e /> }.into_any(),
            Ok((t, request, group)) => {
                let unit = ValueUnit::for_event_type(&request.profile_event_type);
                view! {
                    <TimelineChart timeline=t.clone() unit=unit
                        on_range=Callback::new(move |(a, b)| nav.open_range(a, b))
                        on_baseline=Callback::new(move |range| nav.compare_with(BaselineSpec {
                            time_range: Some(range),
                            ..BaselineSpec::default()
                        }))
                        baseline=Signal::derive(move || nav.baseline.with(|b| b.as_ref().and_then(|b| b.time_range))) />
                    <Legend nav=nav timeline=t unit=unit group=group language=request.profile_language_type.clone() />
                }.into_any()
            }
        })}
    }
}

/// The groupings offered: the common ones, `app_service` where it breaks the chart down, then
/// the tags present in the range.
fn group_options(
    nav: Navigator,
    shown: Signal<Option<(String, ProfileRequest)>>,
    tags: Option<Vec<String>>,
) -> Vec<String> {
    let mut names: Vec<String> = COMMON_GROUPS.iter().map(|s| (*s).to_owned()).collect();
    let every_service = shown.with(|s| s.as_ref().is_some_and(|(_, r)| r.app_service.is_none()));
    if nav.is_whole_host() || every_service {
        names.insert(0, "app_service".into());
    }
    names.extend(tags.unwrap_or_default());
    let mut seen = std::collections::HashSet::new();
    names.retain(|n| seen.insert(n.clone()));
    names
}

/// The row above the chart: back to every service, grouping, zoom out, the scale.
#[component]
fn TimelineTools(
    nav: Navigator,
    shown: Signal<Option<(String, ProfileRequest)>>,
    group_by: RwSignal<String>,
    charted: Signal<Charted>,
) -> impl IntoView {
    let tags = fetched(move || {
        let shown = shown.get();
        async move {
            let (base, r) = shown?;
            let req = TagsRequest {
                time_start: r.time_start,
                time_end: r.time_end,
                app_service: r.app_service.clone(),
                profile_language_type: Some(r.profile_language_type.clone()),
                profile_event_type: Some(r.profile_event_type.clone()),
            };
            explore::tag_names(&base, &req).await
        }
    });
    let options = move || group_options(nav, shown, tags.get().flatten());
    let zoom_out = move |_| {
        if let Some((_, r)) = shown.get_untracked() {
            let (a, b) = zoomed_out(r.time_start, r.time_end);
            nav.open_range(a, b);
        }
    };
    view! {
        <div class="timeline-tools">
            {move || shown.with(|s| s.as_ref().is_some_and(|(_, r)| r.app_service.is_some())).then(|| view! {
                <button type="button" class="ghost small" data-testid="all-services"
                    title="Every service in this range" on:click=move |_| nav.open_all_services()>"‹ All services"</button>
            })}
            <label class="check">"Group by"
                // Each option says whether it is the chosen one: the options arrive with the
                // tag list, after the select's value was set, which would then show "none".
                <select data-testid="group-by" prop:value=move || group_by.get()
                    on:change=move |e| group_by.set(event_target_value(&e))>
                    <option value="" prop:selected=move || group_by.with(String::is_empty)>"none"</option>
                    {move || options().into_iter().map(|n| {
                        let (chosen, label) = (n.clone(), n.clone());
                        view! { <option value=n prop:selected=move || group_by.with(|g| *g == chosen)>{label}</option> }
                    }).collect_view()}
                </select>
            </label>
            <button type="button" class="ghost small" data-testid="timeline-zoom-out"
                title="Twice the range around the same middle" on:click=zoom_out>"Zoom out"</button>
            <span class="timeline-hint">"Drag to zoom into a range · Shift+drag to compare with one"</span>
            <span class="spacer"></span>
            <span class="timeline-scale" data-testid="timeline-scale">{move || scale_text(charted.get())}</span>
        </div>
    }
}

/// `CPU time per 30 s · peak 1.2 s`: what one bar is, and the top of the scale.
fn scale_text(data: Charted) -> String {
    let Some(Ok((t, request, _))) = data else {
        return String::new();
    };
    let unit = ValueUnit::for_event_type(&request.profile_event_type);
    let peak = t.stacked_totals().into_iter().max().unwrap_or(0);
    // An instant's bar is its processes' latest uploads in the bucket, not a sum over it.
    let per = if is_instant(&request.profile_event_type) {
        "at the end of each"
    } else {
        "per"
    };
    format!(
        "{} {per} {} · peak {}",
        measure_name(&request.profile_event_type),
        format_interval(t.interval),
        format_value(peak, unit)
    )
}

fn format_interval(secs: i64) -> String {
    match secs {
        s if s % 3600 == 0 => format!("{} h", s / 3600),
        s if s % 60 == 0 => format!("{} min", s / 60),
        s => format!("{s} s"),
    }
}

#[component]
fn TimelineError(failure: ApiFailure) -> impl IntoView {
    view! { <div class="timeline-error" data-testid="timeline-error">{format!("No timeline: {failure}")}</div> }
}

/// One entry per group: its colour, name and total; a click narrows the query to it.
#[component]
fn Legend(
    nav: Navigator,
    timeline: Timeline,
    unit: ValueUnit,
    group: String,
    language: String,
) -> impl IntoView {
    if group.is_empty() {
        return ().into_any();
    }
    let theme = theme_state();
    let items = timeline.series.into_iter().enumerate().map(|(rank, s)| {
        let name = s.name.unwrap_or_default();
        let other = name == OTHER_GROUP;
        let color = move || series_color(rank, other, theme.palette.get()).css();
        let label = if name.is_empty() { "(none)".to_owned() } else { name.clone() };
        let (dim, value, language) = (group.clone(), name.clone(), language.clone());
        let narrow = move |_| narrow_to(nav, &dim, &value, &language);
        view! {
            <li>
                <button type="button" class="legend-item" data-testid="legend-item" data-group=name.clone()
                    prop:disabled=other || name.is_empty() on:click=narrow
                    title="Show only this group">
                    <span class="swatch" style:background=color></span>
                    <span class="legend-name">{label}</span>
                    <span class="legend-value">{format_value(s.total, unit)}</span>
                </button>
            </li>
        }
    });
    view! {
        <ul class="timeline-legend" data-testid="timeline-legend" data-dimension=group.clone()>{items.collect_view()}</ul>
    }
        .into_any()
}

/// Narrows the query to one group: a tag becomes a filter condition; a process opens its own
/// profile in the chart's language (as a filter condition it would select nothing: the whole
/// host's samples are all `app_service = 'Total'`, and home's list would shrink to one row); a
/// thread, which no filter can name, focuses the graph on it.
fn narrow_to(nav: Navigator, dimension: &str, value: &str, language: &str) {
    match dimension {
        "app_service" => nav.open_service(value, language),
        THREAD => nav.runner.view.transforms.update(|ts| {
            ts.retain(|t| !matches!(t, Transform::Focus(_)));
            ts.push(Transform::Focus(value.to_owned()));
        }),
        tag => nav.add_condition(tag, value),
    }
}
