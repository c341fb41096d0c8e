//! `embers-server import`: files (or standard input) into the store, one transaction per file,
//! in any format the service ingests:
//!
//! - `folded`: `frame;frame value` lines (`--app-service` required; `eBPF`, `on-cpu`,
//!   microseconds unless told otherwise);
//! - `pprof` (gzipped or not): every sample type Embers stores by default, or `--sample-type`
//!   (stored as `--event-type` when given); the app is `--app-service`, else the one an Embers
//!   export names;
//! - `perf`: `perf script` output, one app per process unless `--app-service` says otherwise;
//! - `jfr`: a JDK Flight Recorder recording (the JDK's, async-profiler's), one event type per
//!   kind of event it holds (`--app-service` required; language `Java`).
//!
//! With `--to URL` the files go to a running service instead of a database ([`super::send`]).
//!
//! Each may be gzipped. `--format auto` (the default) tells them apart once decompressed, by
//! the file's name and first bytes, as the service and the viewer do
//! ([`embers_model::formats::Format::detect`]): `FLR\0` or `.jfr` is JFR, binary or `.pb` /
//! `.pprof` is pprof, text with a `perf script` sample header is perf, anything else folded.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;
use embers_model::budget::Budget;
use embers_model::contract::event::{DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE, DEFAULT_UNIT};
use embers_model::formats::Format;
use embers_model::wire::pprof;

use crate::formats::{gzip, jfr as jfr_batches, perf, pprof as pprof_batches, FormatError};
use crate::input::{self, BatchInput};
use crate::limits::options::StackArgs;
use crate::limits::StackLimits;
use crate::store::{Batch, Synchronous, Tags};
use crate::store_args::{open_store, ClickHouseArgs};

use super::read::FileBatches;
use super::send::Remote;

/// What `--format` says: a format, or `auto` (`None`): by each file's name and content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatArg(pub Option<Format>);

pub(super) fn parse_format(name: &str) -> Result<FormatArg, String> {
    match name {
        "auto" => Ok(FormatArg(None)),
        name => Format::from_name(name)
            .map(|f| FormatArg(Some(f)))
            .ok_or_else(|| format!("expected auto, {}", Format::names())),
    }
}

/// Options of `import`.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// SQLite database file [default: as for serve].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Send the files to the Embers service at this URL (e.g. http://127.0.0.1:8080, the one
    /// `scripts/run.sh` printed) through its ingest API, instead of writing a database.
    #[arg(long, value_name = "URL", conflicts_with_all = ["db", "urls"])]
    pub to: Option<String>,
    /// With --to: file holding the service's write token (its `serve --token-file`)
    /// [default: the token in $EMBERS_TOKEN, if set].
    #[arg(long, value_name = "FILE", requires = "to")]
    pub token_file: Option<PathBuf>,
    /// The format of the files: auto (by each file's name and content), folded, lines, pprof,
    /// jfr or perf.
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    pub format: FormatArg,
    /// Process name the stacks belong to (`Total` for per-host `[p] proc;[t] thread` stacks);
    /// required for folded stacks.
    #[arg(long)]
    pub app_service: Option<String>,
    /// profile_language_type [default: eBPF; pprof: by content].
    #[arg(long)]
    pub language: Option<String>,
    /// profile_event_type [default: on-cpu; pprof: by sample type; perf: by event].
    #[arg(long)]
    pub event_type: Option<String>,
    /// profile_value_unit of folded stacks [default: microseconds].
    #[arg(long)]
    pub unit: Option<String>,
    /// pprof: the one sample type to store (`cpu`, `alloc_space`, `cpu/nanoseconds`).
    #[arg(long)]
    pub sample_type: Option<String>,
    /// The most a gzipped file may decompress to, bytes (a bound on what a corrupt or hostile
    /// file can take; the service's own limit is --max-ingest-bytes).
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_INGEST_LIMIT)]
    pub max_file_bytes: usize,
    /// Unix seconds of every sample [default: now; pprof: the profile's own time; JFR: each
    /// sample's own second]; perf: of its first sample, the others at perf's distances
    /// [default: the capture's own Unix times (`perf record -k CLOCK_REALTIME`), else its last
    /// sample now].
    #[arg(long)]
    pub time: Option<i64>,
    /// A tag, NAME=VALUE (repeatable), e.g. --tag host=node-a --tag k8s.label.app=web.
    #[arg(long = "tag", value_name = "NAME=VALUE")]
    pub tags: Vec<String>,
    /// Files to import; `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Limits on the stacks.
    #[command(flatten)]
    pub stacks: StackArgs,
    /// The ClickHouse store, instead of --db.
    #[command(flatten)]
    pub clickhouse: ClickHouseArgs,
}

