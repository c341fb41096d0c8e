//! What a comparison is made against: the baseline is the main query with any of its time
//! range, tag filter or process replaced — or a saved snapshot. Read from and written to the
//! page URL (`baseline_time_start`, `baseline_time_end`, `baseline_tag_filter`,
//! `baseline_app_service`, `baseline_snapshot`); any of them present means compare mode.
//! The wall-clock view (`wall=1`) rides on the same machinery: its second query is the main
//! one with the other CPU event type (on-CPU ↔ off-CPU), and the two add up instead of being
//! compared. Pure, so it is tested natively.

use embers_model::contract::event::wall_partner;
use embers_model::contract::request::ProfileRequest;

/// How the baseline differs from the main query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BaselineSpec {
    /// Another range (Unix seconds, inclusive).
    pub time_range: Option<(i64, i64)>,
    /// Another tag filter.
    pub tag_filter: Option<String>,
    /// Another process.
    pub app_service: Option<String>,
    /// A saved snapshot instead of a query.
    pub snapshot: Option<String>,
    /// The wall-clock view: the other CPU event type of the same query, added up.
    pub wall: bool,
    /// A millisecond window of the range (a second heatmap selection, Unix ms `[start, end)`).
    pub window: Option<(i64, i64)>,
}

/// Seconds in a day, for "same time yesterday".
const DAY: i64 = 86_400;

impl BaselineSpec {
    /// The range of the same length just before `request`'s.
    pub fn previous_period(request: &ProfileRequest) -> BaselineSpec {
        let len = request.time_end - request.time_start + 1;
        BaselineSpec {
            time_range: Some((request.time_start - len, request.time_start - 1)),
            ..BaselineSpec::default()
        }
    }

    /// The wall-clock view of `request` (on-CPU and off-CPU of the same query); `None` for an
    /// event type without a partner or for the whole host (off-CPU has no per-host graph).
    pub fn wall(request: &ProfileRequest) -> Option<BaselineSpec> {
        let whole_host = request.app_service.as_deref()
            == Some(embers_model::contract::event::TOTAL_APP_SERVICE);
        (wall_partner(&request.profile_event_type).is_some() && !whole_host).then(|| BaselineSpec {
            wall: true,
            ..BaselineSpec::default()
        })
    }

    /// The same range a day earlier.
    pub fn same_time_yesterday(request: &ProfileRequest) -> BaselineSpec {
        BaselineSpec {
            time_range: Some((request.time_start - DAY, request.time_end - DAY)),
            ..BaselineSpec::default()
        }
    }

    /// The baseline that turns `main` into `baseline` (time range, tag filter and process;
    /// other fields come from `main`).
    pub fn between(main: &ProfileRequest, baseline: &ProfileRequest) -> BaselineSpec {
        let range = (baseline.time_start, baseline.time_end);
        BaselineSpec {
            time_range: (range != (main.time_start, main.time_end)).then_some(range),
            tag_filter: (baseline.tag_filter != main.tag_filter)
                .then(|| baseline.tag_filter.clone()),
            app_service: baseline
                .app_service
                .clone()
                .filter(|a| Some(a) != main.app_service.as_ref()),
            snapshot: None,
            wall: false,
            window: None,
        }
    }

    /// The baseline query for `main` (`None` for a snapshot, which is not a query).
    pub fn request(&self, main: &ProfileRequest) -> Option<ProfileRequest> {
        if self.snapshot.is_some() {
            return None;
        }
        let mut r = main.clone();
        if self.wall {
            r.profile_event_type = wall_partner(&main.profile_event_type)?.to_owned();
        }
        if let Some((start, end)) = self.time_range {
            r.time_start = start;
            r.time_end = end;
        }
        if let Some(filter) = &self.tag_filter {
            r.tag_filter = filter.clone();
        }
        if let Some(app) = &self.app_service {
            r.app_service = Some(app.clone());
        }
        Some(r)
    }

