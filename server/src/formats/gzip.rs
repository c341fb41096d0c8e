//! Gunzipping what senders compress (request bodies, pprof files, push samples) without trusting
//! the size they decompress to: a gzip bomb stops at `limit` bytes with an error naming the
//! limit, never exhausting memory.

use std::io::Read;

use embers_model::budget::Budget;

/// Why gzip data could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GunzipError {
    /// The data is not valid gzip.
    #[error("the gzip data is corrupt: {0}")]
    Corrupt(String),
    /// It decompresses to more than the limit.
    #[error("the gzip data decompresses to more than {limit} bytes (--max-ingest-bytes)")]
    TooLarge {
        /// The limit, bytes.
        limit: usize,
    },
}

/// `bytes` (one or more gzip members) decompressed, failing past `limit` bytes of output.
pub fn gunzip_bounded(bytes: &[u8], limit: usize) -> Result<Vec<u8>, GunzipError> {
    let mut out = Vec::new();
    let cap = u64::try_from(limit).unwrap_or(u64::MAX).saturating_add(1);
    flate2::read::MultiGzDecoder::new(bytes)
        .take(cap)
        .read_to_end(&mut out)
        .map_err(|e| GunzipError::Corrupt(e.to_string()))?;
    if out.len() > limit {
        return Err(GunzipError::TooLarge { limit });
    }
    Ok(out)
}

/// `bytes` gunzipped (when they are gzip; else as they are), bounded by `limit`
/// (`--max-ingest-bytes`) and by what is left of the request's `budget`, which is charged what
/// they decompress to: a bomb stops at the smaller of the two, with the error naming it.
pub fn maybe_gunzip_within<'a>(
    bytes: &'a [u8],
    limit: usize,
    budget: &Budget,
) -> Result<std::borrow::Cow<'a, [u8]>, super::FormatError> {
    if !is_gzip(bytes) {
        return Ok(std::borrow::Cow::Borrowed(bytes));
    }
    let left = budget.remaining();
    let mut out = match gunzip_bounded(bytes, limit.min(left)) {
        Ok(out) => out,
        Err(GunzipError::TooLarge { .. }) if left < limit => {
            // The budget's own refusal names the budget and its option.
            budget.charge(left.saturating_add(1), "gzip")?;
            return Err(super::FormatError::TooLarge(format!(
                "the gzip data decompresses to more than the request's budget of {left} bytes"
            )));
        }
        Err(e) => return Err(e.into()),
    };
    out.shrink_to_fit();
    budget.charge(out.len(), "gzip")?;
    Ok(std::borrow::Cow::Owned(out))
}

/// `bytes` gzipped (what `go tool pprof` and browsers read as `.pb.gz`).
pub fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = e.write_all(bytes);
    e.finish().unwrap_or_default()
}

/// Whether `bytes` start with the gzip magic number.
pub fn is_gzip(bytes: &[u8]) -> bool {
    embers_model::wire::pprof::is_gzip(bytes)
}

/// `bytes` gunzipped (bounded) when they are gzip, else as they are.
pub fn maybe_gunzip(bytes: &[u8], limit: usize) -> Result<std::borrow::Cow<'_, [u8]>, GunzipError> {
    if is_gzip(bytes) {
        gunzip_bounded(bytes, limit).map(std::borrow::Cow::Owned)
    } else {
        Ok(std::borrow::Cow::Borrowed(bytes))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    #[test]
    fn round_trips_within_the_limit() {
        assert_eq!(gunzip_bounded(&gzip(b"hello"), 5).expect("ok"), b"hello");
        assert_eq!(
            gunzip_bounded(&super::gzip(b"ours"), 4).expect("ok"),
            b"ours"
        );
        assert_eq!(maybe_gunzip(b"plain", 1).expect("ok").as_ref(), b"plain");
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        // 64 MiB of zeros compress to ~64 KiB.
        let bomb = gzip(&vec![0u8; 64 << 20]);
        assert!(bomb.len() < 100_000);
        assert_eq!(
            gunzip_bounded(&bomb, 1 << 20),
            Err(GunzipError::TooLarge { limit: 1 << 20 })
        );
    }

    #[test]
    fn corrupt_data_is_named() {
        let mut bad = gzip(b"hello world");
        let n = bad.len();
        bad.truncate(n - 6);
        assert!(matches!(
            gunzip_bounded(&bad, 100),
            Err(GunzipError::Corrupt(_))
        ));
        assert!(matches!(
            gunzip_bounded(b"\x1f\x8bxx", 100),
            Err(GunzipError::Corrupt(_))
        ));
    }
}
