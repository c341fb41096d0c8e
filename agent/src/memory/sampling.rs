//! Sampling by bytes, as Go's runtime and tcmalloc sample: each thread counts down a random
//! number of bytes drawn from an exponential distribution with mean `N` (`--memory-sample-bytes`),
//! and the allocation that crosses zero is sampled. The allocations sampled are then a Poisson
//! process over the bytes allocated, so an allocation of `s` bytes is sampled with probability
//! `1 - exp(-s/N)`, and weighting a sampled one `s / (1 - exp(-s/N))` makes every total an
//! unbiased estimate (allocated bytes per stack, and live bytes per stack, since a free only
//! removes what was sampled). Random intervals, not a fixed one, so a program allocating in a
//! fixed cycle is not sampled at the same point of its cycle every time.
//!
//! BPF has no floating point: user space fills a table of [`INTERVALS`] draws,
//! `-ln(u) * N` at the midpoints `u` of equal steps of (0, 1), and the program indexes it with
//! a random number. The table's own mean (a little under `N`, its tail being cut at about 7.6 N)
//! is the `N` of the weights.

/// Entries of the interval table (`INTERVALS` in `memory.bpf.c`).
pub const INTERVALS: usize = 1024;

/// The interval table for mean `mean_bytes` (at least 1 byte each).
pub fn intervals(mean_bytes: u64) -> [u64; INTERVALS] {
    let mut table = [0u64; INTERVALS];
    for (i, slot) in table.iter_mut().enumerate() {
        let u = (i as f64 + 0.5) / INTERVALS as f64;
        *slot = ((-u.ln()) * mean_bytes as f64).round().max(1.0) as u64;
    }
    table
}

/// The mean of a table: the `N` its samples are weighted by.
pub fn mean(table: &[u64; INTERVALS]) -> f64 {
    table.iter().map(|&v| v as f64).sum::<f64>() / INTERVALS as f64
}

/// What a sampled allocation of `size` bytes stands for, with mean interval `n` bytes.
pub fn weight(size: u64, n: f64) -> u64 {
    if size == 0 || n <= 0.0 {
        return size;
    }
    let s = size as f64;
    let p = -(-s / n).exp_m1();
    if p <= 0.0 {
        return size;
    }
    (s / p).round() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_exponential_with_the_mean_asked_for() {
        let t = intervals(512 << 10);
        let m = mean(&t);
        assert!((m / f64::from(512u32 << 10) - 1.0).abs() < 0.01, "{m}");
        assert!(t.windows(2).all(|w| w[0] >= w[1]), "decreasing in u");
        assert!(t[INTERVALS - 1] >= 1);
        let median = t[INTERVALS / 2] as f64 / f64::from(512u32 << 10);
        assert!((median - std::f64::consts::LN_2).abs() < 0.01, "{median}");
    }

    #[test]
    fn weights_are_unbiased_for_small_and_large_allocations() {
        let n = 524_288.0;
        // Small: sampled with probability about s/N, so worth about N.
        let small = weight(64, n);
        assert!((small as f64 - n).abs() < 64.0, "{small}");
        // Large: almost always sampled, worth about itself.
        assert_eq!(weight(64 << 20, n), 64 << 20);
        // Exactly s / (1 - e^-1) at s = N.
        assert_eq!(
            weight(524_288, n),
            (524_288.0 / (1.0 - (-1f64).exp())).round() as u64
        );
        assert_eq!(weight(0, n), 0);
    }

    #[test]
    fn a_simulated_stream_of_allocations_sums_to_its_bytes() {
        // The countdown of memory.bpf.c against the table, with a fixed-seed generator: two
        // sizes, one of them 3x the bytes of the other, come out near their true totals.
        let table = intervals(65_536);
        let n = mean(&table);
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            table[(seed as usize) & (INTERVALS - 1)] as i64
        };
        let mut remaining = next();
        let (mut big, mut small) = (0u64, 0u64);
        for i in 0..400_000u64 {
            let size = if i % 4 == 0 { 3 * 8192 } else { 8192 / 3 };
            remaining -= size as i64;
            if remaining <= 0 {
                remaining = next();
                let w = weight(size, n);
                if size > 8192 {
                    big += w
                } else {
                    small += w
                }
            }
        }
        let (true_big, true_small) = (100_000.0 * 24_576.0, 300_000.0 * 2730.0);
        assert!(
            (big as f64 / true_big - 1.0).abs() < 0.05,
            "{big} vs {true_big}"
        );
        assert!(
            (small as f64 / true_small - 1.0).abs() < 0.05,
            "{small} vs {true_small}"
        );
    }
}
