//! Lenient integer reading shared by both shapes.
//!
//! The querier sends integers, but proxies and hand-edited files sometimes turn them into floats
//! (`1.0e6`); both are read as `i64` (floats truncated, out-of-range values saturated) rather than
//! rejecting the whole response.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};

/// Reads one JSON number as `i64`.
pub(crate) fn deserialize_i64<'de, D: Deserializer<'de>>(d: D) -> Result<i64, D::Error> {
    d.deserialize_any(I64Visitor)
}

/// An `i64` that also accepts unsigned and float JSON numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Num(pub i64);

impl<'de> de::Deserialize<'de> for Num {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        deserialize_i64(d).map(Num)
    }
}

struct I64Visitor;

impl Visitor<'_> for I64Visitor {
    type Value = i64;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a number")
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<i64, E> {
        Ok(v)
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<i64, E> {
        Ok(i64::try_from(v).unwrap_or(i64::MAX))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<i64, E> {
        if v.is_finite() {
            // `as` saturates at the i64 range, which is what we want for absurd values.
            Ok(v as i64)
        } else {
            Err(E::custom("a non-finite number"))
        }
    }
}
