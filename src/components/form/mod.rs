//! The query form: every request field, validated next to the field before sending, with
//! suggestions from the service.

pub mod autocomplete;
pub mod query_form;
