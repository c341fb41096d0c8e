//! Which functions a search matches: comma-separated substrings (the model's matcher) or a
//! regular expression, compiled by the browser so its syntax is the one users know from JS.

use embers_model::tree::matches::SearchIndex;
use embers_model::tree::search::{parse_terms, substring_matcher};
use embers_model::tree::transform::func_set;
use embers_model::Profile;
use wasm_bindgen::JsCast;

/// The functions of `p` matching the search text: substring terms, or a browser RegExp.
/// Substring terms use `index` (of `p`) when given: one scan of all names, not one per name.
pub fn matcher_set(
    p: &Profile,
    index: Option<&SearchIndex>,
    text: &str,
    regex: bool,
) -> Result<Vec<bool>, String> {
    if !regex {
        let terms = parse_terms(text);
        return Ok(match index {
            Some(index) => index.substring_set(p, &terms),
            None => func_set(p, substring_matcher(&terms)),
        });
    }
    let re = new_regexp(text)?;
    Ok(func_set(p, |name| re.test(name)))
}

/// Compiles a case-insensitive JS regular expression, reporting a syntax error as text.
fn new_regexp(pattern: &str) -> Result<js_sys::RegExp, String> {
    let ctor: js_sys::Function = js_sys::Reflect::get(&js_sys::global(), &"RegExp".into())
        .ok()
        .and_then(|c| c.dyn_into().ok())
        .ok_or("this browser has no RegExp")?;
    let args = js_sys::Array::of2(&pattern.into(), &"i".into());
    js_sys::Reflect::construct(&ctor, &args)
        .map_err(|e| {
            // "Invalid regular expression: /([/i: Unterminated group" → "Unterminated group".
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
                .map(|m| m.rsplit(": ").next().unwrap_or_default().to_string())
                .unwrap_or_else(|| "invalid regular expression".into())
        })?
        .dyn_into()
        .map_err(|_| "invalid regular expression".into())
}
