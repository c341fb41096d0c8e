//! Tests of the `function_lines` contract: the body's rules, the answer's order, caps and
//! reasons, and its JSON.

use super::*;

fn row(file: &str, line: u32, self_value: u64, total_value: u64) -> LineRow {
    LineRow {
        file: file.into(),
        line,
        self_value,
        total_value,
    }
}

fn whole(self_value: u64, total: u64) -> SelfTotal {
    SelfTotal { self_value, total }
}

#[test]
fn the_body_is_profile_tracing_and_a_function() {
    let body = br#"{"app_service":"web","profile_language_type":"Golang","profile_event_type":"cpu","time_start":10,"time_end":20,"tag_filter":"pod='a'","function":"main.hot"}"#;
    let q = parse_function_lines_body(body).expect("accepted");
    assert_eq!(q.function, "main.hot");
    assert_eq!(q.selection.app_service.as_deref(), Some("web"));
    assert_eq!(q.selection.event_type.as_deref(), Some("cpu"));
    assert_eq!((q.selection.time_start, q.selection.time_end), (10, 20));
    assert_eq!(q.selection.filter.conditions.len(), 1);
    let missing = br#"{"profile_language_type":"Golang","profile_event_type":"cpu","time_start":10,"time_end":20}"#;
    let e = parse_function_lines_body(missing).unwrap_err();
    assert!(e.0.contains("function is required"), "{e}");
    let two = br#"{"profile_language_type":"Golang","profile_event_type":"cpu","time_start":10,"time_end":20,"function":"a;b"}"#;
    assert!(parse_function_lines_body(two)
        .unwrap_err()
        .0
        .contains("';'"));
    let no_time =
        br#"{"profile_language_type":"Golang","profile_event_type":"cpu","function":"f"}"#;
    assert!(parse_function_lines_body(no_time)
        .unwrap_err()
        .0
        .contains("TimeStart"));
}

#[test]
fn lines_are_summed_and_the_hottest_come_first() {
    let a = FunctionLinesAnswer::finish(
        "main.hot",
        vec![
            row("main.go", 12, 5, 5),
            row("main.go", 9, 0, 30),
            row("main.go", 12, 20, 20),
            row("main.go", 3, 1, 1),
            row("util.go", 3, 1, 1),
            row("main.go", 4, 0, 0),
        ],
        whole(40, 60),
    );
    assert_eq!(a.lines, LinesState::Some);
    assert_eq!(a.reason, None);
    assert_eq!(
        a.values,
        vec![
            row("main.go", 9, 0, 30),
            row("main.go", 12, 25, 25),
            row("main.go", 3, 1, 1),
            row("util.go", 3, 1, 1),
        ],
        "by total, then self, then place; empty lines dropped"
    );
    assert_eq!((a.function_self_value, a.function_total_value), (40, 60));
    let json = serde_json::to_value(&a).expect("serialises");
    assert_eq!(
        json["columns"],
        serde_json::json!(["file", "line", "self_value", "total_value"])
    );
    assert_eq!(json["values"][0], serde_json::json!(["main.go", 9, 0, 30]));
    assert_eq!(json["lines"], "some");
    assert!(json.get("reason").is_none());
    let back: FunctionLinesAnswer = serde_json::from_value(json).expect("reads back");
    assert_eq!(back, a);
}

#[test]
fn an_empty_answer_says_why() {
    let none = FunctionLinesAnswer::finish("f", vec![], whole(3, 7));
    assert_eq!(
        (none.lines, none.reason),
        (LinesState::None, Some(NoLines::NoLineInfo))
    );
    let json = serde_json::to_value(&none).expect("serialises");
    assert_eq!(json["lines"], "none");
    assert_eq!(json["reason"], "no_line_info");
    assert_eq!(json["values"], serde_json::json!([]));
    let absent = FunctionLinesAnswer::finish("f", vec![], whole(0, 0));
    assert_eq!(absent.reason, Some(NoLines::NoSamples));
    assert!(NoLines::NoLineInfo.describe().contains("debug information"));
}

#[test]
fn long_answers_keep_the_hottest_lines() {
    let rows = (1..=MAX_FUNCTION_LINES as u32 + 5)
        .map(|l| row("big.c", l, 0, u64::from(l)))
        .collect();
    let a = FunctionLinesAnswer::finish("f", rows, whole(0, 1));
    assert_eq!(a.values.len(), MAX_FUNCTION_LINES);
    assert_eq!(a.omitted, 5);
    assert_eq!(a.values[0].line, MAX_FUNCTION_LINES as u32 + 5);
}
