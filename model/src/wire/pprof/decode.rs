//! Reading `profile.proto` bytes into a [`Pprof`]: one pass over the message (fields may come
//! in any order), then every string index, id and value count checked, so nothing after this
//! can index out of range or read a value that is not there.

use super::{
    Function, Line, Location, Mapping, Pprof, PprofError, SampleLocations, Samples, ValueType,
};
use crate::budget::Budget;
use crate::wire::protobuf::{repeated_varints, Reader, Value, WireError};

/// Memory one decoded table entry may take (the largest entry, a sample's or a location's
/// 32–40 bytes, with room for its column's growth): an empty entry is two bytes on the wire,
/// so a body of them would otherwise cost 20× its size in memory before any check.
const ENTRY_BYTES: usize = 64;
/// Memory a sample value takes (an `i64`, doubled for its column's growth).
const VALUE_BYTES: usize = 16;

/// Decodes (uncompressed) pprof bytes and checks every reference in them.
pub fn decode(bytes: &[u8]) -> Result<Pprof<'_>, PprofError> {
    decode_within(bytes, &Budget::unlimited())
}

/// [`decode`], every table entry and value charged to `budget` before it is kept.
pub fn decode_within<'a>(bytes: &'a [u8], budget: &Budget) -> Result<Pprof<'a>, PprofError> {
    if super::is_gzip(bytes) {
        return Err(PprofError::Gzipped);
    }
    let mut p = Pprof {
        input_len: bytes.len(),
        ..Pprof::default()
    };
    p.samples.label_start.push(0);
    let mut r = Reader::new(bytes);
    while let Some((field, value)) = r.field()? {
        let at = r.position();
        if matches!(value, Value::Bytes(_)) {
            budget.charge(ENTRY_BYTES, "pprof tables")?;
        }
        match (field, value) {
            (1, Value::Bytes(b)) => p.sample_types.push(value_type(b, at)?),
            (2, Value::Bytes(b)) => {
                let values = p.samples.values.len() + p.samples.unpacked_ids.len();
                sample(&mut p.samples, b, at)?;
                let added = p.samples.values.len() + p.samples.unpacked_ids.len() - values;
                budget.charge(added.saturating_mul(VALUE_BYTES), "pprof sample values")?;
            }
            (3, Value::Bytes(b)) => p.mappings.push(mapping(b, at)?),
            (4, Value::Bytes(b)) => location(&mut p, b, at)?,
            (5, Value::Bytes(b)) => p.functions.push(function(b, at)?),
            (6, Value::Bytes(b)) => {
                let s = std::str::from_utf8(b).map_err(|_| PprofError::NotUtf8(p.strings.len()))?;
                p.strings.push(s);
            }
            (9, Value::Varint(v)) => p.time_nanos = v as i64,
            (10, Value::Varint(v)) => p.duration_nanos = v as i64,
            (11, Value::Bytes(b)) => p.period_type = Some(value_type(b, at)?),
            (12, Value::Varint(v)) => p.period = v as i64,
            (13, _) => {
                let before = p.comments.len();
                repeated_varints(value, at, |v| p.comments.push(v))?;
                let added = p.comments.len() - before;
                budget.charge(added.saturating_mul(VALUE_BYTES), "pprof comments")?;
            }
            (14, Value::Varint(v)) => p.default_sample_type = v,
            _ => {}
        }
    }
    super::check::check(&mut p)?;
    Ok(p)
}

fn value_type(b: &[u8], at: usize) -> Result<ValueType, WireError> {
    let mut t = ValueType::default();
    let mut r = Reader::nested(b, at);
    while let Some((field, value)) = r.field()? {
        match (field, value.varint()) {
            (1, Some(v)) => t.kind = v,
            (2, Some(v)) => t.unit = v,
            _ => {}
        }
    }
    Ok(t)
}

fn sample<'a>(s: &mut Samples<'a>, b: &'a [u8], at: usize) -> Result<(), PprofError> {
    let mut r = Reader::nested(b, at);
    let values_before = s.values.len();
    let mut locations: Option<SampleLocations<'a>> = None;
    while let Some((field, value)) = r.field()? {
        let here = r.position();
        match (field, value) {
            // One packed run (what writers send) stays in the input.
            (1, Value::Bytes(bytes)) if locations.is_none() => {
                locations = Some(SampleLocations::Packed { bytes, at: here });
            }
            (1, _) => locations = Some(unpacked(s, locations, value, here)?),
            (2, _) => repeated_varints(value, here, |v| s.values.push(v as i64))?,
            (3, Value::Bytes(l)) => {
                let (key, text) = label(l, here)?;
                if key != 0 && text != 0 {
                    s.labels.push((key, text));
                }
            }
            _ => {}
        }
    }
    let count = |n: usize, what| u32::try_from(n).map_err(|_| PprofError::TooLarge(what));
    s.locations
        .push(locations.unwrap_or(SampleLocations::Ids { start: 0, end: 0 }));
    s.label_start.push(count(s.labels.len(), "labels")?);
    s.value_counts
        .push(count(s.values.len() - values_before, "values")?);
    Ok(())
}

