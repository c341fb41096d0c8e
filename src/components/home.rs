//! The home view: tabs for every service, the fleet's hottest functions and what grew
//! ([`crate::components::functions`]); the services list: every service in the chosen range
//! and event type, of every language, busiest first — name, language, value with the event type's unit, its share of the whole host as a
//! percentage and a bar, and a sparkline of its timeline — with a filter box and the whole host
//! pinned on top. A click (or Enter) opens the service's flame graph in the row's language. An
//! empty list says whether the store is empty (and how to send profiles in) or only the range.

use embers_model::contract::envelope::Table;
use embers_model::contract::event::{DEFAULT_LANGUAGE, TOTAL_APP_SERVICE};
use embers_model::contract::explore::ServiceRow;
use embers_model::view::format::{format_percent, format_value, measure_name, ValueUnit};
use embers_model::view::timeline::sparkline_points;
use leptos::prelude::*;

use crate::components::export_menu::ImportButton;
use crate::components::functions::page::FunctionsView;
use crate::components::rows::move_focus;
use crate::components::timeline::HomeTimeline;
use crate::session::explore::{self, busiest_language, share_base, ApiFailure, HomeQuery, Sparks};
use crate::session::functions::HomeList;
use crate::session::navigator::Navigator;
use crate::session::time::format_span;
use crate::state::fetched::fetched;

const SPARK_W: f64 = 120.0;
const SPARK_H: f64 = 22.0;

/// The home view's question with its answer.
type Answered = (HomeQuery, Result<Table<ServiceRow>, ApiFailure>);

/// The home view.
#[component]
pub fn HomeView(nav: Navigator) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    let services = fetched(move || {
        let q = nav.home.get();
        async move {
            let q = q?;
            let answer = explore::services(&q.base_url, &q.services, false).await;
            Some((q, answer))
        }
    });
    // The sparklines need the rows' languages, so they are asked once the rows are in.
    let sparks = fetched(move || {
        let answered: Option<Answered> = services.get().flatten();
        async move {
            match answered {
                Some((q, Ok(t))) => explore::sparks(&q.base_url, &q.services, &t.values).await,
                _ => Sparks::default(),
            }
        }
    });
    // The chart names one language: the busiest of the list (the default for an empty one),
    // once the answer to this very question is in, so it is asked once per question.
    let chart_language = Signal::derive(move || {
        let home = nav.home.get();
        services.with(|s| match s {
            Some(Some((q, Ok(t)))) if home.as_ref() == Some(q) => {
                Some(busiest_language(&t.values).unwrap_or_else(|| DEFAULT_LANGUAGE.to_owned()))
            }
            _ => None,
        })
    });
    let heading = move || {
        nav.home.with(|q| {
            q.as_ref().map_or_else(String::new, |q| {
                let s = &q.services;
                let event = s.profile_event_type.as_deref().unwrap_or("");
                format!(
                    "{} · {}",
                    format_span(s.time_start, s.time_end),
                    measure_name(event)
                )
            })
        })
    };
    let list = Memo::new(move |_| nav.home_tab.with(|t| t.list));
    view! {
        <section class="home" data-testid="home" aria-label="Services">
            <div class="home-head">
                <Tabs nav=nav />
                <span class="home-range" data-testid="home-range">{heading}</span>
                <span class="spacer"></span>
                {move || (list.get() == HomeList::Services).then(|| view! {
                    <input type="search" class="service-filter" data-testid="service-filter"
                        placeholder="Filter services" aria-label="Filter services"
                        prop:value=move || filter.get() on:input=move |e| filter.set(event_target_value(&e)) />
                })}
                <ImportButton view=nav.runner.view />
            </div>
            <div class="home-chart"><HomeTimeline nav=nav language=chart_language /></div>
            {move || match (list.get(), services.get()) {
                (_, None) => view! { <p class="home-note">"Loading services…"</p> }.into_any(),
                (_, Some(None)) => view! { <p class="home-note">"Choose a time range and press Enter."</p> }.into_any(),
                (_, Some(Some((_, Err(e))))) if e.is_missing_endpoint() => {
                    nav.note_explore_missing(None);
                    view! { <p class="home-note explore-note" data-testid="explore-missing">{EXPLORE_MISSING_HOME}</p> }.into_any()
                }
                (_, Some(Some((_, Err(e))))) => view! { <HomeError failure=e /> }.into_any(),
                (HomeList::Services, Some(Some((q, Ok(table))))) => view! { <ServiceList nav=nav query=q table=table filter=filter sparks=sparks /> }.into_any(),
                (_, Some(Some((q, Ok(_))))) => {
                    let language = chart_language.get().unwrap_or_else(|| DEFAULT_LANGUAGE.to_owned());
                    view! { <FunctionsView nav=nav query=q language=language /> }.into_any()
                }
            }}
        </section>
    }
}

