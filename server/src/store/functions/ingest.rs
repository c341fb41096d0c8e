//! The function sums one ingest call adds to the rollup: samples are first summed per finest
//! bucket, key and stack (one map update per sample), then each distinct stack's functions are
//! added once, and every coarser level is summed from the next finer one.

use std::hash::Hash;

use embers_model::contract::explore::bucket_start;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{FrameCache, LEVELS};

/// The sums of one bucket and key: every sample's value, and per function id (self, total).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Sums {
    pub(crate) all: i64,
    pub(crate) fns: FxHashMap<u64, (i64, i64)>,
}

impl Sums {
    /// Adds `other` to these sums.
    pub(crate) fn merge(&mut self, other: &Sums) {
        self.all = self.all.saturating_add(other.all);
        for (id, (s, t)) in &other.fns {
            let sum = self.fns.entry(*id).or_default();
            sum.0 = sum.0.saturating_add(*s);
            sum.1 = sum.1.saturating_add(*t);
        }
    }
}

/// Sums by `(level seconds, bucket start, key)`.
pub(crate) type Buckets<K> = FxHashMap<(i64, i64, K), Sums>;

/// The samples of one call, summed per finest bucket, key and stack, for a ladder of levels.
#[derive(Debug)]
pub(crate) struct Acc<'a, K> {
    levels: &'static [i64],
    stacks: FxHashMap<(i64, K, u64), i64>,
    texts: FxHashMap<u64, &'a str>,
}

impl<K> Default for Acc<'_, K> {
    fn default() -> Self {
        Acc::new(&LEVELS)
    }
}

impl<K> Acc<'_, K> {
    /// Sums kept at each of `levels` (coarsest first, each dividing the one before).
    pub(crate) fn new(levels: &'static [i64]) -> Self {
        Acc {
            levels,
            stacks: FxHashMap::default(),
            texts: FxHashMap::default(),
        }
    }

    fn finest(&self) -> i64 {
        self.levels
            .last()
            .copied()
            .unwrap_or(LEVELS[LEVELS.len() - 1])
    }
}

impl<'a, K: Copy + Eq + Hash> Acc<'a, K> {
    /// Counts one sample of stack `stack` (text `text`) under `key`.
    pub(crate) fn add(&mut self, time: i64, key: K, stack: u64, text: &'a str, value: i64) {
        let sum = self
            .stacks
            .entry((bucket_start(time, self.finest()), key, stack))
            .or_default();
        *sum = sum.saturating_add(value);
        self.texts.entry(stack).or_insert(text);
    }

    /// Whether no sample was counted.
    pub(crate) fn is_empty(&self) -> bool {
        self.stacks.is_empty()
    }

    /// The sums of every level, with the functions `written` does not hold (to add to the
    /// store's dictionary of names).
    pub(crate) fn finish(
        self,
        cache: &mut FrameCache,
        written: &FxHashSet<u64>,
    ) -> (Buckets<K>, Vec<(u64, String)>) {
        let mut out: Buckets<K> = FxHashMap::default();
        let mut new_names: Vec<(u64, String)> = Vec::new();
        let mut seen: FxHashSet<u64> = FxHashSet::default();
        let finest = self.finest();
        for ((bucket, key, stack), value) in self.stacks {
            let text = self.texts.get(&stack).copied().unwrap_or("");
            let frames = cache.frames(stack, text);
            for id in frames.ids.iter() {
                if !written.contains(id) && seen.insert(*id) {
                    if let Some(name) = cache.name(*id) {
                        new_names.push((*id, name.to_string()));
                    }
                }
            }
            let sums = out.entry((finest, bucket, key)).or_default();
            sums.all = sums.all.saturating_add(value);
            frames.add_to(&mut sums.fns, value);
        }
        for pair in self.levels.windows(2).rev() {
            let (level, finer) = (pair[0], pair[1]);
            let mut coarse: Vec<((i64, i64, K), Sums)> = Vec::new();
            let mut index: FxHashMap<(i64, K), usize> = FxHashMap::default();
            for ((l, bucket, key), sums) in &out {
                if *l != finer {
                    continue;
                }
                let at = *index
                    .entry((bucket_start(*bucket, level), *key))
                    .or_insert_with(|| {
                        coarse.push(((level, bucket_start(*bucket, level), *key), Sums::default()));
                        coarse.len() - 1
                    });
                coarse[at].1.merge(sums);
            }
            out.extend(coarse);
        }
        (out, new_names)
    }
}

/// The same sums under other keys (`to` of each key), those mapped alike added up.
pub(crate) fn regroup<K: Copy, K2: Copy + Eq + Hash>(
    buckets: &Buckets<K>,
    to: impl Fn(K) -> K2,
) -> Buckets<K2> {
    let mut out: Buckets<K2> = FxHashMap::default();
    for ((level, bucket, key), sums) in buckets {
        out.entry((*level, *bucket, to(*key)))
            .or_default()
            .merge(sums);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::function_id;
    use super::*;

    #[test]
    fn samples_sum_per_bucket_and_key_at_every_level() {
        let mut acc: Acc<'_, u8> = Acc::default();
        acc.add(3600, 1, 7, "main;f;f", 10);
        acc.add(3601, 1, 7, "main;f;f", 5);
        acc.add(4200, 1, 8, "main;g", 2);
        acc.add(4200, 2, 8, "main;g", 1);
        let mut cache = FrameCache::default();
        let written: FxHashSet<u64> = [function_id("main")].into_iter().collect();
        let (b, mut names) = acc.finish(&mut cache, &written);
        names.sort();
        let mut want = vec![
            (function_id("f"), "f".to_owned()),
            (function_id("g"), "g".to_owned()),
        ];
        want.sort();
        assert_eq!(names, want, "only names not written yet");
        let ten = &b[&(600, 3600, 1)];
        assert_eq!((ten.all, ten.fns[&function_id("f")]), (15, (15, 15)));
        assert_eq!(b[&(600, 4200, 1)].fns[&function_id("g")], (2, 2));
        let hour = &b[&(3600, 3600, 1)];
        assert_eq!(hour.all, 17);
        assert_eq!(hour.fns[&function_id("main")], (0, 17));
        assert_eq!(
            b.len(),
            5,
            "two 10-minute buckets of key 1, one of key 2, two hours"
        );
        let all = regroup(&b, |_| ());
        assert_eq!(all[&(3600, 3600, ())].all, 18);
        assert_eq!(all[&(600, 4200, ())].fns[&function_id("main")], (0, 3));
    }

    #[test]
    fn the_wide_ladder_adds_six_hour_buckets() {
        let mut acc: Acc<'_, u8> = Acc::new(&super::super::WIDE_LEVELS);
        acc.add(3600, 1, 7, "main;f", 10);
        acc.add(5 * 3600 + 599, 1, 7, "main;f", 5);
        acc.add(6 * 3600, 1, 7, "main;f", 1);
        let (b, _) = acc.finish(&mut FrameCache::default(), &FxHashSet::default());
        assert_eq!(b[&(21_600, 0, 1)].fns[&function_id("f")], (15, 15));
        assert_eq!(b[&(21_600, 21_600, 1)].all, 1);
        assert_eq!(b[&(3600, 5 * 3600, 1)].all, 5);
        assert_eq!(b[&(600, 5 * 3600, 1)].all, 5);
    }
}
