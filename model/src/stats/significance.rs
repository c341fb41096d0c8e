//! When a change in a function's share is a change and not noise: the one rule that the
//! fleet's *What grew*, the `diff` gate and the alert rules all use.
//!
//! A profile is a sample: each of its samples landed in a function or not. Between two
//! profiles, a function's share `k / n` moves by chance alone, more for few samples than for
//! many. The rule is a two-proportion z-test on the shares (pooled standard error), plus a
//! floor on the samples behind the change: a change is *significant* when its z-score is at
//! least [`Rule::min_z`] in size **and** the function has at least [`Rule::min_samples`]
//! samples on the side that has more. Values that are not sample counts (nanoseconds,
//! bytes) are converted to samples by the caller (value ÷ value per sample) when it knows
//! the rate; otherwise the values are taken as counts, which overstates certainty for
//! weighted values, and the floor still holds.

/// The thresholds of the rule, with documented defaults.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rule {
    /// Smallest |z| called a change. 3.0 by default: by chance alone, about 3 in 1,000
    /// unchanged functions would pass, and a ranking shows the strongest first anyway.
    pub min_z: f64,
    /// Fewest samples the function must have on its larger side. 20 by default: below it a
    /// share is a handful of samples whatever the z-score says.
    pub min_samples: u64,
}

impl Default for Rule {
    fn default() -> Self {
        Rule {
            min_z: 3.0,
            min_samples: 20,
        }
    }
}

/// One function's counts on the two sides: its samples and its profile's samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Counts {
    /// The function's samples in the baseline.
    pub base: u64,
    /// All samples of the baseline.
    pub base_total: u64,
    /// The function's samples in the new profile.
    pub new: u64,
    /// All samples of the new profile.
    pub new_total: u64,
}

/// The judgement of one change.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Judgement {
    /// Share in the baseline, 0..=1 (0 when the baseline is empty).
    pub base_share: f64,
    /// Share in the new profile, 0..=1.
    pub new_share: f64,
    /// The change of the share in percentage points (new − base, × 100).
    pub change_points: f64,
    /// The z-score of the change (0 when it cannot be computed: an empty side, or a share of
    /// 0 or 1 on both sides, where nothing varies).
    pub z: f64,
    /// Whether the rule calls it a change.
    pub significant: bool,
}

impl Rule {
    /// Judges one function's change between two profiles.
    pub fn judge(&self, counts: Counts) -> Judgement {
        let share = |k: u64, n: u64| if n == 0 { 0.0 } else { k as f64 / n as f64 };
        let base_share = share(counts.base, counts.base_total);
        let new_share = share(counts.new, counts.new_total);
        let z = z_score(counts);
        let enough = counts.base.max(counts.new) >= self.min_samples;
        Judgement {
            base_share,
            new_share,
            change_points: (new_share - base_share) * 100.0,
            z,
            significant: enough && z.abs() >= self.min_z,
        }
    }
}

/// The two-proportion z-score with a pooled standard error.
fn z_score(c: Counts) -> f64 {
    if c.base_total == 0 || c.new_total == 0 {
        return 0.0;
    }
    let (n1, n2) = (c.base_total as f64, c.new_total as f64);
    // A function cannot have more samples than its profile; clamp so bad input cannot make
    // a share above 1 (and a negative variance).
    let (k1, k2) = (
        c.base.min(c.base_total) as f64,
        c.new.min(c.new_total) as f64,
    );
    let pooled = (k1 + k2) / (n1 + n2);
    let variance = pooled * (1.0 - pooled) * (1.0 / n1 + 1.0 / n2);
    if variance <= 0.0 {
        return 0.0;
    }
    (k2 / n2 - k1 / n1) / variance.sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(base: u64, base_total: u64, new: u64, new_total: u64) -> Counts {
        Counts {
            base,
            base_total,
            new,
            new_total,
        }
    }

    #[test]
    fn a_planted_regression_is_significant() {
        // 0 % → 27 % of 10,000 samples.
        let j = Rule::default().judge(counts(0, 10_000, 2_700, 10_000));
        assert!(j.significant);
        assert!((j.change_points - 27.0).abs() < 1e-9);
        assert!(j.z > 50.0, "{j:?}");
    }

    #[test]
    fn sampling_noise_is_not() {
        // 10.0 % vs 10.4 % of 5,000 samples: z ≈ 0.66.
        let j = Rule::default().judge(counts(500, 5_000, 520, 5_000));
        assert!(!j.significant, "{j:?}");
        assert!(j.z > 0.5 && j.z < 0.8, "{j:?}");
    }

    #[test]
    fn a_large_share_change_on_a_handful_of_samples_is_not() {
        // 0 → 5 samples of 10 is +50 points, but five samples are not evidence enough.
        let j = Rule::default().judge(counts(0, 10, 5, 10));
        assert!((j.change_points - 50.0).abs() < 1e-9);
        assert!(!j.significant, "{j:?}");
    }

    #[test]
    fn a_shrink_is_a_negative_change() {
        let j = Rule::default().judge(counts(3_000, 10_000, 1_000, 10_000));
        assert!(j.significant && j.z < 0.0 && j.change_points < 0.0, "{j:?}");
    }

    #[test]
    fn empty_sides_and_constant_shares_have_no_z() {
        assert_eq!(Rule::default().judge(counts(0, 0, 10, 10)).z, 0.0);
        assert_eq!(Rule::default().judge(counts(10, 10, 10, 10)).z, 0.0);
        // More function samples than profile samples (bad input) is clamped, not NaN.
        assert!(Rule::default().judge(counts(50, 10, 0, 10)).z.is_finite());
    }
}
