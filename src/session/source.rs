//! The Source panel's questions to the service: a function's lines
//! (`POST /v1/profile/function_lines`), what source the service can show (its `source_config`,
//! asked once per base URL) and a file's text (`GET /v1/profile/source?file=`). A service
//! without these routes (a DeepFlow querier, an older Embers) answers 404, which the panel
//! reads as "not available here".

use std::cell::RefCell;
use std::collections::HashMap;

use embers_model::contract::explore::{FunctionLinesAnswer, FunctionLinesRequest};
use embers_model::contract::source::{SourceConfig, SourceText, SOURCE_CONFIG_PATH, SOURCE_PATH};

use crate::net::api;
pub use crate::net::api::ApiFailure;

/// The endpoint of a function's lines.
pub const FUNCTION_LINES_PATH: &str = "/v1/profile/function_lines";

/// The lines of `req.function` over `req.profile`'s samples, hottest first.
pub async fn function_lines(
    base: &str,
    req: &FunctionLinesRequest,
) -> Result<FunctionLinesAnswer, ApiFailure> {
    api::call(base, FUNCTION_LINES_PATH, req).await
}

thread_local! {
    /// Each base URL's source configuration, once read (it changes only with a restart).
    static CONFIGS: RefCell<HashMap<String, SourceConfig>> = RefCell::new(HashMap::new());
}

/// What source `base` can show: text (`--source-dir`), a link (`--source-url`), or neither (a
/// service without the route counts as neither).
pub async fn source_config(base: &str) -> Result<SourceConfig, ApiFailure> {
    if let Some(c) = CONFIGS.with(|c| c.borrow().get(base).cloned()) {
        return Ok(c);
    }
    let config = match api::get::<SourceConfig>(base, SOURCE_CONFIG_PATH).await {
        Err(e) if e.is_missing_endpoint() => SourceConfig::default(),
        other => other?,
    };
    CONFIGS.with(|c| c.borrow_mut().insert(base.to_owned(), config.clone()));
    Ok(config)
}

/// The text of `file` (a stored path) from the service's source roots.
pub async fn source_text(base: &str, file: &str) -> Result<SourceText, ApiFailure> {
    let query = String::from(js_sys::encode_uri_component(file));
    api::get(base, &format!("{SOURCE_PATH}?file={query}")).await
}