/// A sample's location ids so far plus `value`, in [`Samples::unpacked_ids`].
fn unpacked<'a>(
    s: &mut Samples<'a>,
    so_far: Option<SampleLocations<'a>>,
    value: Value<'a>,
    at: usize,
) -> Result<SampleLocations<'a>, PprofError> {
    let start = s.unpacked_ids.len();
    match so_far {
        Some(SampleLocations::Packed { bytes, at }) => {
            repeated_varints(Value::Bytes(bytes), at, |id| s.unpacked_ids.push(id))?;
        }
        // Unpacked ids so far are the last ones added: keep appending to them.
        Some(SampleLocations::Ids { start: first, .. }) => {
            return append_ids(s, first as usize, value, at);
        }
        None => {}
    }
    append_ids(s, start, value, at)
}

fn append_ids<'a>(
    s: &mut Samples<'a>,
    start: usize,
    value: Value<'a>,
    at: usize,
) -> Result<SampleLocations<'a>, PprofError> {
    repeated_varints(value, at, |id| s.unpacked_ids.push(id))?;
    let index = |n: usize| u32::try_from(n).map_err(|_| PprofError::TooLarge("location ids"));
    Ok(SampleLocations::Ids {
        start: index(start)?,
        end: index(s.unpacked_ids.len())?,
    })
}

fn label(b: &[u8], at: usize) -> Result<(u64, u64), WireError> {
    let (mut key, mut text) = (0, 0);
    let mut r = Reader::nested(b, at);
    while let Some((field, value)) = r.field()? {
        match (field, value.varint()) {
            (1, Some(v)) => key = v,
            (2, Some(v)) => text = v,
            _ => {}
        }
    }
    Ok((key, text))
}

fn mapping(b: &[u8], at: usize) -> Result<Mapping, WireError> {
    let mut m = Mapping::default();
    let mut r = Reader::nested(b, at);
    while let Some((field, value)) = r.field()? {
        match (field, value.varint()) {
            (1, Some(v)) => m.id = v,
            (2, Some(v)) => m.start = v,
            (4, Some(v)) => m.file_offset = v,
            (5, Some(v)) => m.file = v,
            _ => {}
        }
    }
    Ok(m)
}

fn location(p: &mut Pprof<'_>, b: &[u8], at: usize) -> Result<(), PprofError> {
    let start = u32::try_from(p.lines.len()).map_err(|_| PprofError::TooLarge("lines"))?;
    let mut loc = Location {
        line_start: start,
        ..Location::default()
    };
    let mut r = Reader::nested(b, at);
    while let Some((field, value)) = r.field()? {
        let here = r.position();
        match (field, value) {
            (1, Value::Varint(v)) => loc.id = v,
            (2, Value::Varint(v)) => loc.mapping_id = v,
            (3, Value::Varint(v)) => loc.address = v,
            (4, Value::Bytes(l)) => {
                let mut line = Line::default();
                let mut lr = Reader::nested(l, here);
                while let Some((f, v)) = lr.field()? {
                    match (f, v.varint()) {
                        (1, Some(id)) => line.function_id = id,
                        // Negative or past u32 is no line a source file has: unknown (0).
                        (2, Some(n)) => line.line = u32::try_from(n).unwrap_or(0),
                        _ => {}
                    }
                }
                p.lines.push(line);
            }
            _ => {}
        }
    }
    loc.line_end = u32::try_from(p.lines.len()).map_err(|_| PprofError::TooLarge("lines"))?;
    p.locations.push(loc);
    Ok(())
}

fn function(b: &[u8], at: usize) -> Result<Function, WireError> {
    let mut f = Function::default();
    let mut r = Reader::nested(b, at);
    while let Some((field, value)) = r.field()? {
        match (field, value.varint()) {
            (1, Some(v)) => f.id = v,
            (2, Some(v)) => f.name = v,
            (3, Some(v)) => f.system_name = v,
            (4, Some(v)) => f.filename = v,
            _ => {}
        }
    }
    Ok(f)
}
