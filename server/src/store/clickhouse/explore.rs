//! The explore queries on ClickHouse.

use embers_model::contract::envelope::Table;
use embers_model::contract::explore::{
    ServiceRow, ServicesQuery, TagValuesQuery, TagsQuery, TimelineAnswer, TimelineQuery, ValueCount,
};

use super::ClickHouseStore;
use crate::store::StoreError;

fn not_yet<T>() -> Result<T, StoreError> {
    Err(StoreError::Unsupported(
        "the explore endpoints are not answered by the ClickHouse backend yet".into(),
    ))
}

impl ClickHouseStore {
    /// `POST /v1/profile/services`.
    pub fn services(&self, _q: &ServicesQuery) -> Result<Table<ServiceRow>, StoreError> {
        not_yet()
    }

    /// `POST /v1/profile/timeline`.
    pub fn timeline(&self, _q: &TimelineQuery) -> Result<TimelineAnswer, StoreError> {
        not_yet()
    }

    /// `POST /v1/profile/tags`.
    pub fn tags(&self, _q: &TagsQuery) -> Result<Table<ValueCount>, StoreError> {
        not_yet()
    }

    /// `POST /v1/profile/tag_values`.
    pub fn tag_values(&self, _q: &TagValuesQuery) -> Result<Table<ValueCount>, StoreError> {
        not_yet()
    }
}
