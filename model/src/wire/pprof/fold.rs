//! One sample type of a [`Pprof`] folded into a call tree ([`fold`]): every location named
//! once (its inlined functions outermost first, named by [`crate::wire::native`]), every
//! sample's stack walked from the root, merging equal frames, into a
//! [`NodeTable`] the viewer builds its profile from and the service reads stacks out of
//! ([`super::stacks`]).
//!
//! Writers list a sample's locations leaf first and consecutive samples often share most of
//! their stack (ours write them in tree order), so each sample starts from the deepest node it
//! shares with the sample before and only the rest is looked up.

use rustc_hash::FxHashMap;

use super::lines::named_lines;
use super::{Pprof, PprofError, SampleLocations, NONE};
use crate::tree::table::{NodeTable, NO_PARENT};
use crate::wire::native::{self, origin_of_file};
use crate::wire::protobuf::{repeated_varints, Value};

/// Label keys whose string value names the sample's thread (async-profiler, Pyroscope's Java
/// agent, Go programs that label their goroutines so): it becomes a `[t] name` frame under
/// the root, as DeepFlow's agent writes threads.
pub const THREAD_KEYS: [&str; 2] = ["thread", "thread_name"];

/// Nodes a profile of `input_len` bytes may fold into: one per byte, plus room for small
/// profiles. A real profile has far fewer (every node needs a location id in some sample);
/// more means a few bytes of repeated, deeply inlined locations expanding without bound.
pub fn max_nodes(input_len: usize) -> usize {
    input_len.saturating_add(1 << 16)
}

/// Folds the values of sample type `value` into a tree under a root named `root`. Values are
/// as sent (scale them afterwards); negative values, sums past `i64::MAX` and more nodes than
/// [`max_nodes`] are errors.
pub fn fold(p: &Pprof<'_>, root: &str, value: usize) -> Result<NodeTable, PprofError> {
    let mut table = NodeTable {
        derive_totals: true,
        ..NodeTable::default()
    };
    // At least a node per sample, as Embers' own exports have (saves regrowing big columns).
    table.reserve(p.samples.len() + 1);
    let root_func = table.functions.intern(root);
    table.push(root_func, NO_PARENT, 0, 0);
    let frames = LocationFrames::new(p, &mut table);
    let threads = thread_frames(p, &mut table);
    let mut trie = Trie::with_capacity(p.samples.len() + 1);
    trie.max_nodes = max_nodes(p.input_len);
    let k = p.sample_types.len();
    let mut locations = Vec::new();
    // The packed location ids of the sample walked last.
    let mut previous: Option<&[u8]> = None;
    // One thread per sample (`thread_frames`).
    for (i, &thread) in threads.iter().enumerate().take(p.samples.len()) {
        let v = p.samples.values.get(i * k + value).copied().unwrap_or(0);
        if v == 0 {
            continue;
        }
        if v < 0 {
            return Err(PprofError::Negative {
                sample: i + 1,
                value: v,
                sample_type: p.sample_type_name(value),
            });
        }
        let packed = match p.samples.locations.get(i) {
            Some(&SampleLocations::Packed { bytes, at }) => Some((bytes, at)),
            _ => None,
        };
        let same_thread = trie.prev_thread == Some(thread);
        let shortcut = match (packed, previous) {
            (Some((bytes, _)), Some(prev)) if same_thread => shared_tail(prev, bytes),
            _ => None,
        };
        let node = match (shortcut, packed) {
            (Some((shared, head)), Some((bytes, at))) => {
                decode_locations(p, i, Value::Bytes(&bytes[..head]), at, &mut locations)?;
                trie.walk_below(&mut table, &frames, shared, &locations)?
            }
            _ => {
                sample_locations(p, i, &mut locations)?;
                trie.walk(&mut table, &frames, thread, &locations)?
            }
        };
        previous = packed.map(|(bytes, _)| bytes);
        let slot = &mut table.self_value[node as usize];
        *slot = slot.checked_add(v).ok_or_else(|| PprofError::Overflow {
            sample_type: p.sample_type_name(value),
        })?;
    }
    Ok(table)
}

/// Sample `i`'s locations (indices into `p.locations`, leaf first) into `out`.
fn sample_locations(p: &Pprof<'_>, i: usize, out: &mut Vec<u32>) -> Result<(), PprofError> {
    match p.samples.locations.get(i) {
        Some(&SampleLocations::Packed { bytes, at }) => {
            decode_locations(p, i, Value::Bytes(bytes), at, out)
        }
        Some(&SampleLocations::Ids { start, end }) => {
            out.clear();
            for &id in &p.samples.unpacked_ids[start as usize..end as usize] {
                out.push(location_index(p, i, id)?);
            }
            Ok(())
        }
        None => {
            out.clear();
            Ok(())
        }
    }
}

