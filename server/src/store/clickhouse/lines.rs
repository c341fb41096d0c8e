//! Source lines on ClickHouse (`POST /v1/profile/function_lines`).

use embers_model::contract::explore::{FunctionLinesQuery, LineRow};

use super::ClickHouseStore;
use crate::store::StoreError;

impl ClickHouseStore {
    /// One function's lines over `q`'s selection, unsorted.
    pub fn line_sums(&self, _q: &FunctionLinesQuery) -> Result<Vec<LineRow>, StoreError> {
        Err(StoreError::Invalid(
            "source lines are not stored on ClickHouse yet".into(),
        ))
    }
}
