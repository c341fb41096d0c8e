//! The checks [`super::decode`] runs once the whole message is read: every string index inside
//! `string_table`, every id defined once and every reference between tables defined, every sample
//! with one value per sample type. References are resolved to table indices on the way; the
//! samples' location ids, left packed, are resolved (and refused when unknown) as they are
//! folded.

use rustc_hash::FxHashMap;

use super::{Pprof, PprofError, NONE};

/// Ids of one table → their index: a plain offset when the ids are `1..=n` in order (what Go
/// and most writers emit), a map otherwise.
#[derive(Clone, Debug)]
pub(crate) enum Ids {
    Dense(usize),
    Map(FxHashMap<u64, u32>),
}

impl Default for Ids {
    fn default() -> Ids {
        Ids::Dense(0)
    }
}

impl Ids {
    fn new(
        table: &'static str,
        ids: impl ExactSizeIterator<Item = u64>,
    ) -> Result<Ids, PprofError> {
        let n = ids.len();
        u32::try_from(n).map_err(|_| PprofError::TooLarge(table))?;
        let mut map = FxHashMap::default();
        let mut dense = true;
        for (i, id) in ids.enumerate() {
            dense &= id == i as u64 + 1;
            if map.insert(id, i as u32).is_some() {
                return Err(PprofError::DuplicateId { table, id });
            }
        }
        Ok(if dense { Ids::Dense(n) } else { Ids::Map(map) })
    }

    /// The index of `id`, if the table defines it.
    pub(crate) fn get(&self, id: u64) -> Option<u32> {
        match self {
            Ids::Dense(n) => (id >= 1 && id <= *n as u64).then(|| (id - 1) as u32),
            Ids::Map(m) => m.get(&id).copied(),
        }
    }
}

/// Checks `p` and resolves its references (see the module docs).
pub(super) fn check(p: &mut Pprof<'_>) -> Result<(), PprofError> {
    strings(p)?;
    if p.sample_types.is_empty() {
        return Err(PprofError::NoSampleType);
    }
    let k = p.sample_types.len();
    if let Some((i, &n)) = p
        .samples
        .value_counts
        .iter()
        .enumerate()
        .find(|(_, &n)| n as usize != k)
    {
        return Err(PprofError::ValueCount {
            sample: i + 1,
            values: n as usize,
            types: k,
        });
    }
    p.samples.value_counts = Vec::new();
    references(p)
}

fn strings(p: &mut Pprof<'_>) -> Result<(), PprofError> {
    match p.strings.first() {
        None => p.strings.push(""),
        Some(s) if !s.is_empty() => return Err(PprofError::FirstString),
        Some(_) => {}
    }
    let len = p.strings.len();
    let check = |field: String, index: u64| {
        if index < len as u64 {
            Ok(())
        } else {
            Err(PprofError::StringIndex { field, index, len })
        }
    };
    for (i, t) in p.sample_types.iter().enumerate() {
        check(format!("sample_type[{i}].type"), t.kind)?;
        check(format!("sample_type[{i}].unit"), t.unit)?;
    }
    if let Some(t) = p.period_type {
        check("period_type.type".into(), t.kind)?;
        check("period_type.unit".into(), t.unit)?;
    }
    check("default_sample_type".into(), p.default_sample_type)?;
    for &c in &p.comments {
        check("comment".into(), c)?;
    }
    for m in &p.mappings {
        check(format!("mapping {} filename", m.id), m.file)?;
    }
    for f in &p.functions {
        check(format!("function {} name", f.id), f.name)?;
        check(format!("function {} system_name", f.id), f.system_name)?;
        check(format!("function {} filename", f.id), f.filename)?;
    }
    for (i, &(key, text)) in p.samples.labels.iter().enumerate() {
        check(format!("label {} key", i + 1), key)?;
        check(format!("label {} str", i + 1), text)?;
    }
    Ok(())
}

fn references(p: &mut Pprof<'_>) -> Result<(), PprofError> {
    let mappings = Ids::new("mapping", p.mappings.iter().map(|m| m.id))?;
    let functions = Ids::new("function", p.functions.iter().map(|f| f.id))?;
    let locations = Ids::new("location", p.locations.iter().map(|l| l.id))?;
    for loc in &mut p.locations {
        loc.mapping = match loc.mapping_id {
            0 => NONE,
            id => mappings.get(id).ok_or_else(|| PprofError::MissingId {
                field: format!("location {} mapping_id", loc.id),
                table: "mapping",
                id,
            })?,
        };
        for line in &mut p.lines[loc.line_start as usize..loc.line_end as usize] {
            line.function = match line.function_id {
                0 => NONE,
                id => functions.get(id).ok_or_else(|| PprofError::MissingId {
                    field: format!("location {} line function_id", loc.id),
                    table: "function",
                    id,
                })?,
            };
        }
    }
    // Samples' location ids are checked as they are folded (they stay packed until then).
    p.location_lookup = locations;
    Ok(())
}
