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
//!
//! Stacks are held to [`StackLimits`] (frames per stack, bytes per frame). A JSON body is
//! deserialised straight into [`BatchInput`]s (no intermediate `serde_json::Value`), and each
//! batch's text is freed once its samples are parsed, so a request's peak memory stays a small
//! multiple of its body.

pub use embers_model::contract::ingest::BatchInput;
use embers_model::contract::ingest::{Batches, FoldedDetail};
use embers_model::wire::folded::parse_folded_line;
use serde::de::IgnoredAny;
use serde::Deserialize;
use serde_json::Value;

use crate::limits::StackLimits;
use crate::store::{Batch, BatchMeta, Sample, Tags};

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

/// Parse folded text into samples at `time`; the first bad line (or a stack over `limits`)
/// fails the whole text.
pub fn parse_samples(
    text: &str,
    time: i64,
    limits: &StackLimits,
) -> Result<Vec<Sample>, InputError> {
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
                check_stack(&frames, limits).map_err(bad)?;
                samples.push(Sample {
                    time,
                    stack: frames.join(";"),
                    value,
                    detail: None,
                });
            }
            Ok(None) => {}
            Err(e) => return Err(bad(e.to_string())),
        }
    }
    Ok(samples)
}

/// Whether a stack is within `limits`; the message names the limit, its option and the value.
pub fn check_stack(frames: &[&str], limits: &StackLimits) -> Result<(), String> {
    check_frame_count(frames.len(), limits)?;
    if let Some((at, frame)) = frames
        .iter()
        .enumerate()
        .find(|(_, f)| f.len() > limits.max_frame_bytes)
    {
        return Err(format!(
            "frame {} is {} bytes long, over the limit of {} bytes per frame (--max-frame-bytes)",
            at + 1,
            frame.len(),
            limits.max_frame_bytes
        ));
    }
    Ok(())
}

/// Whether a stack of `frames` frames fits `limits` (its message names the limit's option).
fn check_frame_count(frames: usize, limits: &StackLimits) -> Result<(), String> {
    if frames > limits.max_frames {
        return Err(format!(
            "the stack has {frames} frames, over the limit of {} frames per stack \
             (--max-stack-frames)",
            limits.max_frames
        ));
    }
    Ok(())
}

