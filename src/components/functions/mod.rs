//! The home view's Functions and What grew lists: the fleet's hottest functions (self or
//! total, a filter box, the services each runs in as chips), or the functions whose growth
//! inside the services costs the fleet most against the previous period or the same time
//! yesterday (red grew, blue shrank, as in a comparison), each with how sure the change is,
//! and the processes new or gone since listed apart. A row opens the service's flame graph
//! (or comparison) with the function selected; a chip opens that service.
//!
//! An on-demand view (`crate::on_demand`): the page carries only its host ([`page`]); the
//! lists are built into their own module (`src/bin/functions_view.rs`, [`module`]), which the
//! page loads the first time a user opens one of these tabs. [`interface`] is all the two
//! sides say to each other.

pub mod interface;
pub mod module;
pub mod page;

use embers_model::contract::explore::{
    FunctionMetric, FunctionRow, FunctionsAnswer, PlaceValue, ProcessShift,
};
use embers_model::view::color::{diff_color, Palette};
use embers_model::view::format::{format_percent, format_value, ValueUnit};
use embers_model::view::names::shorten;
use leptos::prelude::*;

use interface::FunctionsEvent;

use crate::components::rows::move_focus;
use crate::session::explore::ApiFailure;
use crate::session::explore::HomeQuery;
use crate::session::functions::{functions, functions_question, Against, HomeList, HomeTab};
use crate::state::fetched::fetched;

/// Rows asked for at a time ("More" asks for as many again, up to the service's 1,000).
const PAGE: usize = 100;

/// The Functions or What grew list of the home view's question, in `language`, as `tab`
/// says (its controls write it); a row or chip asks `open` to open what it names.
#[component]
pub fn FunctionsPanel(
    tab: RwSignal<HomeTab>,
    #[prop(into)] query: Signal<HomeQuery>,
    #[prop(into)] language: Signal<String>,
    #[prop(into)] palette: Signal<Palette>,
    open: Callback<FunctionsEvent>,
) -> impl IntoView {
    let pages = RwSignal::new(1usize);
    let data = fetched(move || {
        let (t, q, lang) = (tab.get(), query.get(), language.get());
        let mut ask = functions_question(&q, &lang, &t, 0);
        ask.limit = Some((pages.get() * PAGE).min(1000) as i64);
        async move {
            let answer = functions(&q.base_url, &ask).await;
            (t, q, lang, answer)
        }
    });
    view! {
        <Controls tab=tab />
        {move || match data.get() {
            None => view! { <p class="home-note">"Loading functions…"</p> }.into_any(),
            Some((_, _, _, Err(e))) => view! { <FunctionsError failure=e /> }.into_any(),
            Some((t, query, language, Ok(a))) => {
                let event = query.services.profile_event_type.as_deref().unwrap_or("");
                let unit = ValueUnit::for_event_type(event);
                let ctx = Ctx { open, palette, language, unit, tab: t };
                view! { <Rows ctx=ctx answer=a pages=pages /> }.into_any()
            }
        }}
    }
}

/// What every row needs.
#[derive(Clone)]
struct Ctx {
    open: Callback<FunctionsEvent>,
    palette: Signal<Palette>,
    language: String,
    unit: ValueUnit,
    tab: HomeTab,
}

/// Self / total, the filter box and (What grew) the baseline.
#[component]
fn Controls(tab: RwSignal<HomeTab>) -> impl IntoView {
    let metric = move || tab.with(HomeTab::metric);
    let set_metric = move |m| tab.update(|t| t.metric = Some(m));
    let grew = move || tab.with(|t| t.list == HomeList::Grew);
    let against = move |a: Against| {
        view! {
            <button type="button" aria-pressed=move || (tab.with(|t| t.against) == a).to_string()
                data-testid=if a == Against::Yesterday { "against-yesterday" } else { "against-previous" }
                on:click=move |_| tab.update(|t| t.against = a)>
                {if a == Against::Yesterday { "vs same time yesterday" } else { "vs previous period" }}
            </button>
        }
    };
    view! {
        <div class="fn-controls">
            <span class="seg" role="group" aria-label="Rank by">
                <button type="button" data-testid="fn-metric-self"
                    aria-pressed=move || (metric() == FunctionMetric::SelfValue).to_string()
                    on:click=move |_| set_metric(FunctionMetric::SelfValue)>"Self"</button>
                <button type="button" data-testid="fn-metric-total"
                    aria-pressed=move || (metric() == FunctionMetric::Total).to_string()
                    on:click=move |_| set_metric(FunctionMetric::Total)>"Total"</button>
            </span>
            {move || grew().then(|| view! { <span class="seg" role="group" aria-label="Compare with">{against(Against::PreviousPeriod)}{against(Against::Yesterday)}</span> })}
            <span class="spacer"></span>
            <input type="search" class="service-filter" data-testid="function-filter"
                placeholder="Filter functions" aria-label="Filter functions"
                prop:value=move || tab.with(|t| t.search.clone())
                on:input=move |e| { let v = event_target_value(&e); tab.update(|t| t.search = v); } />
        </div>
    }
}

