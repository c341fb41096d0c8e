//! One timeline point, and how it is written and read: `[time, value]`, or
//! `[time, group, value]` when grouped. Read by hand rather than as serde's untagged enum, which
//! buffers every point into its generic `Content` tree and tries each form in turn (that
//! machinery was the only use of it in the page's wasm); the second element's type tells the
//! forms apart.

use std::fmt;

use serde::de::{self, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize};

/// One timeline point: `[time, value]`, or `[time, group, value]` when grouped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(into = "PointForm")]
pub struct TimelineRow {
    /// Bucket start, a multiple of the interval.
    pub time: i64,
    /// The group's name when grouped (`""` for samples without the tag, [`super::OTHER_GROUP`]).
    pub group: Option<String>,
    /// Summed `profile_value` in the bucket.
    pub value: u64,
}

/// The written form.
#[derive(Serialize)]
#[serde(untagged)]
enum PointForm {
    Plain(i64, u64),
    Grouped(i64, String, u64),
}

impl From<TimelineRow> for PointForm {
    fn from(r: TimelineRow) -> Self {
        match r.group {
            None => PointForm::Plain(r.time, r.value),
            Some(group) => PointForm::Grouped(r.time, group, r.value),
        }
    }
}

/// A point's second element: the value of a plain point or the group of a grouped one.
enum Second {
    Value(u64),
    Group(String),
}

impl<'de> Deserialize<'de> for Second {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct SecondVisitor;
        impl Visitor<'_> for SecondVisitor {
            type Value = Second;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a value (unsigned integer) or a group name (string)")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Second, E> {
                Ok(Second::Value(v))
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Second, E> {
                Ok(Second::Group(v.to_owned()))
            }
            fn visit_string<E: de::Error>(self, v: String) -> Result<Second, E> {
                Ok(Second::Group(v))
            }
        }
        d.deserialize_any(SecondVisitor)
    }
}

impl<'de> Deserialize<'de> for TimelineRow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct RowVisitor;
        impl<'de> Visitor<'de> for RowVisitor {
            type Value = TimelineRow;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("[time, value] or [time, group, value]")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<TimelineRow, A::Error> {
                let time: i64 = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(0, &self))?;
                let second: Second = seq
                    .next_element()?
                    .ok_or_else(|| de::Error::invalid_length(1, &self))?;
                let (group, value, len) = match second {
                    Second::Value(value) => (None, value, 2),
                    Second::Group(group) => {
                        let value: u64 = seq
                            .next_element()?
                            .ok_or_else(|| de::Error::invalid_length(2, &self))?;
                        (Some(group), value, 3)
                    }
                };
                if seq.next_element::<IgnoredAny>()?.is_some() {
                    return Err(de::Error::invalid_length(len + 1, &self));
                }
                Ok(TimelineRow { time, group, value })
            }
        }
        d.deserialize_seq(RowVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(json: &str) -> Result<TimelineRow, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn both_forms_read_and_anything_else_is_refused() {
        let plain = read("[60,7]").unwrap();
        assert_eq!((plain.time, plain.group, plain.value), (60, None, 7));
        let grouped = read(r#"[-60,"",0]"#).unwrap();
        assert_eq!(
            (grouped.time, grouped.group.as_deref(), grouped.value),
            (-60, Some(""), 0)
        );
        for bad in [
            "[60,1,2]",
            r#"[60,"g"]"#,
            r#"[60,"g",1,2]"#,
            "[60,-1]",
            "[60,1.5]",
            r#"[60,"g",-1]"#,
            "[60]",
            "[]",
            r#"["60",1]"#,
            r#"{"time":60,"value":1}"#,
            "[60,null]",
        ] {
            assert!(read(bad).is_err(), "{bad} was accepted");
        }
    }
}
