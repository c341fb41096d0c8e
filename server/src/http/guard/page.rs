//! What every answer says about how a browser may use it (CSP, `nosniff`, referrer policy,
//! who may frame the page), and `GET /embers-config.json`, which tells the viewer which
//! parent pages may drive it ([`EmbedConfig`]) — the same list as `frame-ancestors`.

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use embers_model::contract::embed::EmbedConfig;

use crate::http::state::AppState;

/// The policy before `frame-ancestors`. Scripts come only from the service (the page's boot
/// script is a file, see `scripts/externalize-boot.mjs`) and may compile WebAssembly; styles
/// only from its stylesheet (the viewer sets inline styles through the CSSOM, which CSP
/// allows). `connect-src` stays open because the viewer's *Service URL* may name another
/// service; the page never sends its token there.
const POLICY: &str = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; \
    style-src 'self'; img-src 'self' data: blob:; connect-src *; object-src 'none'; \
    base-uri 'none'; form-action 'none'";

/// `same-origin`: the page's URL (which carries the query) never leaves for other sites. It
/// does not affect `document.referrer` in the frame, which the host page's policy decides.
const REFERRER_POLICY: &str = "same-origin";

/// The Content-Security-Policy for a service whose page `embed_origins` may frame.
pub fn content_security_policy(embed_origins: &[String]) -> String {
    let mut policy = format!("{POLICY}; frame-ancestors 'self'");
    for origin in embed_origins {
        policy.push(' ');
        policy.push_str(origin);
    }
    policy
}

/// Adds the security headers to an answer.
pub fn add_headers(headers: &mut HeaderMap, csp: &HeaderValue) {
    headers.insert(header::CONTENT_SECURITY_POLICY, csp.clone());
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        HeaderName::from_static("referrer-policy"),
        HeaderValue::from_static(REFERRER_POLICY),
    );
}

/// `GET /embers-config.json`.
#[utoipa::path(
    get,
    path = "/embers-config.json",
    tag = "page",
    summary = "The viewer's embedding configuration",
    responses((status = 200, description = "The origins whose pages may embed and drive the viewer (--embed-origin).", body = EmbedConfig)),
)]
pub async fn embed_config(State(state): State<AppState>) -> Response {
    let config = EmbedConfig {
        embed_origins: state.guard.embed_origins().to_vec(),
    };
    let body = serde_json::to_string(&config).unwrap_or_else(|_| "{}".to_owned());
    let mut response = (StatusCode::OK, body).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frame_ancestors_lists_the_embed_origins() {
        let none = content_security_policy(&[]);
        assert!(none.ends_with("; frame-ancestors 'self'"), "{none}");
        assert!(none.contains("script-src 'self' 'wasm-unsafe-eval';"));
        assert!(!none.contains("unsafe-inline"));
        let two = content_security_policy(&["https://a.example".into(), "http://b:8".into()]);
        assert!(
            two.ends_with("frame-ancestors 'self' https://a.example http://b:8"),
            "{two}"
        );
        assert!(HeaderValue::from_str(&two).is_ok());
    }
}
