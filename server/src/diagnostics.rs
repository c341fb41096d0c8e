//! The `debug` member of an answer to a request that asked for `"debug": true`, shaped as the
//! querier's: the statements run, their time, the formatting time and (on failure) the detail
//! the `DESCRIPTION` leaves out.
//!
//! Members are declared in alphabetical order: that is the order the answers had when this was
//! a `serde_json::Value` (a sorted map), and clients may have compared them as text.

use serde::Serialize;

/// The `debug` member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostics {
    /// The internal detail of a failed request (absent on success).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// How long building and encoding the tree took (`Duration`'s debug text).
    pub format_time: String,
    /// One entry per statement run.
    pub querier_debug: Vec<Statement>,
}

/// One statement, as the querier reports each of its ClickHouse queries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// The statement's error (always empty: a failed statement fails the request).
    pub error: &'static str,
    /// Where the statement ran.
    pub ip: &'static str,
    /// How long the query took.
    pub query_time: String,
    /// The querier's query id (empty: Embers has none).
    pub query_uuid: &'static str,
    /// The statement.
    pub sql: String,
    /// The statement as run on ClickHouse (here the same text).
    #[serde(rename = "sql_CH")]
    pub sql_ch: String,
}

impl Diagnostics {
    /// Diagnostics for `statements` run by the embedded store in `query_time`, the tree built
    /// in `format_time`.
    pub fn new(statements: &[String], query_time: &str, format_time: &str) -> Diagnostics {
        let querier_debug = statements
            .iter()
            .map(|sql| Statement {
                error: "",
                ip: "embedded-sqlite",
                query_time: query_time.to_owned(),
                query_uuid: "",
                sql: sql.clone(),
                sql_ch: sql.clone(),
            })
            .collect();
        Diagnostics {
            error: None,
            format_time: format_time.to_owned(),
            querier_debug,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_the_order_of_earlier_answers() {
        let mut d = Diagnostics::new(&["SELECT 1".to_owned()], "1ms", "2ms");
        d.error = Some("disk".to_owned());
        assert_eq!(
            serde_json::to_string(&d).expect("serialises"),
            r#"{"error":"disk","format_time":"2ms","querier_debug":[{"error":"","ip":"embedded-sqlite","query_time":"1ms","query_uuid":"","sql":"SELECT 1","sql_CH":"SELECT 1"}]}"#
        );
    }
}
