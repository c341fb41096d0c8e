//! The access token the page sends to its own service as `Authorization: Bearer <token>`, for a
//! service started with `--query-token-file` (queries) or `--token-file` (saving snapshots).
//!
//! The token comes in the page's address as `#token=<token>`: a portal writes it into the
//! iframe's `src`, a person opens such a link once. [`capture_from_address`] takes it out of
//! the address before anything else reads it and keeps it in `sessionStorage` (this tab only).
//! A fragment never reaches a server, a log or a `Referer`. The token goes only to the page's
//! own origin, never to another *Service URL*.

use wasm_bindgen::JsValue;

/// Where the token is kept.
const KEY: &str = "embers.token";

/// The raw (still URL-encoded) value of `token=` in a location fragment (`#a=1&token=x`).
pub fn token_in_fragment(hash: &str) -> Option<&str> {
    hash.strip_prefix('#')
        .unwrap_or(hash)
        .split('&')
        .find_map(|pair| pair.strip_prefix("token="))
        .filter(|token| !token.is_empty())
}

/// Moves a `#token=` from the address into this tab's storage and drops the fragment from the
/// address (and its history entry). Call first thing on load.
pub fn capture_from_address() {
    let Some(window) = web_sys::window() else {
        return;
    };
    let location = window.location();
    let hash = location.hash().unwrap_or_default();
    let Some(raw) = token_in_fragment(&hash) else {
        return;
    };
    let token = js_sys::decode_uri_component(raw)
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_else(|| raw.to_owned());
    if let Ok(Some(storage)) = window.session_storage() {
        let _ = storage.set_item(KEY, token.trim());
    }
    let address = format!(
        "{}{}",
        location.pathname().unwrap_or_default(),
        location.search().unwrap_or_default()
    );
    if let Ok(history) = window.history() {
        let _ = history.replace_state_with_url(&JsValue::NULL, "", Some(&address));
    }
}

/// The `Authorization` value for a request to `url`: only when a token is kept and `url` is on
/// the page's own origin.
pub fn authorization_for(url: &str) -> Option<String> {
    let window = web_sys::window()?;
    let location = window.location();
    let target = web_sys::Url::new_with_base(url, &location.href().ok()?).ok()?;
    if target.origin() != location.origin().ok()? {
        return None;
    }
    let token = window.session_storage().ok()??.get_item(KEY).ok()??;
    (!token.is_empty()).then(|| format!("Bearer {token}"))
}

#[cfg(test)]
mod tests {
    use super::token_in_fragment;

    #[test]
    fn the_token_is_found_among_other_fragment_parameters() {
        assert_eq!(token_in_fragment("#token=abc"), Some("abc"));
        assert_eq!(token_in_fragment("#x=1&token=a%2Bb&y=2"), Some("a%2Bb"));
        assert_eq!(token_in_fragment("token=t"), Some("t"));
        assert_eq!(token_in_fragment("#token="), None);
        assert_eq!(token_in_fragment("#mytoken=abc"), None);
        assert_eq!(token_in_fragment(""), None);
    }
}
