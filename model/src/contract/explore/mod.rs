//! The explore endpoints — which services burn CPU, and when — written once for the viewer and
//! the service: the request bodies and how the service reads them, the answer rows, the timeline's
//! interval rules, and the finishing steps every store applies (ranking, group limits, prefixes).
//!
//! | endpoint | body | `result` |
//! |---|---|---|
//! | `POST /v1/profile/services` | [`ServicesRequest`] | `Table<`[`ServiceRow`]`>` |
//! | `POST /v1/profile/timeline` | [`TimelineRequest`] | [`TimelineAnswer`] |
//! | `POST /v1/profile/tags` | [`TagsRequest`] | `Table<`[`ValueCount`]`>` |
//! | `POST /v1/profile/tag_values` | [`TagValuesRequest`] | `Table<`[`ValueCount`]`>` |
//! | `POST /v1/profile/functions` | [`FunctionsRequest`] | [`FunctionsAnswer`] |
//! | `POST /v1/profile/function_timeline` | [`FunctionTimelineRequest`] | [`FunctionTimelineAnswer`] |
//! | `POST /v1/profile/function_lines` | [`FunctionLinesRequest`] | [`FunctionLinesAnswer`] |
//!
//! Times are Unix seconds, inclusive at both ends. A timeline bucket starts at a multiple of its
//! interval counted from the Unix epoch ([`bucket_start`]).
//!
//! [`request`] reads the bodies, [`answer`] builds the results; the rules they share are here.
mod answer;
mod function_change;
mod function_growth;
pub mod function_lines;
mod function_places;
mod function_points;
mod function_rows;
mod function_sums;
mod functions;
mod point;
mod request;

pub use answer::*;
pub use function_change::{
    value_per_sample, ProcessShift, ShiftFunction, FUNCTIONS_PER_SHIFT, ON_CPU_US_PER_SAMPLE,
};
pub use function_growth::{grown_in_processes, ProcessGrowth};
pub use function_lines::*;
pub use function_places::PlaceValue;
pub use function_points::{FunctionPoint, FunctionTimelineAnswer};
pub use function_rows::*;
pub use function_sums::{FunctionSums, Place, SelfTotal};
pub use functions::*;
pub use point::TimelineRow;
pub use request::*;

use crate::contract::body::RequestError;
use crate::contract::fields::{self, FieldRef, Scope};

/// The intervals (seconds) a timeline picks from when the request names none.
pub const INTERVAL_LADDER: [i64; 9] = [1, 5, 10, 30, 60, 300, 600, 1800, 3600];
/// Most buckets an automatically picked interval gives.
pub const MAX_AUTO_BUCKETS: i64 = 300;
/// Most buckets an explicit interval may give.
pub const MAX_BUCKETS: i64 = 2000;
/// Groups a grouped timeline keeps by name unless told otherwise.
pub const DEFAULT_GROUP_LIMIT: usize = 10;
/// Most groups a grouped timeline keeps by name.
pub const MAX_GROUP_LIMIT: usize = 50;
/// The group the rest of a grouped timeline is summed into.
pub const OTHER_GROUP: &str = "other";
/// Most rows `services` answers.
pub const MAX_SERVICES: usize = 1000;
/// Values `tag_values` answers unless told otherwise.
pub const DEFAULT_VALUES_LIMIT: usize = 100;
/// Most values `tag_values` answers.
pub const MAX_VALUES_LIMIT: usize = 1000;
/// The pseudo-tag naming a stack's thread (its first `[t] ` frame).
pub const THREAD: &str = "thread";

/// Start of the bucket of `interval` seconds holding `t`: `floor(t / interval) * interval`
/// (saturating: the bucket of a time near `i64::MIN` starts before it).
pub fn bucket_start(t: i64, interval: i64) -> i64 {
    t.div_euclid(interval.max(1))
        .saturating_mul(interval.max(1))
}

/// How many buckets of `interval` seconds `[time_start, time_end]` touches.
pub fn bucket_count(time_start: i64, time_end: i64, interval: i64) -> i64 {
    let interval = interval.max(1);
    // i128: the distance between two extreme i64 times does not fit an i64.
    let first = i128::from(bucket_start(time_start, interval));
    let last = i128::from(bucket_start(time_end, interval));
    i64::try_from((last - first) / i128::from(interval) + 1).unwrap_or(i64::MAX)
}

