//! What both backends share for the fleet's functions (`POST /v1/profile/functions`): function
//! ids, each stack's functions, the rollup levels and how a range is covered by them, the
//! per-bucket sums kept at ingest ([`ingest`]), and turning sums by id into the contract's
//! [`FunctionSums`] by name ([`IdSums`]).
//!
//! A function's id is the xxh3 hash of its name (never 0: 0 is the id of every sample's sum),
//! the same in every process and on both backends, so a stack's function ids need no lookup
//! and the rollup's rows can be merged with sums read from the samples.
//!
//! The rollup keeps, per bucket of [`LEVELS`] and per process (and, on SQLite, per hour and tag
//! set), every sample's value and each function's self and total. A range is read as its whole
//! buckets, coarsest first, and the samples of what is left at its edges ([`plan`]);
//! ClickHouse also keeps six-hour buckets ([`WIDE_LEVELS`]).
//!
//! Retention removes samples older than a cutoff at any second, but a bucket only once it has
//! wholly expired; so that a bucket holding expired samples is never read, each store records
//! its *horizon* (the latest cutoff of a retention pass) and the plan reads everything before
//! the first whole hour after it from the samples. Both stores so answer exactly, and alike,
//! whatever retention did.

pub(crate) mod ingest;
mod plan;

pub(crate) use plan::{plan, plan_from, Plan};

use std::collections::HashMap;
use std::sync::Arc;

use embers_model::contract::explore::{stack_functions, FunctionSums, Place, SelfTotal};
use embers_model::contract::fields::{FieldRef, Scope};
use embers_model::contract::tag_filter::TagFilter;
use rustc_hash::{FxHashMap, FxHashSet};

/// The rollup's bucket lengths (seconds), coarsest first; each divides the one before.
pub(crate) const LEVELS: [i64; 2] = [HOUR, 600];

/// ClickHouse's ladder: [`LEVELS`] under six-hour buckets. ClickHouse adds the buckets'
/// entries up at query time (`sumMap`), at a cost that grows with their number: a day of
/// hours over 20 processes was 1.6M entries and 70-100 ms; six-hour buckets read a day in about
/// a third of them (docs/performance.md). SQLite, which reads its rollup in Rust, met its
/// targets without them.
pub(crate) const WIDE_LEVELS: [i64; 3] = [6 * HOUR, HOUR, 600];

/// The coarsest level every store keeps; retention drops (ClickHouse) partitions by it.
pub(crate) const HOUR: i64 = 3600;

/// The id under which a bucket keeps every sample's value.
pub(crate) const ALL: u64 = 0;

/// Most stacks whose functions a [`FrameCache`] remembers; past that it starts over.
const MAX_CACHED_STACKS: usize = 200_000;

/// The id of the function `name`.
pub(crate) fn function_id(name: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(name.as_bytes()).max(1)
}

/// A stack's functions: each distinct one once, and its last frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Frames {
    pub(crate) ids: Box<[u64]>,
    pub(crate) leaf: u64,
}

impl Frames {
    /// The functions of `stack`, with the name of each.
    pub(crate) fn of(stack: &str) -> (Frames, Vec<(u64, &str)>) {
        let (names, leaf) = stack_functions(stack);
        let named: Vec<(u64, &str)> = names.iter().map(|n| (function_id(n), *n)).collect();
        let frames = Frames {
            ids: named.iter().map(|(id, _)| *id).collect(),
            leaf: leaf.map_or(ALL, function_id),
        };
        (frames, named)
    }

    /// Adds `value` to `sums`: to every function's total, to the last one's self.
    pub(crate) fn add_to(&self, sums: &mut FxHashMap<u64, (i64, i64)>, value: i64) {
        for id in self.ids.iter() {
            let sum = sums.entry(*id).or_default();
            sum.1 = sum.1.saturating_add(value);
        }
        if self.leaf != ALL {
            let sum = sums.entry(self.leaf).or_default();
            sum.0 = sum.0.saturating_add(value);
        }
    }
}

/// The functions of stacks seen before, by the store's stack id, and the names of the
/// functions seen. Both only ever hold valid entries (a stack id never changes meaning).
#[derive(Debug, Default)]
pub(crate) struct FrameCache {
    stacks: FxHashMap<u64, Arc<Frames>>,
    names: FxHashMap<u64, Arc<str>>,
}

