//! The profile formats Embers reads, named and told apart in one place: the service's ingest
//! (`/ingest?format=`), `embers-server import`, and the viewer's *Open* (its decode worker)
//! all go through [`Format`]. Adding a format is a variant here, its reader under
//! [`crate::wire`], and a line in each adapter's `match` (the compiler lists them).

use crate::wire::jfr::is_jfr;
use crate::wire::pprof::is_gzip;

/// A profile format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Folded stacks, `frame;frame value` lines (Brendan Gregg's, inferno's, Pyroscope's).
    Folded,
    /// One stack per line, each counting 1 (Pyroscope's `lines`).
    Lines,
    /// pprof (`profile.proto`), gzipped or not.
    Pprof,
    /// A JFR recording (JDK Flight Recorder, async-profiler, Pyroscope's Java agent).
    Jfr,
    /// `perf script` output.
    Perf,
}

impl Format {
    /// Every format, in the order error messages list them.
    pub const ALL: [Format; 5] = [
        Format::Folded,
        Format::Lines,
        Format::Pprof,
        Format::Jfr,
        Format::Perf,
    ];

    /// The name senders and users write (`format=pprof`, `--format pprof`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Folded => "folded",
            Format::Lines => "lines",
            Format::Pprof => "pprof",
            Format::Jfr => "jfr",
            Format::Perf => "perf",
        }
    }

    /// The format called `name` (its [`Format::name`], or `perf_script`), if any.
    pub fn from_name(name: &str) -> Option<Format> {
        match name {
            "perf_script" => Some(Format::Perf),
            _ => Format::ALL.into_iter().find(|f| f.name() == name),
        }
    }

    /// Every name, for messages: `folded, lines, pprof, jfr, perf`.
    pub fn names() -> String {
        Format::ALL.map(Format::name).join(", ")
    }

    /// Whether the viewer reads it in its decode worker (binary formats, and `perf script`,
    /// whose reader the page does not carry).
    pub fn in_worker(self) -> bool {
        matches!(self, Format::Pprof | Format::Jfr | Format::Perf)
    }

    /// The format of a file called `file_name` that starts with `head` (its first few KB, or
    /// all of it; gunzipped when it could be, else as it is):
    ///
    /// - a JFR recording: `FLR\0`, or a `.jfr` / `.jfr.gz` name;
    /// - pprof: gzip that could not be looked into, binary (not UTF-8, or control bytes other
    ///   than line ends and tabs), or a `.pb` / `.pprof` / `.pb.gz` name;
    /// - `perf script`: text whose first line looks like a sample header (a `12345.678:`
    ///   timestamp), or that has a tab-indented line (its call chains; folded stacks and JSON
    ///   never have one);
    /// - else folded stacks.
    pub fn detect(file_name: &str, head: &[u8]) -> Format {
        let name = file_name.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        if is_jfr(head) || name.ends_with(".jfr") {
            return Format::Jfr;
        }
        if is_gzip(head) || name.ends_with(".pb") || name.ends_with(".pprof") {
            return Format::Pprof;
        }
        let text = match std::str::from_utf8(head) {
            Ok(text) => text,
            // A head cut inside a character is still text up to there.
            Err(e) if e.error_len().is_none() => {
                std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or_default()
            }
            Err(_) => return Format::Pprof,
        };
        // Protobuf's field tags and lengths are control bytes; text has none but line ends
        // and tabs.
        let binary = |b: u8| (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t')) || b == 0x7f;
        if text.bytes().any(binary) {
            return Format::Pprof;
        }
        if text.contains("\n\t") || starts_like_perf_script(text) {
            return Format::Perf;
        }
        Format::Folded
    }
}

/// A [`Format::Lines`] text's stacks, each counted once per line it is on (blank lines
/// skipped, ends trimmed), in order of the stack text: how `/ingest`, `import` and `diff` read
/// it.
pub fn count_lines(text: &str) -> std::collections::BTreeMap<&str, u64> {
    let mut counts = std::collections::BTreeMap::new();
    for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *counts.entry(line).or_insert(0) += 1;
    }
    counts
}

/// Whether the first line that is no comment looks like a `perf script` sample header
/// (`comm pid [cpu] 12345.678901: period event:`): a token of a timestamp and a colon, which
/// folded stacks and JSON never have. A cheap look rather than the reader's own parse, so the
/// page, which reads no `perf script` itself, does not carry that parser.
fn starts_like_perf_script(text: &str) -> bool {
    let Some(first) = text
        .lines()
        .find(|l| !l.trim().is_empty() && !l.starts_with('#'))
    else {
        return false;
    };
    !first.starts_with(char::is_whitespace)
        && first.split_whitespace().any(|token| {
            token.strip_suffix(':').is_some_and(|time| {
                let (secs, fraction) = time.split_once('.').unwrap_or((time, "0"));
                let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                digits(secs) && digits(fraction)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_aliases_read() {
        for f in Format::ALL {
            assert_eq!(Format::from_name(f.name()), Some(f));
        }
        assert_eq!(Format::from_name("perf_script"), Some(Format::Perf));
        assert_eq!(Format::from_name("collapsed"), None);
        assert_eq!(Format::names(), "folded, lines, pprof, jfr, perf");
    }

    #[test]
    fn lines_count_one_each() {
        let counts: Vec<_> = count_lines("a;b\n\n a;b \nc\n").into_iter().collect();
        assert_eq!(counts, [("a;b", 2), ("c", 1)]);
    }

    #[test]
    fn detected_by_name_and_first_bytes() {
        assert_eq!(Format::detect("x", b"FLR\0\0\x02"), Format::Jfr);
        assert_eq!(Format::detect("app.JFR.gz", b"\x1f\x8b"), Format::Jfr);
        assert_eq!(Format::detect("cpu.pb.gz", b"\x1f\x8b\x08"), Format::Pprof);
        assert_eq!(Format::detect("anything", b"\x1f\x8b\x08"), Format::Pprof);
        assert_eq!(
            Format::detect("cpu", b"\x0a\x04\x08\x01\x10\x02\xff"),
            Format::Pprof
        );
        assert_eq!(Format::detect("cpu.pprof", b"main;a 1\n"), Format::Pprof);
        let perf = "burner 123 456.789: 1001001 cpu-clock:pppH: \n\t4005d6 hot (/tmp/burner)\n";
        assert_eq!(Format::detect("out.txt", perf.as_bytes()), Format::Perf);
        assert_eq!(
            Format::detect("out.txt", b"main;a 1\nmain;b 2\n"),
            Format::Folded
        );
        assert_eq!(Format::detect("out.txt", b""), Format::Folded);
        // perf script without call chains (no tab lines): told by its header's timestamp.
        let flat =
            "# cmdline: perf\nburner 123 [001] 456.789012: 1001001 cpu-clock:pppH: 4005d6 hot\n";
        assert_eq!(Format::detect("out.txt", flat.as_bytes()), Format::Perf);
        assert_eq!(Format::detect("x", b"a;b:c 12\n"), Format::Folded);
        assert_eq!(Format::detect("x", b"{\"a\": 1}"), Format::Folded);
        // A head cut inside a character is text.
        assert_eq!(
            Format::detect("x", &"main;é 1".as_bytes()[..6]),
            Format::Folded
        );
        // Protobuf that happens to be UTF-8 still has control bytes.
        assert_eq!(
            Format::detect("x", b"\x0a\x04\x08\x01\x10\x02"),
            Format::Pprof
        );
        assert_eq!(Format::detect("x", b"\x08\x00\x10"), Format::Pprof);
    }
}
