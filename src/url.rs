//! Reading the page URL: query fields given as parameters run on load.

use embers_model::request::{request_from_url_pairs, ProfileRequest};

/// The page's query parameters as decoded pairs.
pub fn page_params() -> Vec<(String, String)> {
    let Some(search) = web_sys::window().and_then(|w| w.location().search().ok()) else {
        return Vec::new();
    };
    let Ok(params) = web_sys::UrlSearchParams::new_with_str(&search) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in js_sys::try_iter(&params)
        .ok()
        .flatten()
        .into_iter()
        .flatten()
        .flatten()
    {
        let pair = js_sys::Array::from(&entry);
        if let (Some(k), Some(v)) = (pair.get(0).as_string(), pair.get(1).as_string()) {
            out.push((k, v));
        }
    }
    out
}

/// The request named in the page URL, if any (plus the `base_url` parameter, if given).
pub fn request_from_page() -> (Option<ProfileRequest>, Option<String>) {
    let params = page_params();
    let base = params
        .iter()
        .find(|(k, _)| k == "base_url")
        .map(|(_, v)| v.clone());
    (
        request_from_url_pairs(params.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
        base,
    )
}