/// The packed location ids `value` of sample `i` as location indices, read and looked up in
/// one pass.
fn decode_locations(
    p: &Pprof<'_>,
    i: usize,
    value: Value<'_>,
    at: usize,
    out: &mut Vec<u32>,
) -> Result<(), PprofError> {
    out.clear();
    let mut missing = None;
    repeated_varints(value, at, |id| match p.location_lookup.get(id) {
        Some(index) => out.push(index),
        None => {
            missing.get_or_insert(id);
        }
    })?;
    match missing {
        None => Ok(()),
        Some(id) => location_index(p, i, id).map(|_| ()),
    }
}

/// The index of location `id`, or the error naming sample `i`.
fn location_index(p: &Pprof<'_>, i: usize, id: u64) -> Result<u32, PprofError> {
    p.location_lookup
        .get(id)
        .ok_or_else(|| PprofError::MissingId {
            field: format!("sample {} location_id", i + 1),
            table: "location",
            id,
        })
}

/// How much of `current`'s packed location ids (leaf first, so the root's end is last) the
/// previous sample's `previous` ends with: `(ids shared, bytes of current before them)`, or
/// `None`. The shared ids were read (and checked) with the previous sample, so only the
/// leaf's end is decoded: for the deep, sorted stacks of a big profile most of each sample.
fn shared_tail(previous: &[u8], current: &[u8]) -> Option<(usize, usize)> {
    let (pl, cl) = (previous.len(), current.len());
    let max = pl.min(cl);
    let mut same = 8 * previous
        .rchunks_exact(8)
        .zip(current.rchunks_exact(8))
        .take_while(|(a, b)| a == b)
        .count();
    while same < max && previous[pl - 1 - same] == current[cl - 1 - same] {
        same += 1;
    }
    let mut start = cl - same;
    // The shared bytes must start a varint in both: after a last byte (high bit clear).
    let starts_varint = |bytes: &[u8], at: usize| at == 0 || bytes[at - 1] < 0x80;
    if !(starts_varint(current, start) && starts_varint(previous, pl - same)) {
        start += current[start..].iter().position(|&b| b < 0x80)? + 1;
    }
    let shared = current[start..].iter().filter(|&&b| b < 0x80).count();
    (shared > 0).then_some((shared, start))
}

/// Every location's frames, root-most first, as interned function ids.
struct LocationFrames {
    start: Vec<u32>,
    funcs: Vec<u32>,
}

impl LocationFrames {
    fn new(p: &Pprof<'_>, table: &mut NodeTable) -> LocationFrames {
        let mut start = Vec::with_capacity(p.locations.len() + 1);
        let mut funcs = Vec::with_capacity(p.lines.len());
        start.push(0);
        for loc in &p.locations {
            let file = match loc.mapping {
                NONE => "",
                m => p.mappings.get(m as usize).map_or("", |m| p.string(m.file)),
            };
            let named: Vec<&str> = named_lines(p, loc).map(|(name, _)| name).collect();
            if named.is_empty() {
                let mapping = p.mappings.get(loc.mapping as usize);
                let offset = mapping.map_or(loc.address, |m| {
                    loc.address
                        .wrapping_sub(m.start)
                        .wrapping_add(m.file_offset)
                });
                funcs.push(table.functions.intern(&native::unsymbolized_frame(
                    file,
                    offset,
                    loc.address,
                )));
            } else {
                let origin = origin_of_file(file);
                for name in named {
                    funcs.push(
                        table
                            .functions
                            .intern(&native::function_frame(name, origin)),
                    );
                }
            }
            start.push(funcs.len() as u32);
        }
        LocationFrames { start, funcs }
    }

    fn of(&self, location: u32) -> &[u32] {
        let l = location as usize;
        &self.funcs[self.start[l] as usize..self.start[l + 1] as usize]
    }
}

/// Each sample's `[t]` frame (interned), or [`NONE`].
fn thread_frames(p: &Pprof<'_>, table: &mut NodeTable) -> Vec<u32> {
    let mut names: FxHashMap<u64, u32> = FxHashMap::default();
    (0..p.samples.len())
        .map(|i| {
            let label = p
                .samples
                .labels(i)
                .iter()
                .find(|(key, _)| THREAD_KEYS.contains(&p.string(*key)));
            match label {
                None => NONE,
                Some(&(_, text)) => *names.entry(text).or_insert_with(|| {
                    table
                        .functions
                        .intern(&native::thread_frame(p.string(text)))
                }),
            }
        })
        .collect()
}