/// What the home view says when the service has no explore endpoints.
const EXPLORE_MISSING_HOME: &str = "This service answers profile queries only: the services \
    overview and the timeline need the Embers service (embers-server, or embers-server \
    --upstream in front of DeepFlow). Type a process name above and press Enter to see its \
    flame graph.";

/// Services, Functions, What grew: which list the home view shows.
#[component]
fn Tabs(nav: Navigator) -> impl IntoView {
    let tab = |list: HomeList, label: &'static str, testid: &'static str| {
        let chosen = move || nav.home_tab.with(|t| t.list == list);
        view! {
            <button type="button" role="tab" class="home-tab" data-testid=testid
                aria-selected=move || chosen().to_string() class:chosen=chosen
                on:click=move |_| nav.home_tab.update(|t| t.list = list)>{label}</button>
        }
    };
    view! {
        <div class="home-tabs" role="tablist" aria-label="Home">
            {tab(HomeList::Services, "Services", "home-tab-services")}
            {tab(HomeList::Functions, "Functions", "home-tab-functions")}
            {tab(HomeList::Grew, "What grew", "home-tab-grew")}
        </div>
    }
}

#[component]
fn HomeError(failure: ApiFailure) -> impl IntoView {
    view! {
        <div class="error" role="alert" data-testid="error">
            <strong>"Could not list services. "</strong><span>{failure.to_string()}</span>
        </div>
    }
}

/// The ranked rows (the whole host first), or why there are none.
#[component]
fn ServiceList(
    nav: Navigator,
    query: HomeQuery,
    table: Table<ServiceRow>,
    filter: RwSignal<String>,
    sparks: ReadSignal<Option<Sparks>, LocalStorage>,
) -> impl IntoView {
    if table.values.is_empty() {
        return view! { <EmptyHome query=query /> }.into_any();
    }
    let base = share_base(&table.values);
    let of_whole_host = table
        .values
        .iter()
        .any(|r| r.app_service == TOTAL_APP_SERVICE);
    let (mut total, rows): (Vec<ServiceRow>, Vec<ServiceRow>) = table
        .values
        .into_iter()
        .partition(|r| r.app_service == TOTAL_APP_SERVICE);
    let pinned = total.drain(..).next();
    let visible = move |name: &str| {
        let needle = filter.get().to_lowercase();
        needle.is_empty() || name.to_lowercase().contains(&needle)
    };
    let row_view = move |row: ServiceRow, whole: bool| {
        let name = row.app_service.clone();
        let show = move || visible(&name);
        let share = Share {
            base,
            of_whole_host,
        };
        view! {
            <li class:hidden=move || !show()>
                <ServiceRowView nav=nav row=row whole=whole share=share sparks=sparks />
            </li>
        }
    };
    view! {
        <ol class="service-list" data-testid="service-list" on:keydown=move_focus>
            {pinned.map(|r| row_view(r, true))}
            {rows.into_iter().map(|r| row_view(r, false)).collect_view()}
        </ol>
    }
    .into_any()
}

/// What a share bar is a share of.
#[derive(Clone, Copy)]
struct Share {
    /// The whole host's value (or every service's sum without one).
    base: u64,
    /// Whether `base` is the whole host's.
    of_whole_host: bool,
}