impl FrameCache {
    /// The functions of stack `id`, whose text is `text`; new names are remembered.
    pub(crate) fn frames(&mut self, id: u64, text: &str) -> Arc<Frames> {
        if let Some(f) = self.stacks.get(&id) {
            return Arc::clone(f);
        }
        let (frames, named) = Frames::of(text);
        for (fid, name) in named {
            self.names.entry(fid).or_insert_with(|| Arc::from(name));
        }
        if self.stacks.len() >= MAX_CACHED_STACKS {
            self.stacks.clear();
        }
        if self.names.len() >= MAX_CACHED_STACKS * 4 {
            self.names.clear();
        }
        let frames = Arc::new(frames);
        self.stacks.insert(id, Arc::clone(&frames));
        frames
    }

    /// The functions of stack `id` when known.
    pub(crate) fn known(&self, id: u64) -> Option<Arc<Frames>> {
        self.stacks.get(&id).cloned()
    }

    /// The name of function `id` when known.
    pub(crate) fn name(&self, id: u64) -> Option<Arc<str>> {
        self.names.get(&id).cloned()
    }

    /// Remembers the name of function `id`.
    pub(crate) fn remember_name(&mut self, id: u64, name: &str) {
        self.names.entry(id).or_insert_with(|| Arc::from(name));
    }
}

/// What `get` (a cache's lookup) knows of `ids`, each once, and the ids it does not know
/// (each once: a cold cache after a restart misses tens of thousands of stacks).
pub(crate) fn known<T>(
    ids: impl Iterator<Item = u64>,
    get: impl Fn(u64) -> Option<T>,
) -> (FxHashMap<u64, T>, Vec<u64>) {
    let mut out = FxHashMap::default();
    let mut missed = FxHashSet::default();
    for id in ids {
        if out.contains_key(&id) || missed.contains(&id) {
            continue;
        }
        match get(id) {
            Some(v) => {
                out.insert(id, v);
            }
            None => {
                missed.insert(id);
            }
        }
    }
    (out, missed.into_iter().collect())
}

/// Sums by function id and place (an index into `places`): what a backend reads, before the
/// functions are named. One map per place, keyed by the function alone (small keys: a day's
/// read adds up a couple of million entries).
#[derive(Debug, Default)]
pub(crate) struct IdSums {
    pub(crate) all: i64,
    pub(crate) places: Vec<Place>,
    place_index: FxHashMap<Place, usize>,
    /// Every sample's value per place.
    place_all: Vec<i64>,
    sums: Vec<FxHashMap<u64, (i64, i64)>>,
}

impl IdSums {
    /// The index of `place`, added if new.
    pub(crate) fn place(&mut self, place: Place) -> usize {
        if let Some(&i) = self.place_index.get(&place) {
            return i;
        }
        self.places.push(place.clone());
        self.place_all.push(0);
        self.sums.push(FxHashMap::default());
        self.place_index.insert(place, self.places.len() - 1);
        self.places.len() - 1
    }

    /// Adds one function's (or, for [`ALL`], every sample's) sums at `place` (an index
    /// [`IdSums::place`] gave).
    pub(crate) fn add(&mut self, place: usize, id: u64, self_value: i64, total: i64) {
        if id == ALL {
            self.all = self.all.saturating_add(total);
            if let Some(all) = self.place_all.get_mut(place) {
                *all = all.saturating_add(total);
            }
            return;
        }
        let Some(map) = self.sums.get_mut(place) else {
            return;
        };
        let sum = map.entry(id).or_default();
        sum.0 = sum.0.saturating_add(self_value);
        sum.1 = sum.1.saturating_add(total);
    }

    /// Adds `value` of samples whose stack has `frames`, at `place`.
    pub(crate) fn add_stack(&mut self, place: usize, frames: &Frames, value: i64) {
        self.add(place, ALL, 0, value);
        for id in frames.ids.iter() {
            let self_value = if *id == frames.leaf { value } else { 0 };
            self.add(place, *id, self_value, value);
        }
    }

    /// Adds every place's sums (and every sample's value) to `out`, all at `place` there.
    pub(crate) fn add_into(&self, out: &mut IdSums, place: usize) {
        for (all, map) in self.place_all.iter().zip(&self.sums) {
            out.add(place, ALL, 0, *all);
            for (id, (self_value, total)) in map {
                out.add(place, *id, *self_value, *total);
            }
        }
    }

