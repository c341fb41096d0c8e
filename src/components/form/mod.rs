//! The query form: every request field, validated next to the field before sending.

pub mod query_form;
