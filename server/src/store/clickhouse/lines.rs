//! Source lines on ClickHouse (`POST /v1/profile/function_lines`).

use embers_model::contract::explore::{FunctionLinesQuery, LineRow};
use embers_model::contract::selection::Selection;
use embers_model::export::pprof_lines::StackLines;

use super::ClickHouseStore;
use crate::store::StoreError;

impl ClickHouseStore {
    /// One function's lines over `q`'s selection, unsorted.
    pub fn line_sums(&self, _q: &FunctionLinesQuery) -> Result<Vec<LineRow>, StoreError> {
        Err(StoreError::Invalid(
            "source lines are not stored on ClickHouse yet".into(),
        ))
    }

    /// ClickHouse keeps no lines yet: its exports are the tree's.
    pub fn line_samples(&self, _sel: &Selection) -> Result<Option<Vec<StackLines>>, StoreError> {
        Ok(None)
    }
}
