//! Fine-grained time on ClickHouse: not stored yet. The heatmap, the samples and millisecond
//! windows refuse with a message naming the store, rather than answering at second resolution
//! as if the data had no times (the SQLite store has them: `store::fine`).

use super::ClickHouseStore;
use crate::store::fine::FineRows;
use crate::store::query::QueryError;
use crate::store::StoreError;
use embers_model::contract::selection::Selection;

/// What a request that needs event times is told on ClickHouse.
pub const NOT_YET: &str = "millisecond times (heatmap, samples, time_start_ms/time_end_ms) are \
     kept by the SQLite store only in this build; the ClickHouse store answers whole seconds";

impl ClickHouseStore {
    /// Refused: see [`NOT_YET`].
    pub fn fine_rows(
        &self,
        _sel: &Selection,
        _texts: bool,
    ) -> Result<(Vec<String>, FineRows), QueryError> {
        Err(QueryError::Store(StoreError::Invalid(NOT_YET.to_owned())))
    }
}