    /// The functions at `place` ranked `from..to` by self (`by_self`) or total, largest first.
    pub(crate) fn ranked_ids(
        &self,
        place: usize,
        by_self: bool,
        from: usize,
        to: usize,
    ) -> Vec<u64> {
        let Some(map) = self.sums.get(place) else {
            return Vec::new();
        };
        let mut all: Vec<(i64, u64)> = map
            .iter()
            .map(|(id, (s, t))| (if by_self { *s } else { *t }, *id))
            .collect();
        all.sort_unstable_by(|a, b| b.cmp(a));
        all.into_iter()
            .skip(from)
            .take(to.saturating_sub(from))
            .map(|(_, id)| id)
            .collect()
    }

    /// Drops the sums of every function but `ids` (every sample's value is kept).
    pub(crate) fn keep_only(&mut self, ids: &FxHashSet<u64>) {
        for map in &mut self.sums {
            map.retain(|id, _| ids.contains(id));
        }
    }

    /// The ids of every function summed (once per place).
    pub(crate) fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.sums.iter().flat_map(|m| m.keys().copied())
    }

    /// The contract's sums, each function named by `name` (functions it cannot name are a
    /// store error: their dictionary row is missing).
    pub(crate) fn named(
        self,
        name: impl Fn(u64) -> Option<Arc<str>>,
    ) -> Result<FunctionSums, super::StoreError> {
        // Grouped by id first: each function's name is then looked up and copied once.
        let mut by_id: FxHashMap<u64, Vec<(usize, SelfTotal)>> = FxHashMap::default();
        for (place, map) in self.sums.into_iter().enumerate() {
            for (id, (self_value, total)) in map {
                let value = SelfTotal {
                    self_value: unsigned(self_value),
                    total: unsigned(total),
                };
                by_id.entry(id).or_default().push((place, value));
            }
        }
        let mut functions = HashMap::with_capacity(by_id.len());
        for (id, list) in by_id {
            let Some(n) = name(id) else {
                return Err(super::StoreError::Invalid(format!(
                    "function {id} has no name in the store's dictionary"
                )));
            };
            functions.insert(n.to_string(), list);
        }
        Ok(FunctionSums {
            all: unsigned(self.all),
            places: self.places,
            place_all: self.place_all.into_iter().map(unsigned).collect(),
            functions,
        })
    }
}

/// Whether `filter` has conditions on batch tags (answered per tag set, not per process).
pub(crate) fn has_tag_conditions(filter: &TagFilter) -> bool {
    filter
        .conditions
        .iter()
        .any(|c| !matches!(&c.field, FieldRef::Column(d) if d.scope == Scope::Sample))
}

/// A stored sum as the answer's unsigned value (sums of stored values are never negative).
pub(crate) fn unsigned(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_count_recursion_once_and_keep_the_leaf() {
        let (f, named) = Frames::of("main;f;g;f");
        assert_eq!(f.ids.len(), 3);
        assert_eq!(f.leaf, function_id("f"));
        assert_eq!(named[1], (function_id("f"), "f"));
        let mut sums = FxHashMap::default();
        f.add_to(&mut sums, 5);
        assert_eq!(sums[&function_id("f")], (5, 5));
        assert_eq!(sums[&function_id("main")], (0, 5));
        let mut ids = IdSums::default();
        let p = ids.place(("a".into(), None));
        ids.add_stack(p, &f, 7);
        ids.add(p, ALL, 0, 3);
        assert_eq!(ids.all, 10);
        let named = ids.named(|id| (id == function_id("g")).then(|| Arc::from("g")));
        assert!(named.is_err(), "unnamed functions are an error");
    }

    #[test]
    fn lookups_ask_for_each_unknown_id_once() {
        let (found, mut missing) = known([1, 2, 1, 3, 3, 2].into_iter(), |id| {
            (id == 2).then_some("two")
        });
        missing.sort_unstable();
        assert_eq!((found.len(), found[&2], missing), (1, "two", vec![1, 3]));
    }

    #[test]
    fn no_function_has_the_id_of_every_samples_sum() {
        assert_ne!(function_id(""), ALL);
    }
}