/// Where the files go.
enum Sink {
    Store(std::sync::Arc<crate::store::Store>),
    Remote(Remote),
}

/// Run `import`: each file is parsed completely, then written in one transaction (or sent, with
/// `--to`). Stops at the first bad file (earlier files stay imported) with `file: message`.
pub fn import(args: &ImportArgs) -> Result<(), String> {
    let sink = match &args.to {
        Some(url) => Sink::Remote(Remote::new(url, args.token_file.as_deref())?),
        None => Sink::Store(open_store(
            args.db.as_deref(),
            &args.clickhouse,
            Synchronous::Normal,
        )?),
    };
    let mut pairs = Vec::new();
    for tag in &args.tags {
        let (name, value) = tag
            .split_once('=')
            .ok_or_else(|| format!("--tag {tag}: expected NAME=VALUE"))?;
        pairs.push((name.trim().to_owned(), value.to_owned()));
    }
    let now = crate::formats::now_seconds();
    for file in &args.files {
        let label = file.display().to_string();
        let bytes = read_input(file).map_err(|e| format!("{label}: {e}"))?;
        let read =
            batches_of(args, &label, &bytes, &pairs, now).map_err(|e| format!("{label}: {e}"))?;
        let stats = match &sink {
            Sink::Store(store) => store.insert(&read.batches).map_err(|e| e.to_string()),
            Sink::Remote(remote) => remote.send(&label, &read.batches),
        }
        .map_err(|e| format!("{label}: {e}"))?;
        println!("{label}: {}", read.summary(&stats));
        for note in &read.notes {
            eprintln!("{label}: note: {note}");
        }
    }
    Ok(())
}

/// The batches of one file.
fn batches_of(
    args: &ImportArgs,
    file_name: &str,
    bytes: &[u8],
    pairs: &[(String, String)],
    now: i64,
) -> Result<FileBatches, String> {
    let limits = args.stacks.limits();
    // The service's per-byte rule (without its cap: the file is the user's own), so a file
    // that the service would refuse as a bomb is refused here too, naming why.
    let budget = Budget::for_input(bytes.len(), usize::MAX);
    // Any format may come gzipped (`perf script | gzip`, a `.pb.gz`): decompressed first, and
    // told apart by what it holds.
    let bytes = gzip::maybe_gunzip(bytes, args.max_file_bytes).map_err(|e| match e {
        gzip::GunzipError::TooLarge { limit } => {
            format!("the file decompresses to more than {limit} bytes (raise --max-file-bytes)")
        }
        other => FormatError::from(other).to_string(),
    })?;
    let bytes = bytes.as_ref();
    let format = args
        .format
        .0
        .unwrap_or_else(|| Format::detect(file_name, bytes));
    let text = || std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8 text: {e}"));
    match format {
        Format::Pprof => pprof_file(args, bytes, pairs, &limits, &budget).map(FileBatches::of),
        Format::Jfr => jfr_file(args, bytes, pairs, &limits, &budget).map(FileBatches::of),
        Format::Perf => {
            let tags = tags(pairs)?;
            let target = perf::Target {
                app_service: args.app_service.as_deref(),
                language: args.language.as_deref(),
                event_type: args.event_type.as_deref(),
                time: args.time,
                tags: &tags,
            };
            let read = perf::read(text()?, &target, &limits).map_err(|e| e.to_string())?;
            Ok(FileBatches {
                batches: read.batches,
                samples: Some(read.samples),
                notes: read.notes,
            })
        }
        Format::Folded | Format::Lines => {
            let app_service = args.app_service.clone().ok_or(
                "folded stacks need --app-service (the process they belong to)".to_owned(),
            )?;
            let input = BatchInput {
                app_service,
                profile_language_type: opt(&args.language, DEFAULT_LANGUAGE),
                profile_event_type: opt(&args.event_type, DEFAULT_EVENT_TYPE),
                profile_value_unit: opt(&args.unit, DEFAULT_UNIT),
                time: args.time,
                tags: pairs
                    .iter()
                    .map(|(n, v)| (n.clone(), serde_json::Value::String(v.clone())))
                    .collect(),
                folded: String::new(),
                details: Vec::new(),
            };
            let text = text()?;
            let folded;
            let text = if format == Format::Lines {
                folded = lines_as_folded(text);
                &folded
            } else {
                text
            };
            let batch =
                input::to_batch_of(&input, text, now, &limits).map_err(|e| e.to_string())?;
            Ok(FileBatches::of(vec![batch]))
        }
    }
}