    /// The URL parameters of this baseline.
    pub fn to_params(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if let Some((start, end)) = self.time_range {
            out.push(("baseline_time_start", start.to_string()));
            out.push(("baseline_time_end", end.to_string()));
        }
        if let Some(f) = &self.tag_filter {
            out.push(("baseline_tag_filter", f.clone()));
        }
        if let Some(a) = &self.app_service {
            out.push(("baseline_app_service", a.clone()));
        }
        if let Some(s) = &self.snapshot {
            out.push(("baseline_snapshot", s.clone()));
        }
        if self.wall {
            out.push(("wall", "1".into()));
        }
        if let Some((start, end)) = self.window {
            out.push(("baseline_time_start_ms", start.to_string()));
            out.push(("baseline_time_end_ms", end.to_string()));
        }
        out
    }

    /// The baseline named by URL parameters, if any (a range needs both ends).
    pub fn from_params<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Option<BaselineSpec> {
        let mut spec = BaselineSpec::default();
        let (mut start, mut end) = (None, None);
        let (mut start_ms, mut end_ms) = (None, None);
        let mut named = false;
        for (k, v) in params {
            match k {
                "baseline_time_start" => start = v.trim().parse::<i64>().ok(),
                "baseline_time_end" => end = v.trim().parse::<i64>().ok(),
                "baseline_tag_filter" => spec.tag_filter = Some(v.to_owned()),
                "baseline_app_service" if !v.is_empty() => spec.app_service = Some(v.to_owned()),
                "baseline_snapshot" if !v.is_empty() => spec.snapshot = Some(v.to_owned()),
                "wall" if v == "1" => spec.wall = true,
                "baseline_time_start_ms" => start_ms = v.trim().parse::<i64>().ok(),
                "baseline_time_end_ms" => end_ms = v.trim().parse::<i64>().ok(),
                _ => continue,
            }
            named = true;
        }
        if let (Some(s), Some(e)) = (start, end) {
            spec.time_range = Some((s, e));
        }
        spec.window = start_ms.zip(end_ms).filter(|(s, e)| s < e);
        named.then_some(spec)
    }

