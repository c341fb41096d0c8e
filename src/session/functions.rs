//! The fleet's functions as the page asks for them: the home view's tabs (services, the
//! hottest functions, what grew) with their URL form, the questions behind the Functions and
//! What grew lists, and a selected function's timeline under a flame graph. Components ask
//! here, never the network layer.

use embers_model::contract::explore::{
    FunctionMetric, FunctionOrder, FunctionTimelineAnswer, FunctionTimelineRequest,
    FunctionsAnswer, FunctionsRequest, TimelineRequest,
};
use embers_model::contract::request::ProfileRequest;
use serde::{Deserialize, Serialize};

use crate::net::api::{self, ApiFailure};
use crate::session::compare::BaselineSpec;
use crate::session::explore::HomeQuery;

/// Which list the home view shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HomeList {
    /// Every service, busiest first.
    #[default]
    Services,
    /// The fleet's hottest functions.
    Functions,
    /// The functions that grew most against a baseline.
    Grew,
}

/// What "What grew" compares the range with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Against {
    /// The range of the same length just before.
    #[default]
    PreviousPeriod,
    /// The same range a day earlier.
    Yesterday,
}

/// The home view's tab and its choices, all in the URL (`home`, `fn_metric`, `fn_search`,
/// `against`); also the Functions view's input (`components::functions::interface`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HomeTab {
    /// The list shown.
    pub list: HomeList,
    /// Self or total (What grew defaults to total: the change of a caller's whole path).
    pub metric: Option<FunctionMetric>,
    /// The Functions filter box (sent to the service).
    pub search: String,
    /// What grew's baseline.
    pub against: Against,
}

impl HomeTab {
    /// The metric the tab's list uses.
    pub fn metric(&self) -> FunctionMetric {
        self.metric.unwrap_or(match self.list {
            HomeList::Grew => FunctionMetric::Total,
            _ => FunctionMetric::SelfValue,
        })
    }

    /// The URL parameters (only what differs from the default).
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        match self.list {
            HomeList::Services => return out,
            HomeList::Functions => out.push(("home", "functions".into())),
            HomeList::Grew => out.push(("home", "grew".into())),
        }
        if let Some(m) = self.metric {
            let word = if m == FunctionMetric::Total {
                "total"
            } else {
                "self"
            };
            out.push(("fn_metric", word.into()));
        }
        if !self.search.is_empty() {
            out.push(("fn_search", self.search.clone()));
        }
        if self.against == Against::Yesterday {
            out.push(("against", "yesterday".into()));
        }
        out
    }

    /// Reads [`HomeTab::to_params`]' form; unknown values are ignored.
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> HomeTab {
        let mut tab = HomeTab::default();
        for (k, v) in params {
            match (k, v) {
                ("home", "functions") => tab.list = HomeList::Functions,
                ("home", "grew") => tab.list = HomeList::Grew,
                ("fn_metric", "total") => tab.metric = Some(FunctionMetric::Total),
                ("fn_metric", "self") => tab.metric = Some(FunctionMetric::SelfValue),
                ("fn_search", s) => tab.search = s.to_owned(),
                ("against", "yesterday") => tab.against = Against::Yesterday,
                _ => {}
            }
        }
        tab
    }
}

/// The baseline of What grew for `home`'s range.
pub fn baseline_of(home: &HomeQuery, against: Against) -> BaselineSpec {
    let range = ProfileRequest {
        time_start: home.services.time_start,
        time_end: home.services.time_end,
        ..ProfileRequest::default()
    };
    match against {
        Against::PreviousPeriod => BaselineSpec::previous_period(&range),
        Against::Yesterday => BaselineSpec::same_time_yesterday(&range),
    }
}