/// The smallest ladder interval giving at most [`MAX_AUTO_BUCKETS`] buckets; past the ladder's
/// top, its largest step while that gives at most [`MAX_BUCKETS`] (as an explicit interval
/// may), and an error beyond (a range over ~83 days), rather than an unbounded bucket count.
pub fn pick_interval(time_start: i64, time_end: i64) -> Result<i64, RequestError> {
    if let Some(i) = INTERVAL_LADDER
        .iter()
        .copied()
        .find(|&i| bucket_count(time_start, time_end, i) <= MAX_AUTO_BUCKETS)
    {
        return Ok(i);
    }
    let top = INTERVAL_LADDER[INTERVAL_LADDER.len() - 1];
    let buckets = bucket_count(time_start, time_end, top);
    if buckets > MAX_BUCKETS {
        return Err(RequestError(format!(
            "the range [{time_start}, {time_end}] is too long for an automatic interval: even \
             {top} s gives {buckets} buckets, and at most {MAX_BUCKETS} are allowed; choose a \
             range of at most {} days or a larger interval",
            MAX_BUCKETS * top / 86_400
        )));
    }
    Ok(top)
}

/// Checks an explicit interval: positive, and at most [`MAX_BUCKETS`] buckets over the range.
pub fn check_interval(time_start: i64, time_end: i64, interval: i64) -> Result<(), RequestError> {
    if interval <= 0 {
        return Err(RequestError(format!(
            "interval must be a positive number of seconds, got {interval}"
        )));
    }
    let buckets = bucket_count(time_start, time_end, interval);
    if buckets > MAX_BUCKETS {
        return Err(RequestError(format!(
            "interval {interval} s gives {buckets} buckets over [{time_start}, {time_end}]; at \
             most {MAX_BUCKETS} are allowed: choose a larger interval or omit it"
        )));
    }
    Ok(())
}

/// The thread of a stack: its first `[t] ` frame (prefix included), or `""` without one.
pub fn thread_of(stack: &str) -> &str {
    stack
        .split(';')
        .find(|frame| frame.starts_with("[t] "))
        .unwrap_or("")
}

/// What samples can be grouped by, or their values listed for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Dimension {
    /// The process (`app_service`).
    AppService,
    /// `profile_language_type`.
    Language,
    /// `profile_event_type`.
    EventType,
    /// The stack's thread, see [`thread_of`].
    Thread,
    /// A resource tag (fixed column or open family); absent tags read as `""`.
    Tag(FieldRef),
}

