//! Ingest input: folded stacks plus metadata, from an HTTP body or the `import` command, turned
//! into store [`Batch`]es. Parsing is complete before anything is written, so a bad line rejects
//! its whole request or file.
//!
//! JSON body of `POST /v1/profile/ingest` (one batch, or `{"batches": [...]}`):
//! ```json
//! {"app_service": "redis-server", "profile_language_type": "eBPF",
//!  "profile_event_type": "on-cpu", "profile_value_unit": "microseconds",
//!  "time": 1700000000, "tags": {"host": "node-a", "k8s.label.app": "redis"},
//!  "folded": "[t] main;main;work 10101\n[t] main;main;idle 20202\n"}
//! ```
//! Defaults: language `eBPF`, event type `on-cpu`, unit `microseconds`, time = now.

use std::collections::BTreeMap;

use embers_model::contract::event::{DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE, DEFAULT_UNIT};
use embers_model::wire::folded::parse_folded_line;
use serde::Deserialize;
use serde_json::Value;

use crate::store::{Batch, BatchMeta, Sample, Tags};

fn default_language() -> String {
    DEFAULT_LANGUAGE.to_owned()
}
fn default_event_type() -> String {
    DEFAULT_EVENT_TYPE.to_owned()
}
fn default_unit() -> String {
    DEFAULT_UNIT.to_owned()
}

/// One batch as sent over HTTP.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchInput {
    /// Process name, or `Total` for per-host stacks.
    pub app_service: String,
    /// Language type.
    #[serde(default = "default_language")]
    pub profile_language_type: String,
    /// Event type.
    #[serde(default = "default_event_type")]
    pub profile_event_type: String,
    /// Unit label.
    #[serde(default = "default_unit")]
    pub profile_value_unit: String,
    /// Unix seconds of every sample; now when absent.
    #[serde(default)]
    pub time: Option<i64>,
    /// Tags: names from the seed's field table or open families; string or number values.
    #[serde(default)]
    pub tags: BTreeMap<String, Value>,
    /// Folded stacks, one `frame;frame;frame value` per line.
    pub folded: String,
}

/// A rejected input, pointing at the batch and line where possible.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}{message}", prefix("batch", *.batch), prefix("line", *.line))]
pub struct InputError {
    /// 1-based batch number when the input had several.
    pub batch: Option<usize>,
    /// 1-based line of the folded text.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

/// `"batch 2: "` for `Some(2)`, nothing for `None`.
fn prefix(what: &str, n: Option<usize>) -> String {
    n.map_or_else(String::new, |n| format!("{what} {n}: "))
}

impl InputError {
    fn msg(message: impl Into<String>) -> InputError {
        InputError {
            batch: None,
            line: None,
            message: message.into(),
        }
    }
}

/// Parse folded text into samples at `time`; the first bad line fails the whole text.
pub fn parse_samples(text: &str, time: i64) -> Result<Vec<Sample>, InputError> {
    let mut samples = Vec::new();
    for (i, line) in text.split('\n').enumerate() {
        let bad = |message: String| InputError {
            batch: None,
            line: Some(i + 1),
            message,
        };
        match parse_folded_line(line) {
            Ok(Some((frames, value))) => {
                if i64::try_from(value).is_err() {
                    return Err(bad(format!(
                        "value {value} is too large (at most {})",
                        i64::MAX
                    )));
                }
                samples.push(Sample {
                    time,
                    stack: frames.join(";"),
                    value,
                });
            }
            Ok(None) => {}
            Err(e) => return Err(bad(e.to_string())),
        }
    }
    Ok(samples)
}

/// Build tags from `(name, value)` pairs.
pub fn build_tags<'a>(
    pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
) -> Result<Tags, InputError> {
    let mut tags = Tags::new();
    for (name, value) in pairs {
        tags.set(name, value).map_err(InputError::msg)?;
    }
    Ok(tags)
}

