//! Pyroscope's push API, `push.v1.PusherService/Push` (Connect unary), as Grafana Alloy's
//! `pyroscope.write` sends it: a `PushRequest` of series, each a set of labels and samples whose
//! `raw_profile` is a (gzipped) pprof profile.
//!
//! ```text
//! message PushRequest      { repeated RawProfileSeries series = 1; }
//! message RawProfileSeries { repeated LabelPair labels = 1; repeated RawSample samples = 2; }
//! message LabelPair        { string name = 1; string value = 2; }
//! message RawSample        { bytes raw_profile = 1; string ID = 2; }
//! ```
//!
//! The binary form (`application/proto`) is read with the model's protobuf reader, the JSON
//! form (`application/json`, proto3 JSON: `rawProfile` in base64) with serde. `service_name`
//! is the app (required), `__name__` the profile type (`process_cpu`, `memory`, ...),
//! `pyroscope_spy` the language; the other labels are tags ([`super::labels`]). Each profile's
//! samples are placed at its own `time_nanos`.
//!
//! The pyroscope-rs SDKs (the Python and Ruby packages are built on it) send no
//! `pyroscope_spy` label but name their spy in the user agent, `pyroscope-rs/<spy>/<version>`
//! (`pyroscope-rs/pyspy/1.4.0`): without the label, that spy gives the language, by the same
//! table as `/ingest`'s `spyName` ([`language_of_spy`]).

use data_encoding::BASE64;
use embers_model::budget::Budget;
use embers_model::contract::event::language_of_spy;
use embers_model::wire::protobuf::{Reader, Value};
use serde::Deserialize;

use super::labels::{tags_of, METRIC_NAME, SERVICE_NAME, SPY_NAME};
use super::pprof::{Selection, Target};
use super::pyroscope::Ingest;
use super::{gzip, FormatError};
use crate::limits::StackLimits;

/// One series: its labels and its profiles (as sent: gzipped or not).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Series {
    /// Label pairs.
    pub labels: Vec<(String, String)>,
    /// `raw_profile` of every sample.
    pub profiles: Vec<Vec<u8>>,
}

/// Memory one decoded series, label or profile may take beside its bytes (the struct and its
/// vector's growth): an empty one is two bytes on the wire.
const ENTRY_BYTES: usize = 96;

/// Reads a binary `PushRequest`, every series, label and profile charged to `budget` before
/// it is kept.
pub fn decode_proto(body: &[u8], budget: &Budget) -> Result<Vec<Series>, FormatError> {
    let bad = |e: embers_model::wire::protobuf::WireError| {
        FormatError::invalid(format!("not a PushRequest: {e}"))
    };
    let mut out = Vec::new();
    let mut r = Reader::new(body);
    while let Some((field, value)) = r.field().map_err(bad)? {
        let (1, Value::Bytes(series)) = (field, value) else {
            continue;
        };
        budget.charge(ENTRY_BYTES, "push series")?;
        let mut s = Series::default();
        let mut sr = Reader::nested(series, r.position());
        while let Some((field, value)) = sr.field().map_err(bad)? {
            match (field, value) {
                (1, Value::Bytes(pair)) => {
                    budget.charge(ENTRY_BYTES + pair.len(), "push labels")?;
                    s.labels.push(label(pair, sr.position()).map_err(bad)?);
                }
                (2, Value::Bytes(sample)) => {
                    let mut rr = Reader::nested(sample, sr.position());
                    while let Some((field, value)) = rr.field().map_err(bad)? {
                        if let (1, Value::Bytes(raw)) = (field, value) {
                            budget.charge(ENTRY_BYTES + raw.len(), "push profiles")?;
                            s.profiles.push(raw.to_vec());
                        }
                    }
                }
                _ => {}
            }
        }
        out.push(s);
    }
    Ok(out)
}

fn label(
    pair: &[u8],
    at: usize,
) -> Result<(String, String), embers_model::wire::protobuf::WireError> {
    let (mut name, mut value) = (String::new(), String::new());
    let mut r = Reader::nested(pair, at);
    while let Some((field, v)) = r.field()? {
        if let Value::Bytes(b) = v {
            let text = String::from_utf8_lossy(b).into_owned();
            match field {
                1 => name = text,
                2 => value = text,
                _ => {}
            }
        }
    }
    Ok((name, value))
}

#[derive(Deserialize)]
struct JsonRequest {
    #[serde(default)]
    series: Vec<JsonSeries>,
}

#[derive(Deserialize)]
struct JsonSeries {
    #[serde(default)]
    labels: Vec<JsonLabel>,
    #[serde(default)]
    samples: Vec<JsonSample>,
}