impl Dimension {
    /// Resolves a `group_by` or `tag` name: a tag of the field table shared by a batch (aliases
    /// and open families included), `app_service`, the language and event type, or `thread`.
    pub fn parse(member: &str, name: &str) -> Result<Dimension, RequestError> {
        if name == THREAD {
            return Ok(Dimension::Thread);
        }
        match fields::resolve(name) {
            Ok(FieldRef::Column(def)) if def.scope == Scope::Sample => match def.name {
                "app_service" => Ok(Dimension::AppService),
                "profile_language_type" => Ok(Dimension::Language),
                "profile_event_type" => Ok(Dimension::EventType),
                other => Err(RequestError(format!(
                    "{member} cannot be '{other}': it differs per sample; use a tag, \
                     app_service, profile_language_type, profile_event_type or thread"
                ))),
            },
            Ok(field) => Ok(Dimension::Tag(field)),
            Err(e @ fields::ResolveError::Unknown(_)) => Err(RequestError(format!(
                "{member}: {e}; or app_service, profile_language_type, profile_event_type or thread"
            ))),
            Err(e) => Err(RequestError(format!("{member}: {e}"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message of a refused request (fails the test when it was accepted).
    pub(super) fn err<T: std::fmt::Debug>(r: Result<T, RequestError>) -> String {
        match r {
            Ok(v) => panic!("accepted {v:?}"),
            Err(e) => e.0,
        }
    }

    #[test]
    fn buckets_are_epoch_aligned_and_counted_inclusively() {
        assert_eq!(bucket_start(1_700_000_039, 60), 1_699_999_980);
        assert_eq!(bucket_start(1_700_000_059, 60), 1_700_000_040);
        assert_eq!(bucket_start(-1, 60), -60);
        assert_eq!(bucket_count(0, 59, 60), 1);
        assert_eq!(bucket_count(59, 60, 60), 2);
        assert_eq!(bucket_count(1, 1, 1), 1);
        assert_eq!(bucket_count(i64::MIN, i64::MAX, 1), i64::MAX);
    }

    #[test]
    fn the_ladder_picks_the_smallest_interval_within_300_buckets() {
        let t = 1_700_000_000; // a multiple of 100 but not of 60
        let pick_interval = |a, b| pick_interval(a, b).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(pick_interval(t, t), 1);
        assert_eq!(pick_interval(t, t + 299), 1);
        assert_eq!(pick_interval(t, t + 300), 5);
        assert_eq!(pick_interval(t, t + 3599), 30); // 10 s would give 360 buckets
        assert_eq!(pick_interval(t, t + 6 * 3600), 300);
        assert_eq!(pick_interval(t, t + 300 * 3600), 3600);
        assert_eq!(
            pick_interval(t, t + 400 * 3600),
            3600,
            "none fits 300: 3600"
        );
        let h = t - t % 3600;
        assert_eq!(pick_interval(h, h + 2000 * 3600 - 1), 3600, "2000 buckets");
        // A range that straddles bucket boundaries touches one bucket more than it spans.
        assert_eq!(bucket_count(t, t + 299 * 60, 60), 300);
        assert_eq!(pick_interval(t, t + 299 * 60), 60);
        assert_eq!(pick_interval(t, t + 299 * 60 + 39), 60);
        assert_eq!(
            pick_interval(t, t + 299 * 60 + 40),
            300,
            "301 minutes touched"
        );
    }

    #[test]
    fn ranges_past_the_ladder_are_refused_not_bucketed_without_bound() {
        let h = 1_699_999_200; // a whole hour
        let e = err(super::pick_interval(h, h + 2000 * 3600));
        assert!(
            e.contains("even 3600 s gives 2001 buckets") && e.contains("83 days"),
            "{e}"
        );
        assert!(super::pick_interval(i64::MIN, i64::MAX).is_err());
    }

    #[test]
    fn explicit_intervals_are_checked() {
        assert!(check_interval(0, 1999, 1).is_ok());
        assert!(err(check_interval(0, 2000, 1)).contains("2001 buckets"));
        assert!(err(check_interval(0, 10, 0)).contains("positive"));
        assert!(err(check_interval(0, 10, -5)).contains("positive"));
    }

    #[test]
    fn threads_are_the_first_thread_frame() {
        assert_eq!(thread_of("[t] worker;main;f"), "[t] worker");
        assert_eq!(thread_of("[p] redis;[t] io_thd_1"), "[t] io_thd_1");
        assert_eq!(thread_of("[p] redis"), "");
        assert_eq!(thread_of("main;[t]x;[t] y"), "[t] y");
        assert_eq!(thread_of(""), "");
    }

    #[test]
    fn dimensions_resolve_like_the_tag_filter() {
        assert_eq!(Dimension::parse("g", "thread"), Ok(Dimension::Thread));
        assert_eq!(
            Dimension::parse("g", "app_service"),
            Ok(Dimension::AppService)
        );
        assert_eq!(
            Dimension::parse("g", "profile_event_type"),
            Ok(Dimension::EventType)
        );
        match Dimension::parse("g", "vtap") {
            Ok(Dimension::Tag(f)) => assert_eq!(f.name(), "agent"),
            other => panic!("{other:?}"),
        }
        match Dimension::parse("g", "k8s.label.app") {
            Ok(Dimension::Tag(f)) => assert_eq!(f.name(), "k8s.label.app"),
            other => panic!("{other:?}"),
        }
        assert!(err(Dimension::parse("group_by", "colour")).contains("unknown tag 'colour'"));
        assert!(err(Dimension::parse("tag", "time")).contains("differs per sample"));
        assert!(err(Dimension::parse("tag", "k8s.env")).contains("needs a key"));
    }
}
