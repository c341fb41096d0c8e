//! Time inside a range, the page's side (issue 37): the millisecond window a flame graph is
//! narrowed to (a heatmap selection), the time view shown above the graph (the heatmap, the
//! stack chart) with the stack chart's own window and thread, and their URL parameters
//! (`time_start_ms`, `time_end_ms`, `time_view`, `chart_start_ms`, `chart_end_ms`,
//! `chart_thread`), so a link reproduces them; and the two questions the views ask the
//! service ([`heatmap`], [`samples`]). All but the questions is pure and tested natively.

use embers_model::contract::fine::heatmap::HeatmapAnswer;
use embers_model::contract::fine::samples::SamplesAnswer;
use embers_model::contract::fine::{FineRequest, MsBounds};

use crate::net::api::{self, ApiFailure};
use embers_model::contract::request::ProfileRequest;

/// Which time view is open above the graph.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TimeView {
    /// None: the timeline strip as it always was.
    #[default]
    Off,
    /// The sub-second heatmap of the range.
    Heatmap,
    /// The stack chart of the selected window (or of the range when it is short).
    StackChart,
}

impl TimeView {
    fn as_param(self) -> Option<&'static str> {
        match self {
            TimeView::Off => None,
            TimeView::Heatmap => Some("heatmap"),
            TimeView::StackChart => Some("stack"),
        }
    }
}

/// A half-open window of Unix milliseconds, `[start, end)`.
pub type MsRange = (i64, i64);

/// The time part of what the page shows.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TimeState {
    /// The view open above the graph.
    pub view: TimeView,
    /// The window the flame graph is narrowed to, if any.
    pub window: Option<MsRange>,
    /// The stack chart's zoom (none: all of its samples).
    pub chart: Option<MsRange>,
    /// The stack chart's thread (its index, busiest first).
    pub thread: usize,
}

impl TimeState {
    /// The URL parameters of this state (none for the default).
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some((a, b)) = self.window {
            out.push(("time_start_ms", a.to_string()));
            out.push(("time_end_ms", b.to_string()));
        }
        if let Some(v) = self.view.as_param() {
            out.push(("time_view", v.to_owned()));
        }
        if let Some((a, b)) = self.chart {
            out.push(("chart_start_ms", a.to_string()));
            out.push(("chart_end_ms", b.to_string()));
        }
        if self.thread > 0 {
            out.push(("chart_thread", self.thread.to_string()));
        }
        out
    }

    /// The state URL parameters name (malformed ones ignored; a window needs both ends, its
    /// start before its end).
    pub fn from_params<'a>(params: impl IntoIterator<Item = (&'a str, &'a str)>) -> TimeState {
        let mut s = TimeState::default();
        let (mut w, mut c) = ((None, None), (None, None));
        for (k, v) in params {
            let int = || v.trim().parse::<i64>().ok();
            match k {
                "time_start_ms" => w.0 = int(),
                "time_end_ms" => w.1 = int(),
                "chart_start_ms" => c.0 = int(),
                "chart_end_ms" => c.1 = int(),
                "chart_thread" => s.thread = v.trim().parse().unwrap_or(0),
                "time_view" => {
                    s.view = match v {
                        "heatmap" => TimeView::Heatmap,
                        "stack" => TimeView::StackChart,
                        _ => TimeView::Off,
                    }
                }
                _ => {}
            }
        }
        s.window = range(w);
        s.chart = range(c);
        s
    }
}

fn range(pair: (Option<i64>, Option<i64>)) -> Option<MsRange> {
    match pair {
        (Some(a), Some(b)) if a < b => Some((a, b)),
        _ => None,
    }
}

/// The body that asks for `request` narrowed to `window` (ProfileTracing, heatmap, samples).
pub fn fine_request(request: &ProfileRequest, window: Option<MsRange>) -> FineRequest {
    FineRequest {
        request: request.clone(),
        bounds: MsBounds {
            time_start_ms: window.map(|w| w.0),
            time_end_ms: window.map(|w| w.1),
        },
        slots_per_second: None,
    }
}

/// The heatmap of `body`'s range (`POST /v1/profile/heatmap`).
pub async fn heatmap(base: &str, body: &FineRequest) -> Result<HeatmapAnswer, ApiFailure> {
    api::call(base, "/v1/profile/heatmap", body).await
}

/// The samples of `body`'s window in time order (`POST /v1/profile/samples`).
pub async fn samples(base: &str, body: &FineRequest) -> Result<SamplesAnswer, ApiFailure> {
    api::call(base, "/v1/profile/samples", body).await
}

/// Where ProfileTracing is asked on the service at `base`.
pub fn tracing_url(base: &str) -> String {
    crate::net::http::endpoint(base, crate::net::http::PROFILE_TRACING_PATH)
}

/// `request`'s seconds widened to hold `window` whole: a window past the range's seconds
/// (never made by the page, but a link can say anything) would be refused by the service.
pub fn covering(request: &ProfileRequest, window: MsRange) -> ProfileRequest {
    let mut r = request.clone();
    r.time_start = r.time_start.min(window.0.div_euclid(1000));
    r.time_end = r.time_end.max((window.1 - 1).div_euclid(1000));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_state_round_trips_through_the_url() {
        let s = TimeState {
            view: TimeView::StackChart,
            window: Some((1_000_050, 1_000_450)),
            chart: Some((1_000_100, 1_000_200)),
            thread: 2,
        };
        let pairs = s.to_params();
        let keys: Vec<_> = pairs.iter().map(|(k, _)| *k).collect();
        assert_eq!(
            keys,
            [
                "time_start_ms",
                "time_end_ms",
                "time_view",
                "chart_start_ms",
                "chart_end_ms",
                "chart_thread"
            ]
        );
        let back = TimeState::from_params(pairs.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, s);
        assert!(TimeState::default().to_params().is_empty());
        // Half a window, a backwards one, junk: ignored.
        let odd = [
            ("time_start_ms", "5"),
            ("chart_start_ms", "9"),
            ("chart_end_ms", "3"),
            ("time_view", "x"),
        ];
        assert_eq!(TimeState::from_params(odd), TimeState::default());
    }

    #[test]
    fn a_window_narrows_the_body_and_the_seconds_hold_it() {
        let r = ProfileRequest {
            app_service: Some("app".into()),
            time_start: 1000,
            time_end: 1010,
            ..ProfileRequest::default()
        };
        let body = serde_json::to_value(fine_request(&r, Some((1_000_050, 1_000_450)))).unwrap();
        assert_eq!(body["time_start_ms"], 1_000_050);
        assert_eq!(body["time_end_ms"], 1_000_450);
        assert_eq!(body["app_service"], "app");
        let plain = serde_json::to_value(fine_request(&r, None)).unwrap();
        assert!(plain.get("time_start_ms").is_none());
        let wide = covering(&r, (999_500, 1_011_001));
        assert_eq!((wide.time_start, wide.time_end), (999, 1011));
        assert_eq!(covering(&r, (1_000_000, 1_011_000)).time_end, 1010);
    }
}
