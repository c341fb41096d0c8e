//! The embedding API: a host page (the iframe's parent) drives the viewer with `postMessage`
//! and hears about what happens — when its origin is allowed ([`host`]).
//!
//! In (from `window.parent`, of an allowed origin, only):
//! - `{type: "embers:query", request: {...ProfileTracing body...}, base_url?: "..."}` runs a query;
//! - `{type: "embers:compare", request: {...}, baseline: {...}, base_url?: "..."}` compares two;
//! - either with `trace_id?: "..."` and `span_name?: "..."`: the (comparison's) request is
//!   narrowed to that trace's or span's samples;
//! - `{type: "embers:load", body: "<response JSON or folded text>", name?: "file.json"}` shows a result.
//!
//! Out (to `window.parent`'s origin, when it is allowed):
//! - `{type: "embers:ready"}` once listening;
//! - `{type: "embers:loaded", app_service, nodes, root_total}` / `{type: "embers:error", message}`;
//! - `{type: "embers:select", name, path, total, self, depth}` when a frame is clicked.

use embers_model::contract::request::{with_trace, ProfileRequest};
use embers_model::{NodeId, Profile};
use leptos::ev;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use crate::session::compare::BaselineSpec;
use crate::session::files::import_any;
use crate::session::navigator::Navigator;
use crate::state::loaded::LoadState;

pub mod host;

pub use host::post;

/// A message from the host page.
#[derive(Debug, PartialEq)]
pub enum Command {
    /// Run a query.
    Query {
        /// The ProfileTracing body.
        request: ProfileRequest,
        /// Service location; default the form's (the page's origin).
        base_url: Option<String>,
    },
    /// Compare two queries: `request` against `baseline`.
    Compare {
        /// The comparison's ProfileTracing body.
        request: ProfileRequest,
        /// The baseline's (it may differ in time range, tag filter and process).
        baseline: ProfileRequest,
        /// Service location; default the form's (the page's origin).
        base_url: Option<String>,
    },
    /// Show a result the host already has.
    Load {
        /// Response JSON (either shape) or folded stacks.
        body: String,
        /// A name for the root of folded stacks.
        name: Option<String>,
    },
}

/// Every field any command has, read in one pass. Serde's internally tagged enum (`#[serde(tag =
/// "type")]`) would buffer the message into its generic `Content` tree and read each field
/// again from there: a second copy of the request's deserializer and the whole `Content`
/// machinery in the page's wasm (~4 KB brotli) for three messages.
#[derive(Deserialize)]
struct Message {
    #[serde(rename = "type")]
    kind: String,
    request: Option<ProfileRequest>,
    baseline: Option<ProfileRequest>,
    base_url: Option<String>,
    body: Option<String>,
    name: Option<String>,
    trace_id: Option<String>,
    span_name: Option<String>,
}

impl Command {
    /// The command in a message's JSON; `None` for anything else on the channel (another
    /// `type`, or a command without its required fields, or a field of the wrong type).
    pub fn parse(json: &[u8]) -> Option<Command> {
        let m: Message = serde_json::from_slice(json).ok()?;
        let base_url = m.base_url;
        let (trace_id, span_name) = (m.trace_id.as_deref(), m.span_name.as_deref());
        let traced = |r: ProfileRequest| with_trace(r, trace_id, span_name);
        match m.kind.as_str() {
            "embers:query" => Some(Command::Query {
                request: traced(m.request?),
                base_url,
            }),
            "embers:compare" => Some(Command::Compare {
                request: traced(m.request?),
                baseline: m.baseline?,
                base_url,
            }),
            "embers:load" => Some(Command::Load {
                body: m.body?,
                name: m.name,
            }),
            _ => None,
        }
    }
}

/// A message to the host page.
#[derive(Debug, Serialize, PartialEq)]
#[serde(tag = "type")]
pub enum Event<'a> {
    /// Listening for commands.
    #[serde(rename = "embers:ready")]
    Ready,
    /// A profile is shown.
    #[serde(rename = "embers:loaded")]
    Loaded {
        /// The root's name (the process), empty for an empty profile.
        app_service: &'a str,
        /// Nodes in the call tree.
        nodes: usize,
        /// The root's total value.
        root_total: u64,
    },
    /// A query or import failed.
    #[serde(rename = "embers:error")]
    Error {
        /// What the page shows.
        message: &'a str,
    },
    /// A frame was clicked.
    #[serde(rename = "embers:select")]
    Select {
        /// The frame's function.
        name: &'a str,
        /// Function names from the root to the frame.
        path: Vec<String>,
        /// Its total value.
        total: u64,
        /// Its self value.
        #[serde(rename = "self")]
        self_value: u64,
        /// Levels below the root.
        depth: u32,
    },
}

