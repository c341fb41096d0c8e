//! What the page and the time views' module say to each other (JSON both ways, see
//! `crate::on_demand`): the page sends [`TimeInput`] (again whenever it changes), the module
//! sends [`TimeEvent`]s. One module holds both views (the Heatmap and the Stack chart): a user
//! who selects a window on the heatmap usually opens the chart of it next, and the two share
//! most of their code (the module's Leptos runtime, the samples' questions).

use embers_model::contract::request::ProfileRequest;
use serde::{Deserialize, Serialize};

use crate::session::fine::MsRange;

/// The module's stem and the views' name in its notes.
pub const TIME_VIEW: crate::on_demand::ViewModule = crate::on_demand::ViewModule {
    stem: "time_view",
    label: "time",
};

/// Which of the module's views is shown.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeViewKind {
    /// Samples per second and sub-second slot.
    #[default]
    Heatmap,
    /// Stacks over time, thread by thread.
    StackChart,
}

/// Everything the time views show depends on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TimeInput {
    /// The view shown.
    pub view: TimeViewKind,
    /// Where the service is (empty: this page's origin).
    pub base_url: String,
    /// The profile's question (its range, service and event type).
    pub request: ProfileRequest,
    /// The window the flame graph is narrowed to (marked on the heatmap; the chart's samples).
    pub window: Option<MsRange>,
    /// The window compared with (marked on the heatmap).
    pub baseline: Option<MsRange>,
    /// The stack chart's zoom, as the URL holds it (read when the chart is built).
    pub chart: Option<MsRange>,
    /// The stack chart's thread, as the URL holds it (read when the chart is built).
    pub thread: usize,
    /// The page's search text (the chart lights its matches).
    pub search: String,
    /// The page is dark.
    pub dark: bool,
    /// The page uses the colour-blind-safe palette.
    pub colorblind: bool,
}

/// What the user did in a time view. Externally tagged (serde's default, `{"open":[a,b]}`):
/// the page reads it, and an internally tagged enum would bring serde's `Content` buffering
/// into the page.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimeEvent {
    /// Open the graph of exactly the samples of `[start, end)` (Unix ms).
    Open(i64, i64),
    /// Compare the graph with the samples of `[start, end)` (Unix ms).
    Baseline(i64, i64),
    /// The chart's window moved (zoom or pan): the URL keeps it.
    Chart(i64, i64),
    /// Another thread of the chart was picked (its index): the URL keeps it.
    Thread(usize),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_and_events_round_trip_as_json() {
        let input = TimeInput {
            view: TimeViewKind::StackChart,
            base_url: "http://h:1".into(),
            request: ProfileRequest {
                time_start: 10,
                time_end: 20,
                ..ProfileRequest::default()
            },
            window: Some((10_050, 10_450)),
            baseline: Some((11_000, 11_400)),
            chart: Some((10_100, 10_200)),
            thread: 2,
            search: "tick".into(),
            dark: true,
            colorblind: true,
        };
        let json = serde_json::to_string(&input).unwrap();
        assert!(json.contains(r#""view":"stack_chart""#), "{json}");
        assert_eq!(serde_json::from_str::<TimeInput>(&json).unwrap(), input);
        for event in [
            TimeEvent::Open(1, 2),
            TimeEvent::Baseline(3, 4),
            TimeEvent::Chart(5, 6),
            TimeEvent::Thread(7),
        ] {
            let json = serde_json::to_string(&event).unwrap();
            assert_eq!(serde_json::from_str::<TimeEvent>(&json).unwrap(), event);
        }
        assert_eq!(
            serde_json::to_string(&TimeEvent::Open(1, 2)).unwrap(),
            r#"{"open":[1,2]}"#
        );
        assert!(serde_json::from_str::<TimeEvent>(r#"{"nope":[1,2]}"#).is_err());
    }
}
