//! `function_lines`: where inside one function the time goes — its source lines, hottest
//! first, from `POST /v1/profile/function_lines` — for an assistant to call after
//! `top_functions` names a hot function. When there are no lines the text says why.

use std::fmt::Write as _;

use embers_model::contract::explore::{FunctionLinesAnswer, FunctionLinesRequest, LinesState};
use embers_model::contract::request::ProfileRequest;
use embers_model::summary::title::range_label;
use embers_model::summary::MAX_ROWS;
use embers_model::view::format::{format_percent, format_value, ValueUnit};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::schemars::{self, JsonSchema};
use rmcp::{tool, tool_router};
use serde::Deserialize;

use super::args::{non_blank, now, Range, Which};
use super::error::ToolError;
use super::{api, Embers};

/// Lines listed unless asked otherwise.
const DEFAULT_LINE_ROWS: usize = 10;

/// `function_lines`.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct LinesArgs {
    /// The function's name exactly as `top_functions` or a profile shows it (e.g. `main.work`).
    pub function: String,
    /// The process; default every process (the per-host `Total` left out).
    pub app_service: Option<String>,
    /// `on-cpu` (default), `off-cpu`, `cpu` (Go's pprof), ...
    pub event_type: Option<String>,
    /// `eBPF` (default), `Golang`, `Java`, ...
    pub language: Option<String>,
    /// Conditions such as `host='node-a'`.
    pub tag_filter: Option<String>,
    /// The time range.
    #[serde(flatten)]
    pub range: Range,
    /// Lines listed (default 10, at most 50).
    pub rows: Option<usize>,
}

/// The request `args` make over `(start, end)`.
fn request(args: &LinesArgs, (start, end): (i64, i64)) -> Result<FunctionLinesRequest, ToolError> {
    let function = non_blank(&Some(args.function.clone()))
        .ok_or(ToolError::argument(
            "function is required: a function's name as top_functions shows it",
        ))?
        .to_owned();
    let which = Which {
        app_service: String::new(),
        event_type: args.event_type.clone(),
        language: args.language.clone(),
        tag_filter: args.tag_filter.clone(),
    };
    Ok(FunctionLinesRequest {
        profile: ProfileRequest {
            app_service: non_blank(&args.app_service).map(str::to_owned),
            profile_language_type: which.language(),
            profile_event_type: which.event_type(),
            tag_filter: non_blank(&which.tag_filter).unwrap_or_default().to_owned(),
            time_start: start,
            time_end: end,
            max_kernel_stack_depth: None,
        },
        function,
    })
}

/// The answer as text: a heading, then one line per source line with its share of the
/// function's total, or why there are none.
fn text(answer: &FunctionLinesAnswer, heading: &str, event_type: &str, rows: usize) -> String {
    let unit = ValueUnit::for_event_type(event_type);
    let mut out = format!("Source lines of {} — {heading}\n", answer.function);
    let whole = answer.function_total_value;
    let _ = writeln!(
        out,
        "The function: self {}, total {}.",
        format_value(answer.function_self_value, unit),
        format_value(whole, unit)
    );
    if answer.lines == LinesState::None {
        let why = answer.reason.map_or("no lines", |r| r.describe());
        let _ = writeln!(out, "No lines: {why}.");
        return out;
    }
    for r in answer.values.iter().take(rows) {
        let _ = writeln!(
            out,
            "- {}:{}  total {} ({} of the function), self {}",
            r.file,
            r.line,
            format_value(r.total_value, unit),
            format_percent(r.total_value, whole),
            format_value(r.self_value, unit),
        );
    }
    let more = answer.values.len().saturating_sub(rows) + answer.omitted;
    if more > 0 {
        let _ = writeln!(out, "({more} more lines)");
    }
    out
}

#[tool_router(router = lines_router, vis = "pub(super)")]
impl Embers {
    #[tool(
        description = "Where inside one function the time goes: its source lines (file:line) with total and self value, hottest first — call it after top_functions or summarize_profile names a hot function. Says why when the data has no lines (the producer recorded none, or no sample runs the function)."
    )]
    async fn function_lines(
        &self,
        Parameters(args): Parameters<LinesArgs>,
    ) -> Result<String, ToolError> {
        let range = args.range.resolve(now(), "")?;
        let body = request(&args, range)?;
        let answer = self.api.post("/v1/profile/function_lines", &body).await?;
        let answer: FunctionLinesAnswer = api::result(&answer)?;
        let who = body
            .profile
            .app_service
            .as_deref()
            .unwrap_or("every service");
        let event = &body.profile.profile_event_type;
        let heading = format!("{who}, {event}, {}", range_label(range.0, range.1));
        let rows = args.rows.unwrap_or(DEFAULT_LINE_ROWS).clamp(1, MAX_ROWS);
        Ok(text(&answer, &heading, event, rows))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use embers_model::contract::explore::{LineRow, NoLines, SelfTotal};

    fn args(function: &str) -> LinesArgs {
        LinesArgs {
            function: function.into(),
            app_service: Some("web".into()),
            event_type: Some("cpu".into()),
            language: Some("Golang".into()),
            tag_filter: None,
            range: Range::default(),
            rows: None,
        }
    }

    #[test]
    fn the_text_lists_lines_with_shares_or_says_why_not() {
        let rows = vec![LineRow {
            file: "main.go".into(),
            line: 26,
            self_value: 900,
            total_value: 900,
        }];
        let whole = SelfTotal {
            self_value: 900,
            total: 1000,
        };
        let a = FunctionLinesAnswer::finish("main.hotLoop", rows, whole);
        let t = text(&a, "web", "cpu", 10);
        assert!(t.contains("- main.go:26  total"), "{t}");
        assert!(t.contains("90"), "{t}");
        let none = FunctionLinesAnswer::finish("f", vec![], whole);
        let t = text(&none, "web", "cpu", 10);
        assert!(t.contains(NoLines::NoLineInfo.describe()), "{t}");
    }

    #[test]
    fn a_blank_function_is_refused() {
        assert!(request(&args("  "), (1, 2))
            .unwrap_err()
            .to_string()
            .contains("function is required"));
        let body = request(&args("main.work"), (1, 2)).expect("body");
        assert_eq!(body.profile.app_service.as_deref(), Some("web"));
        assert_eq!(body.profile.profile_event_type, "cpu");
    }
}
