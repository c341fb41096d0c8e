//! `GET /v1/alerts/dry-run`: what the alert rules (`serve --alert-rule`) would fire now, each
//! alert as the webhook would receive it, and the pairs firing already. Nothing is sent and
//! no state changes. Without rules, 404 says how to give some.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;

use crate::alerts::DryRun;
use crate::api_types::Answer;
use crate::error::{json_response, Error};
use crate::http::explore::success;
use crate::http::state::AppState;

/// `GET /v1/alerts/dry-run`.
#[utoipa::path(
    get,
    path = "/v1/alerts/dry-run",
    tag = "alerts",
    summary = "What the alert rules would fire now",
    description = "Checks every rule (`serve --alert-rule`, `--alert-rules`) now, as the scheduler does, without sending or recording anything: `would_fire` holds each alert as the webhook would receive it (rule, service, the function that grew most, its share of the service before and after in percent, the change in points, the significance rule's z-score, the window and baseline, a permalink to the comparison in the viewer, and the service's other functions past the rule); `firing` the (rule, service) pairs sent already, not sent again until a check finds them resolved. 404 when no rules are given. Each rule reads the function rollup over its window twice.",
    responses(
        (status = 200, description = "What would fire.", body = Answer<DryRun>),
        (status = 404, description = "No alert rules are configured.", body = crate::api_types::Failure),
    ),
)]
pub async fn dry_run(State(state): State<AppState>) -> Result<Response, Error> {
    let Some(alerts) = state.alerts.clone() else {
        return Err(Error::missing(
            "no alert rules: start the service with --alert-rule or --alert-rules (docs/alerts.md)",
        ));
    };
    let store = state.store.clone();
    let answer = crate::blocking::run("alert dry run", move || alerts.dry_run(&store))
        .await
        .map_err(Error::internal)?
        .map_err(Error::internal)?;
    Ok(json_response(StatusCode::OK, success(&answer)))
}
