//! Gunzip with a ceiling on the decompressed size: a few kilobytes of gzip can expand to
//! gigabytes (a "gzip bomb"), so the output is cut off at `limit` bytes and the body refused.

use std::io::Read;

use flate2::read::MultiGzDecoder;

/// Why a gzip body was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GunzipError {
    /// It is not gzip, or it is cut short or corrupt.
    #[error("the gzip data is corrupt: {0}")]
    Corrupt(String),
    /// It decompresses to more than the limit.
    #[error("the gzip data decompresses to more than {limit} bytes (--max-ingest-bytes)")]
    TooLarge {
        /// The limit, in decompressed bytes.
        limit: usize,
    },
}

/// The decompressed bytes of `bytes` (gzip, possibly several members one after another, as
/// `cat a.gz b.gz` makes), refused once they pass `limit` bytes.
pub fn gunzip_bounded(bytes: &[u8], limit: usize) -> Result<Vec<u8>, GunzipError> {
    let mut out = Vec::with_capacity(bytes.len().saturating_mul(4).min(limit));
    // One byte past the limit tells "exactly the limit" from "more".
    let mut reader = MultiGzDecoder::new(bytes).take(limit as u64 + 1);
    reader
        .read_to_end(&mut out)
        .map_err(|e| GunzipError::Corrupt(e.to_string()))?;
    if out.len() > limit {
        return Err(GunzipError::TooLarge { limit });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::write::GzEncoder;
    use flate2::Compression;
    use std::io::Write;

    fn gzip(data: &[u8]) -> Vec<u8> {
        let mut e = GzEncoder::new(Vec::new(), Compression::default());
        e.write_all(data).expect("write");
        e.finish().expect("finish")
    }

    #[test]
    fn round_trips_up_to_the_limit_and_refuses_past_it() {
        let data = vec![7u8; 10_000];
        let z = gzip(&data);
        assert_eq!(gunzip_bounded(&z, 10_000).expect("at the limit"), data);
        assert_eq!(
            gunzip_bounded(&z, 9_999),
            Err(GunzipError::TooLarge { limit: 9_999 })
        );
    }

    #[test]
    fn a_bomb_stops_at_the_limit() {
        // 64 MiB of zeros compress to ~64 KiB; only limit + 1 bytes are ever inflated.
        let z = gzip(&vec![0u8; 64 << 20]);
        assert!(z.len() < 100_000, "{}", z.len());
        let e = gunzip_bounded(&z, 1 << 20).expect_err("bomb");
        assert!(e.to_string().contains("--max-ingest-bytes"), "{e}");
    }

    #[test]
    fn concatenated_members_and_corrupt_input() {
        let mut z = gzip(b"ab");
        z.extend(gzip(b"cd"));
        assert_eq!(gunzip_bounded(&z, 100).expect("two members"), b"abcd");
        let cut = &gzip(b"hello world")[..12];
        assert!(matches!(
            gunzip_bounded(cut, 100),
            Err(GunzipError::Corrupt(_))
        ));
        assert!(matches!(
            gunzip_bounded(b"plain text", 100),
            Err(GunzipError::Corrupt(_))
        ));
    }
}
