//! What the panel shows for its input, found: an opened file's lines as they came, or the
//! service asked for the function's lines (and what source it can show); a missing answer
//! explained in words ([`embers_model::view::source::explain_no_lines`]).

use embers_model::contract::explore::{FunctionLinesRequest, LinesState};
use embers_model::contract::source::SourceConfig;
use embers_model::tree::lines::LineStat;
use embers_model::view::source::{explain_no_lines, Absence};

use super::interface::{LinesFrom, SourceInput};
use crate::session::source::{function_lines, source_config, source_text};

/// A function's lines, found.
#[derive(Clone, Debug, PartialEq)]
pub struct Lines {
    /// Its lines, as found (the panel ranks them).
    pub rows: Vec<LineStat>,
    /// The function's total (what shares are of; 0 when unknown).
    pub whole: u64,
    /// What source text or links the service offers (nothing for a file).
    pub config: SourceConfig,
    /// The service to ask for text (`None` for a file).
    pub base_url: Option<String>,
}

/// What the panel shows.
#[derive(Clone, Debug, PartialEq)]
pub enum Found {
    /// No function selected.
    Nothing,
    /// Asking the service.
    Waiting,
    /// The lines.
    Lines(Lines),
    /// No lines, and why, in words.
    Absent(String),
    /// The question failed (the service's message).
    Failed(String),
}

/// The lines of `input`'s function.
pub async fn find(input: SourceInput) -> Found {
    let Some(function) = input.function.clone() else {
        return Found::Nothing;
    };
    let absent = |a: Absence<'_>| Found::Absent(explain_no_lines(a, &input.language));
    match input.from {
        LinesFrom::Unavailable => absent(Absence::NotAvailable),
        LinesFrom::File {
            rows,
            function_total,
            why_none,
        } => match (rows.is_empty(), why_none) {
            (true, Some(why)) => absent(Absence::File(&why)),
            (true, None) => absent(Absence::FunctionInFile),
            (false, _) => Found::Lines(Lines {
                rows,
                whole: function_total,
                config: SourceConfig::default(),
                base_url: None,
            }),
        },
        LinesFrom::Service { base_url, request } => {
            let req = FunctionLinesRequest {
                profile: request,
                function,
            };
            let answer = match function_lines(&base_url, &req).await {
                Ok(a) => a,
                Err(e) if e.is_missing_endpoint() => return absent(Absence::NoEndpoint),
                Err(e) => return Found::Failed(e.to_string()),
            };
            if answer.lines == LinesState::None || answer.values.is_empty() {
                let reason = answer
                    .reason
                    .unwrap_or(embers_model::contract::explore::NoLines::NoLineInfo);
                return absent(Absence::Service(reason));
            }
            // Without a source configuration the lines still show, without text or links.
            let config = source_config(&base_url).await.unwrap_or_default();
            Found::Lines(Lines {
                rows: answer
                    .values
                    .into_iter()
                    .map(|r| LineStat {
                        file: r.file,
                        line: r.line,
                        self_value: r.self_value,
                        total_value: r.total_value,
                    })
                    .collect(),
                whole: answer.function_total_value,
                config,
                base_url: Some(base_url),
            })
        }
    }
}

/// The text of `file` as the service has it, or why not (in words).
pub async fn text(base_url: &str, file: &str) -> Result<String, String> {
    match source_text(base_url, file).await {
        Ok(t) => Ok(t.text),
        Err(e) if e.is_missing_endpoint() => Err(format!(
            "The service has no copy of {file} under its --source-dir roots."
        )),
        Err(e) => Err(e.to_string()),
    }
}
