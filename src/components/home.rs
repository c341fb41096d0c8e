//! The home view: every service in the chosen range, busiest first — name, language, value with
//! the event type's unit, share bar and a sparkline of its timeline — with a filter box and the
//! whole host pinned on top. A click (or Enter) opens the service's flame graph.

use embers_model::contract::envelope::Table;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{ServiceRow, TimelineRequest};
use embers_model::contract::request::ProfileRequest;
use embers_model::view::format::{format_percent, format_value, measure_name, ValueUnit};
use embers_model::view::timeline::{sparkline_points, Timeline};
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::components::export_menu::ImportButton;
use crate::components::timeline::HomeTimeline;
use crate::net::api::{self, ApiFailure};
use crate::session::navigator::{HomeQuery, Navigator};
use crate::session::time::format_span;
use crate::state::fetched::fetched;

/// Most services asked a sparkline for (the timeline keeps at most 50 groups by name).
const SPARKLINE_SERVICES: i64 = 50;
const SPARK_W: f64 = 120.0;
const SPARK_H: f64 = 22.0;

/// Per service: its values over the range, for the sparklines.
#[derive(Clone, Default)]
struct Sparks(Vec<(String, Vec<u64>)>);

impl Sparks {
    fn of(&self, name: &str) -> Option<&[u64]> {
        self.0
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

async fn load_sparks(q: HomeQuery) -> Sparks {
    let s = &q.services;
    let request = TimelineRequest {
        profile: ProfileRequest {
            app_service: None,
            profile_language_type: s.profile_language_type.clone().unwrap_or_default(),
            profile_event_type: s.profile_event_type.clone().unwrap_or_default(),
            tag_filter: s.tag_filter.clone(),
            time_start: s.time_start,
            time_end: s.time_end,
            max_kernel_stack_depth: None,
        },
        interval: None,
        group_by: Some("app_service".into()),
        group_limit: Some(SPARKLINE_SERVICES),
    };
    let Ok(answer) = api::timeline(&q.base_url, &request).await else {
        return Sparks::default();
    };
    let t = Timeline::new(&answer, s.time_start, s.time_end);
    let whole: Vec<u64> = t.stacked_totals();
    let mut out: Vec<(String, Vec<u64>)> = t
        .series
        .into_iter()
        .filter_map(|s| Some((s.name?, s.values)))
        .collect();
    out.push((TOTAL_APP_SERVICE.to_owned(), whole));
    Sparks(out)
}

/// The home view.
#[component]
pub fn HomeView(nav: Navigator) -> impl IntoView {
    let filter = RwSignal::new(String::new());
    let services = fetched(move || {
        let q = nav.home.get();
        async move {
            match q {
                Some(q) => Some(api::services(&q.base_url, &q.services).await),
                None => None,
            }
        }
    });
    let sparks = fetched(move || {
        let q = nav.home.get();
        async move {
            match q {
                Some(q) => load_sparks(q).await,
                None => Sparks::default(),
            }
        }
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
    view! {
        <section class="home" data-testid="home" aria-label="Services">
            <div class="home-head">
                <h2>"Services"</h2>
                <span class="home-range" data-testid="home-range">{heading}</span>
                <span class="spacer"></span>
                <input type="search" class="service-filter" data-testid="service-filter"
                    placeholder="Filter services" aria-label="Filter services"
                    prop:value=move || filter.get() on:input=move |e| filter.set(event_target_value(&e)) />
                <ImportButton view=nav.runner.view />
            </div>
            <div class="home-chart"><HomeTimeline nav=nav /></div>
            {move || match services.get() {
                None => view! { <p class="home-note">"Loading services…"</p> }.into_any(),
                Some(None) => view! { <p class="home-note">"Choose a time range and press Enter."</p> }.into_any(),
                Some(Some(Err(e))) => view! { <HomeError failure=e /> }.into_any(),
                Some(Some(Ok(table))) => view! { <ServiceList nav=nav table=table filter=filter sparks=sparks /> }.into_any(),
            }}
        </section>
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

/// The ranked rows (the whole host first), or how to get data in when there is none.
#[component]
fn ServiceList(
    nav: Navigator,
    table: Table<ServiceRow>,
    filter: RwSignal<String>,
    sparks: ReadSignal<Option<Sparks>, LocalStorage>,
) -> impl IntoView {
    if table.values.is_empty() {
        return view! { <EmptyStore /> }.into_any();
    }
    let (mut total, rows): (Vec<ServiceRow>, Vec<ServiceRow>) = table
        .values
        .into_iter()
        .partition(|r| r.app_service == TOTAL_APP_SERVICE);
    let sum: u64 = rows.iter().map(|r| r.value).sum();
    let top = rows.iter().map(|r| r.value).max().unwrap_or(1).max(1);
    let pinned = total.drain(..).next();
    let visible = move |name: &str| {
        let needle = filter.get().to_lowercase();
        needle.is_empty() || name.to_lowercase().contains(&needle)
    };
    let row_view = move |row: ServiceRow, whole: bool| {
        let name = row.app_service.clone();
        let show = move || visible(&name);
        view! {
            <li class:hidden=move || !show()>
                <ServiceRowView nav=nav row=row whole=whole sum=sum top=top sparks=sparks />
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

#[component]
fn ServiceRowView(
    nav: Navigator,
    row: ServiceRow,
    whole: bool,
    sum: u64,
    top: u64,
    sparks: ReadSignal<Option<Sparks>, LocalStorage>,
) -> impl IntoView {
    let unit = ValueUnit::for_event_type(&row.profile_event_type);
    let name = row.app_service.clone();
    let open = name.clone();
    let label = if whole {
        "Whole host (Total)".to_string()
    } else {
        name.clone()
    };
    let share = if whole {
        1.0
    } else {
        row.value as f64 / top as f64
    };
    let spark_name = name.clone();
    let spark = move || {
        sparks.get().and_then(|s| {
            s.of(&spark_name)
                .map(|v| sparkline_points(v, SPARK_W, SPARK_H))
        })
    };
    let title = format!("Open the flame graph of {label}");
    view! {
        <button type="button" class="service-row" class:whole=whole data-testid="service-row"
            data-app-service=name.clone() title=title
            on:click=move |_| nav.open_process(&open)>
            <span class="svc-name">{label}</span>
            <span class="svc-lang">{row.profile_language_type.clone()}</span>
            <span class="svc-value">{format_value(row.value, unit)}</span>
            <span class="svc-share" title=move || format!("{} of all services", format_percent(row.value, sum))>
                <span class="svc-bar" style:width=format!("{:.1}%", share * 100.0)></span>
            </span>
            <svg class="spark" width=SPARK_W height=SPARK_H viewBox=format!("0 0 {SPARK_W} {SPARK_H}") aria-hidden="true">
                {move || spark().map(|points| view! { <polyline points=points /> })}
            </svg>
        </button>
    }
}

/// Arrow keys move between the rows.
fn move_focus(e: leptos::ev::KeyboardEvent) {
    let forward = match e.key().as_str() {
        "ArrowDown" => true,
        "ArrowUp" => false,
        _ => return,
    };
    let Some(li) = e
        .target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .and_then(|el| el.parent_element())
    else {
        return;
    };
    let mut next = if forward {
        li.next_element_sibling()
    } else {
        li.previous_element_sibling()
    };
    while let Some(el) = next.clone().filter(|el| el.class_list().contains("hidden")) {
        next = if forward {
            el.next_element_sibling()
        } else {
            el.previous_element_sibling()
        };
    }
    if let Some(button) = next
        .and_then(|el| el.first_element_child())
        .and_then(|b| b.dyn_into::<web_sys::HtmlElement>().ok())
    {
        e.prevent_default();
        let _ = button.focus();
    }
}

/// No samples in the range: say so, and how to get profiles in.
#[component]
fn EmptyStore() -> impl IntoView {
    let origin = web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default();
    view! {
        <div class="home-empty" data-testid="home-empty">
            <p>"No profiles in this range. Widen the time range, or send some in:"</p>
            <pre>{format!(
                "perf record -F 99 -g -p \"$(pidof myapp)\" -- sleep 30\n\
                 perf script | inferno-collapse-perf > myapp.folded\n\
                 curl -X POST -H 'Content-Type: application/octet-stream' --data-binary @myapp.folded \\\n  \
                 '{origin}/v1/profile/ingest?app_service=myapp&host=node-a'"
            )}</pre>
        </div>
    }
}
