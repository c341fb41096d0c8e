//! The tools' one error, [`ToolError`]: what the assistant is told when a call fails, as the
//! tool result's text (`isError: true`), never as a protocol error — the assistant reads it and
//! changes its call.

use axum::http::StatusCode;
use rmcp::model::{ContentBlock, IntoContents};

/// Why a tool call failed; its text says what to change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// An argument is missing, malformed or contradicts another; the text names it.
    #[error("{0}")]
    Argument(String),
    /// The service refused or failed the call: its `DESCRIPTION` and HTTP status.
    #[error("{description} ({status})")]
    Refused {
        /// The answer's `DESCRIPTION` (or the start of its body when it has none).
        description: String,
        /// The answer's HTTP status.
        status: StatusCode,
    },
    /// The in-process call could not be made, or its answer could not be read.
    #[error("{0}")]
    Answer(String),
}

impl ToolError {
    /// An [`ToolError::Argument`] error.
    pub fn argument(text: impl Into<String>) -> ToolError {
        ToolError::Argument(text.into())
    }
}

/// A blocking task that did not finish (a decode that panicked).
impl From<crate::blocking::TaskFailed> for ToolError {
    fn from(e: crate::blocking::TaskFailed) -> ToolError {
        ToolError::Answer(e.to_string())
    }
}

/// The tool result's text.
impl IntoContents for ToolError {
    fn into_contents(self) -> Vec<ContentBlock> {
        vec![ContentBlock::text(self.to_string())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_what_the_assistant_reads() {
        let refused = ToolError::Refused {
            description: "app_service is required".into(),
            status: StatusCode::BAD_REQUEST,
        };
        assert_eq!(
            refused.to_string(),
            "app_service is required (400 Bad Request)"
        );
        let contents = ToolError::argument("limit must be 1 to 50, got 0").into_contents();
        assert_eq!(
            contents,
            vec![ContentBlock::text("limit must be 1 to 50, got 0")]
        );
    }
}
