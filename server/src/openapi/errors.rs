//! The failures each operation can answer, added to the document from the same rules the
//! service applies: the guard's (which paths are the API, which requests are writes: `Host`,
//! cross-site and content-type refusals, tokens), the body limits, the store's outages and the
//! upstream querier. Every one is the failure envelope (`Failure`); 503s may carry
//! `Retry-After`. A wrong method (405 with `Allow`) is not an operation and is not listed; a
//! client too slow to send its headers gets no answer (the connection is closed).

use serde_json::{json, Map, Value};

use crate::http::guard::rules;

/// (status, description, which operations answer it).
const FAILURES: [(u16, &str, Applies); 9] = [
    (400, "The request is wrong: DESCRIPTION names the member, value or rule and how to fix it (`OPT_STATUS` `INVALID_POST_DATA`).", Applies::Input),
    (401, "An access token is needed (the service runs with --token-file or --query-token-file): send `Authorization: Bearer <token>`.", Applies::Api),
    (403, "Refused whoever sends it: a `Host` the service does not answer to (--allowed-host), a cross-site write, or a write whose content type browsers may send anywhere.", Applies::Guarded),
    (404, "No such snapshot.", Applies::SnapshotId),
    (409, "The snapshots hold as much as they may (--max-snapshots, --max-snapshot-total-bytes; DESCRIPTION names which): delete some first.", Applies::SnapshotSave),
    (413, "The body is over its limit (--max-query-bytes, also for /mcp; --max-ingest-bytes; --max-snapshot-bytes); DESCRIPTION states it.", Applies::Body),
    (500, "A server failure; the detail is in the server log (or in `debug` when the request asked for it), never in DESCRIPTION.", Applies::Api),
    (502, "The upstream DeepFlow querier (--upstream) cannot be reached or gave no usable answer.", Applies::Upstream),
    (503, "Not now: the store is unreachable or failing (DESCRIPTION names it), too many queries are waiting, the query ran out of --query-timeout, or the write gate is full (--max-ingest-in-flight-bytes, --max-concurrent-saves, --max-concurrent-deletes). Retry after `Retry-After` seconds when it is given.", Applies::Api),
];

/// Which operations answer a failure.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Applies {
    /// Every operation under `/v1/`.
    Api,
    /// Every operation but the probes (the `Host` check).
    Guarded,
    /// API operations that read a body or a path parameter.
    Input,
    /// API operations with a body.
    Body,
    /// The operations on one snapshot.
    SnapshotId,
    /// The operations the upstream querier may answer (ProfileTracing, explore).
    Upstream,
    /// Saving a snapshot.
    SnapshotSave,
}

impl Applies {
    fn to(self, method: &str, path: &str, operation: &Value) -> bool {
        let api = rules::is_api(path);
        let body = operation.get("requestBody").is_some();
        let path_param = path.contains('{');
        match self {
            Applies::Api => api,
            Applies::Guarded => !matches!(path, "/healthz" | "/readyz"),
            Applies::Input => api && (body || path_param),
            Applies::Body => api && body,
            Applies::SnapshotId => path == "/v1/profile/snapshots/{id}",
            Applies::Upstream => method == "post" && rules::QUERY_PATHS.contains(&path),
            Applies::SnapshotSave => method == "post" && path == "/v1/profile/snapshots",
        }
    }
}

/// Adds the failures to every operation of `doc`.
pub fn add(doc: &mut Value) {
    let Some(paths) = doc.get_mut("paths").and_then(Value::as_object_mut) else {
        return;
    };
    for (path, item) in paths.iter_mut() {
        let Some(item) = item.as_object_mut() else {
            continue;
        };
        for (method, operation) in item.iter_mut() {
            let mut added = Map::new();
            for (status, description, applies) in FAILURES {
                if applies.to(method, path, operation) {
                    added.insert(status.to_string(), failure(status, description));
                }
            }
            if let Some(responses) = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut)
            {
                for (status, response) in added {
                    responses.entry(status).or_insert(response);
                }
            }
        }
    }
}

fn failure(status: u16, description: &str) -> Value {
    let mut response = json!({
        "description": description,
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Failure"}}}
    });
    if status == 503 {
        response["headers"] = json!({
            "Retry-After": {
                "description": "Seconds to wait before sending again (store outages: 1 for a lock, 5 otherwise; a full query line or write gate: 1).",
                "schema": {"type": "integer", "minimum": 0}
            }
        });
    }
    response
}
