//! What the page asks a worker to do, as one typed value: each request carries exactly one
//! [`Job`], and each job belongs to one of the two workers ([`WorkerKind`]). The answer worker
//! starts with the page and stays small (ProfileTracing answers only); the file worker, with
//! the readers of other profilers' formats and the pprof writer, loads only when a user opens
//! or exports a file.

use embers_model::formats::Format;

/// One request's work.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Job {
    /// A ProfileTracing answer's body, with the HTTP status it came with.
    Answer {
        /// The HTTP status (an error envelope is read differently from a result).
        status: u16,
    },
    /// A file another profiler wrote (pprof, gzipped or not; JFR; `perf script`).
    OpenFile {
        /// Which reader reads it (the page told the formats apart with [`Format::detect`]).
        format: Format,
        /// The root's name where the file names none (the file's name, without extension).
        name: String,
    },
    /// The page's folded stacks (*Export → pprof*), to be written as a pprof file.
    ExportPprof {
        /// The root frame's name.
        root: String,
    },
}

/// The two workers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WorkerKind {
    /// `decode_worker`: started with the page, warmed up before the first answer.
    Answers,
    /// `file_worker`: loaded on demand, the first time a file is opened or exported.
    Files,
}

impl WorkerKind {
    /// How the page and its messages name the worker.
    pub fn name(self) -> &'static str {
        match self {
            WorkerKind::Answers => "answer decoder",
            WorkerKind::Files => "file reader",
        }
    }
}

impl Job {
    /// The worker that does this job.
    pub fn worker(&self) -> WorkerKind {
        match self {
            Job::Answer { .. } => WorkerKind::Answers,
            Job::OpenFile { .. } | Job::ExportPprof { .. } => WorkerKind::Files,
        }
    }

    /// The job's name in a message (`job` field).
    pub fn tag(&self) -> &'static str {
        match self {
            Job::Answer { .. } => ANSWER,
            Job::OpenFile { .. } => OPEN_FILE,
            Job::ExportPprof { .. } => EXPORT_PPROF,
        }
    }
}

/// The `job` field's values.
pub const ANSWER: &str = "answer";
pub const OPEN_FILE: &str = "open-file";
pub const EXPORT_PPROF: &str = "export-pprof";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_go_to_the_answer_worker_and_files_to_the_file_worker() {
        assert_eq!(Job::Answer { status: 200 }.worker(), WorkerKind::Answers);
        let open = Job::OpenFile {
            format: Format::Pprof,
            name: "x".into(),
        };
        assert_eq!(open.worker(), WorkerKind::Files);
        let export = Job::ExportPprof { root: "x".into() };
        assert_eq!(export.worker(), WorkerKind::Files);
        assert_eq!(
            [open.tag(), export.tag()],
            [OPEN_FILE, EXPORT_PPROF],
            "each job has its own tag"
        );
    }
}
