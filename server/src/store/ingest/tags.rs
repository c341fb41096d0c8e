//! The tags a batch's samples share: fixed columns of the field table (`host`, `pod`, ...) and
//! open-family tags (`k8s.label.app`, ...), checked as they are set.

use std::collections::BTreeMap;

use embers_model::contract::fields::{self, FieldKind, FieldRef, Scope};

/// Tags shared by every sample of a batch: fixed columns (`host`, `pod`, ...) and open-family
/// tags (`k8s.label.app`, ...).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tags {
    pub(super) columns: BTreeMap<&'static str, String>,
    pub(super) open: BTreeMap<String, String>,
}

impl Tags {
    /// An empty tag set.
    pub fn new() -> Tags {
        Tags::default()
    }

    /// Set tag `name` (a settable field of the seed's table, `vtap`, or an open-family tag).
    ///
    /// Errors name the problem: unknown tags, fields that are batch fields rather than tags
    /// (`app_service`, `time`, ...), non-integer values for integer fields.
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), String> {
        match fields::resolve(name) {
            Ok(FieldRef::Column(def)) if def.scope == Scope::Batch => {
                if def.kind == FieldKind::Int && value.trim().parse::<i64>().is_err() {
                    return Err(format!(
                        "tag '{name}' takes an integer value, got '{value}'"
                    ));
                }
                if def.name == "profile_value_unit" {
                    return Err("set the unit with profile_value_unit, not as a tag".to_owned());
                }
                self.columns.insert(def.name, value.to_owned());
                Ok(())
            }
            Ok(FieldRef::Column(def)) => Err(format!(
                "'{}' is a per-sample field, not a tag; set it as a field of the batch",
                def.name
            )),
            Ok(FieldRef::Open { name, .. }) => {
                self.open.insert(name, value.to_owned());
                Ok(())
            }
            Err(e) => Err(e.to_string()),
        }
    }

    /// Builder form of [`Tags::set`].
    pub fn with(mut self, name: &str, value: &str) -> Result<Tags, String> {
        self.set(name, value)?;
        Ok(self)
    }

    /// The open-family tags, by name.
    pub fn open(&self) -> impl ExactSizeIterator<Item = (&String, &String)> {
        self.open.iter()
    }

    /// The value of a fixed tag column, if set.
    pub fn column(&self, column: &str) -> Option<&str> {
        self.columns.get(column).map(String::as_str)
    }

    /// Every tag as (name, value): the fixed columns, then the open-family tags (what
    /// [`Tags::set`] takes back, e.g. to send a batch to another service).
    pub fn pairs(&self) -> impl Iterator<Item = (&str, &str)> {
        let columns = self.columns.iter().map(|(n, v)| (*n, v.as_str()));
        columns.chain(self.open.iter().map(|(n, v)| (n.as_str(), v.as_str())))
    }
}
