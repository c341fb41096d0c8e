//! Unit tests of the explore questions (`super`): what home, the sparklines and the suggestions ask, and how answers are read.

use super::*;

fn row(app: &str, language: &str, value: u64) -> ServiceRow {
    ServiceRow {
        app_service: app.into(),
        profile_language_type: language.into(),
        profile_event_type: "on-cpu".into(),
        value,
    }
}

fn rows() -> Vec<ServiceRow> {
    vec![
        row("Total", "eBPF", 1000),
        row("nginx", "eBPF", 300),
        row("gateway", "Golang", 250),
        row("redis", "eBPF", 100),
        row("gateway", "eBPF", 90),
        row("billing", "Java", 50),
    ]
}

#[test]
fn home_asks_for_every_language() {
    let r = ProfileRequest {
        profile_language_type: "Golang".into(),
        profile_event_type: "off-cpu".into(),
        tag_filter: "pod='a'".into(),
        time_start: 10,
        time_end: 20,
        ..ProfileRequest::default()
    };
    let q = services_question(&r);
    assert_eq!(q.profile_language_type, None);
    assert_eq!(q.profile_event_type.as_deref(), Some("off-cpu"));
    assert_eq!(
        (q.time_start, q.time_end, q.tag_filter.as_str()),
        (10, 20, "pod='a'")
    );
    let body = serde_json::to_value(&q).unwrap();
    assert!(body.get("profile_language_type").is_none(), "{body}");
}

#[test]
fn one_grouped_spark_question_per_language_and_the_whole_hosts_own() {
    let q = ServicesRequest {
        time_start: 10,
        time_end: 20,
        profile_language_type: None,
        profile_event_type: Some("on-cpu".into()),
        tag_filter: "pod='a'".into(),
    };
    let asked = spark_questions(&q, &rows());
    let summary: Vec<(&str, bool, Option<&str>, Option<&str>)> = asked
        .iter()
        .map(|s| {
            let r = &s.request;
            (
                s.language.as_str(),
                s.whole_host,
                r.profile.app_service.as_deref(),
                r.group_by.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            ("eBPF", true, Some("Total"), None),
            ("eBPF", false, None, Some("app_service")),
            ("Golang", false, None, Some("app_service")),
            ("Java", false, None, Some("app_service")),
        ]
    );
    for s in &asked {
        let p = &s.request.profile;
        assert_eq!(p.profile_language_type, s.language);
        assert_eq!((p.time_start, p.time_end), (10, 20));
        assert_eq!(p.tag_filter, "pod='a'");
    }
}

#[test]
fn sparks_are_found_by_service_and_language() {
    let s = Sparks(vec![
        ("gateway".into(), "eBPF".into(), vec![1, 2]),
        ("gateway".into(), "Golang".into(), vec![3]),
    ]);
    assert_eq!(s.of("gateway", "Golang"), Some(&[3][..]));
    assert_eq!(s.of("gateway", "eBPF"), Some(&[1, 2][..]));
    assert_eq!(s.of("gateway", "Java"), None);
}

#[test]
fn shares_are_of_the_whole_host_or_of_every_service() {
    assert_eq!(share_base(&rows()), 1000);
    let no_total = &rows()[1..];
    assert_eq!(share_base(no_total), 790);
    assert_eq!(share_base(&[]), 0);
}

#[test]
fn the_chart_shows_the_busiest_language() {
    assert_eq!(busiest_language(&rows()).as_deref(), Some("eBPF"));
    let golang = vec![row("Total", "eBPF", 1000), row("gw", "Golang", 5)];
    assert_eq!(busiest_language(&golang).as_deref(), Some("Golang"));
    assert_eq!(busiest_language(&[row("Total", "eBPF", 1)]), None);
}

#[test]
fn suggestions_are_the_services_starting_with_the_text() {
    let all = service_names(&rows());
    assert_eq!(all, vec!["nginx", "gateway", "redis", "billing"]);
    assert_eq!(starting_with(&all, " GA", 50), vec!["gateway"]);
    assert_eq!(starting_with(&all, "", 2), vec!["nginx", "gateway"]);
    assert!(starting_with(&all, "tot", 50).is_empty());
}

/// A future that is pending `polls` times (waking itself each time), then gives `value`.
struct ReadyAfter {
    polls: u32,
    value: u32,
}

impl Future for ReadyAfter {
    type Output = u32;
    fn poll(mut self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<u32> {
        if self.polls == 0 {
            return Poll::Ready(self.value);
        }
        self.polls -= 1;
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn all_gives_what_join_all_gives_whatever_order_the_futures_finish_in() {
    let cases: [&[u32]; 5] = [&[], &[0], &[3, 0, 1], &[0, 0, 0], &[5, 4, 3, 2, 1, 0]];
    for polls in cases {
        let make = || {
            polls
                .iter()
                .enumerate()
                .map(|(i, &polls)| ReadyAfter {
                    polls,
                    value: i as u32 * 10 + polls,
                })
                .collect::<Vec<_>>()
        };
        let ours = futures::executor::block_on(all(make()));
        let reference = futures::executor::block_on(futures::future::join_all(make()));
        assert_eq!(ours, reference, "{polls:?}");
    }
}