#[derive(Deserialize)]
struct JsonLabel {
    #[serde(default)]
    name: String,
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
struct JsonSample {
    #[serde(default, alias = "raw_profile", rename = "rawProfile")]
    raw_profile: String,
}

/// Reads a JSON `PushRequest` (proto3 JSON mapping), its objects charged to `budget` first.
pub fn decode_json(body: &[u8], budget: &Budget) -> Result<Vec<Series>, FormatError> {
    super::charge_json(body, ENTRY_BYTES, budget)?;
    let request: JsonRequest = serde_json::from_slice(body)
        .map_err(|e| FormatError::invalid(format!("not a JSON PushRequest: {e}")))?;
    request
        .series
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let profiles = s
                .samples
                .into_iter()
                .map(|sample| {
                    BASE64.decode(sample.raw_profile.as_bytes()).map_err(|e| {
                        FormatError::invalid(format!(
                            "series {}: rawProfile is not base64: {e}",
                            i + 1
                        ))
                    })
                })
                .collect::<Result<_, _>>()?;
            Ok(Series {
                labels: s.labels.into_iter().map(|l| (l.name, l.value)).collect(),
                profiles,
            })
        })
        .collect()
}

/// The spy a pyroscope-rs SDK names in its user agent (`pyroscope-rs/pyspy/1.4.0` → `pyspy`),
/// in any of the agent's product tokens.
pub fn spy_of_user_agent(user_agent: &str) -> Option<&str> {
    user_agent.split_whitespace().find_map(|product| {
        let mut parts = product.strip_prefix("pyroscope-rs/")?.split('/');
        parts.next().filter(|spy| !spy.is_empty())
    })
}

/// The batches of every series; what all the profiles expand to (gunzipped, decoded, named)
/// is charged to the request's one `budget`, and they may decompress to `max_bytes` in all
/// (`--max-ingest-bytes`). `user_agent` is the sender's, for the language of series without a
/// `pyroscope_spy` label.
pub fn batches(
    series: &[Series],
    limits: &StackLimits,
    max_bytes: usize,
    budget: &Budget,
    user_agent: Option<&str>,
) -> Result<Ingest, FormatError> {
    // Only a spy the table knows: another agent's token says nothing about the language.
    let agent_language = user_agent
        .and_then(spy_of_user_agent)
        .and_then(language_of_spy);
    let mut left = max_bytes;
    let mut out = Ingest {
        batches: Vec::new(),
        ignored_labels: Vec::new(),
    };
    for (i, s) in series.iter().enumerate() {
        let context = format!("series {}", i + 1);
        let get = |name: &str| {
            s.labels
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let app = get(SERVICE_NAME)
            .filter(|a| !a.trim().is_empty())
            .ok_or_else(|| {
                FormatError::invalid(format!("{context} has no {SERVICE_NAME} label (the app)"))
            })?;
        let language = get(SPY_NAME)
            .map(|spy| language_of_spy(spy).unwrap_or(spy))
            .or(agent_language);
        let labels = s.labels.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let labeled = tags_of(labels, app).map_err(|e| e.context(&context))?;
        out.ignored_labels.extend(labeled.ignored);
        let profile_type = get(METRIC_NAME).unwrap_or("profile");
        for (j, raw) in s.profiles.iter().enumerate() {
            let context = format!("{context} ({profile_type}) sample {}", j + 1);
            let bytes =
                gzip::maybe_gunzip_within(raw, left, budget).map_err(|e| e.context(&context))?;
            left = left.saturating_sub(bytes.len());
            let target = Target {
                app_service: app,
                language,
                time: None,
                tags: &labeled.tags,
                selection: Selection::Default,
                unit: None,
                budget,
            };
            let batches = super::pprof::batches(&bytes, None, &target, limits)
                .map_err(|e| e.context(&context))?;
            out.batches.extend(batches);
        }
    }
    out.ignored_labels.sort();
    out.ignored_labels.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spy_of_a_pyroscope_rs_user_agent() {
        assert_eq!(spy_of_user_agent("pyroscope-rs/pyspy/1.4.0"), Some("pyspy"));
        assert_eq!(
            spy_of_user_agent("reqwest/0.12 pyroscope-rs/rbspy/0.3.2"),
            Some("rbspy")
        );
        assert_eq!(spy_of_user_agent("pyroscope-rs//1.0"), None);
        assert_eq!(spy_of_user_agent("Go-http-client/1.1"), None);
        assert_eq!(
            spy_of_user_agent("pyroscope-rs/pyspy/1.4.0").and_then(language_of_spy),
            Some("python")
        );
    }
}
