//! Source text beside a profile's lines (issue 36 item 4; the contract is
//! `embers_model::contract::source`): `serve --source-dir DIR` (repeatable) lets
//! `GET /v1/profile/source?file=` answer a stored path's text from under those roots
//! ([`find`]), and `--source-url TEMPLATE` (with `--source-url-strip PREFIX`) is handed to the
//! viewer by `GET /v1/profile/source_config` for the *browser* to open: the service never
//! fetches a URL.

pub mod find;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use clap::Args;
use embers_model::contract::envelope::SUCCESS;
use embers_model::contract::source::{SourceConfig, SourceQuery, SourceText};
use serde_json::Value;

use crate::api_types::Answer;
use crate::blocking;
use crate::error::{envelope, Error};
use crate::http::state::AppState;
use find::{SourceError, Sources};

/// Options of `serve` for source text and links.
#[derive(Debug, Clone, Default, Args)]
pub struct SourceArgs {
    /// A directory holding source files: a stored path is shown from the file under it that
    /// matches its longest suffix (repeatable; never a path outside, no symlinks).
    #[arg(long = "source-dir", value_name = "DIR")]
    pub source_dirs: Vec<PathBuf>,
    /// A link the viewer offers for a frame's file, opened by the browser, e.g.
    /// https://github.com/org/repo/blob/main/{path}#L{line}.
    #[arg(long = "source-url", value_name = "TEMPLATE")]
    pub source_url: Option<String>,
    /// A build-path prefix removed from stored paths before they fill {path} (repeatable).
    #[arg(
        long = "source-url-strip",
        value_name = "PREFIX",
        requires = "source_url"
    )]
    pub source_url_strip: Vec<String>,
}

impl SourceArgs {
    /// The roots opened and the template checked.
    pub fn sources(&self) -> Result<Arc<Sources>, String> {
        if let Some(t) = &self.source_url {
            SourceConfig::check_template(t).map_err(|e| e.to_string())?;
        }
        let roots = self
            .source_dirs
            .iter()
            .map(|d| {
                find::open_root(d)
                    .map_err(|e| format!("--source-dir {}: not a directory ({e})", d.display()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Arc::new(Sources {
            roots,
            config: SourceConfig {
                source_dirs_configured: !self.source_dirs.is_empty(),
                source_url_template: self.source_url.clone(),
                source_url_strip: self.source_url_strip.clone(),
            },
        }))
    }
}

/// `GET /v1/profile/source_config`.
#[utoipa::path(
    get,
    path = "/v1/profile/source_config",
    tag = "source",
    summary = "What source the service can show: whether --source-dir roots are configured, and the --source-url template the browser opens",
    responses((status = 200, description = "The configuration.", body = Answer<SourceConfig>)),
)]
pub async fn config(State(state): State<AppState>) -> Response {
    envelope(
        StatusCode::OK,
        SUCCESS,
        "",
        &state.sources.config,
        Value::Null,
    )
}

/// `GET /v1/profile/source?file=`.
#[utoipa::path(
    get,
    path = "/v1/profile/source",
    tag = "source",
    summary = "A source file's text, found under the --source-dir roots by the longest suffix of its stored path",
    params(SourceQuery),
    responses(
        (status = 200, description = "The text.", body = Answer<SourceText>),
        (status = 400, description = "`file` missing or unusable ('..', NUL, too long), or the matched file too large or not UTF-8 text."),
        (status = 404, description = "No --source-dir configured, or no file under them matches."),
    ),
)]
pub async fn text(
    State(state): State<AppState>,
    query: Result<Query<SourceQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Response, Error> {
    let Query(query) =
        query.map_err(|_| Error::invalid("source needs ?file=<the stored source path>"))?;
    if state.sources.roots.is_empty() {
        return Err(Error::missing(
            "no source directories: start the service with --source-dir DIR",
        ));
    }
    let sources = state.sources.clone();
    let file = query.file.clone();
    let found = blocking::run("source", move || find::find(&sources.roots, &file)).await?;
    let found = found.map_err(|e| match e {
        SourceError::NotFound { .. } => Error::missing(e.to_string()),
        _ => Error::invalid(e.to_string()),
    })?;
    let answer = SourceText {
        file: query.file,
        matched: found.matched,
        line_count: found.text.lines().count().try_into().unwrap_or(u32::MAX),
        text: found.text,
    };
    Ok(envelope(StatusCode::OK, SUCCESS, "", answer, Value::Null))
}
