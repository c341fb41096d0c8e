//! The samples endpoint's answer as a stack chart: its rows become [`TimedSample`]s, its
//! thread ids thread names (`thread 1234`; rows without a thread, stored at second resolution,
//! go to one `unknown thread`).

use crate::contract::fine::samples::SamplesAnswer;
use crate::view::stack_chart::{StackChart, StackChartError, TimedSample};

/// The name of the thread of rows that name none.
pub const UNKNOWN_THREAD: &str = "unknown thread";

impl StackChart {
    /// The chart of a samples answer, its call tree's root named `root_name`.
    pub fn from_answer(
        root_name: &str,
        answer: &SamplesAnswer,
    ) -> Result<StackChart, StackChartError> {
        let mut tids: Vec<Option<u32>> = answer.values.iter().map(|r| r.1).collect();
        tids.sort_unstable();
        tids.dedup();
        let names: Vec<String> = tids
            .iter()
            .map(|t| match t {
                Some(tid) => format!("thread {tid}"),
                None => UNKNOWN_THREAD.to_owned(),
            })
            .collect();
        let samples: Vec<TimedSample> = answer
            .values
            .iter()
            .map(|r| TimedSample {
                time_ms: r.0,
                // Found: `tids` holds every row's thread.
                thread: tids.binary_search(&r.1).unwrap_or(0) as u32,
                stack: r.2,
                weight: r.3,
            })
            .collect();
        StackChart::build(root_name, &answer.stacks, &names, &samples)
    }
}

#[cfg(test)]
mod tests {
    use crate::contract::fine::samples::{SampleRow, SamplesAnswer};
    use crate::contract::fine::Resolution;
    use crate::view::stack_chart::StackChart;

    #[test]
    fn rows_become_samples_of_named_threads() {
        let answer = SamplesAnswer {
            columns: vec![
                "time_ms".into(),
                "thread".into(),
                "stack".into(),
                "value".into(),
            ],
            values: vec![
                SampleRow(1000, Some(7), 0, 1),
                SampleRow(1010, Some(7), 1, 1),
                SampleRow(1010, Some(9), 0, 1),
                SampleRow(2000, None, 1, 5),
            ],
            stacks: vec![
                vec!["main".into(), "a".into()],
                vec!["main".into(), "b".into()],
            ],
            resolution: Resolution::S,
        };
        let c = StackChart::from_answer("app", &answer).expect("a valid answer");
        let names: Vec<_> = c.tracks().iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["thread 7", "thread 9", "unknown thread"]);
        assert_eq!(c.profile().root_total(), 8);
        let bad = SamplesAnswer {
            values: vec![SampleRow(0, None, 5, 1)],
            ..answer
        };
        assert!(StackChart::from_answer("app", &bad).is_err());
    }
}
