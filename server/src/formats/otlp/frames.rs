//! Frame names for OTLP locations, in DeepFlow's forms, and stacks as the store keeps them
//! (frames root → leaf joined by `;`). Each location and stack is named once per request.
//!
//! | location | frame |
//! |---|---|
//! | `profile.frame.type` = `kernel` | `[k] function` |
//! | native (or no frame type) in a shared object (`*.so`, `*.so.*`) | `[l] function` |
//! | native in the executable, and every interpreted frame (`cpython`, `jvm`, `go`, ...) | `function` |
//! | no function name (unsymbolized) | `[libfoo.so] +0x1a2b` (the mapping's file name and the address; `[unknown]` without a mapping; `[k] ` in front for kernel frames) |
//! | a function with only a file name | `[file]` |
//!
//! Inlined functions (several lines in one location) are several frames, the caller first.
//! Each frame keeps its `Line`'s line number and its function's file name when both are given
//! (a frame without one has no line: nothing is guessed).
//! Names are untrusted text: `;` becomes `:` (as DeepFlow stores it) and control characters
//! become U+FFFD, so a name can neither split a stack nor break a line of folded text.

use std::collections::HashMap;

use opentelemetry_proto::tonic::profiles::v1development::{Location, ProfilesDictionary};

use embers_model::contract::detail::SourceLine;

use super::attrs::Meaning;
use super::budget::Budget;
use super::OtlpError;
use crate::input::check_stack_size;
use crate::limits::StackLimits;

/// One named location or stack: the text and what the stack limits look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Named {
    /// Frames root → leaf, joined by `;`.
    pub text: String,
    /// How many frames.
    pub frames: usize,
    /// Bytes of the longest frame.
    pub longest: usize,
    /// Each frame's source line, when known.
    pub lines: Vec<Option<SourceLine>>,
}

impl Named {
    /// Append `other`'s frames.
    fn extend(&mut self, other: &Named) {
        if !self.text.is_empty() && !other.text.is_empty() {
            self.text.push(';');
        }
        self.text.push_str(&other.text);
        self.frames += other.frames;
        self.longest = self.longest.max(other.longest);
        self.lines.extend(other.lines.iter().cloned());
    }

    /// Append one frame at `line`.
    fn push(&mut self, frame: &str, line: Option<SourceLine>) {
        self.extend(&Named {
            text: frame.to_owned(),
            frames: 1,
            longest: frame.len(),
            lines: vec![line],
        });
    }
}

/// The names of a request's locations and stacks, each made when first asked for, within the
/// stack limits and the request's text budget.
pub(super) struct Frames<'a> {
    dict: &'a ProfilesDictionary,
    meanings: &'a [Meaning<'a>],
    limits: StackLimits,
    locations: HashMap<usize, Named>,
    stacks: HashMap<usize, Named>,
}

