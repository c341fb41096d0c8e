//! `POST /v1/profile/heatmap`: seconds × sub-second slots, each cell the samples whose event
//! time falls in it (FlameScope's view). One builder for both stores, so they answer alike.

use serde::{Deserialize, Serialize};

use super::{parse_fine_body, FineQuery, MsWindow, Resolution, MAX_HEATMAP_CELLS};
use crate::contract::body::RequestError;

/// What a heatmap cell counts.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ValueKind {
    /// Samples (events), each counted once: at millisecond resolution.
    Samples,
    /// The profile's values, in its unit: at second resolution, where a stored row's number of
    /// samples is not known.
    Values,
}

/// The heatmap: `values[i][j]` is slot `j` of second `time_start + i`.
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HeatmapAnswer {
    /// The first column's second (Unix seconds).
    pub time_start: i64,
    /// Rows per second: as requested at `"ms"` resolution, 1 at `"s"`.
    pub slots_per_second: u32,
    /// One entry per second of the window (oldest first), each `slots_per_second` counts.
    pub values: Vec<Vec<u64>>,
    /// What the counts are.
    pub value_kind: ValueKind,
    /// `"ms"` when the cells come from event times, `"s"` when the data has none.
    pub resolution: Resolution,
    /// Per second, the value of samples stored without event times (older than the fine
    /// retention, or from a producer that times to the second), which no cell holds; absent
    /// when there are none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub untimed_values: Option<Vec<u64>>,
}

/// A heatmap request the service accepted.
pub type HeatmapQuery = FineQuery;

/// Reads a heatmap body and checks its size: at most [`MAX_HEATMAP_CELLS`] cells.
pub fn parse_heatmap_body(body: &[u8]) -> Result<HeatmapQuery, RequestError> {
    let q = parse_fine_body(body)?;
    let seconds = q.window.last_second() - q.window.first_second() + 1;
    let cells = (seconds as u64).saturating_mul(u64::from(q.slots_per_second));
    if cells > MAX_HEATMAP_CELLS {
        return Err(RequestError(format!(
            "the heatmap would have {cells} cells ({seconds} s x {} slots per second); at most \
             {MAX_HEATMAP_CELLS} per answer: narrow the range or use fewer slots_per_second",
            q.slots_per_second
        )));
    }
    Ok(q)
}

/// Fills a heatmap from events and untimed rows, in any order.
#[derive(Debug)]
pub struct HeatmapBuilder {
    window: MsWindow,
    slots: u32,
    cells: Vec<Vec<u64>>,
    untimed: Vec<u64>,
    timed: bool,
}

impl HeatmapBuilder {
    /// An empty heatmap of `window` (checked by [`parse_heatmap_body`]) with `slots` per second.
    pub fn new(window: MsWindow, slots: u32) -> HeatmapBuilder {
        let seconds = (window.last_second() - window.first_second() + 1).max(0) as usize;
        HeatmapBuilder {
            window,
            slots: slots.clamp(1, super::MAX_SLOTS_PER_SECOND),
            cells: vec![vec![0; slots as usize]; seconds],
            untimed: vec![0; seconds],
            timed: false,
        }
    }

    fn column(&self, second: i64) -> Option<usize> {
        usize::try_from(second - self.window.first_second())
            .ok()
            .filter(|&i| i < self.cells.len())
    }

    /// One event of `second` at `offset_ms`; outside the window it is not counted.
    pub fn event(&mut self, second: i64, offset_ms: u16) {
        self.timed = true;
        if !self.window.contains(second, offset_ms) {
            return;
        }
        let slot = (u32::from(offset_ms.min(999)) * self.slots / 1000) as usize;
        if let Some(i) = self.column(second) {
            self.cells[i][slot] += 1;
        }
    }

    /// A stored row of `second` without event times, of `value`.
    pub fn untimed(&mut self, second: i64, value: u64) {
        if let Some(i) = self.column(second) {
            self.untimed[i] = self.untimed[i].saturating_add(value);
        }
    }

    /// The answer: at `"ms"` resolution when any event was seen, else the untimed values one
    /// slot per second.
    pub fn finish(self) -> HeatmapAnswer {
        let time_start = self.window.first_second();
        if !self.timed {
            return HeatmapAnswer {
                time_start,
                slots_per_second: 1,
                values: self.untimed.into_iter().map(|v| vec![v]).collect(),
                value_kind: ValueKind::Values,
                resolution: Resolution::S,
                untimed_values: None,
            };
        }
        let any_untimed = self.untimed.iter().any(|&v| v > 0);
        HeatmapAnswer {
            time_start,
            slots_per_second: self.slots,
            values: self.cells,
            value_kind: ValueKind::Samples,
            resolution: Resolution::Ms,
            untimed_values: any_untimed.then_some(self.untimed),
        }
    }
}
