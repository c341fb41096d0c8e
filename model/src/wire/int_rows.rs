//! A fast path for the big part of a shape-B body: `[[1,2,3,4],[5,6,7,8],...]`.
//!
//! serde's generic visitor costs a few dispatches per cell; this scanner reads plain integer
//! rows straight into the caller's columns. It accepts a strict subset of JSON (so anything it
//! reads is valid JSON), stops right after the array's closing bracket, and gives up —
//! returning `None` so the caller falls back to serde, which then produces the precise error or
//! handles the unusual case — on anything but plain integers in equally long rows (floats,
//! exponents, strings, nulls, ragged rows, overflow).

/// Most cells a row may have on the fast path.
const MAX_WIDTH: usize = 16;
/// Digits that always fit an `i64`.
const MAX_DIGITS: usize = 18;

/// What [`scan_int_rows`] read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Scanned {
    /// Rows passed to the callback.
    pub rows: usize,
    /// Cells per row (0 when there were no rows).
    pub width: usize,
    /// Index just past the array's closing bracket.
    pub end: usize,
}

/// Calls `on_row` for every row of the array at the start of `b` (after whitespace); returns
/// what it read, or `None` to ask for the slow path (some rows may already have been passed to
/// `on_row`: the caller must discard them). Bytes after the array are not looked at.
pub(crate) fn scan_int_rows(b: &[u8], mut on_row: impl FnMut(&[i64])) -> Option<Scanned> {
    let mut i = skip_ws(b, 0);
    if b.get(i) != Some(&b'[') {
        return None;
    }
    i = skip_ws(b, i + 1);
    let mut row = [0i64; MAX_WIDTH];
    let (mut rows, mut width) = (0usize, None::<usize>);
    if b.get(i) == Some(&b']') {
        return Some(Scanned {
            rows: 0,
            width: 0,
            end: i + 1,
        });
    }
    loop {
        if b.get(i) != Some(&b'[') {
            return None;
        }
        i += 1;
        let mut n = 0usize;
        loop {
            i = skip_ws(b, i);
            if n == 0 && b.get(i) == Some(&b']') {
                i += 1;
                break;
            }
            let (value, next) = parse_int(b, i)?;
            if n == MAX_WIDTH {
                return None;
            }
            row[n] = value;
            n += 1;
            i = skip_ws(b, next);
            match b.get(i) {
                Some(b',') => i += 1,
                Some(b']') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
        match width {
            None if n > 0 => width = Some(n),
            Some(w) if w == n => {}
            _ => return None,
        }
        on_row(&row[..n]);
        rows += 1;
        i = skip_ws(b, i);
        match b.get(i) {
            Some(b',') => i = skip_ws(b, i + 1),
            Some(b']') => {
                return Some(Scanned {
                    rows,
                    width: width.unwrap_or(0),
                    end: i + 1,
                })
            }
            _ => return None,
        }
    }
}

#[inline]
fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while matches!(b.get(i), Some(b' ' | b'\n' | b'\r' | b'\t')) {
        i += 1;
    }
    i
}

/// A plain JSON integer at `i`: `-?(0|[1-9][0-9]*)`, at most 18 digits, not followed by
/// `.`/`e`/`E`.
#[inline]
pub(super) fn parse_int(b: &[u8], mut i: usize) -> Option<(i64, usize)> {
    let negative = b.get(i) == Some(&b'-');
    if negative {
        i += 1;
    }
    let start = i;
    let mut v: i64 = 0;
    while let Some(&c) = b.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        // Stop before `v` can overflow: longer numbers are serde's business.
        if i - start == MAX_DIGITS {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
        i += 1;
    }
    let digits = i - start;
    // JSON allows no leading zero (`007`): serde refuses it, so must this.
    let leading_zero = digits > 1 && b[start] == b'0';
    if digits == 0 || leading_zero || matches!(b.get(i), Some(b'.' | b'e' | b'E')) {
        return None;
    }
    Some((if negative { -v } else { v }, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> Option<(Vec<Vec<i64>>, usize)> {
        let mut out = Vec::new();
        let scanned = scan_int_rows(text.as_bytes(), |r| out.push(r.to_vec()))?;
        assert_eq!(scanned.rows, out.len());
        assert_eq!(text.as_bytes()[scanned.end - 1], b']');
        assert!(text[scanned.end..].trim().is_empty());
        Some((out, scanned.width))
    }

    #[test]
    fn reads_plain_integer_rows_with_any_whitespace() {
        let (rows, width) = scan(" [ [0,-1, 0 ,5] ,\n[1,0,5,5]\t] ").unwrap();
        assert_eq!(rows, vec![vec![0, -1, 0, 5], vec![1, 0, 5, 5]]);
        assert_eq!(width, 4);
        assert_eq!(scan("[]").unwrap().0.len(), 0);
    }

    #[test]
    fn stops_right_after_the_closing_bracket() {
        let text = b"[[1,2],[3,4]] ,\"next\":1}";
        let scanned = scan_int_rows(text, |_| {}).unwrap();
        assert_eq!(scanned.rows, 2);
        assert_eq!(&text[scanned.end..], b" ,\"next\":1}");
    }

    #[test]
    fn reads_zero_and_eighteen_digits() {
        let (rows, _) = scan("[[0,-0,999999999999999999,-999999999999999999]]").unwrap();
        assert_eq!(
            rows,
            vec![vec![
                0,
                0,
                999_999_999_999_999_999,
                -999_999_999_999_999_999
            ]]
        );
    }

    #[test]
    fn gives_up_on_anything_unusual() {
        for text in [
            "[[1.5,2]]",
            "[[1e3,2]]",
            "[[1,2],[3]]",
            "[[\"a\"]]",
            "[[null]]",
            "[[1234567890123456789]]",
            // Fuzz regressions (target `response`): 20 digits overflowed an i64 while being
            // read (a panic in debug builds), and a leading zero is not JSON.
            "[[99999999999999999999]]",
            "[[-123456789012345678901234567890]]",
            "[[01]]",
            "[[-00]]",
            "{}",
            "[[]]",
        ] {
            assert!(scan(text).is_none(), "{text}");
        }
    }
}