    /// A short description for the page: "Nov 22 10:00–11:00", "snapshot “before deploy”",
    /// "pod='b'", ... A snapshot is called by its name once its answer has told it.
    pub fn describe(
        &self,
        snapshot_name: Option<&str>,
        format_span: impl Fn(i64, i64) -> String,
    ) -> String {
        let mut parts = Vec::new();
        if self.wall {
            parts.push("on-CPU + off-CPU".to_owned());
        }
        match (&self.snapshot, snapshot_name) {
            (Some(_), Some(name)) => parts.push(format!("snapshot “{name}”")),
            (Some(id), None) => parts.push(format!("snapshot {id}")),
            _ => {}
        }
        if let Some((start, end)) = self.time_range {
            parts.push(format_span(start, end));
        }
        if let Some((start, end)) = self.window {
            // The minute as the page reads it (local time), the seconds from the milliseconds:
            // time zones are whole minutes apart, so those are the same everywhere.
            let second = start.div_euclid(1000);
            let minute = format_span(second, second);
            let minute = minute.split('–').next().unwrap_or_default();
            let secs = start.rem_euclid(60_000) as f64 / 1000.0;
            parts.push(format!("{} ms from {minute}:{secs:06.3}", end - start));
        }
        if let Some(a) = &self.app_service {
            parts.push(a.clone());
        }
        if let Some(f) = &self.tag_filter {
            parts.push(if f.is_empty() {
                "no tag filter".to_owned()
            } else {
                f.clone()
            });
        }
        if parts.is_empty() {
            "the same query".to_owned()
        } else {
            parts.join(" · ")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn main_request() -> ProfileRequest {
        ProfileRequest {
            app_service: Some("api-gateway".into()),
            profile_language_type: "eBPF".into(),
            profile_event_type: "on-cpu".into(),
            tag_filter: "pod='a'".into(),
            time_start: 1000,
            time_end: 1599,
            max_kernel_stack_depth: None,
        }
    }

    #[test]
    fn presets_move_the_range_and_keep_the_rest() {
        let m = main_request();
        let prev = BaselineSpec::previous_period(&m).request(&m).unwrap();
        assert_eq!((prev.time_start, prev.time_end), (400, 999));
        assert_eq!(prev.tag_filter, m.tag_filter);
        let y = BaselineSpec::same_time_yesterday(&m).request(&m).unwrap();
        assert_eq!((y.time_start, y.time_end), (1000 - 86_400, 1599 - 86_400));
        let other = BaselineSpec {
            tag_filter: Some(String::new()),
            app_service: Some("nginx".into()),
            ..BaselineSpec::default()
        }
        .request(&m)
        .unwrap();
        assert_eq!(
            (other.tag_filter.as_str(), other.app_service.as_deref()),
            ("", Some("nginx"))
        );
        let snap = BaselineSpec {
            snapshot: Some("x".into()),
            ..BaselineSpec::default()
        };
        assert_eq!(snap.request(&m), None);
    }

    #[test]
    fn the_baseline_between_two_requests_names_what_differs() {
        let m = main_request();
        let mut b = m.clone();
        b.time_start -= 600;
        b.time_end -= 600;
        let spec = BaselineSpec::between(&m, &b);
        assert_eq!(spec.time_range, Some((400, 999)));
        assert_eq!((spec.tag_filter, spec.app_service), (None, None));
        assert_eq!(BaselineSpec::between(&m, &b).request(&m), Some(b));
    }

    #[test]
    fn the_wall_view_queries_the_other_cpu_event_of_the_same_query() {
        let m = main_request();
        let spec = BaselineSpec::wall(&m).expect("on-CPU has a partner");
        let partner = spec.request(&m).unwrap();
        assert_eq!(partner.profile_event_type, "off-cpu");
        assert_eq!(
            ProfileRequest {
                profile_event_type: "on-cpu".into(),
                ..partner
            },
            m
        );
        assert_eq!(spec.to_params(), [("wall", "1".to_string())]);
        let back = BaselineSpec::from_params([("wall", "1")]);
        assert_eq!(back, Some(spec));
        let mut off = m.clone();
        off.profile_event_type = "off-cpu".into();
        let on = BaselineSpec::wall(&off).unwrap().request(&off).unwrap();
        assert_eq!(on.profile_event_type, "on-cpu");
        let mut mem = m.clone();
        mem.profile_event_type = "mem-alloc".into();
        assert_eq!(BaselineSpec::wall(&mem), None);
        let mut host = m;
        host.app_service = Some("Total".into());
        assert_eq!(BaselineSpec::wall(&host), None);
        assert_eq!(BaselineSpec::from_params([("wall", "0")]), None);
    }

    #[test]
    fn baselines_round_trip_through_url_params() {
        let spec = BaselineSpec {
            time_range: Some((1, 2)),
            tag_filter: Some("pod='b'".into()),
            app_service: Some("nginx".into()),
            snapshot: Some("abc".into()),
            wall: false,
            window: Some((1500, 1900)),
        };
        let params = spec.to_params();
        let back = BaselineSpec::from_params(params.iter().map(|(k, v)| (*k, v.as_str())));
        assert_eq!(back, Some(spec));
        assert_eq!(BaselineSpec::from_params([("search", "x")]), None);
        let window = BaselineSpec {
            window: Some((1_700_000_008_540, 1_700_000_008_920)),
            ..BaselineSpec::default()
        };
        let minute = |_, _| "Nov 14 22:13–22:13".to_owned();
        assert_eq!(
            window.describe(None, minute),
            "380 ms from Nov 14 22:13:28.540"
        );
        let filter_only = BaselineSpec::from_params([("baseline_tag_filter", "")]).unwrap();
        assert_eq!(filter_only.tag_filter.as_deref(), Some(""));
        assert_eq!(
            filter_only.describe(None, |_, _| String::new()),
            "no tag filter"
        );
    }
}