#[component]
fn FunctionsError(failure: ApiFailure) -> impl IntoView {
    view! {
        <div class="error" role="alert" data-testid="error">
            <strong>"Could not list functions. "</strong><span>{failure.to_string()}</span>
        </div>
    }
}

/// The rows, the coverage note of an upstream answer, and how many there are.
#[component]
fn Rows(ctx: Ctx, answer: FunctionsAnswer, pages: RwSignal<usize>) -> impl IntoView {
    let grew = ctx.tab.list == HomeList::Grew;
    let scale = answer
        .values
        .iter()
        .filter_map(|r| r.change)
        .fold(0.0f64, |m, c| m.max(c.abs()))
        .max(1e-9);
    let shifts = grew.then(|| {
        view! {
            <Shifted list=answer.new_processes.clone().unwrap_or_default() unit=ctx.unit
                label="New since the baseline (not counted as growth): " testid="grew-new" />
            <Shifted list=answer.vanished_processes.clone().unwrap_or_default() unit=ctx.unit
                label="Gone since the baseline: " testid="grew-vanished" />
        }
    });
    let more = (answer.values.len() as u64) < answer.rows && answer.values.len() < 1000;
    let count = format!("{} of {} functions", answer.values.len(), answer.rows);
    let coverage = answer.coverage.clone().map(|c| {
        view! {
            <p class="coverage" data-testid="functions-coverage">{c.note}</p>
        }
    });
    if answer.values.is_empty() {
        let why = if ctx.tab.search.trim().is_empty() {
            "No functions in this range."
        } else {
            "No function matches the filter."
        };
        return view! { {coverage}<p class="home-note" data-testid="functions-empty">{why}</p> }
            .into_any();
    }
    let all = answer.value;
    let rows = answer
        .values
        .into_iter()
        .map(|r| view! { <li><FunctionRowView ctx=ctx.clone() row=r all=all scale=scale grew=grew /></li> })
        .collect_view();
    view! {
        {coverage}
        <ol class="service-list fn-list" data-testid=if grew { "grew-list" } else { "function-list" } on:keydown=move_focus>{rows}</ol>
        {shifts}
        <p class="table-count">{count}" "
            {more.then(|| view! { <button type="button" class="ghost small" data-testid="functions-more"
                on:click=move |_| pages.update(|p| *p += 1)>"More"</button> })}
        </p>
    }
    .into_any()
}

/// Characters of a function's name a row shows: what the name column holds at 1100 px.
const NAME_CHARS: usize = 46;

