//! Covering a time range with whole buckets of a ladder of lengths, coarse ones in the middle
//! and finer ones at the edges: how both rollups (the explore one and the functions one) are
//! read. What no bucket covers whole is handed back as ranges, for the samples themselves.

/// Whole buckets of one size: `(index into the sizes, first bucket start, last bucket start)`.
pub(crate) type Piece = (usize, i64, i64);

/// Covers `[start, end]` (inclusive) with whole buckets of `sizes` (coarsest first, each a
/// multiple of the next): the pieces, and the inclusive ranges left over, both sorted by time.
pub(crate) fn cover(start: i64, end: i64, sizes: &[i64]) -> (Vec<Piece>, Vec<(i64, i64)>) {
    let mut pieces = Vec::new();
    let mut rest = Vec::new();
    // i128: `end + 1` must not overflow for an end of i64::MAX.
    let mut todo = vec![(i128::from(start), i128::from(end), 0usize)];
    while let Some((lo, hi, at)) = todo.pop() {
        if lo > hi {
            continue;
        }
        let Some(&size) = sizes.get(at) else {
            if let (Ok(a), Ok(b)) = (i64::try_from(lo), i64::try_from(hi)) {
                rest.push((a, b));
            }
            continue;
        };
        let size = i128::from(size.max(1));
        let first = (lo + size - 1).div_euclid(size) * size;
        let past = (hi + 1).div_euclid(size) * size;
        if first < past {
            if let (Ok(a), Ok(b)) = (i64::try_from(first), i64::try_from(past - size)) {
                pieces.push((at, a, b));
            }
            todo.push((lo, first - 1, at + 1));
            todo.push((past, hi, at + 1));
        } else {
            todo.push((lo, hi, at + 1));
        }
    }
    pieces.sort_by_key(|&(at, a, _)| (a, at));
    rest.sort_unstable();
    (pieces, rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_buckets_in_the_middle_and_the_rest_at_the_edges() {
        let (pieces, rest) = cover(3000, 7500, &[3600, 600]);
        assert_eq!(pieces, vec![(1, 3000, 3000), (0, 3600, 3600)]);
        assert_eq!(rest, vec![(7200, 7500)]);
        let (pieces, rest) = cover(52, 250, &[60, 1]);
        assert_eq!(pieces, vec![(1, 52, 59), (0, 60, 180), (1, 240, 250)]);
        assert!(rest.is_empty());
        let (pieces, rest) = cover(-61, -1, &[60]);
        assert_eq!((pieces, rest), (vec![(0, -60, -60)], vec![(-61, -61)]));
        let (pieces, rest) = cover(i64::MAX - 10, i64::MAX, &[3600]);
        assert!(pieces.is_empty());
        assert_eq!(rest, vec![(i64::MAX - 10, i64::MAX)]);
        assert_eq!(cover(5, 4, &[1]), (vec![], vec![]));
    }
}