/// Check the batch fields and parse its folded text.
pub fn to_batch(input: &BatchInput, now: i64) -> Result<Batch, InputError> {
    let time = input.time.unwrap_or(now);
    if time <= 0 {
        return Err(InputError::msg("time must be positive Unix seconds"));
    }
    for (field, value) in [
        ("app_service", &input.app_service),
        ("profile_language_type", &input.profile_language_type),
        ("profile_event_type", &input.profile_event_type),
    ] {
        if value.trim().is_empty() {
            return Err(InputError::msg(format!("{field} must not be empty")));
        }
    }
    let mut texts = Vec::with_capacity(input.tags.len());
    for (name, value) in &input.tags {
        let text = match value {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => i32::from(*b).to_string(),
            other => {
                return Err(InputError::msg(format!(
                    "tag '{name}' must be a string or a number, got {other}"
                )))
            }
        };
        texts.push((name.as_str(), text));
    }
    let tags = build_tags(texts.iter().map(|(n, v)| (*n, v.as_str())))?;
    let samples = parse_samples(&input.folded, time)?;
    Ok(Batch {
        meta: BatchMeta {
            app_service: input.app_service.clone(),
            language: input.profile_language_type.clone(),
            event_type: input.profile_event_type.clone(),
            unit: input.profile_value_unit.clone(),
            tags,
        },
        samples,
    })
}

/// Parse a JSON ingest body: one batch object, or `{"batches": [...]}`.
pub fn parse_json_body(body: &[u8], now: i64) -> Result<Vec<Batch>, InputError> {
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| InputError::msg(format!("body is not valid JSON: {e}")))?;
    let inputs: Vec<BatchInput> = match value.get("batches") {
        Some(batches) => serde_json::from_value(batches.clone())
            .map_err(|e| InputError::msg(format!("batches: {e}")))?,
        None => vec![serde_json::from_value(value).map_err(|e| InputError::msg(e.to_string()))?],
    };
    if inputs.is_empty() {
        return Err(InputError::msg("batches must not be empty"));
    }
    let several = inputs.len() > 1;
    inputs
        .iter()
        .enumerate()
        .map(|(i, input)| {
            to_batch(input, now).map_err(|mut e| {
                if several {
                    e.batch = Some(i + 1);
                }
                e
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_skips_blanks() {
        let s = parse_samples("a;b 3\n\n# note\nc 4\n", 10).expect("ok");
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0],
            Sample {
                time: 10,
                stack: "a;b".into(),
                value: 3
            }
        );
    }

    #[test]
    fn bad_line_is_reported_with_its_number() {
        let e = parse_samples("a;b 3\nc;d\ne 1\n", 10).expect_err("bad");
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("line 2: "), "{e}");
        let e = parse_samples("a 18446744073709551615", 1).expect_err("too big");
        assert!(e.message.contains("too large"));
    }

    #[test]
    fn json_body_single_and_many() {
        let one =
            br#"{"app_service":"web","time":5,"tags":{"host":"h","is_ipv4":1},"folded":"a 1\n"}"#;
        let b = parse_json_body(one, 99).expect("ok");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].meta.event_type, "on-cpu");
        assert_eq!(b[0].samples[0].time, 5);
        let many =
            br#"{"batches":[{"app_service":"a","folded":"x 1"},{"app_service":"b","folded":"y"}]}"#;
        let e = parse_json_body(many, 99).expect_err("bad line");
        assert_eq!(
            e.to_string(),
            "batch 2: line 1: expected `frame;frame;... value` but found no value after the stack"
        );
    }

    #[test]
    fn json_body_errors() {
        assert!(parse_json_body(b"nope", 1)
            .expect_err("json")
            .message
            .contains("not valid JSON"));
        assert!(parse_json_body(br#"{"folded":"a 1"}"#, 1)
            .expect_err("missing")
            .message
            .contains("app_service"));
        assert!(parse_json_body(
            br#"{"app_service":"a","folded":"a 1","tags":{"colour":"x"}}"#,
            1
        )
        .expect_err("tag")
        .message
        .contains("unknown tag 'colour'"));
        assert!(
            parse_json_body(br#"{"app_service":"a","folded":"a 1","tmie":3}"#, 1)
                .expect_err("typo")
                .message
                .contains("tmie")
        );
    }
}
