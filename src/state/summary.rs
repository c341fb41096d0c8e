//! What is shown, as text (*Export → Summary*): the model's own summaries
//! ([`embers_model::summary`]), titled as the service's MCP tools title them
//! ([`embers_model::summary::title`]), so the profile on screen reads the same here as
//! `summarize_profile` (or `read_snapshot`, or `compare_profiles` for a comparison) answers an
//! assistant for the same question.

use embers_model::summary::title::{compare_title, profile_title, side_label, snapshot_title};
use embers_model::summary::{compare_summary, profile_summary, Subject, DEFAULT_ROWS};
use leptos::prelude::*;

use super::derived::transformed;
use super::loaded::Loaded;
use super::view_state::ViewState;

/// What a wall-clock view's values are named for the summary: running and waiting time added
/// up have no event type of their own (the unit stays microseconds).
const WALL_CLOCK: &str = "wall-clock";

fn subject(title: String, event_type: &str) -> Subject {
    Subject {
        title,
        event_type: event_type.to_owned(),
        rows: DEFAULT_ROWS,
    }
}

/// The snapshot a side came from: its id and name.
fn snapshot_of(l: &Loaded) -> Option<(&str, &str)> {
    Some((
        l.snapshot.as_deref()?,
        l.snapshot_name.as_deref().unwrap_or_default(),
    ))
}

/// The title of one profile: as `read_snapshot` words it for a snapshot, else as
/// `summarize_profile` does.
fn title(l: &Loaded) -> String {
    match snapshot_of(l) {
        Some((id, name)) => snapshot_title(id, name, &l.request),
        None => profile_title(&l.request),
    }
}

impl ViewState {
    /// The summary of what is shown, with the view's transforms applied: a comparison's what
    /// grew and shrank (both sides after the same steps), or the profile's hottest functions
    /// and paths; `None` until something is shown.
    pub fn summary(&self) -> Option<String> {
        untrack(|| {
            let (c, b) = self.sources.loaded()?;
            let event_type = &c.request.profile_event_type;
            match b {
                Some(b) if !self.sources.wall.get() => {
                    let spec = self.sources.spec();
                    let (cs, bs) = (transformed(&c, &spec), transformed(&b, &spec));
                    let labels = [
                        side_label(&b.request, snapshot_of(&b)),
                        side_label(&c.request, snapshot_of(&c)),
                    ];
                    Some(compare_summary(
                        &bs.profile,
                        &cs.profile,
                        [&labels[0], &labels[1]],
                        &subject(compare_title(&c.request), event_type),
                    ))
                }
                Some(_) => {
                    let title = format!("{}, wall-clock view (running + waiting)", title(&c));
                    let shown = self.shown.get()?;
                    Some(profile_summary(&shown.profile, &subject(title, WALL_CLOCK)))
                }
                None => {
                    let shown = self.shown.get()?;
                    Some(profile_summary(
                        &shown.profile,
                        &subject(title(&c), event_type),
                    ))
                }
            }
        })
    }
}
