//! The explore questions the page asks the service — which services burn CPU in a range, a
//! selection's values over time, the tags and tag values present — asked through
//! [`crate::net::api`] and shaped the way the home view, the timeline and the form's suggestions
//! use them. Components ask here, never the network layer.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Poll, Waker};

use embers_model::contract::envelope::Table;
use embers_model::contract::event::TOTAL_APP_SERVICE;
use embers_model::contract::explore::{
    ServiceRow, ServicesRequest, TagValuesRequest, TagsRequest, TimelineAnswer, TimelineRequest,
};
use embers_model::contract::request::ProfileRequest;
use embers_model::view::timeline::Timeline;
use leptos::prelude::Get;
use leptos::task::spawn_local;

use crate::net::api;
pub use crate::net::api::ApiFailure;
use crate::session::form::FormState;
use crate::session::time::{now_secs, parse_local};

/// Most services a sparkline question names (the timeline keeps at most 50 groups by name).
const SPARKLINE_SERVICES: i64 = 50;

/// The home view's question: every service in a range.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HomeQuery {
    /// Where the service is (empty: this page's origin).
    pub base_url: String,
    /// The range, event type and filter (no language: home lists every language).
    pub services: ServicesRequest,
    /// Whether the range is relative to now (then links do not pin it).
    pub relative: bool,
}

/// The services question of a request: its range, event type and filter, any language — home
/// shows every service, whatever language the form names.
pub fn services_question(r: &ProfileRequest) -> ServicesRequest {
    ServicesRequest {
        time_start: r.time_start,
        time_end: r.time_end,
        profile_language_type: None,
        profile_event_type: Some(r.profile_event_type.clone()),
        tag_filter: r.tag_filter.clone(),
    }
}

/// An answer to a services question.
pub type ServicesAnswer = Result<Table<ServiceRow>, ApiFailure>;

/// A services answer on its way (or in), shared by everyone who asked the same question.
#[derive(Default)]
struct Slot {
    answer: Option<ServicesAnswer>,
    waiting: Vec<Waker>,
}

/// A question (base URL and body) and its slot.
type Asked = (String, ServicesRequest, Rc<RefCell<Slot>>);

thread_local! {
    /// The last services question asked, and its answer (or the request on its way).
    static LAST: RefCell<Option<Asked>> = const { RefCell::new(None) };
}

/// Every service in a range, busiest first. A question already on its way is joined, not asked
/// twice (the job of `futures`' `Shared`, see [`all`] for why it is not used); with `reuse_answer` an answer already in for the same question is reused too (the
/// suggestions; the home view asks afresh, so pressing Query again shows new samples).
pub async fn services(base: &str, req: &ServicesRequest, reuse_answer: bool) -> ServicesAnswer {
    let slot = LAST.with(|last| {
        let mut last = last.borrow_mut();
        let reusable = last.as_ref().filter(|(b, r, slot)| {
            b == base
                && r == req
                && match &slot.borrow().answer {
                    None => true,
                    Some(answer) => reuse_answer && answer.is_ok(),
                }
        });
        if let Some((_, _, slot)) = reusable {
            return Rc::clone(slot);
        }
        let slot = Rc::new(RefCell::new(Slot::default()));
        spawn_local(ask_services(base.to_owned(), req.clone(), Rc::clone(&slot)));
        *last = Some((base.to_owned(), req.clone(), Rc::clone(&slot)));
        slot
    });
    poll_fn(|cx| {
        let mut slot = slot.borrow_mut();
        match &slot.answer {
            Some(answer) => Poll::Ready(answer.clone()),
            None => {
                slot.waiting.push(cx.waker().clone());
                Poll::Pending
            }
        }
    })
    .await
}

/// Asks a services question and hands the answer to everyone waiting for it.
async fn ask_services(base: String, req: ServicesRequest, slot: Rc<RefCell<Slot>>) {
    let answer = api::services(&base, &req).await;
    let waiting = {
        let mut slot = slot.borrow_mut();
        slot.answer = Some(answer);
        std::mem::take(&mut slot.waiting)
    };
    for waker in waiting {
        waker.wake();
    }
}

