//! Profiles as text a person (or an assistant) reads: one profile's hottest functions and
//! paths ([`profile`]), what grew and shrank between two ([`compare`]), and when a change
//! is a change rather than noise ([`significance`], from the `stats` layer). Pure and
//! deterministic — ties are broken by name, never by hash order — and bounded: at most
//! [`MAX_ROWS`] rows per list, names cut to [`MAX_NAME_CHARS`] characters, paths to
//! [`MAX_PATH_FRAMES`] frames. The service's MCP tools answer with these texts, and the
//! viewer's *Export → Summary* copies the same, titled alike ([`title`]).

pub mod compare;
pub mod gate;
pub mod profile;
pub use crate::stats::significance;
mod text;
pub mod title;

pub use compare::compare_summary;
pub use profile::profile_summary;

/// Rows per list unless asked otherwise.
pub const DEFAULT_ROWS: usize = 10;
/// Most rows per list.
pub const MAX_ROWS: usize = 50;
/// Longest name shown, in characters (longer ones end in `…`).
pub const MAX_NAME_CHARS: usize = 160;
/// Most frames of a path shown (the first two and the last ones, `…` between).
pub const MAX_PATH_FRAMES: usize = 8;

/// What a summary is about and how long its lists are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Subject {
    /// The first line: what was asked (`api-gateway, on-cpu, 2026-11-27 02:40:00–03:40:00 UTC`).
    pub title: String,
    /// `profile_event_type`, which says what the values measure and in which unit.
    pub event_type: String,
    /// Rows per list (clamped to 1..=[`MAX_ROWS`]).
    pub rows: usize,
}

impl Subject {
    /// The number of rows, clamped.
    fn rows(&self) -> usize {
        self.rows.clamp(1, MAX_ROWS)
    }
}
