//! The checks that make a body of another version (or garbage) a 400 instead of stored
//! nonsense: every index must point into its table, the tables' first entries must be the zero
//! values the format reserves for "none", and ids must have their lengths. The dictionary is
//! checked whole, before any sample is read; a sample's own indices are checked where it is
//! read ([`index`]).

use opentelemetry_proto::tonic::common::v1::{any_value::Value, AnyValue, KeyValue};
use opentelemetry_proto::tonic::profiles::v1development::{
    Function, KeyValueAndUnit, Link, Location, Mapping, ProfilesDictionary, Stack,
};

use super::{OtlpError, PROTO_VERSION};

/// `i` as an index into `table`, which has `len` entries. 0 ("none") always passes, even into
/// an empty table; negative or too large indices are refused, naming `field`.
pub(super) fn index(
    i: i32,
    len: usize,
    table: &str,
    field: impl FnOnce() -> String,
) -> Result<usize, OtlpError> {
    match usize::try_from(i) {
        Ok(at) if at == 0 || at < len => Ok(at),
        _ => Err(OtlpError::field(
            field(),
            format!(
                "index {i} is out of range: dictionary.{table} has {len} entries (read as \
                 {PROTO_VERSION}; a sender on another version of the profiles signal puts other \
                 fields at these numbers)"
            ),
        )),
    }
}

/// Check the whole dictionary.
pub(super) fn dictionary(d: &ProfilesDictionary) -> Result<(), OtlpError> {
    zero_entries(d)?;
    let strings = d.string_table.len();
    let attributes = d.attribute_table.len();
    let at = |table: &str, i: usize, member: &str| format!("dictionary.{table}[{i}].{member}");
    for (i, m) in d.mapping_table.iter().enumerate() {
        index(m.filename_strindex, strings, "string_table", || {
            at("mapping_table", i, "filename_strindex")
        })?;
        indices(&m.attribute_indices, attributes, "attribute_table", |k| {
            at("mapping_table", i, &format!("attribute_indices[{k}]"))
        })?;
    }
    for (i, l) in d.location_table.iter().enumerate() {
        index(
            l.mapping_index,
            d.mapping_table.len(),
            "mapping_table",
            || at("location_table", i, "mapping_index"),
        )?;
        for (k, line) in l.lines.iter().enumerate() {
            index(
                line.function_index,
                d.function_table.len(),
                "function_table",
                || at("location_table", i, &format!("lines[{k}].function_index")),
            )?;
        }
        indices(&l.attribute_indices, attributes, "attribute_table", |k| {
            at("location_table", i, &format!("attribute_indices[{k}]"))
        })?;
    }
    for (i, f) in d.function_table.iter().enumerate() {
        for (member, s) in [
            ("name_strindex", f.name_strindex),
            ("system_name_strindex", f.system_name_strindex),
            ("filename_strindex", f.filename_strindex),
        ] {
            index(s, strings, "string_table", || {
                at("function_table", i, member)
            })?;
        }
    }
    for (i, link) in d.link_table.iter().enumerate() {
        id_length(&link.trace_id, 16, || at("link_table", i, "trace_id"))?;
        id_length(&link.span_id, 8, || at("link_table", i, "span_id"))?;
    }
    for (i, a) in d.attribute_table.iter().enumerate() {
        index(a.key_strindex, strings, "string_table", || {
            at("attribute_table", i, "key_strindex")
        })?;
        index(a.unit_strindex, strings, "string_table", || {
            at("attribute_table", i, "unit_strindex")
        })?;
        if let Some(v) = &a.value {
            any_value(v, strings, &|| at("attribute_table", i, "value"))?;
        }
    }
    for (i, s) in d.stack_table.iter().enumerate() {
        indices(
            &s.location_indices,
            d.location_table.len(),
            "location_table",
            |k| at("stack_table", i, &format!("location_indices[{k}]")),
        )?;
    }
    Ok(())
}