#[component]
fn ServiceRowView(
    nav: Navigator,
    row: ServiceRow,
    whole: bool,
    share: Share,
    sparks: ReadSignal<Option<Sparks>, LocalStorage>,
) -> impl IntoView {
    let unit = ValueUnit::for_event_type(&row.profile_event_type);
    let (name, language) = (row.app_service.clone(), row.profile_language_type.clone());
    let (open, open_language) = (name.clone(), language.clone());
    let label = if whole {
        "Whole host (Total)".to_string()
    } else {
        name.clone()
    };
    // A service may burn more than the host's eBPF total says (another language's profiler).
    let fraction = (row.value as f64 / share.base.max(1) as f64).min(1.0);
    let percent = format_percent(row.value, share.base);
    let of = if share.of_whole_host {
        "Share of the whole host (Total) in this range"
    } else {
        "Share of all services in this range"
    };
    let spark_name = name.clone();
    let spark = move || {
        sparks.get().and_then(|s| {
            s.of(&spark_name, &language)
                .map(|v| sparkline_points(v, SPARK_W, SPARK_H))
        })
    };
    let title = format!("Open the flame graph of {label} ({open_language})");
    view! {
        <button type="button" class="service-row" class:whole=whole data-testid="service-row"
            data-app-service=name.clone() data-language=row.profile_language_type.clone() title=title
            on:click=move |_| nav.open_service(&open, &open_language)>
            <span class="svc-name">{label}</span>
            <span class="svc-lang">{row.profile_language_type.clone()}</span>
            <span class="svc-value">{format_value(row.value, unit)}</span>
            <span class="svc-pct" data-testid="service-share" title=of>{percent}</span>
            <span class="svc-share" title=of>
                <span class="svc-bar" style:width=format!("{:.1}%", fraction * 100.0)></span>
            </span>
            <svg class="spark" width=SPARK_W height=SPARK_H viewBox=format!("0 0 {SPARK_W} {SPARK_H}") aria-hidden="true">
                {move || spark().map(|points| view! { <polyline points=points /> })}
            </svg>
        </button>
    }
}

/// No samples in the range: says whether the store is empty (then how to send profiles in) or
/// only this range is (then to widen it).
#[component]
fn EmptyHome(query: HomeQuery) -> impl IntoView {
    // Asked once, when the list comes back empty; until the answer is in (or when the check
    // fails) it says what is certain: nothing in this range.
    let store_empty = RwSignal::new(false);
    let base = query.base_url.clone();
    leptos::task::spawn_local(async move {
        // The view may be gone by the time the answer is in (a new question): nobody needs it.
        let answer = explore::store_is_empty(&base).await.unwrap_or(false);
        let _ = store_empty.try_set(answer);
    });
    let event = query.services.profile_event_type.unwrap_or_default();
    let filter = if query.services.tag_filter.is_empty() {
        ""
    } else {
        " with this tag filter"
    };
    let range_empty = format!(
        "No {event} profiles in this range{filter}. Widen the time range or choose another event type."
    );
    move || match store_empty.get() {
        true => view! { <EmptyStore base=query.base_url.clone() /> }.into_any(),
        false => view! {
            <div class="home-empty" data-testid="home-empty" data-empty="range">
                <p>{range_empty.clone()}</p>
            </div>
        }
        .into_any(),
    }
}

/// Nothing stored at all: say so, and how to send profiles in (the two ways of docs/guide.md).
#[component]
fn EmptyStore(base: String) -> impl IntoView {
    let origin = match base.trim().trim_end_matches('/') {
        "" => web_sys::window()
            .and_then(|w| w.location().origin().ok())
            .unwrap_or_default(),
        other => other.to_owned(),
    };
    view! {
        <div class="home-empty" data-testid="home-empty" data-empty="store">
            <p>"The store is empty: no profiles have been sent to this service yet. Send some in:"</p>
            <pre data-testid="ingest-hint">{format!(
                "perf record -F 99 -g -p \"$(pidof myapp)\" -- sleep 30\n\
                 perf script | inferno-collapse-perf > myapp.folded\n\
                 embers-server import --app-service myapp --tag host=node-a myapp.folded\n\
                 # or over HTTP:\n\
                 curl -X POST -H 'Content-Type: application/octet-stream' --data-binary @myapp.folded \\\n  \
                 '{origin}/v1/profile/ingest?app_service=myapp&profile_event_type=on-cpu&host=node-a'"
            )}</pre>
        </div>
    }
}
