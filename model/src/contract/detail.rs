//! Detail below a stored sample, never new frames (docs/design/lines-and-time.md): the source
//! line each frame was executing, and the millisecond and thread of each event folded into the
//! sample. Every producer fills what it knows (the collector, pprof, JFR, OTLP, perf script) and
//! leaves the rest empty; ProfileTracing answers are built without it and stay exactly as they
//! are. The ingest body carries it per folded line (`details`, see [`super::ingest`]).

use serde::{Deserialize, Serialize};

/// Where in the source a frame was executing.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SourceLine {
    /// The file as the producer names it (a build path, a package path, a class's source file).
    pub file: String,
    /// 1-based line number.
    pub line: u32,
}

/// One event folded into a sample: when within the sample's second, on which thread, how much.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TimedEvent {
    /// Milliseconds after the start of the sample's second (0–999).
    pub offset_ms: u16,
    /// The OS thread (or the producer's thread id) the event happened on.
    pub tid: u32,
    /// The event's share of the sample's value, in the sample's unit; at least 1, so a sample
    /// holds at most as many events as its value.
    #[cfg_attr(feature = "openapi", schema(minimum = 1))]
    pub weight: u64,
}

/// The detail of one sample; empty parts mean "the producer did not say".
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct SampleDetail {
    /// One entry per frame of the sample's stack, root first, `null` where the line is unknown;
    /// empty when no frame has one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<Option<SourceLine>>,
    /// The events folded into the sample, in time order; their weights add up to the sample's
    /// value. Empty when the producer times samples only to the second.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<TimedEvent>,
}

/// Why a detail does not fit its sample.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DetailError {
    /// `lines` is neither empty nor one entry per frame.
    LineCount { lines: usize, frames: usize },
    /// A line number of 0 (lines are 1-based).
    ZeroLine { frame: usize },
    /// An event offset outside its second.
    OffsetOutOfSecond { offset_ms: u16 },
    /// An event of weight 0: it would add nothing but its own storage, so a sender could pile
    /// events without end onto a sample of value 1.
    ZeroWeight { event: usize },
    /// Event weights that do not add up to the sample's value.
    WeightSum { events: u64, value: u64 },
}

impl std::fmt::Display for DetailError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::LineCount { lines, frames } => write!(
                f,
                "detail has {lines} lines for a stack of {frames} frames (give one per frame, or none)"
            ),
            Self::ZeroLine { frame } => write!(f, "detail line of frame {frame} is 0 (lines start at 1)"),
            Self::OffsetOutOfSecond { offset_ms } => write!(
                f,
                "event offset_ms {offset_ms} is outside its second (0-999)"
            ),
            Self::ZeroWeight { event } => write!(
                f,
                "event {event} has weight 0 (every event carries at least 1 of the sample's value)"
            ),
            Self::WeightSum { events, value } => write!(
                f,
                "event weights add up to {events}, not the sample's value {value}"
            ),
        }
    }
}

impl std::error::Error for DetailError {}

impl SampleDetail {
    /// Nothing known below the sample.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.events.is_empty()
    }

    /// Check the detail against its sample's frame count and value.
    pub fn check(&self, frames: usize, value: u64) -> Result<(), DetailError> {
        if !self.lines.is_empty() && self.lines.len() != frames {
            return Err(DetailError::LineCount {
                lines: self.lines.len(),
                frames,
            });
        }
        if let Some(frame) = self
            .lines
            .iter()
            .position(|l| matches!(l, Some(l) if l.line == 0))
        {
            return Err(DetailError::ZeroLine { frame: frame + 1 });
        }
        if let Some(e) = self.events.iter().find(|e| e.offset_ms > 999) {
            return Err(DetailError::OffsetOutOfSecond {
                offset_ms: e.offset_ms,
            });
        }
        if let Some(event) = self.events.iter().position(|e| e.weight == 0) {
            return Err(DetailError::ZeroWeight { event: event + 1 });
        }
        if !self.events.is_empty() {
            let events = self
                .events
                .iter()
                .fold(0u64, |sum, e| sum.saturating_add(e.weight));
            if events != value {
                return Err(DetailError::WeightSum { events, value });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(line: u32) -> Option<SourceLine> {
        Some(SourceLine {
            file: "main.go".into(),
            line,
        })
    }

    #[test]
    fn a_detail_fits_its_sample_or_says_why_not() {
        let ok = SampleDetail {
            lines: vec![None, line(12)],
            events: vec![
                TimedEvent {
                    offset_ms: 0,
                    tid: 7,
                    weight: 3,
                },
                TimedEvent {
                    offset_ms: 999,
                    tid: 8,
                    weight: 2,
                },
            ],
        };
        assert_eq!(ok.check(2, 5), Ok(()));
        assert_eq!(
            ok.check(3, 5),
            Err(DetailError::LineCount {
                lines: 2,
                frames: 3
            })
        );
        assert_eq!(
            ok.check(2, 6),
            Err(DetailError::WeightSum {
                events: 5,
                value: 6
            })
        );
        let zero = SampleDetail {
            lines: vec![line(0)],
            events: vec![],
        };
        assert_eq!(zero.check(1, 1), Err(DetailError::ZeroLine { frame: 1 }));
        let late = SampleDetail {
            lines: vec![],
            events: vec![TimedEvent {
                offset_ms: 1000,
                tid: 1,
                weight: 1,
            }],
        };
        assert!(late.check(1, 1).unwrap_err().to_string().contains("0-999"));
        assert!(SampleDetail::default().is_empty());
    }

    #[test]
    fn weightless_events_are_refused_so_a_sample_holds_at_most_its_value_in_events() {
        let event = |weight| TimedEvent {
            offset_ms: 1,
            tid: 1,
            weight,
        };
        // 30,000 events of weight 0 and one of 1 add up to a value of 1: refused at the first.
        let mut events = vec![event(0); 30_000];
        events.push(event(1));
        let piled = SampleDetail {
            lines: vec![],
            events,
        };
        assert_eq!(piled.check(1, 1), Err(DetailError::ZeroWeight { event: 1 }));
        assert!(piled
            .check(1, 1)
            .unwrap_err()
            .to_string()
            .contains("weight 0"));
    }

    #[test]
    fn empty_parts_are_left_out_of_json_and_read_back() {
        let detail = SampleDetail {
            lines: vec![line(3)],
            events: vec![],
        };
        let json = serde_json::to_string(&detail).expect("serialises");
        assert_eq!(json, r#"{"lines":[{"file":"main.go","line":3}]}"#);
        let back: SampleDetail = serde_json::from_str(&json).expect("reads");
        assert_eq!(back, detail);
    }
}