/// The outputs of `futures`, in order, run side by side: `futures::future::join_all` for the
/// few sparkline questions. Written here because the `futures` crate (its `join_all` and
/// `Shared`, the shape of this file's two helpers) cost 7.3 KB brotli in the page, measured
/// 2026-11-23; the unit tests check it against `join_all` itself.
async fn all<F: Future>(futures: Vec<F>) -> Vec<F::Output> {
    let mut futures: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = futures.iter().map(|_| None).collect();
    poll_fn(|cx| {
        let mut done = true;
        for (future, output) in futures.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(cx) {
                    Poll::Ready(v) => *output = Some(v),
                    Poll::Pending => done = false,
                }
            }
        }
        if done {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

/// The event types with data in `[time_start, time_end]` (any process, language or tag), for
/// the form's event list; none when the service cannot say.
pub async fn event_types(base: &str, time_start: i64, time_end: i64) -> Vec<String> {
    let request = ServicesRequest {
        time_start,
        time_end,
        profile_language_type: None,
        profile_event_type: None,
        tag_filter: String::new(),
    };
    let mut out: Vec<String> = Vec::new();
    for row in api::services(base, &request)
        .await
        .map(|t| t.values)
        .unwrap_or_default()
    {
        if !out.contains(&row.profile_event_type) {
            out.push(row.profile_event_type);
        }
    }
    out
}

/// The services question of the process field's suggestions: the home view's own while the
/// form still names what home shows (so both share one request), else the form's range, event
/// type and filter; `None` until the range is valid. Reads the form's signals, so a caller
/// asks again when they change.
pub fn suggestions_question(
    form: FormState,
    home: Option<HomeQuery>,
) -> Option<(String, ServicesRequest)> {
    let base = form.base_url.get();
    let (event, filter) = (form.event_type.get(), form.tag_filter.get());
    let (preset, start, end) = (
        form.preset.get(),
        form.time_start.get(),
        form.time_end.get(),
    );
    let (time_start, time_end) = form.peek_range();
    let shown = home.filter(|h| {
        let s = &h.services;
        let same_range = if h.relative {
            preset.parse::<i64>() == Ok(s.time_end - s.time_start)
        } else {
            !form.is_relative()
                && (parse_local(&start), parse_local(&end))
                    == (Some(s.time_start), Some(s.time_end))
        };
        h.base_url == base
            && s.profile_event_type.as_deref() == Some(event.as_str())
            && s.tag_filter == filter.trim()
            && same_range
    });
    if let Some(h) = shown {
        return Some((h.base_url, h.services));
    }
    let question = ServicesRequest {
        time_start,
        time_end,
        profile_language_type: None,
        profile_event_type: Some(event),
        tag_filter: filter.trim().to_owned(),
    };
    (time_start > 0 && time_start <= time_end).then_some((base, question))
}

/// Whether the store holds no profile at all (any process, language or event type, from 1970 to
/// a year ahead — an end every store takes as a time): what an empty home view says besides
/// "nothing in this range". Over all time is cheap: the service sums it from its hourly rollup.
pub async fn store_is_empty(base: &str) -> Result<bool, ApiFailure> {
    let every = ServicesRequest {
        time_start: 1,
        time_end: now_secs() + 366 * 24 * 3600,
        ..ServicesRequest::default()
    };
    Ok(api::services(base, &every).await?.values.is_empty())
}

/// A selection's values over time.
pub async fn timeline(base: &str, req: &TimelineRequest) -> Result<TimelineAnswer, ApiFailure> {
    api::timeline(base, req).await
}

/// Names of the tags present (`None` when the service could not say).
pub async fn tag_names(base: &str, req: &TagsRequest) -> Option<Vec<String>> {
    let found = api::tags(base, req).await.ok()?;
    Some(found.values.into_iter().map(|v| v.value).collect())
}

/// Values of one tag (none when the service could not say).
pub async fn tag_values(base: &str, req: &TagValuesRequest) -> Vec<String> {
    api::tag_values(base, req)
        .await
        .map(|t| t.values.into_iter().map(|v| v.value).collect())
        .unwrap_or_default()
}

/// The process names of a services answer, each once, busiest first: what the process field
/// suggests. `Total` has its own checkbox.
pub fn service_names(rows: &[ServiceRow]) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for row in rows {
        if row.app_service != TOTAL_APP_SERVICE && !names.contains(&row.app_service) {
            names.push(row.app_service.clone());
        }
    }
    names
}

/// The names starting with `typed` (ASCII case ignored), at most `limit`.
pub fn starting_with(names: &[String], typed: &str, limit: usize) -> Vec<String> {
    let typed = typed.trim().to_ascii_lowercase();
    names
        .iter()
        .filter(|n| n.to_ascii_lowercase().starts_with(&typed))
        .take(limit)
        .cloned()
        .collect()
}

/// Per service and language: its values over the home view's range, for the sparklines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sparks(Vec<(String, String, Vec<u64>)>);

impl Sparks {
    /// The values of `app_service` in `language`.
    pub fn of(&self, app_service: &str, language: &str) -> Option<&[u64]> {
        self.0
            .iter()
            .find(|(n, l, _)| n == app_service && l == language)
            .map(|(_, _, v)| v.as_slice())
    }
}

/// One sparkline question: a language's services grouped by process, or `Total`'s own.
#[derive(Clone, Debug, PartialEq)]
pub struct SparkQuestion {
    /// The language every series of the answer has.
    pub language: String,
    /// Whether this is the whole host's own (ungrouped) timeline.
    pub whole_host: bool,
    /// What is asked.
    pub request: TimelineRequest,
}

/// The timelines behind the rows' sparklines. A timeline names one language, so: one question
/// per language among the rows, grouped by process (each reads the rollup once for all of that
/// language's services — usually one or two questions, where one per row would be up to 50),
/// and the whole host's own timeline when `Total` is listed (a grouped question leaves it out).
pub fn spark_questions(q: &ServicesRequest, rows: &[ServiceRow]) -> Vec<SparkQuestion> {
    let ask = |app_service: Option<&str>, language: &str| ProfileRequest {
        app_service: app_service.map(str::to_owned),
        profile_language_type: language.to_owned(),
        profile_event_type: q.profile_event_type.clone().unwrap_or_default(),
        tag_filter: q.tag_filter.clone(),
        time_start: q.time_start,
        time_end: q.time_end,
        max_kernel_stack_depth: None,
    };
    let mut out: Vec<SparkQuestion> = Vec::new();
    for row in rows {
        let language = &row.profile_language_type;
        let whole_host = row.app_service == TOTAL_APP_SERVICE;
        if out
            .iter()
            .any(|s| s.whole_host == whole_host && &s.language == language)
        {
            continue;
        }
        let (profile, group_by, group_limit) = if whole_host {
            (ask(Some(TOTAL_APP_SERVICE), language), None, None)
        } else {
            let group = Some("app_service".to_owned());
            (ask(None, language), group, Some(SPARKLINE_SERVICES))
        };
        out.push(SparkQuestion {
            language: language.clone(),
            whole_host,
            request: TimelineRequest {
                profile,
                interval: None,
                group_by,
                group_limit,
            },
        });
    }
    out
}

/// The sparklines of `rows`, their questions asked side by side (a failed one draws none).
pub async fn sparks(base: &str, q: &ServicesRequest, rows: &[ServiceRow]) -> Sparks {
    let questions = spark_questions(q, rows);
    let answers = all(questions
        .iter()
        .map(|s| api::timeline(base, &s.request))
        .collect())
    .await;
    let mut out = Vec::new();
    for (s, answer) in questions.into_iter().zip(answers) {
        let Ok(answer) = answer else { continue };
        let t = Timeline::new(&answer, q.time_start, q.time_end);
        if s.whole_host {
            out.push((TOTAL_APP_SERVICE.to_owned(), s.language, t.stacked_totals()));
            continue;
        }
        for series in t.series {
            if let Some(name) = series.name {
                out.push((name, s.language.clone(), series.values));
            }
        }
    }
    Sparks(out)
}

/// The language the home view's chart shows (a timeline names one): the one with the most
/// value among the services listed, not counting the whole host.
pub fn busiest_language(rows: &[ServiceRow]) -> Option<String> {
    let mut sums: Vec<(&str, u64)> = Vec::new();
    for row in rows.iter().filter(|r| r.app_service != TOTAL_APP_SERVICE) {
        match sums
            .iter_mut()
            .find(|(l, _)| *l == row.profile_language_type)
        {
            Some((_, sum)) => *sum = sum.saturating_add(row.value),
            None => sums.push((row.profile_language_type.as_str(), row.value)),
        }
    }
    // The first of equal sums wins: rows come busiest first.
    let best = sums
        .iter()
        .fold(None::<(&str, u64)>, |best, &(l, v)| match best {
            Some((_, b)) if b >= v => best,
            _ => Some((l, v)),
        });
    best.map(|(l, _)| l.to_owned())
}

/// What a row's share bar measures: its value over the whole host's (`Total`) in the range, or
/// over every service's sum when the answer has no `Total` (event types without a per-host
/// graph); the whole host itself is 1.
pub fn share_base(rows: &[ServiceRow]) -> u64 {
    rows.iter()
        .find(|r| r.app_service == TOTAL_APP_SERVICE)
        .map(|r| r.value)
        .unwrap_or_else(|| rows.iter().map(|r| r.value).sum())
}

#[cfg(test)]
mod tests;
