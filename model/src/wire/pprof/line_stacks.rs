//! A pprof profile's stacks *with their source lines*, for the service to store
//! ([`stacks_with_lines`]): each stack as [`super::stacks`] writes it, and per frame the
//! `Line` it was executing (its function's `filename` and the line number), inlined functions
//! each at their own line as pprof lists them.
//!
//! The stacks must be exactly those the plain fold gives (same names, same threads, same
//! unsymbolized frames), so they are made by the same fold over a copy of the profile in which
//! every `Line` names a function of its own, called `<name>` + [`MARK`] + `<k>` (`k` indexing
//! the source lines; 0 for none): the fold keeps frames of different lines apart, and taking
//! the suffix off each frame gives the plain frame and its line. A sample whose function stack
//! ran different lines becomes several stacks of the same text, whose values add up to the
//! plain fold's.

use rustc_hash::FxHashMap;

use super::fold::fold;
use super::stacks::{stacks, StackBounds};
use super::{Function, Pprof, PprofError};
use crate::budget::Budget;
use crate::contract::detail::SourceLine;

/// What ends a decorated name before its line's index (a private-use character: cleaning
/// names keeps it, and no producer's name is expected to end in it followed by digits).
pub const MARK: char = '\u{E000}';

/// Room a decoration takes in a frame: the mark and up to ten digits.
const MARK_BYTES: usize = 3 + 10;

/// One stored stack: its text, its frames' lines (empty when none is known) and its value
/// (as sent: scale it as the plain stacks are).
pub type LineStack = (String, Vec<Option<SourceLine>>, u64);

/// Whether any `Line` of the profile has a line number.
pub fn has_lines(p: &Pprof<'_>) -> bool {
    p.lines.iter().any(|l| l.line > 0)
}

/// The stacks of sample type `value` under `root`, each with its frames' lines, within
/// `bounds` (names measured without their decoration) and `budget`.
pub fn stacks_with_lines(
    p: &Pprof<'_>,
    root: &str,
    value: usize,
    bounds: &StackBounds,
    budget: &Budget,
) -> Result<Vec<LineStack>, PprofError> {
    let (names, sources) = decorations(p);
    let decorated = decorate(p, &names);
    let table = fold(&decorated, root, value)?;
    let wide = StackBounds {
        max_frame_bytes: bounds.max_frame_bytes.saturating_add(MARK_BYTES),
        ..*bounds
    };
    let mut out = Vec::new();
    for (text, v) in stacks(&table, &wide, budget)? {
        let mut plain = String::with_capacity(text.len());
        let mut lines = Vec::new();
        for (i, frame) in text.split(';').enumerate() {
            let (name, k) = undecorate(frame, sources.len());
            if name.len() > bounds.max_frame_bytes {
                return Err(PprofError::Stack(format!(
                    "a frame is {} bytes long, over the limit of {} bytes per frame \
                     (--max-frame-bytes)",
                    name.len(),
                    bounds.max_frame_bytes
                )));
            }
            if i > 0 {
                plain.push(';');
            }
            plain.push_str(name);
            lines.push(sources.get(k).cloned().flatten());
        }
        if lines.iter().all(Option::is_none) {
            lines.clear();
        }
        out.push((plain, lines, v));
    }
    Ok(out)
}

/// A frame's plain name and its line's index (0 when it has no decoration).
fn undecorate(frame: &str, count: usize) -> (&str, usize) {
    if let Some(at) = frame.rfind(MARK) {
        let digits = &frame[at + MARK.len_utf8()..];
        if let Ok(k) = digits.parse::<usize>() {
            if k < count && !digits.starts_with('+') {
                return (&frame[..at], k);
            }
        }
    }
    (frame, 0)
}

/// The decorated name of each `Line` of `p` (by index; `None` to leave it as it is: a line
/// whose function has no name, which the fold skips), and the source lines the names index
/// (entry 0 is "no line").
fn decorations(p: &Pprof<'_>) -> (Vec<Option<String>>, Vec<Option<SourceLine>>) {
    let mut sources: Vec<Option<SourceLine>> = vec![None];
    let mut index: FxHashMap<(u64, u32), usize> = FxHashMap::default();
    let names = p
        .lines
        .iter()
        .map(|l| {
            let f = p.functions.get(l.function as usize)?;
            let name = match p.string(f.name) {
                "" => p.string(f.system_name),
                name => name,
            };
            if name.is_empty() {
                return None;
            }
            let k = match l.line {
                0 => 0,
                line => *index.entry((f.filename, line)).or_insert_with(|| {
                    sources.push(Some(SourceLine {
                        file: p.string(f.filename).to_owned(),
                        line,
                    }));
                    sources.len() - 1
                }),
            };
            Some(format!("{name}{MARK}{k}"))
        })
        .collect();
    (names, sources)
}

/// A copy of `p` whose every named `Line` calls a function named `names[i]`.
fn decorate<'b>(p: &Pprof<'b>, names: &'b [Option<String>]) -> Pprof<'b> {
    let mut q = p.clone();
    let mut made: FxHashMap<(u32, &str), u32> = FxHashMap::default();
    for (line, name) in q.lines.iter_mut().zip(names) {
        let Some(name) = name.as_deref() else {
            continue;
        };
        let key = (line.function, name);
        let function = match made.get(&key) {
            Some(&f) => f,
            None => {
                let Some(base) = p.functions.get(line.function as usize) else {
                    continue;
                };
                q.strings.push(name);
                let f = Function {
                    name: (q.strings.len() - 1) as u64,
                    ..*base
                };
                q.functions.push(f);
                let index = (q.functions.len() - 1) as u32;
                made.insert(key, index);
                index
            }
        };
        line.function = function;
    }
    q
}

#[cfg(test)]
#[path = "line_stacks_tests.rs"]
mod tests;