impl<'a> Frames<'a> {
    /// Names for `dict`'s tables; `meanings` are its attribute table's.
    pub fn new(
        dict: &'a ProfilesDictionary,
        meanings: &'a [Meaning<'a>],
        limits: StackLimits,
    ) -> Frames<'a> {
        Frames {
            dict,
            meanings,
            limits,
            locations: HashMap::new(),
            stacks: HashMap::new(),
        }
    }

    /// Stack `at` of the stack table (checked to be in range; 0 is the empty stack).
    pub fn stack(&mut self, at: usize, budget: &mut Budget) -> Result<&Named, OtlpError> {
        if !self.stacks.contains_key(&at) {
            let named = self.name_stack(at, budget)?;
            self.stacks.insert(at, named);
        }
        Ok(self.stacks.entry(at).or_default())
    }

    fn name_stack(&mut self, at: usize, budget: &mut Budget) -> Result<Named, OtlpError> {
        let dict = self.dict;
        let mut named = Named::default();
        let Some(stack) = dict.stack_table.get(at).filter(|_| at > 0) else {
            return Ok(named);
        };
        let field = || format!("dictionary.stack_table[{at}]");
        // Leaf first on the wire; the store wants the root first. Index 0 is "no location".
        for &l in stack.location_indices.iter().rev() {
            let Some(location) = usize::try_from(l)
                .ok()
                .filter(|&l| l > 0)
                .and_then(|l| dict.location_table.get(l).map(|loc| (l, loc)))
            else {
                continue;
            };
            let (l, location) = location;
            if !self.locations.contains_key(&l) {
                let frames = self.name_location(l, location, budget)?;
                self.locations.insert(l, frames);
            }
            if let Some(frames) = self.locations.get(&l) {
                budget.take(frames.text.len() + 1)?;
                named.extend(frames);
            }
            check_stack_size(named.frames, named.longest, &self.limits)
                .map_err(|e| OtlpError::field(field(), e))?;
        }
        Ok(named)
    }

    /// The frames of location `l`: one per line (inlined callees after their caller).
    fn name_location(
        &self,
        l: usize,
        location: &Location,
        budget: &mut Budget,
    ) -> Result<Named, OtlpError> {
        let look = Look::of(self, location);
        let mut named = Named::default();
        for line in location.lines.iter().rev() {
            let Some(f) = usize::try_from(line.function_index)
                .ok()
                .filter(|&f| f > 0)
                .and_then(|f| self.dict.function_table.get(f))
            else {
                continue;
            };
            let name = [f.name_strindex, f.system_name_strindex]
                .into_iter()
                .map(|i| self.string(i))
                .find(|n| !n.is_empty());
            let file = self.string(f.filename_strindex);
            let frame = match name {
                Some(name) => format!("{}{}", look.prefix, clean(name)),
                None if !file.is_empty() => format!("[{}]", clean(file)),
                None => continue,
            };
            let source = u32::try_from(line.line)
                .ok()
                .filter(|&n| n > 0 && !file.is_empty())
                .map(|line| SourceLine {
                    file: clean(file),
                    line,
                });
            budget.take(source.as_ref().map_or(0, |s| s.file.len()))?;
            self.add(&mut named, &frame, source, l, budget)?;
        }
        if named.frames == 0 {
            let unsymbolized = format!(
                "{}[{}] +0x{:x}",
                if look.kernel { "[k] " } else { "" },
                clean(
                    look.file
                        .unwrap_or(if look.kernel { "kernel" } else { "unknown" })
                ),
                location.address
            );
            self.add(&mut named, &unsymbolized, None, l, budget)?;
        }
        Ok(named)
    }

    /// Add `frame` at `line` to location `l`'s frames, within the limits and the budget.
    fn add(
        &self,
        named: &mut Named,
        frame: &str,
        line: Option<SourceLine>,
        l: usize,
        budget: &mut Budget,
    ) -> Result<(), OtlpError> {
        budget.take(frame.len() + 1)?;
        named.push(frame, line);
        check_stack_size(named.frames, named.longest, &self.limits)
            .map_err(|e| OtlpError::field(format!("dictionary.location_table[{l}]"), e))
    }

    /// String `i` of the table (checked), `""` for 0.
    fn string(&self, i: i32) -> &'a str {
        usize::try_from(i)
            .ok()
            .and_then(|i| self.dict.string_table.get(i))
            .map_or("", String::as_str)
    }
}

/// What a location's frames look like: kernel or not, the mapping's file name, the prefix of
/// its symbolized frames.
struct Look<'a> {
    kernel: bool,
    file: Option<&'a str>,
    prefix: &'static str,
}

impl<'a> Look<'a> {
    fn of(frames: &Frames<'a>, location: &Location) -> Look<'a> {
        let frame_type = location
            .attribute_indices
            .iter()
            .filter_map(|&a| frames.meanings.get(usize::try_from(a).ok()?))
            .find_map(|m| match m {
                Meaning::FrameType(t) => Some(t.as_ref()),
                _ => None,
            });
        let file = usize::try_from(location.mapping_index)
            .ok()
            .filter(|&m| m > 0)
            .and_then(|m| frames.dict.mapping_table.get(m))
            .map(|m| frames.string(m.filename_strindex))
            .and_then(|path| path.rsplit('/').next())
            .filter(|name| !name.is_empty());
        let kernel = frame_type == Some("kernel");
        let native = matches!(frame_type, None | Some("native"));
        let prefix = if kernel {
            "[k] "
        } else if native && file.is_some_and(shared_object) {
            "[l] "
        } else {
            ""
        };
        Look {
            kernel,
            file,
            prefix,
        }
    }
}

/// Whether a file name is a shared object's (`libc.so.6`, `libfoo.so`).
fn shared_object(name: &str) -> bool {
    name.ends_with(".so") || name.contains(".so.")
}

/// `name` safe to store as one frame: `;` → `:`, control characters → U+FFFD.
pub(super) fn clean(name: &str) -> String {
    name.chars()
        .map(|c| match c {
            ';' => ':',
            c if c.is_control() => '\u{fffd}',
            c => c,
        })
        .collect()
}
