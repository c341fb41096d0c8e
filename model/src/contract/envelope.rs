//! The response envelope every ProfileTracing answer (and every Embers API answer) is wrapped
//! in: `{"OPT_STATUS", "DESCRIPTION", "result", "debug"}`, in the querier's member order. One
//! definition for both directions: the service and the exporters write it with borrowed text,
//! the viewer's decoders and API client and the service's upstream SQL client read it as
//! [`Incoming`].

use serde::de::IgnoredAny;
use serde::{Deserialize, Serialize};

/// `OPT_STATUS` of a successful answer.
pub const SUCCESS: &str = "SUCCESS";
/// `OPT_STATUS` of a rejected request (HTTP 400).
pub const INVALID_POST_DATA: &str = "INVALID_POST_DATA";
/// `OPT_STATUS` of any other failure.
pub const FAIL: &str = "FAIL";

/// An envelope around `result`, its two texts of type `S` (`&str` to write, `Option<String>`
/// to read, where any member may be missing); serialises its members in declaration order.
#[derive(Debug, Serialize, Deserialize)]
pub struct Envelope<S, R, D> {
    /// [`SUCCESS`], [`INVALID_POST_DATA`] or [`FAIL`].
    #[serde(rename = "OPT_STATUS", default)]
    pub opt_status: S,
    /// Empty on success; otherwise what went wrong.
    #[serde(rename = "DESCRIPTION", default)]
    pub description: S,
    /// The answer itself.
    #[serde(default)]
    pub result: R,
    /// Diagnostics when the request asked for them, else null.
    #[serde(default)]
    pub debug: D,
}

/// An envelope as a reader takes it: each member may be absent (`None`), `result` is read as
/// `R` (borrowed raw JSON for the shape decoders, a typed table elsewhere), `debug` skipped.
pub type Incoming<R> = Envelope<Option<String>, Option<R>, IgnoredAny>;

/// A `{columns, values}` table: how the querier's SQL API answers, and how Embers' explore
/// endpoints answer too.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Table<Row> {
    /// Column names, in row order.
    pub columns: Vec<String>,
    /// One entry per row.
    pub values: Vec<Row>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_the_querier_order() {
        let e = Envelope {
            opt_status: SUCCESS,
            description: "a \"quoted\" text",
            result: (),
            debug: (),
        };
        assert_eq!(
            serde_json::to_string(&e).unwrap(),
            r#"{"OPT_STATUS":"SUCCESS","DESCRIPTION":"a \"quoted\" text","result":null,"debug":null}"#
        );
    }

    #[test]
    fn readers_take_missing_members_as_none_and_skip_debug() {
        let e: Incoming<Vec<u32>> = serde_json::from_str(
            r#"{"DESCRIPTION":"a \"quoted\" text","result":[1,2],"debug":{"x":[1]}}"#,
        )
        .unwrap();
        assert_eq!(e.opt_status, None);
        assert_eq!(e.description.as_deref(), Some("a \"quoted\" text"));
        assert_eq!(e.result, Some(vec![1, 2]));
        let e: Incoming<Vec<u32>> = serde_json::from_str(r#"{"OPT_STATUS":"FAIL"}"#).unwrap();
        assert_eq!(
            (e.opt_status.as_deref(), e.description, e.result),
            (Some(FAIL), None, None)
        );
        // What is written reads back.
        let written = serde_json::to_string(&Envelope {
            opt_status: INVALID_POST_DATA,
            description: "bad",
            result: (),
            debug: (),
        })
        .unwrap();
        let read: Incoming<()> = serde_json::from_str(&written).unwrap();
        assert_eq!(read.opt_status.as_deref(), Some(INVALID_POST_DATA));
        assert_eq!(read.description.as_deref(), Some("bad"));
    }
}
