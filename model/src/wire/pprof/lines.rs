//! The source lines of a pprof profile's functions ([`function_lines`]): each `Line` record of a
//! location (its `line` and its function's `filename`) summed over the samples of one sample
//! type into a [`LineTable`], the functions named exactly as [`super::fold`] names their frames,
//! so the viewer finds a clicked frame's lines by its name. Inlined functions are frames of
//! their own (pprof lists them innermost first in one location), each at its own line, as
//! `go tool pprof -list` shows them.

use super::sample_types::Scale;
use super::{Line, Location, Pprof, PprofError, NONE};
use crate::tree::lines::{FrameLine, LineSums, LineTable};
use crate::wire::native::{self, origin_of_file};

/// What the panel says when a pprof file has no line at all.
pub const NO_LINES: &str = "This pprof file has no line numbers: none of its locations has a \
    Line with a line number. Its producer wrote functions only, or symbolized the profile \
    without debug information (a stripped binary, or one built without -g).";

/// The named functions of location `loc`, outermost first, each with its `Line` (names as
/// the producer wrote them; empty names left out).
pub(super) fn named_lines<'p>(
    p: &'p Pprof<'_>,
    loc: &Location,
) -> impl Iterator<Item = (&'p str, &'p Line)> + 'p {
    p.lines[loc.line_start as usize..loc.line_end as usize]
        .iter()
        .rev()
        .filter_map(|l| Some((p.functions.get(l.function as usize)?, l)))
        .map(|(f, l)| match p.string(f.name) {
            "" => (p.string(f.system_name), l),
            name => (name, l),
        })
        .filter(|(name, _)| !name.is_empty())
}

/// The lines of every function of sample type `value`, its sums scaled by `scale` as the
/// tree's values are.
pub fn function_lines(p: &Pprof<'_>, value: usize, scale: Scale) -> Result<LineTable, PprofError> {
    if !p.lines.iter().any(|l| l.line > 0) {
        return Ok(LineTable::none(NO_LINES));
    }
    let mut sums = LineSums::default();
    let frames = location_lines(p, &mut sums);
    let k = p.sample_types.len();
    let mut ids = Vec::new();
    for i in 0..p.samples.len() {
        let v = p.samples.values.get(i * k + value).copied().unwrap_or(0);
        // Negative values were refused when the tree was folded; none is added here.
        let Ok(v) = u64::try_from(v) else { continue };
        if v == 0 {
            continue;
        }
        p.samples.location_ids(i, &mut ids)?;
        let stack = ids
            .iter()
            .rev()
            .filter_map(|&id| p.location_lookup.get(id))
            .flat_map(|loc| frames[loc as usize].iter().copied());
        sums.add(stack, v);
    }
    let mut table = sums.finish(|| NO_LINES.to_owned());
    if scale != Scale::AsSent {
        table.scale(|v| scale.apply(v).unwrap_or(u64::MAX));
    }
    Ok(table)
}

/// Every location's frames, outermost first, as line ids (`None` where the line is unknown).
fn location_lines(p: &Pprof<'_>, sums: &mut LineSums) -> Vec<Vec<Option<FrameLine>>> {
    p.locations
        .iter()
        .map(|loc| {
            let file = match loc.mapping {
                NONE => "",
                m => p.mappings.get(m as usize).map_or("", |m| p.string(m.file)),
            };
            let origin = origin_of_file(file);
            let named: Vec<_> = named_lines(p, loc).collect();
            if named.is_empty() {
                // An unsymbolized address: one frame, no line.
                return vec![None];
            }
            named
                .into_iter()
                .map(|(name, line)| {
                    let source = p
                        .functions
                        .get(line.function as usize)
                        .map_or("", |f| p.string(f.filename));
                    (line.line > 0).then(|| {
                        let f = sums.function(&native::function_frame(name, origin));
                        (f, sums.file(source), line.line)
                    })
                })
                .collect()
        })
        .collect()
}
