//! One sample type of a [`Pprof`] folded into a call tree ([`fold`]): every location named
//! once (its inlined functions outermost first, named by [`crate::wire::native`]), every
//! sample's stack walked from the root, merging equal frames, into a
//! [`NodeTable`] the viewer builds its profile from and the service reads stacks out of
//! ([`stacks`]).
//!
//! Writers list a sample's locations leaf first and consecutive samples often share most of
//! their stack (ours write them in tree order), so each sample starts from the deepest node it
//! shares with the sample before and only the rest is looked up.

use rustc_hash::FxHashMap;

use super::{Pprof, PprofError, NONE};
use crate::tree::table::{NodeTable, NO_PARENT};
use crate::wire::native::{self, origin_of_file};

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
    let (mut ids, mut locations) = (Vec::new(), Vec::new());
    for i in 0..p.samples.len() {
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
        p.samples.location_ids(i, &mut ids)?;
        locations.clear();
        for &id in &ids {
            let index = p
                .location_lookup
                .get(id)
                .ok_or_else(|| PprofError::MissingId {
                    field: format!("sample {} location_id", i + 1),
                    table: "location",
                    id,
                })?;
            locations.push(index);
        }
        let node = trie.walk(&mut table, &frames, threads[i], &locations)?;
        let slot = &mut table.self_value[node as usize];
        *slot = slot.checked_add(v).ok_or_else(|| PprofError::Overflow {
            sample_type: p.sample_type_name(value),
        })?;
    }
    Ok(table)
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
            let lines = &p.lines[loc.line_start as usize..loc.line_end as usize];
            let named: Vec<&str> = lines
                .iter()
                .rev()
                .filter_map(|l| p.functions.get(l.function as usize))
                .map(|f| match p.string(f.name) {
                    "" => p.string(f.system_name),
                    name => name,
                })
                .filter(|name| !name.is_empty())
                .collect();
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
            .filter(|&n| n < NONE.min(NO_PARENT))
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

/// Bounds on the stacks [`stacks`] writes out: frames per stack, bytes per frame, and bytes of
/// text in all (a deep tree of long names would otherwise turn a small profile into gigabytes).
#[derive(Clone, Copy, Debug)]
pub struct StackBounds {
    /// Frames per stack.
    pub max_frames: usize,
    /// Bytes per frame name.
    pub max_frame_bytes: usize,
    /// Bytes of stack text in all.
    pub max_total_bytes: usize,
}

/// The stacks of a folded table: every node with a value, as its frames below the root joined
/// by `;`, with that value (in row order), within `bounds`.
pub fn stacks(table: &NodeTable, bounds: &StackBounds) -> Result<Vec<(String, u64)>, PprofError> {
    let mut out = Vec::new();
    let mut path: Vec<u32> = Vec::new();
    let mut total = 0usize;
    for row in 1..table.len() {
        let value = table.self_value[row];
        if value <= 0 {
            continue;
        }
        path.clear();
        let mut at = row as u32;
        // Rows are added after their parents, so this walk ends at the root.
        while at != 0 && at != NO_PARENT {
            path.push(at);
            at = table.parent[at as usize];
        }
        if path.len() > bounds.max_frames {
            return Err(PprofError::Stack(format!(
                "a stack has {} frames, over the limit of {} frames per stack \
                 (--max-stack-frames)",
                path.len(),
                bounds.max_frames
            )));
        }
        let mut stack = String::new();
        for (i, &r) in path.iter().rev().enumerate() {
            let name = table.functions.name(table.func[r as usize]);
            if name.len() > bounds.max_frame_bytes {
                return Err(PprofError::Stack(format!(
                    "a frame is {} bytes long, over the limit of {} bytes per frame \
                     (--max-frame-bytes)",
                    name.len(),
                    bounds.max_frame_bytes
                )));
            }
            if i > 0 {
                stack.push(';');
            }
            stack.push_str(name);
        }
        total = total.saturating_add(stack.len());
        if total > bounds.max_total_bytes {
            return Err(PprofError::Stack(format!(
                "the profile's stacks add up to more than {} bytes of text; send it in parts",
                bounds.max_total_bytes
            )));
        }
        out.push((stack, value as u64));
    }
    Ok(out)
}