/// One function: its row (opens the busiest or most grown service), then its services.
#[component]
fn FunctionRowView(ctx: Ctx, row: FunctionRow, all: u64, scale: f64, grew: bool) -> impl IntoView {
    let metric = ctx.tab.metric();
    let value = if metric == FunctionMetric::Total {
        row.total
    } else {
        row.self_value
    };
    // What grew opens the service where the function grew most; Functions its busiest.
    let first = match grew {
        true => most_grown(&row.places),
        false => row.places.first(),
    }
    .map(|p| p.app_service.clone())
    .unwrap_or_default();
    let (open_to, language, name) = (ctx.open, ctx.language.clone(), row.function.clone());
    let open_row = FunctionsEvent::open_row(grew, &first, &language, &name, ctx.tab.against);
    let open = move |_| open_to.run(open_row.clone());
    let change = row.change.unwrap_or(0.0);
    let (word, sure_title) = confidence(&row);
    let palette = ctx.palette;
    let color = move || diff_color(change / scale, palette.get()).css();
    let fraction = match grew {
        true => (change.abs() / scale).min(1.0),
        false => (value as f64 / all.max(1) as f64).min(1.0),
    };
    let shown = shorten(&name, NAME_CHARS).map_or_else(String::new, |s| s.into_owned());
    let title = match grew {
        true => format!("Compare {first} with the baseline, {name} selected"),
        false => format!("Open the flame graph of {first} with {name} selected"),
    };
    let chips = row.places.iter().map(|p| {
        let (app, language) = (p.app_service.clone(), ctx.language.clone());
        let label = match &p.group {
            Some(g) => format!("{} · {}", p.app_service, if g.is_empty() { "(none)" } else { g }),
            None => p.app_service.clone(),
        };
        view! {
            <button type="button" class="chip" data-testid="place-chip" data-app-service=p.app_service.clone()
                title=format!("Open {}", p.app_service)
                on:click=move |_| open_to.run(FunctionsEvent::OpenService { app_service: app.clone(), language: language.clone() })>{label}</button>
        }
    }).collect_view();
    let extra = row.place_count.saturating_sub(row.places.len() as u64);
    view! {
        <button type="button" class=if grew { "service-row fn-row fn-grew" } else { "service-row fn-row" } data-testid="function-row" data-function=name.clone()
            data-app-service=first.clone() title=title on:click=open>
            // Seen shortened from the front (the function's own name stays), read out whole.
            <span class="svc-name"><span aria-hidden="true" data-testid="function-name">{shown}</span><span class="sr-only">{name.clone()}</span></span>
            {match grew {
                true => view! {
                    <span class="fn-change" data-testid="function-change" style:color=color
                        title="Points of the fleet's CPU: the change inside each service on both sides, weighed by its share">{format!("{:+.1} pp", change)}</span>
                    <span class="fn-sure" data-testid="function-confidence" data-z=row.z.map(|z| format!("{z:.1}"))
                        title=sure_title>{word}</span>
                    <span class="svc-pct">{first.clone()}</span>
                }.into_any(),
                false => view! {
                    <span class="svc-value">{format_value(value, ctx.unit)}</span>
                    <span class="svc-pct">{format_percent(value, all)}</span>
                }.into_any(),
            }}
            <span class="svc-share"><span class="svc-bar" style:width=format!("{:.1}%", fraction * 100.0)
                style:background=move || grew.then(color)></span></span>
        </button>
        <span class="fn-places">{chips}{(extra > 0).then(|| view! { <span class="more">{format!("+{extra}")}</span> })}</span>
    }
}

/// The place whose own share of the function grew most (the first when none has a change).
fn most_grown(places: &[PlaceValue]) -> Option<&PlaceValue> {
    places
        .iter()
        .filter(|p| p.change.is_some())
        .max_by(|a, b| a.change.unwrap_or(0.0).total_cmp(&b.change.unwrap_or(0.0)))
        .or_else(|| places.first())
}

/// How sure a row's change is, as a word and its explanation: `sure` when the significance
/// rule calls it a change, `likely` at |z| >= 2, `noise` below.
fn confidence(row: &FunctionRow) -> (&'static str, String) {
    let Some(z) = row.z else {
        return ("", String::new());
    };
    let word = match row.significant {
        Some(true) => "sure",
        _ if z.abs() >= 2.0 => "likely",
        _ => "noise",
    };
    (
        word,
        format!("z = {z:.1}: a change when |z| ≥ 3 on 20 samples or more"),
    )
}

/// Processes on one side only (new, or gone), listed apart from what grew: each with its
/// value and its largest functions in its title.
#[component]
fn Shifted(
    list: Vec<ProcessShift>,
    unit: ValueUnit,
    label: &'static str,
    testid: &'static str,
) -> impl IntoView {
    if list.is_empty() {
        return ().into_any();
    }
    let items = list
        .into_iter()
        .take(12)
        .map(|p| {
            let functions: Vec<&str> = p.functions.iter().map(|f| f.function.as_str()).collect();
            let title = format!("{}: {}", p.app_service, functions.join(", "));
            view! {
                <span class="chip" data-testid="shifted-process" data-app-service=p.app_service.clone()
                    title=title>{format!("{} {} ({:.1}%)", p.app_service, format_value(p.value, unit), p.share)}</span>
            }
        })
        .collect_view();
    view! { <p class="home-note fn-shifted" data-testid=testid>{label}{items}</p> }.into_any()
}
