//! In-use event types (`inuse_space`, `inuse_objects`, `goroutines`, `mem-inuse`) asked of the
//! querier as DeepFlow's own querier reads them: its profile service answers these with
//! `Last(profile_value)` grouped by stack, agent and process, through the same SQL engine the
//! SQL API runs, instead of `Sum` over the range. So a services row is each process's last
//! value in the range, a timeline point each process's last value in its bucket (the value at
//! the bucket's end), both summed over processes by the reader. In `in_process_metrics` a
//! process's second holds its whole upload; in `in_process` a row is one stack's, so there the
//! statements also group by stack ([`super::Statement::sql`]).

use super::{Statement, SERVICE_KEYS, TIMELINE_ROWS};

/// The columns naming a process, as DeepFlow's querier groups instants by them.
pub(crate) const PROCESS_KEYS: [&str; 2] = ["agent", "process_id"];

/// The column of a per-process services row holding its last value, beside `v`, its sum.
pub(crate) const LAST: &str = "l";

/// The services statement read per process: `v` each process's last value, or with `both`
/// (any event type) its sum and, as [`LAST`], its last value; the reader takes the one the
/// row's event type needs and sums over processes, and fails when the answer reaches the row
/// limit.
pub(super) fn services(condition: String, metrics: bool, both: bool) -> Statement {
    let keys = format!("{SERVICE_KEYS}, {}", PROCESS_KEYS.join(", "));
    let values = if both {
        format!("Sum(profile_value) AS v, Last(profile_value) AS {LAST}")
    } else {
        "Last(profile_value) AS v".to_owned()
    };
    Statement {
        select: format!("{keys}, {values}"),
        condition,
        group: keys,
        tail: format!(" LIMIT {TIMELINE_ROWS}"),
        metrics,
        per_stack: true,
    }
}

#[cfg(test)]
mod tests {
    use embers_model::contract::explore::{parse_services_body, parse_timeline_body};

    use super::super::{services, timeline, Source};

    fn services_sql(body: &str) -> String {
        let q = parse_services_body(body.as_bytes()).expect("a services body");
        services(&q).expect("renders").sql(Source::Metrics)
    }

    #[test]
    fn in_use_services_take_each_process_s_last_value() {
        assert_eq!(
            services_sql(r#"{"time_start":1,"time_end":2,"profile_event_type":"mem-inuse"}"#),
            "SELECT app_service, profile_language_type, profile_event_type, agent, process_id, \
             Last(profile_value) AS v FROM in_process_metrics WHERE time>=1 AND time<=2 AND \
             profile_event_type='mem-inuse' GROUP BY app_service, profile_language_type, \
             profile_event_type, agent, process_id LIMIT 200000"
        );
        // Any event type: both, per process; the reader picks by event type.
        assert!(services_sql(r#"{"time_start":1,"time_end":2}"#).contains(
            "process_id, Sum(profile_value) AS v, Last(profile_value) AS l FROM in_process_metrics"
        ));
        let cpu = services_sql(r#"{"time_start":1,"time_end":2,"profile_event_type":"on-cpu"}"#);
        assert!(
            cpu.contains("profile_event_type, Sum(profile_value) AS v FROM"),
            "{cpu}"
        );
    }

    #[test]
    fn an_in_use_timeline_takes_each_process_s_last_value_per_bucket() {
        let q = parse_timeline_body(
            br#"{"profile_language_type":"Golang","profile_event_type":"inuse_space","time_start":100,"time_end":3699,"app_service":"web"}"#,
        )
        .expect("a timeline body");
        let s = timeline(&q).expect("renders");
        assert_eq!(
            s.sql(Source::Metrics),
            "SELECT time(time, 30) AS toi, agent, process_id, Last(profile_value) AS v FROM \
             in_process_metrics WHERE time>=100 AND time<=3699 AND app_service='web' AND \
             profile_language_type='Golang' AND profile_event_type='inuse_space' GROUP BY toi, \
             agent, process_id ORDER BY toi LIMIT 200000"
        );
        // In the samples table a row is one stack's: grouped by it too.
        assert!(s
            .sql(Source::Samples)
            .contains("Last(profile_value) AS v, profile_location_str FROM in_process WHERE"));
        assert!(s
            .sql(Source::Samples)
            .contains("GROUP BY toi, agent, process_id, profile_location_str ORDER BY toi"));
    }
}