/// Each of `list` as an index into `table`.
pub(super) fn indices(
    list: &[i32],
    len: usize,
    table: &str,
    field: impl Fn(usize) -> String,
) -> Result<(), OtlpError> {
    for (k, &i) in list.iter().enumerate() {
        index(i, len, table, || field(k))?;
    }
    Ok(())
}

/// The string indices inside a list of key-value pairs (resource and scope attributes).
pub(super) fn key_values(
    list: &[KeyValue],
    strings: usize,
    field: &dyn Fn(usize) -> String,
) -> Result<(), OtlpError> {
    for (k, kv) in list.iter().enumerate() {
        index(kv.key_strindex, strings, "string_table", || {
            format!("{}.key_strindex", field(k))
        })?;
        if let Some(v) = &kv.value {
            any_value(v, strings, &|| format!("{}.value", field(k)))?;
        }
    }
    Ok(())
}

/// The string indices inside a value, nested arrays and lists included (prost bounds their
/// depth at 100 while decoding).
fn any_value(v: &AnyValue, strings: usize, field: &dyn Fn() -> String) -> Result<(), OtlpError> {
    match &v.value {
        Some(Value::StringValueStrindex(i)) => {
            index(*i, strings, "string_table", || {
                format!("{}.string_value_strindex", field())
            })?;
        }
        Some(Value::ArrayValue(array)) => {
            for (k, item) in array.values.iter().enumerate() {
                any_value(item, strings, &|| format!("{}.array_value[{k}]", field()))?;
            }
        }
        Some(Value::KvlistValue(list)) => {
            key_values(&list.values, strings, &|k| {
                format!("{}.kvlist_value[{k}]", field())
            })?;
        }
        _ => {}
    }
    Ok(())
}

/// An id is absent (no bytes), or exactly `len` bytes.
fn id_length(id: &[u8], len: usize, field: impl FnOnce() -> String) -> Result<(), OtlpError> {
    if id.is_empty() || id.len() == len {
        return Ok(());
    }
    Err(OtlpError::field(
        field(),
        format!("has {} bytes; it must have {len} (or none)", id.len()),
    ))
}

/// Each table's entry 0 is the zero value: index 0 means "none" everywhere, so an entry 0 with
/// content would be silently ignored (and usually means another version's layout).
fn zero_entries(d: &ProfilesDictionary) -> Result<(), OtlpError> {
    let checks = [
        (
            "string_table",
            d.string_table.first().is_none_or(String::is_empty),
            "the empty string",
        ),
        (
            "mapping_table",
            d.mapping_table
                .first()
                .is_none_or(|m| *m == Mapping::default()),
            "the empty Mapping{}",
        ),
        (
            "location_table",
            d.location_table
                .first()
                .is_none_or(|l| *l == Location::default()),
            "the empty Location{}",
        ),
        (
            "function_table",
            d.function_table
                .first()
                .is_none_or(|f| *f == Function::default()),
            "the empty Function{}",
        ),
        (
            "link_table",
            d.link_table.first().is_none_or(is_null_link),
            "the empty Link{} (no ids, or ids of zeros)",
        ),
        (
            "attribute_table",
            d.attribute_table.first().is_none_or(is_null_attribute),
            "the empty KeyValueAndUnit{}",
        ),
        (
            "stack_table",
            d.stack_table.first().is_none_or(|s| *s == Stack::default()),
            "the empty Stack{}",
        ),
    ];
    match checks.into_iter().find(|(_, zero, _)| !zero) {
        None => Ok(()),
        Some((table, _, what)) => Err(OtlpError::field(
            format!("dictionary.{table}[0]"),
            format!("must be {what}: index 0 means \"none\" in {PROTO_VERSION}"),
        )),
    }
}

/// A link whose ids are absent or all zeros (the format allows both for entry 0).
pub(super) fn is_null_link(link: &Link) -> bool {
    link.trace_id.iter().all(|b| *b == 0) && link.span_id.iter().all(|b| *b == 0)
}

fn is_null_attribute(a: &KeyValueAndUnit) -> bool {
    a.key_strindex == 0
        && a.unit_strindex == 0
        && a.value.as_ref().is_none_or(|v| v.value.is_none())
}
