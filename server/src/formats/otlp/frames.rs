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
//! Names are untrusted text: `;` becomes `:` (as DeepFlow stores it) and control characters
//! become U+FFFD, so a name can neither split a stack nor break a line of folded text.

use opentelemetry_proto::tonic::profiles::v1development::{Location, ProfilesDictionary};

use super::attrs::Meaning;

/// One named location or stack: the text and what the stack limits look at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Named {
    /// Frames root → leaf, joined by `;`.
    pub text: String,
    /// How many frames.
    pub frames: usize,
    /// Bytes of the longest frame.
    pub longest: usize,
}

impl Named {
    fn push(&mut self, frame: &str) {
        if !self.text.is_empty() {
            self.text.push(';');
        }
        self.text.push_str(frame);
        self.frames += 1;
        self.longest = self.longest.max(frame.len());
    }
}

/// The names of a request's locations and stacks, made when first asked for.
pub(super) struct Frames<'a> {
    dict: &'a ProfilesDictionary,
    meanings: &'a [Meaning],
    locations: Vec<Option<Named>>,
    stacks: Vec<Option<Named>>,
}

impl<'a> Frames<'a> {
    /// Names for `dict`'s tables; `meanings` are its attribute table's.
    pub fn new(dict: &'a ProfilesDictionary, meanings: &'a [Meaning]) -> Frames<'a> {
        Frames {
            dict,
            meanings,
            locations: vec![None; dict.location_table.len()],
            stacks: vec![None; dict.stack_table.len()],
        }
    }

    /// Stack `at` of the stack table (checked to be in range; 0 is the empty stack).
    pub fn stack(&mut self, at: usize) -> &Named {
        if self.stacks.get(at).is_some_and(Option::is_none) {
            let named = self.name_stack(at);
            self.stacks[at] = Some(named);
        }
        static EMPTY: Named = Named {
            text: String::new(),
            frames: 0,
            longest: 0,
        };
        self.stacks
            .get(at)
            .and_then(Option::as_ref)
            .unwrap_or(&EMPTY)
    }

    fn name_stack(&mut self, at: usize) -> Named {
        let dict = self.dict;
        let mut named = Named::default();
        let Some(stack) = dict.stack_table.get(at).filter(|_| at > 0) else {
            return named;
        };
        // Leaf first on the wire; the store wants the root first. Index 0 is "no location".
        for &l in stack.location_indices.iter().rev() {
            let Ok(l) = usize::try_from(l) else { continue };
            if l == 0 || l >= self.locations.len() {
                continue;
            }
            if self.locations[l].is_none() {
                self.locations[l] = Some(self.name_location(&dict.location_table[l]));
            }
            if let Some(location) = &self.locations[l] {
                if !named.text.is_empty() && !location.text.is_empty() {
                    named.text.push(';');
                }
                named.text.push_str(&location.text);
                named.frames += location.frames;
                named.longest = named.longest.max(location.longest);
            }
        }
        named
    }

    /// The frames of one location: one per line (inlined callees after their caller).
    fn name_location(&self, location: &Location) -> Named {
        let strings = &self.dict.string_table;
        let string = |i: i32| {
            usize::try_from(i)
                .ok()
                .and_then(|i| strings.get(i))
                .map_or("", String::as_str)
        };
        let frame_type = location
            .attribute_indices
            .iter()
            .filter_map(|&a| self.meanings.get(usize::try_from(a).ok()?))
            .find_map(|m| match m {
                Meaning::FrameType(t) => Some(t.as_str()),
                _ => None,
            });
        let file = usize::try_from(location.mapping_index)
            .ok()
            .filter(|&m| m > 0)
            .and_then(|m| self.dict.mapping_table.get(m))
            .map(|m| string(m.filename_strindex))
            .and_then(|path| path.rsplit('/').next())
            .filter(|name| !name.is_empty());
        let kernel = frame_type == Some("kernel");
        let prefix = if kernel {
            "[k] "
        } else if matches!(frame_type, None | Some("native")) && file.is_some_and(shared_object) {
            "[l] "
        } else {
            ""
        };
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
                .map(string)
                .find(|n| !n.is_empty());
            match (name, string(f.filename_strindex)) {
                (Some(name), _) => named.push(&format!("{prefix}{}", clean(name))),
                (None, file) if !file.is_empty() => named.push(&format!("[{}]", clean(file))),
                _ => {}
            }
        }
        if named.frames == 0 {
            let unsymbolized = format!(
                "{}[{}] +0x{:x}",
                if kernel { "[k] " } else { "" },
                clean(file.unwrap_or(if kernel { "kernel" } else { "unknown" })),
                location.address
            );
            named.push(&unsymbolized);
        }
        named
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