/// `lines` (a stack a line, each counting 1) as folded stacks.
pub(super) fn lines_as_folded(text: &str) -> String {
    embers_model::formats::count_lines(text)
        .iter()
        .map(|(s, n)| format!("{s} {n}\n"))
        .collect()
}

fn opt(given: &Option<String>, default: &str) -> String {
    given.clone().unwrap_or_else(|| default.to_owned())
}

fn tags(pairs: &[(String, String)]) -> Result<Tags, String> {
    input::build_tags(pairs.iter().map(|(n, v)| (n.as_str(), v.as_str())))
        .map_err(|e| e.to_string())
}

/// The batches of a pprof file.
fn pprof_file(
    args: &ImportArgs,
    bytes: &[u8],
    pairs: &[(String, String)],
    limits: &StackLimits,
    budget: &Budget,
) -> Result<Vec<Batch>, String> {
    if args.event_type.is_some() && args.sample_type.is_none() {
        // A pprof file holds several sample types, each stored as its own event type: which one
        // `--event-type` names must be said.
        return Err(
            "--event-type needs --sample-type for pprof files (the sample type stored \
            under that event type); without both, each sample type keeps its own event type"
                .to_owned(),
        );
    }
    // Decoded once, for the root name and then for the batches.
    let decoded = pprof::decode_within(bytes, budget);
    let root = decoded
        .as_ref()
        .ok()
        .and_then(|p| p.root_name().map(str::to_owned));
    let app_service = args
        .app_service
        .clone()
        .or(root)
        .ok_or("pprof files need --app-service (the process they belong to)".to_owned())?;
    let decoded = decoded.map_err(|e| FormatError::from(e).to_string())?;
    let mut tags = tags(pairs)?;
    if tags.column("app_instance").is_none() {
        tags.set("app_instance", &app_service)?;
    }
    let selection = match &args.sample_type {
        Some(sample_type) => pprof_batches::Selection::Pick {
            sample_type,
            event_type: args.event_type.as_deref(),
        },
        None => pprof_batches::Selection::Default,
    };
    let target = pprof_batches::Target {
        app_service: &app_service,
        language: args.language.as_deref(),
        time: args.time,
        tags: &tags,
        selection,
        unit: args.unit.as_deref(),
        budget,
    };
    pprof_batches::batches_of(&decoded, None, &target, limits).map_err(|e| e.to_string())
}

/// The batches of a JFR recording.
fn jfr_file(
    args: &ImportArgs,
    bytes: &[u8],
    pairs: &[(String, String)],
    limits: &StackLimits,
    budget: &Budget,
) -> Result<Vec<Batch>, String> {
    if args.event_type.is_some() || args.sample_type.is_some() || args.unit.is_some() {
        return Err(
            "--event-type, --sample-type and --unit are not for JFR recordings: each \
                    kind of event they hold is stored as its own event type, in its own unit"
                .to_owned(),
        );
    }
    let app_service = args
        .app_service
        .clone()
        .ok_or("JFR recordings need --app-service (the process they belong to)".to_owned())?;
    let tags = tags(pairs)?;
    let target = jfr_batches::Target {
        app_service: &app_service,
        language: args.language.as_deref(),
        time: args.time,
        tags: &tags,
        budget,
    };
    jfr_batches::batches(bytes, &target, limits).map_err(|e| e.to_string())
}

pub(super) fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut bytes = Vec::new();
        std::io::stdin().read_to_end(&mut bytes)?;
        Ok(bytes)
    } else {
        std::fs::read(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_are_told_apart_by_content() {
        let detect = |bytes: &[u8]| Format::detect("a-file", bytes);
        assert_eq!(detect(b"main;work 3\n"), Format::Folded);
        assert_eq!(
            detect(b"gzip 7 [000] 1.5: 5025125 cpu-clock:ppp:\n\t46a0 [unknown] (/usr/bin/gzip)\n"),
            Format::Perf
        );
        // An empty message is a valid (empty) protobuf, but no pprof: no sample type.
        assert_eq!(detect(b""), Format::Folded);
    }

    #[test]
    fn format_names_are_the_registrys_and_lines_count_one_each() {
        assert_eq!(parse_format("auto"), Ok(FormatArg(None)));
        assert_eq!(
            parse_format("perf_script"),
            Ok(FormatArg(Some(Format::Perf)))
        );
        let e = parse_format("speedscope").expect_err("unknown");
        assert_eq!(e, "expected auto, folded, lines, pprof, jfr, perf");
        assert_eq!(lines_as_folded("a;b\n\na;b\nc\n"), "a;b 2\nc 1\n");
    }
}