/// The home view's functions question in `language` (the chart's): the hottest functions, or
/// what grew most against the tab's baseline, by what it costs the fleet.
pub fn functions_question(
    home: &HomeQuery,
    language: &str,
    tab: &HomeTab,
    offset: usize,
) -> FunctionsRequest {
    let s = &home.services;
    let mut q = FunctionsRequest {
        time_start: s.time_start,
        time_end: s.time_end,
        profile_event_type: s.profile_event_type.clone().unwrap_or_default(),
        profile_language_type: Some(language.to_owned()),
        tag_filter: s.tag_filter.clone(),
        metric: Some(tab.metric()),
        search: Some(tab.search.trim().to_owned()).filter(|t| !t.is_empty()),
        offset: (offset > 0).then_some(offset as i64),
        ..FunctionsRequest::default()
    };
    if tab.list == HomeList::Grew {
        let range = baseline_of(home, tab.against).time_range;
        q.baseline_time_start = range.map(|r| r.0);
        q.baseline_time_end = range.map(|r| r.1);
        // By what a change costs the fleet: the change inside each process present on both
        // sides, weighed by its share (new and vanished processes come apart in the answer).
        q.order_by = Some(FunctionOrder::Change);
    }
    q
}

/// The hottest functions (or what grew).
pub async fn functions(base: &str, req: &FunctionsRequest) -> Result<FunctionsAnswer, ApiFailure> {
    api::functions(base, req).await
}

/// The timeline of `function` over `request`'s samples, grouped by `group_by` (none when
/// empty).
pub fn function_timeline_question(
    request: &ProfileRequest,
    function: &str,
    group_by: &str,
) -> FunctionTimelineRequest {
    let mut profile = request.clone();
    profile.max_kernel_stack_depth = None;
    FunctionTimelineRequest {
        timeline: TimelineRequest {
            profile,
            interval: None,
            group_by: (!group_by.is_empty()).then(|| group_by.to_owned()),
            group_limit: None,
        },
        function: function.to_owned(),
    }
}

/// One function's self and total over time.
pub async fn function_timeline(
    base: &str,
    req: &FunctionTimelineRequest,
) -> Result<FunctionTimelineAnswer, ApiFailure> {
    api::function_timeline(base, req).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::explore::{parse_functions_body, ServicesRequest};

    fn home() -> HomeQuery {
        HomeQuery {
            base_url: String::new(),
            services: ServicesRequest {
                time_start: 10_000,
                time_end: 13_599,
                profile_event_type: Some("on-cpu".into()),
                tag_filter: "pod='a'".into(),
                ..ServicesRequest::default()
            },
            relative: true,
        }
    }

    #[test]
    fn tabs_round_trip_through_the_url() {
        let tab = HomeTab {
            list: HomeList::Grew,
            metric: Some(FunctionMetric::SelfValue),
            search: "json".into(),
            against: Against::Yesterday,
        };
        let params = tab.to_params();
        let back = HomeTab::from_params(params.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, tab);
        assert!(HomeTab::default().to_params().is_empty());
        assert_eq!(HomeTab::from_params([("home", "nope")]), HomeTab::default());
    }

    #[test]
    fn questions_are_what_the_service_reads() {
        let tab = HomeTab {
            list: HomeList::Functions,
            search: " Dict ".into(),
            ..HomeTab::default()
        };
        let q = functions_question(&home(), "eBPF", &tab, 100);
        let read = parse_functions_body(&serde_json::to_vec(&q).unwrap()).unwrap();
        assert_eq!((read.offset, read.search.as_deref()), (100, Some("dict")));
        assert_eq!(read.metric, FunctionMetric::SelfValue);
        assert!(read.baseline.is_none());
        let grew = HomeTab {
            list: HomeList::Grew,
            ..HomeTab::default()
        };
        let read = parse_functions_body(
            &serde_json::to_vec(&functions_question(&home(), "eBPF", &grew, 0)).unwrap(),
        )
        .unwrap();
        assert_eq!(read.order, FunctionOrder::Change);
        assert_eq!(read.metric, FunctionMetric::Total, "What grew by total");
        let b = read.baseline.expect("a baseline");
        assert_eq!(
            (b.time_start, b.time_end),
            (6_400, 9_999),
            "the hour before"
        );
        let yesterday = baseline_of(&home(), Against::Yesterday).time_range;
        assert_eq!(yesterday, Some((10_000 - 86_400, 13_599 - 86_400)));
    }
}
