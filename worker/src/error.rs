//! The workers' errors, typed: a message that cannot be read ([`MessageError`]) and a job that
//! fails ([`JobError`]). A failed job's text travels to the page in the reply (`error`), where
//! it is shown after "Could not import …" or as the query's failure, so each says what is
//! wrong in words a user can act on.

use embers_model::wire::folded::FoldedLineError;
use embers_model::wire::jfr::JfrError;
use embers_model::wire::perf::PerfError;
use embers_model::wire::pprof::PprofError;
use embers_model::wire::DecodeError;
use thiserror::Error;

use crate::job::WorkerKind;

/// A message between the page and a worker that is not what the other side sends.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MessageError {
    #[error("the message has no `{0}`")]
    Missing(&'static str),
    #[error("`{0}` is not a whole number")]
    NotWholeNumber(&'static str),
    #[error("`status` {0} is not an HTTP status")]
    BadStatus(u32),
    #[error("`{0}` is not an array")]
    NotArray(&'static str),
    #[error("a chunk of `{0}` is not a Uint8Array")]
    NotBytes(&'static str),
    #[error("`{0}` is not the expected typed array")]
    NotTypedArray(&'static str),
    #[error("`warnings` has the wrong length")]
    WarningsLength,
    #[error("unknown job `{0}`")]
    UnknownJob(String),
    #[error("unknown file format `{0}`")]
    UnknownFormat(String),
}

/// Why a job produced no profile (or no file).
#[derive(Debug, Error)]
pub enum JobError {
    /// The answer is an error envelope, not JSON, or not a result the decoder can use.
    #[error("{0}")]
    Answer(#[from] DecodeError),
    #[error("{0}")]
    Pprof(#[from] PprofError),
    #[error("{0}")]
    Perf(#[from] PerfError),
    #[error("{0}")]
    Jfr(#[from] JfrError),
    /// *Export → pprof* was handed folded stacks it cannot read (the page wrote them, so this
    /// is a bug, said plainly).
    #[error("{0}")]
    Folded(#[from] FoldedLineError),
    /// A JFR recording without any event type the viewer draws.
    #[error("the recording has no CPU, allocation or lock events")]
    NoEvents,
    /// Folded stacks and the like are read on the page; the worker was asked anyway.
    #[error("{0} is read on the page, not in the file reader")]
    ReadOnPage(&'static str),
    /// The browser could not gunzip the file.
    #[error("the file is not valid gzip ({0})")]
    Gzip(String),
    /// A gzip bomb, stopped at [`crate::import::MAX_GUNZIPPED_BYTES`].
    #[error("the file decompresses to more than {0} MiB")]
    TooBig(usize),
    /// A job sent to the worker that does not do it (a page bug, never a user's).
    #[error("the {worker} cannot do `{job}`", worker = .worker.name())]
    WrongWorker {
        worker: WorkerKind,
        job: &'static str,
    },
}