/// [`check_stack`] for a stack known by its number of frames and its longest frame's bytes
/// (the stacks of formats that name frames themselves).
pub fn check_stack_size(frames: usize, longest: usize, limits: &StackLimits) -> Result<(), String> {
    check_frame_count(frames, limits)?;
    if longest > limits.max_frame_bytes {
        return Err(format!(
            "a frame is {longest} bytes long, over the limit of {} bytes per frame \
             (--max-frame-bytes)",
            limits.max_frame_bytes
        ));
    }
    Ok(())
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

/// Give each sample the detail a batch's `details` names it by, checked against its stack and
/// value.
fn attach_details(samples: &mut [Sample], details: &[FoldedDetail]) -> Result<(), InputError> {
    let count = samples.len();
    // An empty detail attaches nothing but still names its sample once.
    let mut named = vec![false; if details.is_empty() { 0 } else { count }];
    for (i, folded) in details.iter().enumerate() {
        let bad = |why: String| InputError::msg(format!("details[{i}]: {why}"));
        let sample = samples.get_mut(folded.sample).ok_or_else(|| {
            bad(format!(
                "sample {} does not exist (folded has {count} samples, counted from 0)",
                folded.sample
            ))
        })?;
        if std::mem::replace(&mut named[folded.sample], true) {
            return Err(bad(format!(
                "sample {} has a detail already",
                folded.sample
            )));
        }
        let detail = folded.to_detail();
        let frames = sample.stack.split(';').count();
        detail
            .check(frames, sample.value)
            .map_err(|e| bad(e.to_string()))?;
        if !detail.is_empty() {
            sample.detail = Some(Box::new(detail));
        }
    }
    Ok(())
}

/// Check the batch fields and parse its folded text.
pub fn to_batch(input: &BatchInput, now: i64, limits: &StackLimits) -> Result<Batch, InputError> {
    to_batch_of(input, &input.folded, now, limits)
}

/// [`to_batch`] with `folded` as the text instead of `input.folded` (which is not read): for
/// text that arrived on its own, so it is not copied into the input first.
pub fn to_batch_of(
    input: &BatchInput,
    folded: &str,
    now: i64,
    limits: &StackLimits,
) -> Result<Batch, InputError> {
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
    let mut samples = parse_samples(folded, time, limits)?;
    attach_details(&mut samples, &input.details)?;
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

/// Whether a JSON body has a `batches` member (any other member is skipped unread).
#[derive(Deserialize)]
struct Form {
    #[serde(default)]
    batches: Option<IgnoredAny>,
}

/// A serde error as the message of a rejected body.
fn json_error(prefix: &str, e: &serde_json::Error) -> InputError {
    if e.is_syntax() || e.is_eof() {
        InputError::msg(format!("body is not valid JSON: {e}"))
    } else {
        InputError::msg(format!("{prefix}{e}"))
    }
}

/// Parse a JSON ingest body: one batch object, or `{"batches": [...]}`.
pub fn parse_json_body(
    body: &[u8],
    now: i64,
    limits: &StackLimits,
) -> Result<Vec<Batch>, InputError> {
    // serde would also read a struct from an array; only an object is a batch.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Err(match serde_json::from_slice::<IgnoredAny>(body) {
            Err(e) => json_error("", &e),
            Ok(_) => InputError::msg(
                "the body must be a JSON object: one batch, or {\"batches\": [...]}",
            ),
        });
    }
    // A first pass that only looks for `batches` costs a scan of the body but no copy of it.
    let form: Form = serde_json::from_slice(body).map_err(|e| json_error("", &e))?;
    let inputs: Vec<BatchInput> = if form.batches.is_some() {
        serde_json::from_slice::<Batches>(body)
            .map_err(|e| json_error("batches: ", &e))?
            .batches
    } else {
        vec![serde_json::from_slice(body).map_err(|e| json_error("", &e))?]
    };
    if inputs.is_empty() {
        return Err(InputError::msg("batches must not be empty"));
    }
    let several = inputs.len() > 1;
    // `into_iter` frees each batch's text as soon as its samples are parsed.
    inputs
        .into_iter()
        .enumerate()
        .map(|(i, input)| {
            to_batch(&input, now, limits).map_err(|mut e| {
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

    const L: StackLimits = StackLimits {
        max_frames: 4,
        max_frame_bytes: 8,
    };

    #[test]
    fn parses_lines_and_skips_blanks() {
        let s = parse_samples("a;b 3\n\n# note\nc 4\n", 10, &L).expect("ok");
        assert_eq!(s.len(), 2);
        assert_eq!(
            s[0],
            Sample {
                time: 10,
                stack: "a;b".into(),
                value: 3,
                detail: None,
            }
        );
    }

    #[test]
    fn details_reach_their_sample_or_name_what_is_wrong() {
        let body = br#"{"app_service":"web","time":5,"folded":"main;work 10\n\nmain;idle 4\n",
            "details":[{"sample":1,"lines":[null,{"file":"idle.c","line":7}],
                        "events":[{"offset_ms":10,"tid":3,"weight":1},{"offset_ms":900,"tid":3,"weight":3}]}]}"#;
        let batch = &parse_json_body(body, 99, &L).expect("ok")[0];
        assert_eq!(batch.samples[0].detail, None);
        let detail = batch.samples[1]
            .detail
            .as_deref()
            .expect("the second sample's detail");
        assert_eq!(detail.lines[1].as_ref().map(|l| l.line), Some(7));
        assert_eq!(detail.events.len(), 2);
        for (details, why) in [
            (r#"[{"sample":2}]"#, "details[0]: sample 2 does not exist"),
            (
                r#"[{"sample":0,"lines":[null]}]"#,
                "details[0]: detail has 1 lines",
            ),
            (
                r#"[{"sample":0},{"sample":0}]"#,
                "details[1]: sample 0 has a detail already",
            ),
            (
                r#"[{"sample":0,"events":[{"offset_ms":1,"tid":1,"weight":9}]}]"#,
                "not the sample's value 10",
            ),
        ] {
            let body =
                format!(r#"{{"app_service":"w","folded":"main;work 10","details":{details}}}"#);
            let e = parse_json_body(body.as_bytes(), 99, &L).expect_err(why);
            assert!(e.to_string().contains(why), "{e} / {why}");
        }
    }

    #[test]
    fn bad_line_is_reported_with_its_number() {
        let e = parse_samples("a;b 3\nc;d\ne 1\n", 10, &L).expect_err("bad");
        assert_eq!(e.line, Some(2));
        assert!(e.to_string().starts_with("line 2: "), "{e}");
        let e = parse_samples("a 18446744073709551615", 1, &L).expect_err("too big");
        assert!(e.message.contains("too large"));
    }

    #[test]
    fn json_body_single_and_many() {
        let one =
            br#"{"app_service":"web","time":5,"tags":{"host":"h","is_ipv4":1},"folded":"a 1\n"}"#;
        let b = parse_json_body(one, 99, &L).expect("ok");
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].meta.event_type, "on-cpu");
        assert_eq!(b[0].samples[0].time, 5);
        let many =
            br#"{"batches":[{"app_service":"a","folded":"x 1"},{"app_service":"b","folded":"y"}]}"#;
        let e = parse_json_body(many, 99, &L).expect_err("bad line");
        assert_eq!(
            e.to_string(),
            "batch 2: line 1: expected `frame;frame;... value` but found no value after the stack"
        );
    }

    #[test]
    fn json_body_errors() {
        assert!(parse_json_body(b"nope", 1, &L)
            .expect_err("json")
            .message
            .contains("not valid JSON"));
        assert!(parse_json_body(br#"{"folded":"a 1"}"#, 1, &L)
            .expect_err("missing")
            .message
            .contains("app_service"));
        assert!(parse_json_body(
            br#"{"app_service":"a","folded":"a 1","tags":{"colour":"x"}}"#,
            1,
            &L
        )
        .expect_err("tag")
        .message
        .contains("unknown tag 'colour'"));
        assert!(
            parse_json_body(br#"{"app_service":"a","folded":"a 1","tmie":3}"#, 1, &L)
                .expect_err("typo")
                .message
                .contains("tmie")
        );
    }

    #[test]
    fn stacks_over_the_limits_are_refused_naming_the_limit_and_the_value() {
        let e = parse_samples("a;b 1\na;b;c;d;e 2\n", 1, &L).expect_err("deep");
        assert_eq!(e.line, Some(2));
        assert_eq!(
            e.message,
            "the stack has 5 frames, over the limit of 4 frames per stack (--max-stack-frames)"
        );
        assert!(parse_samples("a;b;c;d 1", 1, &L).is_ok());
        let e = parse_samples("a;123456789 1", 1, &L).expect_err("long frame");
        assert_eq!(
            e.message,
            "frame 2 is 9 bytes long, over the limit of 8 bytes per frame (--max-frame-bytes)"
        );
        assert!(parse_samples("a;12345678 1", 1, &L).is_ok());
    }

    #[test]
    fn json_body_shapes_other_than_an_object_are_named() {
        let e = parse_json_body(b"[1, 2]", 1, &L).expect_err("array");
        assert!(
            e.message.starts_with("the body must be a JSON object"),
            "{e}"
        );
        let e = parse_json_body(br#"{"batches": 3}"#, 1, &L).expect_err("number");
        assert!(e.message.starts_with("batches: invalid type"), "{e}");
        let e = parse_json_body(br#"{"batches": []}"#, 1, &L).expect_err("empty");
        assert_eq!(e.message, "batches must not be empty");
        let ok = parse_json_body(
            br#"{"batches": [{"app_service": "a", "folded": "x 1"}], "note": {"y": [1]}}"#,
            1,
            &L,
        )
        .expect("other members are ignored");
        assert_eq!(ok.len(), 1);
    }
}
