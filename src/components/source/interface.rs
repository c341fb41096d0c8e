//! What the page and the Source panel say to each other: the page sends [`SourceInput`]
//! (again whenever it changes), the panel sends [`SourceEvent`]s. Plain serde data both ways,
//! so the panel runs as an on-demand module (`source_view`, see `crate::on_demand`).

use embers_model::contract::request::ProfileRequest;
use embers_model::tree::lines::LineStat;
use serde::{Deserialize, Serialize};

/// The module's stem and the view's name in its notes (when built on demand).
pub const SOURCE_VIEW: crate::on_demand::ViewModule = crate::on_demand::ViewModule {
    stem: "source_view",
    label: "Source",
};

/// Everything the panel shows depends on.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceInput {
    /// The selected function (`None`: nothing selected yet).
    pub function: Option<String>,
    /// Rank lines by self (the graph's metric) instead of total.
    pub by_self: bool,
    /// The values' event type (their unit).
    pub event_type: String,
    /// The values count samples (folded text without a header).
    pub samples: bool,
    /// The profile's language (who produced it: `eBPF` is the collector).
    pub language: String,
    /// Where the lines come from.
    pub from: LinesFrom,
}

/// Where a function's lines come from.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinesFrom {
    /// The service that answered the profile: the panel asks it (`function_lines`, and the
    /// source text or link its `source_config` offers).
    Service {
        /// Where the service is (empty: this page's origin).
        base_url: String,
        /// The profile's question.
        request: ProfileRequest,
    },
    /// An opened file: its lines were summed by the file reader.
    File {
        /// The function's lines.
        rows: Vec<LineStat>,
        /// The function's total in the file (what the lines' shares are of).
        function_total: u64,
        /// Why the file has no lines at all, when it has none.
        why_none: Option<String>,
    },
    /// A view without lines (a comparison, a snapshot, folded text).
    #[default]
    Unavailable,
}

/// What the user did in the panel. Externally tagged (serde's default, `"close"`): the page
/// reads it, and an internally tagged enum would bring serde's `Content` buffering into the page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceEvent {
    /// Close the panel.
    Close,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn input_and_events_round_trip_as_json() {
        let input = SourceInput {
            function: Some("main.hotLoop".into()),
            by_self: true,
            event_type: "cpu".into(),
            samples: false,
            language: "Golang".into(),
            from: LinesFrom::File {
                rows: vec![LineStat {
                    file: "/src/main.go".into(),
                    line: 26,
                    self_value: 34,
                    total_value: 49,
                }],
                function_total: 65,
                why_none: None,
            },
        };
        let json = serde_json::to_string(&input).unwrap();
        assert!(json.contains(r#""kind":"file""#), "{json}");
        assert_eq!(serde_json::from_str::<SourceInput>(&json).unwrap(), input);
        let service = LinesFrom::Service {
            base_url: String::new(),
            request: ProfileRequest::default(),
        };
        let json = serde_json::to_string(&service).unwrap();
        assert_eq!(serde_json::from_str::<LinesFrom>(&json).unwrap(), service);
        let close = serde_json::to_string(&SourceEvent::Close).unwrap();
        assert_eq!(close, r#""close""#);
        assert_eq!(
            serde_json::from_str::<SourceEvent>(&close).unwrap(),
            SourceEvent::Close
        );
        assert!(serde_json::from_str::<SourceEvent>(r#""nope""#).is_err());
    }
}
