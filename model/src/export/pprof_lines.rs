//! Stacks with their source lines written as pprof ([`to_pprof_lines`]), so `go tool pprof
//! -list FUNC` on an export shows the line weights the original profile had: one function per
//! (name, file), one location per (function, line) whose single `Line` names them, one sample
//! per stack. Frames without a line get a location of their own with line 0, as
//! [`super::pprof::to_pprof`] writes every frame. The root is the comment `app_service=NAME`.

use std::collections::HashMap;

use super::pprof::{pprof_unit, PprofMeta};
use crate::contract::detail::SourceLine;
use crate::wire::pprof::ROOT_COMMENT;
use crate::wire::protobuf::{put_bytes, put_packed, put_uint};

/// A stored stack: `;`-joined frames below the root, one line per frame (or none), a value.
pub type StackLines = (String, Vec<Option<SourceLine>>, u64);

/// Strings, functions and locations as they are first met.
#[derive(Default)]
struct Tables<'a> {
    strings: Vec<&'a str>,
    string_ids: HashMap<&'a str, u64>,
    /// (name, file) string ids of each function (id = index + 1).
    functions: Vec<(u64, u64)>,
    function_ids: HashMap<(u64, u64), u64>,
    /// (function id, line) of each location (id = index + 1).
    locations: Vec<(u64, u32)>,
    location_ids: HashMap<(u64, u32), u64>,
}

impl<'a> Tables<'a> {
    fn string(&mut self, s: &'a str) -> u64 {
        if let Some(&id) = self.string_ids.get(s) {
            return id;
        }
        self.strings.push(s);
        let id = (self.strings.len() - 1) as u64;
        self.string_ids.insert(s, id);
        id
    }

    fn location(&mut self, name: &'a str, at: Option<&'a SourceLine>) -> u64 {
        let key = (self.string(name), at.map_or(0, |l| self.string(&l.file)));
        let function = match self.function_ids.get(&key) {
            Some(&id) => id,
            None => {
                self.functions.push(key);
                let id = self.functions.len() as u64;
                self.function_ids.insert(key, id);
                id
            }
        };
        let key = (function, at.map_or(0, |l| l.line));
        if let Some(&id) = self.location_ids.get(&key) {
            return id;
        }
        self.locations.push(key);
        let id = self.locations.len() as u64;
        self.location_ids.insert(key, id);
        id
    }
}

/// `stacks` under `root` as uncompressed pprof bytes.
pub fn to_pprof_lines(root: &str, stacks: &[StackLines], meta: &PprofMeta<'_>) -> Vec<u8> {
    let comment = format!("{ROOT_COMMENT}{root}");
    let mut t = Tables::default();
    for s in ["", meta.event_type, pprof_unit(meta.quantity), &comment] {
        t.string(s);
    }
    let (mut out, mut msg, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
    put_uint(&mut msg, 1, 1);
    put_uint(&mut msg, 2, 2);
    put_bytes(&mut out, 1, &msg);
    let mut ids = Vec::new();
    for (stack, lines, value) in stacks.iter().filter(|s| s.2 > 0) {
        ids.clear();
        for (i, frame) in stack.split(';').enumerate() {
            ids.push(t.location(frame, lines.get(i).and_then(Option::as_ref)));
        }
        ids.reverse();
        msg.clear();
        put_packed(&mut msg, 1, &ids, &mut scratch);
        put_packed(&mut msg, 2, &[*value], &mut scratch);
        put_bytes(&mut out, 2, &msg);
    }
    // One mapping (id 1) with has_functions and has_lines, so nothing asks for symbols.
    msg.clear();
    for (field, v) in [(1, 1), (7, 1), (9, 1)] {
        put_uint(&mut msg, field, v);
    }
    put_bytes(&mut out, 3, &msg);
    for (i, (function, line)) in t.locations.iter().enumerate() {
        msg.clear();
        put_uint(&mut msg, 1, i as u64 + 1);
        put_uint(&mut msg, 2, 1);
        scratch.clear();
        put_uint(&mut scratch, 1, *function);
        put_uint(&mut scratch, 2, u64::from(*line));
        put_bytes(&mut msg, 4, &scratch);
        put_bytes(&mut out, 4, &msg);
    }
    for (i, (name, file)) in t.functions.iter().enumerate() {
        msg.clear();
        put_uint(&mut msg, 1, i as u64 + 1);
        put_uint(&mut msg, 2, *name);
        put_uint(&mut msg, 3, *name);
        put_uint(&mut msg, 4, *file);
        put_bytes(&mut out, 5, &msg);
    }
    for s in &t.strings {
        put_bytes(&mut out, 6, s.as_bytes());
    }
    put_uint(&mut out, 9, meta.time_nanos as u64);
    put_uint(&mut out, 10, meta.duration_nanos as u64);
    put_uint(&mut out, 13, 3);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::event::Quantity;
    use crate::wire::pprof::line_stacks::stacks_with_lines;
    use crate::wire::pprof::stacks::StackBounds;
    use crate::wire::pprof::{decode, read_profile};

    #[test]
    fn stacks_and_lines_read_back_as_written() {
        let at = |line| {
            Some(SourceLine {
                file: "m.go".into(),
                line,
            })
        };
        let stacks: Vec<StackLines> = vec![
            ("main;work".into(), vec![at(3), at(9)], 5),
            ("main;work".into(), vec![at(3), at(10)], 2),
            ("main;[k] read".into(), vec![at(4), None], 1),
            ("main".into(), vec![], 0),
        ];
        let meta = PprofMeta {
            event_type: "cpu",
            quantity: Quantity::Samples,
            time_nanos: 0,
            duration_nanos: 0,
        };
        let bytes = to_pprof_lines("web", &stacks, &meta);
        let read = read_profile(&bytes, "x").expect("reads");
        assert_eq!(read.profile.name(0), "web", "the root comes back");
        let p = decode(&bytes).expect("decodes");
        let bounds = StackBounds {
            max_frames: 10,
            max_frame_bytes: 100,
        };
        let budget = crate::budget::Budget::unlimited();
        let mut back = stacks_with_lines(&p, "web", 0, &bounds, &budget).expect("lines");
        back.sort_by_key(|s| std::cmp::Reverse(s.2));
        assert_eq!(back, stacks[..3].to_vec());
    }
}
