//! The examples of the time-inside-a-range endpoints (`/heatmap`, `/samples`), written by the
//! contract's own builders, as the handlers answer.

use embers_model::contract::fine::heatmap::HeatmapBuilder;
use embers_model::contract::fine::samples::SamplesBuilder;
use embers_model::contract::fine::{FineRequest, MsBounds, MsWindow};
use serde_json::Value;

use crate::http::explore::success;

const T0: i64 = 1_700_000_000;

fn answer(result: &impl serde::Serialize) -> Value {
    serde_json::from_str(&success(result)).unwrap_or_default()
}

fn body(request: embers_model::contract::request::ProfileRequest, slots: Option<u32>) -> Value {
    let fine = FineRequest {
        request,
        bounds: MsBounds {
            time_start_ms: Some(T0 * 1000 + 50),
            time_end_ms: Some(T0 * 1000 + 450),
        },
        slots_per_second: slots,
    };
    serde_json::to_value(fine).unwrap_or_default()
}

/// `(method, path, body, answer)` of both endpoints.
pub fn examples(
    request: embers_model::contract::request::ProfileRequest,
) -> Vec<(&'static str, &'static str, Option<Value>, Value)> {
    let request = embers_model::contract::request::ProfileRequest {
        time_start: T0,
        time_end: T0,
        ..request
    };
    let window = MsWindow {
        start_ms: T0 * 1000 + 50,
        end_ms: T0 * 1000 + 450,
    };
    let mut map = HeatmapBuilder::new(window, 10);
    for offset in [60, 70, 150, 160, 170, 410] {
        map.event(T0, offset);
    }
    let mut samples = SamplesBuilder::new();
    let stack = samples.stack("[t] nginx;main;ngx_process_events;[k] epoll_wait");
    for (offset, tid) in [(60, 4242), (70, 4242), (410, 4243)] {
        // The example has room for three samples.
        let _ = samples.event(T0 * 1000 + offset, tid, stack, 10101);
    }
    vec![
        (
            "post",
            "/v1/profile/heatmap",
            Some(body(request.clone(), Some(10))),
            answer(&map.finish()),
        ),
        (
            "post",
            "/v1/profile/samples",
            Some(body(request, None)),
            answer(&samples.finish()),
        ),
    ]
}
