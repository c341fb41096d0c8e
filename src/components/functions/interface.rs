//! What the page and the Functions module say to each other (JSON both ways, see
//! `crate::on_demand`): the page sends [`FunctionsInput`] (again whenever it changes), the
//! module sends [`FunctionsEvent`]s.

use serde::{Deserialize, Serialize};

use crate::session::explore::HomeQuery;
use crate::session::functions::{Against, HomeTab};

/// The page's module stem and the view's name in its notes.
pub const FUNCTIONS_VIEW: crate::on_demand::ViewModule = crate::on_demand::ViewModule {
    stem: "functions_view",
    label: "Functions",
};

/// Everything the lists show depends on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionsInput {
    /// The home view's question (range, event type, filter, where the service is).
    pub query: HomeQuery,
    /// The language the chart names (the lists ask for it).
    pub language: String,
    /// The tab and its choices, as the URL holds them.
    pub tab: HomeTab,
    /// Whether the page uses the colour-blind-safe palette (the change column's colours).
    pub colorblind: bool,
}

/// What the user did in the lists. Externally tagged (serde's default, `{"open_grown":{…}}`):
/// the page reads it, and an internally tagged enum brought serde's `Content` buffering into
/// the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FunctionsEvent {
    /// The tab's choices changed (metric, filter, baseline): the page keeps them (the URL).
    Tab { tab: HomeTab },
    /// Open one service's flame graph.
    OpenService {
        app_service: String,
        language: String,
    },
    /// Open one service's flame graph with `function` selected.
    OpenFunction {
        app_service: String,
        language: String,
        function: String,
    },
    /// Compare one service with the range `against` names, `function` selected.
    OpenGrown {
        app_service: String,
        language: String,
        function: String,
        against: Against,
    },
}

impl FunctionsEvent {
    /// What a row opens: What grew compares its service with the baseline, Functions opens
    /// its flame graph.
    pub fn open_row(
        grew: bool,
        app_service: &str,
        language: &str,
        function: &str,
        against: Against,
    ) -> FunctionsEvent {
        let (app_service, language, function) = (
            app_service.to_owned(),
            language.to_owned(),
            function.to_owned(),
        );
        match grew {
            true => FunctionsEvent::OpenGrown {
                app_service,
                language,
                function,
                against,
            },
            false => FunctionsEvent::OpenFunction {
                app_service,
                language,
                function,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::functions::HomeList;
    use embers_model::contract::explore::ServicesRequest;

    #[test]
    fn input_and_events_round_trip_as_json() {
        let input = FunctionsInput {
            query: HomeQuery {
                base_url: "http://h:1".into(),
                services: ServicesRequest {
                    time_start: 1,
                    time_end: 2,
                    profile_event_type: Some("on-cpu".into()),
                    ..ServicesRequest::default()
                },
                relative: true,
            },
            language: "Golang".into(),
            tab: HomeTab {
                list: HomeList::Grew,
                search: "json".into(),
                against: Against::Yesterday,
                ..HomeTab::default()
            },
            colorblind: true,
        };
        let json = serde_json::to_string(&input).unwrap();
        assert_eq!(
            serde_json::from_str::<FunctionsInput>(&json).unwrap(),
            input
        );
        let event = FunctionsEvent::open_row(true, "api", "Golang", "main.f", Against::Yesterday);
        let json = serde_json::to_string(&event).unwrap();
        assert!(json.starts_with(r#"{"open_grown":{"#), "{json}");
        assert_eq!(
            serde_json::from_str::<FunctionsEvent>(&json).unwrap(),
            event
        );
        assert!(serde_json::from_str::<FunctionsEvent>(r#"{"nope":{}}"#).is_err());
    }
}
