//! One side of `diff` read from a file, in any format `import` reads (gzipped or not, told
//! apart by [`Format::detect`] unless `--input-format` says), into the call tree the model's
//! readers make of it — the viewer's *Open* readers — with the event type of its values and,
//! where the format says, how many samples they stand for:
//!
//! - folded stacks and `lines`: the values are counts (`samples`) unless `--event-type` says
//!   what they are; no count of their own;
//! - pprof: the primary sample type (as the viewer shows it), samples from `samples/count` or
//!   the period ([`embers_model::wire::pprof::read::sample_count`]);
//! - `perf script`: one sample per sample header (the values are the CPU time they stand for
//!   with a clock event);
//! - JFR: the CPU samples (or `--event-type`'s events), each event one sample.

use std::path::Path;

use embers_model::formats::Format;
use embers_model::wire::folded::parse_folded;
use embers_model::wire::jfr;
use embers_model::wire::perf::parse_perf_script;
use embers_model::wire::pprof::read_profile;
use embers_model::Profile;

use super::super::import::lines_as_folded;
use crate::formats::gzip;

/// What a side's file was read into.
pub struct Read {
    /// The call tree.
    pub profile: Profile,
    /// What its values are (`samples` for plain counts).
    pub event_type: String,
    /// How many samples the values stand for, when the format says.
    pub samples: Option<u64>,
}

/// How files are read.
pub struct FileOptions<'a> {
    /// `--input-format` (`None`: by name and content).
    pub format: Option<Format>,
    /// `--event-type`: what folded values are, or which of a JFR recording's event types.
    pub event_type: Option<&'a str>,
    /// `--max-file-bytes`: the most a gzipped file may decompress to.
    pub max_bytes: usize,
}

/// The event type of folded values when nothing says: counts of samples.
const COUNTS: &str = "samples";
/// The root every file's tree is read under (the two sides' roots merge whatever their names).
const ROOT: &str = "profile";

/// Reads `path` (`-` is standard input); every error names what is wrong with the file.
pub fn read(path: &Path, options: &FileOptions) -> Result<Read, String> {
    let label = path.display();
    let bytes = super::super::import::read_input(path).map_err(|e| format!("{label}: {e}"))?;
    let bytes = gzip::maybe_gunzip(&bytes, options.max_bytes).map_err(|e| match e {
        gzip::GunzipError::TooLarge { limit } => format!(
            "{label}: the file decompresses to more than {limit} bytes (raise --max-file-bytes)"
        ),
        other => format!("{label}: {}", crate::formats::FormatError::from(other)),
    })?;
    let name = path.to_string_lossy();
    let format = options
        .format
        .unwrap_or_else(|| Format::detect(&name, &bytes));
    read_as(format, &bytes, options).map_err(|e| format!("{label} ({}): {e}", format.name()))
}

fn read_as(format: Format, bytes: &[u8], options: &FileOptions) -> Result<Read, String> {
    let text = || std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"));
    match format {
        Format::Folded | Format::Lines => {
            let text = text()?;
            let folded = if format == Format::Lines {
                lines_as_folded(text)
            } else {
                text.to_owned()
            };
            let profile = parse_folded(&folded, ROOT).map_err(|e| e.to_string())?;
            Ok(Read {
                profile,
                event_type: options.event_type.unwrap_or(COUNTS).to_owned(),
                samples: None,
            })
        }
        Format::Pprof => {
            let read = read_profile(bytes, ROOT).map_err(|e| e.to_string())?;
            Ok(Read {
                profile: read.profile,
                event_type: read.event_type,
                samples: read.samples,
            })
        }
        Format::Perf => {
            let script = parse_perf_script(text()?).map_err(|e| e.to_string())?;
            Ok(Read {
                profile: script.tree(),
                event_type: script.event_type().to_owned(),
                samples: u64::try_from(script.samples.len()).ok(),
            })
        }
        Format::Jfr => read_jfr(bytes, options.event_type),
    }
}

/// A recording's CPU samples (or the events `event_type` names); each event counts one.
fn read_jfr(bytes: &[u8], event_type: Option<&str>) -> Result<Read, String> {
    let recording = jfr::read(bytes, ROOT).map_err(|e| e.to_string())?;
    let kinds: Vec<&str> = recording.profiles.iter().map(|p| p.event_type).collect();
    let wanted = event_type.unwrap_or("cpu");
    let Some(shown) = recording
        .profiles
        .into_iter()
        .find(|p| p.event_type == wanted)
    else {
        return Err(format!(
            "the recording has no {wanted} events (it has: {}); say which with --event-type",
            if kinds.is_empty() {
                "none".to_owned()
            } else {
                kinds.join(", ")
            }
        ));
    };
    Ok(Read {
        profile: Profile::from_table(shown.table),
        event_type: shown.event_type.to_owned(),
        samples: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> FileOptions<'static> {
        FileOptions {
            format: None,
            event_type: None,
            max_bytes: 1 << 20,
        }
    }

    #[test]
    fn files_are_read_by_content_and_errors_name_the_file() {
        let dir = tempfile::tempdir().expect("dir");
        let folded = dir.path().join("a.txt");
        std::fs::write(&folded, "main;work 3\nmain;idle 1\n").expect("write");
        let got = read(&folded, &options()).expect("folded");
        assert_eq!(got.profile.root_total(), 4);
        assert_eq!((got.event_type.as_str(), got.samples), ("samples", None));
        let missing = dir.path().join("missing.folded");
        let err = read(&missing, &options()).err().expect("missing");
        assert!(
            err.starts_with(&format!("{}: ", missing.display())),
            "{err}"
        );
        let bad = dir.path().join("bad.pb");
        std::fs::write(&bad, b"\x0a\xff\xff").expect("write");
        let err = read(&bad, &options()).err().expect("bad pprof");
        assert!(err.contains("bad.pb (pprof): "), "{err}");
        let perf = dir.path().join("perf.txt");
        std::fs::write(
            &perf,
            "b 1/1 [000] 1.000001: 10000000 cpu-clock:ppp:\n\t4005d6 hot (/tmp/b)\n\n\
             b 1/1 [000] 1.010001: 10000000 cpu-clock:ppp:\n\t4005d6 hot (/tmp/b)\n",
        )
        .expect("write");
        let got = read(&perf, &options()).expect("perf");
        assert_eq!((got.event_type.as_str(), got.samples), ("on-cpu", Some(2)));
        assert_eq!(got.profile.root_total(), 20_000);
    }
}
