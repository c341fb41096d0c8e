//! The sums a backend hands to the functions answer's finishing step: per function name, its
//! self and total at each place (a process, and a group when grouped), and every sample's
//! value in all and per place (what shares are of).

use std::collections::HashMap;

use super::functions::FunctionMetric;

/// Where a function ran: a process, and its group's value when grouped by a tag.
pub type Place = (String, Option<String>);

/// A self and a total.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SelfTotal {
    /// Value of samples ending in the function.
    pub self_value: u64,
    /// Value of samples with the function anywhere on the stack (once per sample).
    pub total: u64,
}

impl SelfTotal {
    pub(super) fn add(&mut self, other: SelfTotal) {
        // Saturating: stored sums may be near u64::MAX.
        self.self_value = self.self_value.saturating_add(other.self_value);
        self.total = self.total.saturating_add(other.total);
    }

    pub(super) fn of(&self, metric: FunctionMetric) -> u64 {
        match metric {
            FunctionMetric::SelfValue => self.self_value,
            FunctionMetric::Total => self.total,
        }
    }
}

/// One side's sums (the range, or the baseline), as a backend hands them over.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FunctionSums {
    /// Summed value of every selected sample (what shares are of).
    pub all: u64,
    /// Where functions ran; `functions` refers to them by index.
    pub places: Vec<Place>,
    /// Summed value of every sample at each place (what a place's shares are of).
    pub place_all: Vec<u64>,
    /// Per function name: its sums per place (an index into `places`, each at most once).
    pub functions: HashMap<String, Vec<(usize, SelfTotal)>>,
}

impl FunctionSums {
    /// The index of `place`, added if new (a linear search: for the few places of an answer
    /// built function by function; stores build `places` whole).
    pub fn place(&mut self, place: &Place) -> usize {
        match self.places.iter().position(|p| p == place) {
            Some(i) => i,
            None => {
                self.places.push(place.clone());
                self.place_all.push(0);
                self.places.len() - 1
            }
        }
    }

    /// Adds `value` (of every sample) to the place of index `place`.
    pub fn add_all(&mut self, place: usize, value: u64) {
        if let Some(all) = self.place_all.get_mut(place) {
            *all = all.saturating_add(value);
        }
    }

    /// Adds `value` to `function` at the place of index `place`.
    pub fn add(&mut self, function: &str, place: usize, value: SelfTotal) {
        let list = match self.functions.get_mut(function) {
            Some(l) => l,
            None => self.functions.entry(function.to_owned()).or_default(),
        };
        match list.iter_mut().find(|(p, _)| *p == place) {
            Some((_, sum)) => sum.add(value),
            None => list.push((place, value)),
        }
    }

    pub(super) fn summed(&self, name: &str) -> SelfTotal {
        let mut out = SelfTotal::default();
        for (_, v) in self.functions.get(name).into_iter().flatten() {
            out.add(*v);
        }
        out
    }
}

/// `part` as a percentage of `whole` (0 of nothing).
pub(super) fn share(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}