/// Children listed per node past which they are also indexed by `(parent, function)`.
const FEW_CHILDREN: u32 = 8;

/// The children of every node, and the path of the sample before. A node's children are a
/// linked list (most have a handful: a short scan beats hashing), indexed in `many` once
/// there are more than [`FEW_CHILDREN`]; a new node's children need no lookup at all.
#[derive(Default)]
struct Trie {
    first_child: Vec<u32>,
    next_sibling: Vec<u32>,
    child_count: Vec<u32>,
    many: FxHashMap<(u32, u32), u32>,
    /// See [`max_nodes`].
    max_nodes: usize,
    /// The previous sample's thread frame and locations, root-most first...
    prev_thread: Option<u32>,
    prev_locations: Vec<u32>,
    /// ...and the node each of those locations ended at.
    prev_nodes: Vec<u32>,
}

impl Trie {
    fn with_capacity(nodes: usize) -> Trie {
        Trie {
            first_child: Vec::with_capacity(nodes),
            next_sibling: Vec::with_capacity(nodes),
            child_count: Vec::with_capacity(nodes),
            ..Trie::default()
        }
    }

    /// The node of a sample whose first `shared` locations (from the root) are the previous
    /// sample's, and whose others are `fresh` (leaf first).
    fn walk_below(
        &mut self,
        table: &mut NodeTable,
        frames: &LocationFrames,
        shared: usize,
        fresh: &[u32],
    ) -> Result<u32, PprofError> {
        let shared = shared.min(self.prev_locations.len());
        self.prev_locations.truncate(shared);
        self.prev_nodes.truncate(shared);
        let mut node = match (shared, self.prev_thread) {
            (0, None | Some(NONE)) => 0,
            (0, Some(t)) => self.child(table, 0, t)?,
            (n, _) => self.prev_nodes[n - 1],
        };
        for &loc in fresh.iter().rev() {
            for &func in frames.of(loc) {
                node = self.child(table, node, func)?;
            }
            self.prev_locations.push(loc);
            self.prev_nodes.push(node);
        }
        Ok(node)
    }

    /// The node of a sample's stack (`locations` leaf first), added if new.
    fn walk(
        &mut self,
        table: &mut NodeTable,
        frames: &LocationFrames,
        thread: u32,
        locations: &[u32],
    ) -> Result<u32, PprofError> {
        let mut shared = 0;
        if self.prev_thread == Some(thread) {
            shared = self
                .prev_locations
                .iter()
                .zip(locations.iter().rev())
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.prev_thread = Some(thread);
        }
        self.prev_locations.truncate(shared);
        self.prev_nodes.truncate(shared);
        let mut node = match (shared, thread) {
            (0, NONE) => 0,
            (0, t) => self.child(table, 0, t)?,
            (n, _) => self.prev_nodes[n - 1],
        };
        for &loc in locations.iter().rev().skip(shared) {
            for &func in frames.of(loc) {
                node = self.child(table, node, func)?;
            }
            self.prev_locations.push(loc);
            self.prev_nodes.push(node);
        }
        Ok(node)
    }

    fn child(&mut self, table: &mut NodeTable, parent: u32, func: u32) -> Result<u32, PprofError> {
        // The root was added before the trie saw the table.
        while self.first_child.len() < table.len() {
            self.first_child.push(NONE);
            self.next_sibling.push(NONE);
            self.child_count.push(0);
        }
        let p = parent as usize;
        if self.child_count[p] > FEW_CHILDREN {
            if let Some(&c) = self.many.get(&(parent, func)) {
                return Ok(c);
            }
        } else {
            let mut c = self.first_child[p];
            while c != NONE {
                if table.func[c as usize] == func {
                    return Ok(c);
                }
                c = self.next_sibling[c as usize];
            }
        }
        if table.len() >= self.max_nodes {
            return Err(PprofError::TooManyNodes(self.max_nodes));
        }
        let next = u32::try_from(table.len())
            .ok()
            .filter(|&n| n < NO_PARENT)
            .ok_or(PprofError::TooLarge("nodes"))?;
        table.push(func, parent, 0, 0);
        self.first_child.push(NONE);
        self.next_sibling.push(self.first_child[p]);
        self.child_count.push(0);
        self.first_child[p] = next;
        self.child_count[p] += 1;
        match self.child_count[p] {
            n if n == FEW_CHILDREN + 1 => {
                let mut c = next;
                while c != NONE {
                    self.many.insert((parent, table.func[c as usize]), c);
                    c = self.next_sibling[c as usize];
                }
            }
            n if n > FEW_CHILDREN + 1 => {
                self.many.insert((parent, func), next);
            }
            _ => {}
        }
        Ok(next)
    }
}
