//! Which stored samples a query reads — the part every endpoint shares (ProfileTracing, and
//! the explore endpoints' lists and timelines). Stores turn it into SQL with bound values.

use crate::contract::body::TracingRequest;
use crate::contract::tag_filter::TagFilter;

/// A selection of samples: all conditions must hold; `None` means "any".
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selection {
    /// The process, `Total`, or `None` for any (or, for ProfileTracing, "find the matching
    /// processes").
    pub app_service: Option<String>,
    /// `profile_language_type`.
    pub language: Option<String>,
    /// `profile_event_type`.
    pub event_type: Option<String>,
    /// Unix seconds, inclusive.
    pub time_start: i64,
    /// Unix seconds, inclusive.
    pub time_end: i64,
    /// Conditions on tags.
    pub filter: TagFilter,
}

impl TracingRequest {
    /// The samples this request reads.
    pub fn selection(&self) -> Selection {
        let r = &self.request;
        Selection {
            app_service: r.app_service.clone(),
            language: Some(r.profile_language_type.clone()),
            event_type: Some(r.profile_event_type.clone()),
            time_start: r.time_start,
            time_end: r.time_end,
            filter: self.filter.clone(),
        }
    }
}
