//! The response envelope every ProfileTracing answer (and every Embers API answer) is wrapped
//! in: `{"OPT_STATUS", "DESCRIPTION", "result", "debug"}`, in the querier's member order.

use serde::Serialize;

/// `OPT_STATUS` of a successful answer.
pub const SUCCESS: &str = "SUCCESS";
/// `OPT_STATUS` of a rejected request (HTTP 400).
pub const INVALID_POST_DATA: &str = "INVALID_POST_DATA";
/// `OPT_STATUS` of any other failure.
pub const FAIL: &str = "FAIL";

/// An envelope around `result`; serialises its members in declaration order.
#[derive(Debug, Serialize)]
pub struct Envelope<'a, R, D> {
    /// [`SUCCESS`], [`INVALID_POST_DATA`] or [`FAIL`].
    #[serde(rename = "OPT_STATUS")]
    pub opt_status: &'a str,
    /// Empty on success; otherwise what went wrong.
    #[serde(rename = "DESCRIPTION")]
    pub description: &'a str,
    /// The answer itself.
    pub result: R,
    /// Diagnostics when the request asked for them, else null.
    pub debug: D,
}

/// A `{columns, values}` table: how the querier's SQL API answers, and how Embers' explore
/// endpoints answer too.
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
}
