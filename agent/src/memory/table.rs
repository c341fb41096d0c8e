//! What the sampled allocations add up to: the window's samples (their frames still unnamed,
//! as on-CPU stacks are until the window ends) and, across windows, the sampled allocations
//! still in use, each with its named stack and weight. A free removes its allocation wherever
//! it is. At most `max_live` allocations are tracked: the oldest is dropped for a new one
//! (counted; its address handed back so the kernel forgets it too). Allocations of processes
//! that exited are dropped at the window's end: nothing frees them.

use std::collections::{BTreeMap, HashMap};
use std::rc::Rc;

use embers_model::contract::detail::SourceLine;

use super::events::Allocator;
use crate::frame::Frame;
use crate::report::TableCounters;

/// Where a sample was taken: process, thread and its stack, named.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Site {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The process's name.
    pub process: String,
    /// The thread's name.
    pub thread: String,
    /// Frames, root first, the allocator's frame last (a user frame with functions inlined
    /// into it is several, as in on-CPU stacks).
    pub frames: Vec<String>,
    /// Each frame's source line, where known (one per frame).
    pub lines: Vec<Option<SourceLine>>,
}

/// Bytes per site.
pub type Totals = Vec<(Rc<Site>, u64)>;

/// A sample of this window, before naming.
#[derive(Clone, Debug)]
pub struct Fresh {
    /// Process id.
    pub pid: u32,
    /// Thread id.
    pub tid: u32,
    /// The process's name.
    pub process: String,
    /// The thread's name.
    pub thread: String,
    /// User frames, leaf first.
    pub frames: Vec<Frame>,
    /// Which function allocated.
    pub allocator: Allocator,
    /// Bytes it stands for.
    pub weight: u64,
    /// Its address (set by [`Table::alloc`]).
    pub addr: u64,
    /// Not freed yet (set by [`Table::alloc`]).
    pub live: bool,
}

#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Index into this window's samples.
    Fresh(usize),
    /// In `live`.
    Live,
}

#[derive(Clone, Debug)]
struct Live {
    site: Rc<Site>,
    weight: u64,
}

/// The table.
pub struct Table {
    max_live: usize,
    fresh: Vec<Fresh>,
    slots: HashMap<(u32, u64), (Slot, u64)>,
    live: HashMap<(u32, u64), Live>,
    order: BTreeMap<u64, (u32, u64)>,
    seq: u64,
    /// Addresses the kernel should forget (dropped here).
    pub forget: Vec<(u32, u64)>,
    /// This window's counters.
    pub counters: TableCounters,
}

impl Table {
    /// An empty table tracking at most `max_live` allocations.
    pub fn new(max_live: usize) -> Table {
        Table {
            max_live: max_live.max(1),
            fresh: Vec::new(),
            slots: HashMap::new(),
            live: HashMap::new(),
            order: BTreeMap::new(),
            seq: 0,
            forget: Vec::new(),
            counters: TableCounters::default(),
        }
    }

    /// Allocations tracked.
    pub fn tracked(&self) -> usize {
        self.slots.len()
    }

    /// A sampled allocation at `addr`.
    pub fn alloc(&mut self, addr: u64, sample: Fresh) {
        self.counters.samples += 1;
        let key = (sample.pid, addr);
        // The same address again: its free was not seen (or not tracked); the new one wins.
        self.remove(key);
        if self.slots.len() >= self.max_live {
            if let Some((_, oldest)) = self.order.pop_first() {
                self.remove(oldest);
                self.forget.push(oldest);
                self.counters.dropped += 1;
            }
        }
        self.seq += 1;
        self.order.insert(self.seq, key);
        self.slots
            .insert(key, (Slot::Fresh(self.fresh.len()), self.seq));
        self.fresh.push(Fresh {
            addr,
            live: true,
            ..sample
        });
    }

    /// A tracked allocation was freed.
    pub fn free(&mut self, pid: u32, addr: u64) {
        if self.remove((pid, addr)) {
            self.counters.frees += 1;
        }
    }

    fn remove(&mut self, key: (u32, u64)) -> bool {
        let Some((slot, seq)) = self.slots.remove(&key) else {
            return false;
        };
        self.order.remove(&seq);
        match slot {
            Slot::Fresh(i) => {
                if let Some(f) = self.fresh.get_mut(i) {
                    f.live = false;
                }
            }
            Slot::Live => {
                self.live.remove(&key);
            }
        }
        true
    }

    /// The window's samples, to be named.
    pub fn fresh(&self) -> &[Fresh] {
        &self.fresh
    }

