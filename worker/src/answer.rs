//! The answer decoder's job: a ProfileTracing answer's body (either result shape, or an error
//! envelope) decoded into the profile's columns. The answer worker (`decode_worker`) runs only
//! this; a file job sent to it is answered with [`JobError::WrongWorker`].

use embers_model::wire::decode_response_table;
use js_sys::Array;
use wasm_bindgen::JsValue;

use crate::error::{JobError, MessageError};
use crate::job::{Job, WorkerKind};
use crate::message::{DecodeReply, DecodeRequest};

/// Answers one request message: decodes its body and returns the reply message with the
/// buffers to transfer. The worker's message handler, the page's fallback (this module run
/// on the page when no worker can start), the warm-up and the tests call it.
pub fn answer(msg: &JsValue) -> Result<(JsValue, Array), MessageError> {
    let request = DecodeRequest::from_js(msg)?;
    Ok(reply(&request).to_js())
}

/// The reply to `request`.
pub fn reply(request: &DecodeRequest) -> DecodeReply {
    match decode(request) {
        Ok(reply) => reply,
        Err(e) => DecodeReply::Failed {
            id: request.id,
            message: e.to_string(),
        },
    }
}

fn decode(request: &DecodeRequest) -> Result<DecodeReply, JobError> {
    let Job::Answer { status } = request.job else {
        return Err(JobError::WrongWorker {
            worker: WorkerKind::Answers,
            job: request.job.tag(),
        });
    };
    let body = request.body();
    let decoded = decode_response_table(status, &body);
    // Free this thread's copy of the body before the tree is built (lower peak memory).
    drop(body);
    let decoded = decoded?.build();
    Ok(DecodeReply::Decoded {
        id: request.id,
        parts: Box::new(decoded.profile.into_parts()),
        shape: decoded.shape,
        notice: decoded.notice,
        event_type: None,
        body: request.chunks.clone(),
        lines: None,
    })
}