impl<'a> Event<'a> {
    /// What the host hears when `profile` is shown.
    fn loaded(profile: &'a Profile) -> Event<'a> {
        Event::Loaded {
            app_service: if profile.is_empty() {
                ""
            } else {
                profile.name(0)
            },
            nodes: profile.node_count(),
            root_total: profile.root_total(),
        }
    }
}

/// Tells the host which frame was picked.
pub fn announce_selection(profile: &Profile, node: NodeId) {
    post(&Event::Select {
        name: profile.name(node),
        path: profile.name_path(node),
        total: profile.total(node),
        self_value: profile.self_value(node),
        depth: profile.depth(node),
    });
}

/// When the page is framed by an allowed host: starts listening for its commands and
/// reporting loads to it, then says `embers:ready`.
pub fn listen(nav: Navigator) {
    if !host::framed() {
        return;
    }
    // Reactive owner for the listener and effect created after the configuration arrives.
    let owner = Owner::current();
    spawn_local(async move {
        if host::admit_parent().await.is_some() {
            if let Some(owner) = owner {
                owner.with(|| serve_host(nav));
            }
        }
    });
}

fn serve_host(nav: Navigator) {
    let view = nav.runner.view;
    let handle = window_event_listener(ev::message, move |e: web_sys::MessageEvent| {
        if !host::from_host(&e) {
            return;
        }
        let text = js_sys::JSON::stringify(&e.data())
            .ok()
            .and_then(|s| s.as_string())
            .unwrap_or_default();
        match Command::parse(text.as_bytes()) {
            Some(Command::Query { request, base_url }) => {
                nav.stop_comparing();
                nav.open_profile(
                    base_url.unwrap_or_else(|| nav.form.base_url.get_untracked()),
                    request,
                )
            }
            Some(Command::Compare {
                request,
                baseline,
                base_url,
            }) => {
                nav.baseline
                    .set(Some(BaselineSpec::between(&request, &baseline)));
                nav.open_profile(
                    base_url.unwrap_or_else(|| nav.form.base_url.get_untracked()),
                    request,
                )
            }
            Some(Command::Load { body, name }) => spawn_local(async move {
                let name = name.as_deref().unwrap_or("embedded.json");
                nav.show_imported(import_any(name, &body).await);
            }),
            // Other messages on the channel are not for us.
            None => {}
        }
    });
    on_cleanup(move || handle.remove());
    Effect::new(move |_| match view.load.get() {
        LoadState::Loaded(l) => post(&Event::loaded(&l.profile)),
        LoadState::Failed(f) => post(&Event::Error {
            message: &f.message,
        }),
        _ => {}
    });
    post(&Event::Ready);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_from_json() {
        let request = r#"{"app_service":"x","profile_language_type":"eBPF","profile_event_type":"on-cpu","time_start":1,"time_end":2}"#;
        let q =
            Command::parse(format!(r#"{{"type":"embers:query","request":{request}}}"#).as_bytes())
                .unwrap();
        assert!(
            matches!(q, Command::Query { base_url: None, ref request } if request.app_service.as_deref() == Some("x"))
        );
        let c = Command::parse(
            format!(r#"{{"type":"embers:compare","request":{request},"baseline":{request},"base_url":"http://h"}}"#)
                .as_bytes(),
        )
        .unwrap();
        assert!(matches!(c, Command::Compare { base_url: Some(ref u), .. } if u == "http://h"));
        let l = Command::parse(br#"{"type":"embers:load","body":"a;b 1","extra":[1,{}]}"#).unwrap();
        assert_eq!(
            l,
            Command::Load {
                body: "a;b 1".into(),
                name: None
            }
        );
        assert_eq!(Command::parse(br#"{"type":"other"}"#), None);
        // A command without what it needs, or not an object at all, is not one.
        assert_eq!(Command::parse(br#"{"type":"embers:load"}"#), None);
        assert_eq!(
            Command::parse(
                format!(r#"{{"type":"embers:compare","request":{request}}}"#).as_bytes()
            ),
            None
        );
        assert_eq!(
            Command::parse(br#"{"type":"embers:query","request":7}"#),
            None
        );
        // A trace and a span narrow the request's tag filter.
        let traced = Command::parse(
            format!(r#"{{"type":"embers:query","request":{request},"trace_id":"t'1","span_name":"GET /"}}"#)
                .as_bytes(),
        );
        assert!(
            matches!(traced, Some(Command::Query { ref request, .. })
                if request.tag_filter == r"trace_id='t\'1' AND span_name='GET /'"),
            "{traced:?}"
        );
        assert_eq!(Command::parse(b"\"embers:query\""), None);
    }

    #[test]
    fn events_serialise_as_the_documented_messages() {
        let json = |e: &Event| serde_json::to_string(e).unwrap();
        assert_eq!(json(&Event::Ready), r#"{"type":"embers:ready"}"#);
        assert_eq!(
            json(&Event::Error {
                message: "no \"x\""
            }),
            r#"{"type":"embers:error","message":"no \"x\""}"#
        );
        let profile = embers_model::wire::folded::parse_folded("a;b 3\na;c 2", "app").unwrap();
        assert_eq!(
            json(&Event::loaded(&profile)),
            format!(
                r#"{{"type":"embers:loaded","app_service":"app","nodes":{},"root_total":5}}"#,
                profile.node_count()
            )
        );
        let select = Event::Select {
            name: "b",
            path: vec!["a".into(), "b".into()],
            total: 3,
            self_value: 3,
            depth: 2,
        };
        assert_eq!(
            json(&select),
            r#"{"type":"embers:select","name":"b","path":["a","b"],"total":3,"self":3,"depth":2}"#
        );
    }
}
