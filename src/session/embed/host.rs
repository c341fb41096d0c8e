//! Who the host page is and whether it may drive the viewer.
//!
//! The viewer talks to its parent only when the parent's origin is its own or listed in
//! `embers-config.json` ([`EmbedConfig`]); replies are posted to that exact origin, never to
//! `"*"`, so a page that framed the viewer and was then navigated elsewhere hears nothing.
//! The parent's origin comes from `location.ancestorOrigins` (Chromium, Safari) or, failing
//! that, the origin of `document.referrer` (Firefox), and every command must come from it.

use std::cell::RefCell;

use embers_model::contract::embed::{normalize_origin, EmbedConfig};
use wasm_bindgen::JsValue;

/// The configuration file, relative to the page (a static deployment puts it beside
/// `index.html`; the service answers it from `--embed-origin`).
pub const CONFIG_PATH: &str = "embers-config.json";

thread_local! {
    /// The parent's origin once it is known to be allowed; `None` means: say nothing.
    static HOST: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Whether the page runs in a frame (its parent is another window).
pub fn framed() -> bool {
    let Some(window) = web_sys::window() else {
        return false;
    };
    match window.parent() {
        Ok(Some(parent)) => JsValue::from(&parent) != JsValue::from(&window),
        _ => false,
    }
}

/// Finds the parent's origin and checks it against the configuration. Returns it when
/// allowed (and from then on [`post`] talks to it); otherwise says on the console why the
/// viewer ignores its host.
pub async fn admit_parent() -> Option<String> {
    let own = own_origin()?;
    let Some(parent) = parent_origin() else {
        warn("Embers: the embedding page's origin is unknown, so its messages are ignored.");
        return None;
    };
    let config = load_config().await;
    if !config.allows(&parent, &own) {
        warn(&format!(
            "Embers: the embedding page ({parent}) is not in embed_origins of {CONFIG_PATH}; \
             its messages are ignored and nothing is posted to it."
        ));
        return None;
    }
    let parent = normalize_origin(&parent).ok()?;
    HOST.with(|h| *h.borrow_mut() = Some(parent.clone()));
    Some(parent)
}

/// Posts `message` to the admitted host page; does nothing when there is none.
pub fn post(message: &impl serde::Serialize) {
    let Some(origin) = HOST.with(|h| h.borrow().clone()) else {
        return;
    };
    let parent = web_sys::window().and_then(|w| w.parent().ok().flatten());
    let text = serde_json::to_string(message).unwrap_or_default();
    if let (Some(parent), Ok(value)) = (parent, js_sys::JSON::parse(&text)) {
        let _ = parent.post_message(&value, &origin);
    }
}

/// Whether a message comes from the admitted host: the parent window, from its origin.
pub fn from_host(e: &web_sys::MessageEvent) -> bool {
    let parent = web_sys::window().and_then(|w| w.parent().ok().flatten());
    let admitted = HOST.with(|h| h.borrow().as_deref() == Some(e.origin().as_str()));
    match (e.source(), parent) {
        (Some(source), Some(parent)) => admitted && JsValue::from(source) == JsValue::from(parent),
        _ => false,
    }
}

/// The configuration, or the default (own origin only) when the file is missing or unreadable.
async fn load_config() -> EmbedConfig {
    let answer = gloo_net::http::Request::get(CONFIG_PATH).send().await;
    match answer {
        Ok(r) if r.ok() => r.json::<EmbedConfig>().await.unwrap_or_else(|e| {
            warn(&format!("Embers: {CONFIG_PATH} could not be read ({e}); only this origin may embed the viewer."));
            EmbedConfig::default()
        }),
        _ => EmbedConfig::default(),
    }
}

fn own_origin() -> Option<String> {
    let origin = web_sys::window()?.location().origin().ok()?;
    normalize_origin(&origin).ok()
}

/// The parent's origin: the first ancestor origin, else the referrer's origin.
fn parent_origin() -> Option<String> {
    let window = web_sys::window()?;
    let ancestors = js_sys::Reflect::get(&window.location(), &"ancestorOrigins".into()).ok();
    let first = ancestors
        .filter(|a| !a.is_undefined() && !a.is_null())
        .and_then(|a| js_sys::Reflect::get(&a, &0.into()).ok())
        .and_then(|o| o.as_string());
    first.or_else(|| {
        let referrer = window.document()?.referrer();
        web_sys::Url::new(&referrer).ok().map(|u| u.origin())
    })
}

fn warn(message: &str) {
    web_sys::console::warn_1(&message.into());
}
