//! Batches as ingest inputs for `import --to`: one input per second its samples are at, each
//! sample's detail (source lines, event times) in `details` under its position in the input's
//! `folded` text, and inputs too big for one request cut between lines, each piece's details
//! numbered again from its own first line.

use std::collections::BTreeMap;

use embers_model::contract::ingest::{BatchInput, FoldedDetail};
use serde_json::Value;

use crate::store::Batch;

/// A batch as ingest inputs, one per second its samples are at.
pub(super) fn inputs_of(batch: &Batch) -> Vec<BatchInput> {
    let mut by_time: BTreeMap<i64, (String, Vec<FoldedDetail>, usize)> = BTreeMap::new();
    for sample in &batch.samples {
        let (folded, details, count) = by_time.entry(sample.time).or_default();
        folded.push_str(&sample.stack);
        folded.push(' ');
        folded.push_str(&sample.value.to_string());
        folded.push('\n');
        if let Some(d) = sample.detail.as_deref().filter(|d| !d.is_empty()) {
            details.push(FoldedDetail {
                sample: *count,
                lines: d.lines.clone(),
                events: d.events.clone(),
            });
        }
        *count += 1;
    }
    let m = &batch.meta;
    let tags: BTreeMap<String, Value> = m
        .tags
        .pairs()
        .map(|(n, v)| (n.to_owned(), Value::String(v.to_owned())))
        .collect();
    by_time
        .into_iter()
        .map(|(time, (folded, details, _))| BatchInput {
            app_service: m.app_service.clone(),
            profile_language_type: m.language.clone(),
            profile_event_type: m.event_type.clone(),
            profile_value_unit: m.unit.clone(),
            time: Some(time),
            tags: tags.clone(),
            folded,
            details,
        })
        .collect()
}

/// The bytes a detail adds to a request (its JSON).
pub(super) fn detail_bytes(d: &FoldedDetail) -> usize {
    serde_json::to_vec(d).map_or(0, |v| v.len() + 1)
}

/// `input` in pieces whose folded text and details are at most about `limit` bytes, cut
/// between lines; each piece's details name their samples from its own first line.
pub(super) fn cut(input: BatchInput, limit: usize) -> Vec<BatchInput> {
    let total = input.folded.len() + input.details.iter().map(detail_bytes).sum::<usize>();
    if total <= limit {
        return vec![input];
    }
    let mut by_sample: BTreeMap<usize, FoldedDetail> = input
        .details
        .iter()
        .map(|d| (d.sample, d.clone()))
        .collect();
    let mut pieces: Vec<(String, Vec<FoldedDetail>)> = Vec::new();
    let (mut text, mut details, mut size) = (String::new(), Vec::new(), 0);
    for (i, line) in input.folded.split_inclusive('\n').enumerate() {
        let detail = by_sample.remove(&i);
        let cost = line.len() + detail.as_ref().map_or(0, detail_bytes);
        if !text.is_empty() && size + cost > limit {
            pieces.push((std::mem::take(&mut text), std::mem::take(&mut details)));
            size = 0;
        }
        if let Some(mut d) = detail {
            d.sample = text.matches('\n').count();
            details.push(d);
        }
        text.push_str(line);
        size += cost;
    }
    pieces.push((text, details));
    pieces
        .into_iter()
        .map(|(folded, details)| BatchInput {
            folded,
            details,
            ..input.clone()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{BatchMeta, Sample, Tags};
    use embers_model::contract::detail::{SampleDetail, SourceLine, TimedEvent};

    fn detail(line: u32) -> Option<Box<SampleDetail>> {
        Some(Box::new(SampleDetail {
            lines: vec![
                None,
                Some(SourceLine {
                    file: "w.c".into(),
                    line,
                }),
            ],
            events: vec![TimedEvent {
                offset_ms: 5,
                tid: 9,
                weight: u64::from(line),
            }],
        }))
    }

    fn batch(samples: &[(i64, &str, u64, bool)]) -> Batch {
        Batch {
            meta: BatchMeta {
                app_service: "myapp".into(),
                language: "eBPF".into(),
                event_type: "on-cpu".into(),
                unit: "microseconds".into(),
                tags: Tags::new().with("host", "node-a").expect("tag"),
            },
            samples: samples
                .iter()
                .map(|&(time, stack, value, with)| Sample {
                    time,
                    stack: stack.into(),
                    value,
                    detail: if with { detail(value as u32) } else { None },
                })
                .collect(),
        }
    }

    #[test]
    fn a_batch_is_one_input_per_second_with_its_tags_and_details() {
        let b = batch(&[
            (10, "main;a", 3, false),
            (11, "main;b", 4, true),
            (10, "main;c", 5, true),
        ]);
        let inputs = inputs_of(&b);
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs[0].time, Some(10));
        assert_eq!(inputs[0].folded, "main;a 3\nmain;c 5\n");
        assert_eq!(inputs[1].folded, "main;b 4\n");
        assert_eq!(inputs[0].tags["host"], "node-a");
        assert_eq!(inputs[0].profile_value_unit, "microseconds");
        assert_eq!(inputs[0].details.len(), 1);
        assert_eq!(inputs[0].details[0].sample, 1, "main;c is the second line");
        assert_eq!(inputs[0].details[0].to_detail(), *detail(5).expect("d"));
        assert_eq!(inputs[1].details[0].sample, 0);
    }

    #[test]
    fn cut_pieces_number_their_details_from_their_own_first_line() {
        let stacks: Vec<String> = (0..40).map(|i| format!("main;f{i:03}")).collect();
        let samples: Vec<(i64, &str, u64, bool)> = stacks
            .iter()
            .enumerate()
            .map(|(i, s)| (7, s.as_str(), i as u64 + 1, i % 3 == 0))
            .collect();
        let input = inputs_of(&batch(&samples)).remove(0);
        let pieces = cut(input, 300);
        assert!(pieces.len() > 2, "{}", pieces.len());
        let mut seen = 0;
        for p in &pieces {
            let lines: Vec<&str> = p.folded.lines().collect();
            for d in &p.details {
                // The detail's line is the sample it was made for (value = line number).
                let value: u32 = lines[d.sample].rsplit(' ').next().unwrap().parse().unwrap();
                assert_eq!(d.lines[1].as_ref().map(|l| l.line), Some(value));
                assert_eq!((value - 1) % 3, 0);
                seen += 1;
            }
        }
        assert_eq!(seen, 14);
    }
}
