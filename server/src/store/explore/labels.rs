//! What each series is called under a dimension (its pod, its thread, ...), and which tags each
//! tag set carries: small lookups over `profile.tagsets` and `profile.tagset_tags`, done once per
//! query and applied to the summed points in Rust.

use std::collections::HashMap;

use rusqlite::types::ValueRef;
use rusqlite::Connection;

use super::super::StoreError;
use super::read::Series;
use embers_model::contract::explore::Dimension;
use embers_model::contract::fields::{self, FieldKind, FieldRef};

/// The name of each series under `dimension`, by series index; samples without the tag get `""`.
pub(super) fn labels(
    conn: &Connection,
    series: &[Series],
    dimension: &Dimension,
) -> Result<Vec<String>, StoreError> {
    let pick = |f: fn(&Series) -> &String| series.iter().map(|s| f(s).clone()).collect();
    let by_tagset = match dimension {
        Dimension::AppService => return Ok(pick(|s| &s.app_service)),
        Dimension::Language => return Ok(pick(|s| &s.language)),
        Dimension::EventType => return Ok(pick(|s| &s.event_type)),
        Dimension::Thread => return Ok(pick(|s| &s.thread)),
        Dimension::Tag(field) => tag_values(conn, field)?,
    };
    Ok(series
        .iter()
        .map(|s| by_tagset.get(&s.tagset_id).cloned().unwrap_or_default())
        .collect())
}

/// `tagset id -> value` of one tag.
fn tag_values(conn: &Connection, field: &FieldRef) -> Result<HashMap<i64, String>, StoreError> {
    let mut out = HashMap::new();
    match field {
        FieldRef::Column(def) => {
            // `def.name` is a fixed identifier of the field table; Dimension::parse only lets
            // batch tags through, which are columns of `tagsets`.
            let mut stmt =
                conn.prepare_cached(&format!("SELECT id, {} FROM profile.tagsets", def.name))?;
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                out.insert(row.get(0)?, text(row.get_ref(1)?));
            }
        }
        FieldRef::Open { name, .. } => {
            let mut stmt = conn.prepare_cached(
                "SELECT tagset_id, value FROM profile.tagset_tags WHERE name = ?1",
            )?;
            let mut rows = stmt.query([name])?;
            while let Some(row) = rows.next()? {
                out.insert(row.get(0)?, row.get(1)?);
            }
        }
    }
    Ok(out)
}

/// A stored tag value as text (integer tags print as numbers).
fn text(value: ValueRef<'_>) -> String {
    match value {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(r) => r.to_string(),
        ValueRef::Null | ValueRef::Blob(_) => String::new(),
    }
}

/// `tagset id -> names of its tags with a non-empty value`: the text columns (but not
/// `profile_value_unit`, which describes the value rather than a resource) and open-family tags.
pub(super) fn tag_names(conn: &Connection) -> Result<HashMap<i64, Vec<String>>, StoreError> {
    let columns: Vec<&str> = fields::settable_columns()
        .filter(|d| d.kind == FieldKind::Text && d.name != "profile_value_unit")
        .map(|d| d.name)
        .collect();
    let mut out: HashMap<i64, Vec<String>> = HashMap::new();
    // Fixed identifiers of the field table only.
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT id, {} FROM profile.tagsets",
        columns.join(", ")
    ))?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        let names = out.entry(row.get(0)?).or_default();
        for (i, name) in columns.iter().enumerate() {
            if !text(row.get_ref(i + 1)?).is_empty() {
                names.push((*name).to_owned());
            }
        }
    }
    let mut stmt =
        conn.prepare_cached("SELECT tagset_id, name FROM profile.tagset_tags WHERE value != ''")?;
    let mut rows = stmt.query([])?;
    while let Some(row) = rows.next()? {
        out.entry(row.get(0)?).or_default().push(row.get(1)?);
    }
    Ok(out)
}