    /// End the window with the samples' sites (`sites[i]` is `fresh()[i]`'s), dropping what
    /// processes no longer `alive` held: the window's allocations per site, and what every
    /// site holds in use now.
    pub fn end_window(
        &mut self,
        sites: Vec<Site>,
        alive: impl Fn(u32) -> bool,
    ) -> (Totals, Totals) {
        let fresh = std::mem::take(&mut self.fresh);
        let mut sites_seen: HashMap<Site, Rc<Site>> = HashMap::new();
        let mut allocated: HashMap<Rc<Site>, u64> = HashMap::new();
        for (f, site) in fresh.into_iter().zip(sites) {
            let site = sites_seen
                .entry(site)
                .or_insert_with_key(|s| Rc::new(s.clone()))
                .clone();
            *allocated.entry(site.clone()).or_default() += f.weight;
            let key = (f.pid, f.addr);
            match self.slots.get_mut(&key) {
                Some((slot @ Slot::Fresh(_), _)) if f.live => {
                    *slot = Slot::Live;
                    let weight = f.weight;
                    self.live.insert(key, Live { site, weight });
                }
                _ => {}
            }
        }
        self.drop_exited(alive);
        let mut in_use: HashMap<Rc<Site>, u64> = HashMap::new();
        for l in self.live.values() {
            *in_use.entry(l.site.clone()).or_default() += l.weight;
        }
        (
            allocated.into_iter().collect(),
            in_use.into_iter().collect(),
        )
    }

    fn drop_exited(&mut self, alive: impl Fn(u32) -> bool) {
        let mut verdict: HashMap<u32, bool> = HashMap::new();
        let gone: Vec<(u32, u64)> = self
            .live
            .keys()
            .filter(|(pid, _)| !*verdict.entry(*pid).or_insert_with(|| alive(*pid)))
            .copied()
            .collect();
        for key in gone {
            self.remove(key);
            self.forget.push(key);
            self.counters.exited += 1;
        }
    }

    /// This window's counters; the next window starts from zero.
    pub fn take_counters(&mut self) -> TableCounters {
        std::mem::take(&mut self.counters)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: u32, weight: u64) -> Fresh {
        Fresh {
            pid,
            tid: pid,
            process: "p".into(),
            thread: "p".into(),
            frames: vec![Frame::Unknown(weight)],
            allocator: Allocator::Malloc,
            weight,
            addr: 0,
            live: false,
        }
    }

    fn site(pid: u32, name: &str) -> Site {
        Site {
            pid,
            tid: pid,
            process: "p".into(),
            thread: "p".into(),
            frames: vec![name.into(), "[l] malloc".into()],
            lines: Vec::new(),
        }
    }

    fn sum(v: &[(Rc<Site>, u64)], name: &str) -> u64 {
        v.iter()
            .filter(|(s, _)| s.frames[0] == name)
            .map(|(_, w)| w)
            .sum()
    }

    #[test]
    fn in_use_carries_over_windows_until_freed() {
        let mut t = Table::new(100);
        t.alloc(0x10, sample(1, 300));
        t.alloc(0x20, sample(1, 100));
        t.free(1, 0x20);
        t.free(1, 0x99); // untracked: nothing
        let (alloc, in_use) = t.end_window(vec![site(1, "keep"), site(1, "churn")], |_| true);
        assert_eq!((sum(&alloc, "keep"), sum(&alloc, "churn")), (300, 100));
        assert_eq!((sum(&in_use, "keep"), sum(&in_use, "churn")), (300, 0));
        assert_eq!(t.take_counters().frees, 1);
        // Next window: nothing new, the allocation still in use; then freed.
        let (alloc, in_use) = t.end_window(vec![], |_| true);
        assert!(alloc.is_empty());
        assert_eq!(
            sum(&in_use, "keep"),
            300,
            "an instant, not a sum of windows"
        );
        t.free(1, 0x10);
        let (_, in_use) = t.end_window(vec![], |_| true);
        assert!(in_use.is_empty());
        assert_eq!(t.tracked(), 0);
    }

    #[test]
    fn the_cap_drops_the_oldest_and_exits_drop_a_process() {
        let mut t = Table::new(2);
        t.alloc(0x1, sample(1, 10));
        t.alloc(0x2, sample(1, 20));
        t.alloc(0x3, sample(2, 30));
        assert_eq!(t.forget, vec![(1, 0x1)]);
        assert_eq!(t.tracked(), 2);
        let sites = vec![site(1, "a"), site(1, "b"), site(2, "c")];
        let (alloc, in_use) = t.end_window(sites, |pid| pid != 2);
        assert_eq!(
            sum(&alloc, "a"),
            10,
            "a dropped sample still counts as allocated"
        );
        assert_eq!(sum(&in_use, "a") + sum(&in_use, "c"), 0);
        assert_eq!(sum(&in_use, "b"), 20);
        let c = t.take_counters();
        assert_eq!((c.samples, c.dropped, c.exited), (3, 1, 1));
        assert_eq!(t.forget, vec![(1, 0x1), (2, 0x3)]);
        // The same address sampled again replaces the old allocation.
        t.alloc(0x2, sample(1, 50));
        let (_, in_use) = t.end_window(vec![site(1, "b2")], |_| true);
        assert_eq!((sum(&in_use, "b"), sum(&in_use, "b2")), (0, 50));
    }
}
