//! The significance rule ([`super::significance`]) over strata: a change measured inside each
//! of several groups (a fleet's processes) and weighted by what each group costs.
//!
//! A function's share of a fleet moves when it grows inside a process, and also when
//! processes come and go or change their load (a compiler running more this hour). Only the
//! first is a regression. So the fleet's *What grew* measures the change inside each process
//! present on both sides and weighs it by the process's share of the fleet: the
//! within-process part of a shift-share decomposition, in points of the fleet. Its z-score
//! is the stratified two-proportion test: the weighted sum of each stratum's change over the
//! square root of the weighted sum of their pooled variances. One stratum of weight 1 is
//! exactly [`Rule::judge`].

use super::significance::{Counts, Judgement, Rule};

/// One stratum: its weight (any non-negative number; weights are normalised to add up to 1)
/// and the function's counts in it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stratum {
    /// What the stratum weighs (e.g. its samples in the new profile).
    pub weight: f64,
    /// The function's samples and the stratum's samples on both sides.
    pub counts: Counts,
}

impl Rule {
    /// Judges a change measured inside `strata` and weighted by them: the shares are the
    /// weighted means of each stratum's, the z-score the stratified test's, and the sample
    /// floor holds for the function's samples summed over the strata. Strata empty on a side,
    /// or of no weight, are left out (nothing can be measured inside them).
    pub fn judge_strata(&self, strata: &[Stratum]) -> Judgement {
        let usable = |s: &&Stratum| {
            s.weight.is_finite()
                && s.weight > 0.0
                && s.counts.base_total > 0
                && s.counts.new_total > 0
        };
        let weight_sum: f64 = strata.iter().filter(usable).map(|s| s.weight).sum();
        let (mut base_share, mut new_share, mut variance) = (0.0, 0.0, 0.0);
        let (mut base_samples, mut new_samples) = (0u64, 0u64);
        for s in strata.iter().filter(usable) {
            let w = s.weight / weight_sum;
            let c = s.counts;
            let (n1, n2) = (c.base_total as f64, c.new_total as f64);
            // Clamped as in `judge`: a function never has more samples than its stratum.
            let (k1, k2) = (
                c.base.min(c.base_total) as f64,
                c.new.min(c.new_total) as f64,
            );
            base_share += w * k1 / n1;
            new_share += w * k2 / n2;
            let pooled = (k1 + k2) / (n1 + n2);
            variance += w * w * pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2);
            base_samples = base_samples.saturating_add(c.base);
            new_samples = new_samples.saturating_add(c.new);
        }
        let z = if variance > 0.0 {
            (new_share - base_share) / variance.sqrt()
        } else {
            0.0
        };
        let enough = base_samples.max(new_samples) >= self.min_samples;
        Judgement {
            base_share,
            new_share,
            change_points: (new_share - base_share) * 100.0,
            z,
            significant: enough && z.abs() >= self.min_z,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stratum(weight: f64, base: u64, base_total: u64, new: u64, new_total: u64) -> Stratum {
        Stratum {
            weight,
            counts: Counts {
                base,
                base_total,
                new,
                new_total,
            },
        }
    }

    #[test]
    fn one_stratum_is_the_plain_rule() {
        let rule = Rule::default();
        for s in [
            stratum(1.0, 500, 5_000, 520, 5_000),
            stratum(7.0, 0, 10_000, 2_700, 10_000),
            stratum(0.5, 0, 10, 5, 10),
        ] {
            let (a, b) = (rule.judge_strata(&[s]), rule.judge(s.counts));
            assert!((a.z - b.z).abs() < 1e-9 && a.significant == b.significant);
            assert!((a.change_points - b.change_points).abs() < 1e-9);
        }
    }

    #[test]
    fn a_change_inside_a_small_process_costs_the_fleet_little() {
        // +50 points inside a process of 2 % of the fleet; a big one where it does not run.
        let j = Rule::default().judge_strata(&[
            stratum(2.0, 10, 200, 110, 200),
            stratum(98.0, 0, 9_800, 0, 9_800),
        ]);
        assert!((j.change_points - 1.0).abs() < 1e-9, "{j:?}");
        assert!(j.significant, "100 samples of change: {j:?}");
    }

    #[test]
    fn empty_or_weightless_strata_are_left_out() {
        let j = Rule::default().judge_strata(&[
            stratum(1.0, 0, 0, 50, 50),
            stratum(0.0, 0, 10, 10, 10),
            stratum(f64::NAN, 0, 10, 10, 10),
        ]);
        assert_eq!((j.z, j.change_points, j.significant), (0.0, 0.0, false));
        assert_eq!(Rule::default().judge_strata(&[]).z, 0.0);
    }
}
