//! The values a DeepFlow querier pastes into its SQL as they come, checked before anything is
//! sent to it. Its ProfileTracing handler writes `app_service='…'`,
//! `profile_language_type='…'` and `profile_event_type='…'` into its statement without escaping
//! them, and the `tag_filter` as it is. So:
//!
//! | field | rule |
//! |---|---|
//! | `app_service` | no `'`, `"`, `` ` ``, `\` or control character (a quote would end the string, a backslash escape its closing quote) |
//! | `profile_language_type`, `profile_event_type` | 1 to 64 of `A-Z a-z 0-9 _ . + -` (every type DeepFlow knows) |
//! | `tag_filter` | parsed, then written again from its typed conditions ([`super::statements::render_filter`]): names of the contract's charset, values quoted |
//! | `time_start`, `time_end`, `max_kernel_stack_depth`, the timeline's interval | integers |
//! | `X-Org-Id` | a number allowed by `--allow-org-id` ([`super::options`]) |
//!
//! A request breaking a rule is a 400 naming the field. The same rules hold for the explore
//! endpoints, whose statements quote every value themselves, so that a name the querier could
//! not be asked for over ProfileTracing is refused the same way everywhere; and for the service
//! names the querier itself answers, before a functions question asks for their profiles.
//! Function names (`search`, `function`) are matched here and never sent.

use embers_model::contract::explore::ServiceRow;
use embers_model::contract::request::ProfileRequest;
use embers_model::contract::selection::Selection;

use crate::error::Error;
use crate::http::explore::Explore;

/// Longest language or event type.
const MAX_TYPE_LEN: usize = 64;

/// Why `app_service` cannot be sent, if it cannot.
fn app_service_problem(name: &str) -> Option<&'static str> {
    name.chars()
        .find(|c| matches!(c, '\'' | '"' | '`' | '\\') || c.is_control())
        .map(|_| {
            "holds a quote, a backtick, a backslash or a control character, which a DeepFlow \
             querier would paste into its SQL unescaped; such a process cannot be asked for \
             through --upstream"
        })
}

/// Whether a language or event type is one a querier may be sent.
fn is_type(text: &str) -> bool {
    (1..=MAX_TYPE_LEN).contains(&text.len())
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'+' | b'-'))
}

fn check_type(field: &str, text: &str) -> Result<(), Error> {
    if is_type(text) {
        return Ok(());
    }
    let shown: String = text.chars().take(40).collect();
    Err(Error::invalid(format!(
        "{field} {shown:?} is not a type a DeepFlow querier can be asked for: 1 to \
         {MAX_TYPE_LEN} letters, digits, '_', '.', '+' or '-' (e.g. eBPF, on-cpu)"
    )))
}

fn check_app(app: Option<&str>) -> Result<(), Error> {
    match app.and_then(app_service_problem) {
        Some(problem) => Err(Error::invalid(format!("app_service {problem}"))),
        None => Ok(()),
    }
}

/// Checks the fields of a ProfileTracing request the querier pastes into SQL.
pub fn check_request(r: &ProfileRequest) -> Result<(), Error> {
    check_app(r.app_service.as_deref())?;
    check_type("profile_language_type", &r.profile_language_type)?;
    check_type("profile_event_type", &r.profile_event_type)
}

/// Checks a selection's process, language and event type.
pub fn check_selection(s: &Selection) -> Result<(), Error> {
    check_app(s.app_service.as_deref())?;
    if let Some(language) = &s.language {
        check_type("profile_language_type", language)?;
    }
    if let Some(event) = &s.event_type {
        check_type("profile_event_type", event)?;
    }
    Ok(())
}

/// Checks every selection of an explore request.
pub fn check_explore(q: &Explore) -> Result<(), Error> {
    match q {
        Explore::Services(q) => check_selection(&q.selection),
        Explore::Timeline(q) => check_selection(&q.selection),
        Explore::Tags(q) => check_selection(&q.selection),
        Explore::TagValues(q) => check_selection(&q.selection),
        Explore::Functions(q) => {
            check_selection(&q.selection)?;
            q.baseline.iter().try_for_each(check_selection)
        }
        Explore::FunctionTimeline(q) => check_selection(&q.timeline.selection),
        Explore::FunctionLines(q) => check_selection(&q.selection),
    }
}

/// Whether a service the querier answered may be asked for by name (its stored name came
/// from whoever sent the profile).
pub fn is_sendable(row: &ServiceRow) -> bool {
    app_service_problem(&row.app_service).is_none()
        && is_type(&row.profile_language_type)
        && is_type(&row.profile_event_type)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(app: &str, language: &str, event: &str) -> ProfileRequest {
        ProfileRequest {
            app_service: Some(app.into()),
            profile_language_type: language.into(),
            profile_event_type: event.into(),
            time_start: 1,
            time_end: 2,
            ..ProfileRequest::default()
        }
    }

    #[test]
    fn quotes_and_escapes_are_refused_by_field() {
        for app in ["x' OR 1=1 --", r"x\", "a\"b", "a`b", "a\nb", "a\0b"] {
            let e = check_request(&request(app, "eBPF", "on-cpu")).expect_err(app);
            assert!(e.description().starts_with("app_service "), "{e}");
        }
        for (language, event) in [("eBPF'", "on-cpu"), ("eBPF", "on cpu"), ("", "on-cpu")] {
            let e = check_request(&request("web", language, event)).expect_err(language);
            let field = if language == "eBPF" {
                "profile_event_type"
            } else {
                "profile_language_type"
            };
            assert!(e.description().starts_with(field), "{e}");
        }
        let long = "x".repeat(MAX_TYPE_LEN + 1);
        assert!(check_request(&request("web", "eBPF", &long)).is_err());
    }

    #[test]
    fn ordinary_names_and_every_known_type_pass() {
        for app in [
            "redis-server",
            "java -jar app.jar",
            "[kworker/0:1]",
            "Total",
            "ñandú",
        ] {
            assert!(
                check_request(&request(app, "eBPF", "on-cpu")).is_ok(),
                "{app}"
            );
        }
        for t in [
            "eBPF",
            "Golang",
            "python",
            "dotnet",
            "mem-inuse",
            "alloc_in_new_tlab_bytes",
        ] {
            assert!(is_type(t), "{t}");
        }
    }
}
