//! `embers-server diff BASE NEW`: what changed between two profiles, and a gate for CI.
//!
//! Each side is a file in any format `import` reads ([`file`]) or a stored range
//! (`--base-range` / `--new-range`, asked of `--db`, `--clickhouse-url` or a running service's
//! `--url`, [`range`]). The comparison, ranking and verdict are the model's
//! ([`embers_model::summary::gate`]); this module reads the sides and prints the report as
//! text, Markdown or JSON. [`Verdict`] becomes the exit status: 0 passed, 1 a function grew
//! past `--max-growth` / `--max-total-growth` with a significant change, 2 an error.

mod file;
mod range;

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use embers_model::contract::event::{DEFAULT_EVENT_TYPE, DEFAULT_LANGUAGE};
use embers_model::contract::request::ProfileRequest;
use embers_model::summary::gate::{gate, render, GateOptions, Report, Side};
use embers_model::summary::significance::Rule;
use embers_model::Profile;

use super::import::FormatArg;
use crate::store_args::ClickHouseArgs;

/// How the report is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// Lines for a terminal or a CI log.
    Text,
    /// A pull-request comment.
    Markdown,
    /// The report's fields (docs/ci-gate.md describes them).
    Json,
}

/// Options of `diff`.
#[derive(Debug, Clone, Args)]
pub struct DiffArgs {
    /// The baseline's file, then the new profile's (`-` = standard input); a side given as a
    /// range takes no file.
    #[arg(value_name = "FILE", num_args = 0..=2)]
    pub files: Vec<PathBuf>,
    /// The baseline as a stored range: START..END (Unix seconds, 2026-11-28T10:00:00Z, now,
    /// now-1h) or a duration ending now (1h).
    #[arg(long, value_name = "RANGE")]
    pub base_range: Option<String>,
    /// The new profile as a stored range, as --base-range.
    #[arg(long, value_name = "RANGE")]
    pub new_range: Option<String>,
    /// The process of stored ranges (`Total` for a host's whole graph).
    #[arg(long)]
    pub app_service: Option<String>,
    /// profile_event_type of stored ranges [default: on-cpu]; of a JFR file, which events
    /// [default: cpu]; of folded files, what their values are [default: samples, counts].
    #[arg(long)]
    pub event_type: Option<String>,
    /// profile_language_type of stored ranges [default: eBPF].
    #[arg(long)]
    pub language: Option<String>,
    /// Conditions on stored ranges, e.g. "host='node-a'".
    #[arg(long, default_value = "")]
    pub tag_filter: String,
    /// SQLite database of stored ranges [default: as for serve].
    #[arg(long)]
    pub db: Option<PathBuf>,
    /// Ask a running Embers service (or DeepFlow querier) for stored ranges instead.
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A query token for --url, sent as `Authorization: Bearer` (the file's first line).
    #[arg(long, value_name = "FILE", requires = "url")]
    pub token_file: Option<PathBuf>,
    /// The ClickHouse store of stored ranges, instead of --db.
    #[command(flatten)]
    pub clickhouse: ClickHouseArgs,
    /// The format of the files: auto (by each file's name and content), folded, lines, pprof,
    /// jfr or perf.
    #[arg(long, default_value = "auto", value_parser = super::import::parse_format)]
    pub input_format: FormatArg,
    /// The most a gzipped file may decompress to, bytes.
    #[arg(long, default_value_t = crate::limits::sizes::DEFAULT_INGEST_LIMIT)]
    pub max_file_bytes: usize,
    /// How to print the report.
    #[arg(long, value_enum, default_value = "text")]
    pub format: OutputFormat,
    /// Fail (exit 1) when a function's share of self time grew by more than this many
    /// percentage points with a significant change.
    #[arg(long, value_name = "PCT")]
    pub max_growth: Option<f64>,
    /// Fail (exit 1) when a function's share of total time grew by more than this many
    /// percentage points with a significant change.
    #[arg(long, value_name = "PCT")]
    pub max_total_growth: Option<f64>,
    /// Fewest samples a function needs on its larger side for a change to count.
    #[arg(long, value_name = "N", default_value_t = Rule::default().min_samples)]
    pub min_samples: u64,
    /// Smallest |z| (two-proportion z-test) for a change to count.
    #[arg(long, value_name = "Z", default_value_t = Rule::default().min_z)]
    pub min_z: f64,
    /// The value one sample stands for, for sides whose format does not count samples (stored
    /// ranges, folded values that are times) [default: stored on-cpu ranges 10101 µs, 99 Hz].
    #[arg(long, value_name = "VALUE")]
    pub value_per_sample: Option<f64>,
    /// Rows listed per share (self, total); the gate checks every function.
    #[arg(long, default_value_t = 10)]
    pub rows: usize,
    /// The viewer's URL: Markdown and JSON link to the differential view (two stored ranges: the
    /// viewer's own compare URL; files: this URL as it is).
    #[arg(long, value_name = "URL")]
    pub link: Option<String>,
}

/// What the gate decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// No limit passed (or none given).
    Passed,
    /// A function grew past a limit with a significant change.
    Failed,
}

/// A side as read: its tree and what its values are.
struct Read {
    profile: Profile,
    label: String,
    event_type: String,
    samples: Option<u64>,
    /// The query, for a stored range.
    request: Option<ProfileRequest>,
}

/// Run `diff`: read both sides, print the report, say whether the gate passed.
pub fn diff(args: &DiffArgs) -> Result<Verdict, String> {
    check(args)?;
    let (base, new) = read_sides(args)?;
    let options = GateOptions {
        rule: Rule {
            min_z: args.min_z,
            min_samples: args.min_samples,
        },
        max_growth: args.max_growth,
        max_total_growth: args.max_total_growth,
        rows: args.rows,
    };
    let mut report =
        gate(&side(args, &base), &side(args, &new), &options).map_err(|e| e.to_string())?;
    report.link = match (&args.link, &base.request, &new.request) {
        (Some(viewer), Some(b), Some(n)) => {
            Some(range::diff_link(viewer, n, b, top_function(&report))?)
        }
        (Some(viewer), _, _) => Some(viewer.clone()),
        _ => None,
    };
    print!("{}", printed(&report, args.format)?);
    if report.passed() {
        return Ok(Verdict::Passed);
    }
    for b in &report.breaches {
        eprintln!(
            "embers-server diff: {}: share of {} grew {:+.1} points ({:.1}% -> {:.1}%), more than {}",
            b.row.function,
            b.metric.words(),
            b.row.change_points,
            b.row.base_percent,
            b.row.new_percent,
            b.limit_points
        );
    }
    Ok(Verdict::Failed)
}

/// Mistakes in the options, named before anything is read.
fn check(args: &DiffArgs) -> Result<(), String> {
    let ranges = usize::from(args.base_range.is_some()) + usize::from(args.new_range.is_some());
    if args.files.len() + ranges != 2 {
        return Err(format!(
            "give two profiles, a baseline and a new one, as files or ranges (got {} file{} \
             and {ranges} range{})",
            args.files.len(),
            if args.files.len() == 1 { "" } else { "s" },
            if ranges == 1 { "" } else { "s" }
        ));
    }
    for (flag, limit) in [
        ("--max-growth", args.max_growth),
        ("--max-total-growth", args.max_total_growth),
    ] {
        if limit.is_some_and(|l| !l.is_finite() || l < 0.0) {
            return Err(format!("{flag}: expected percentage points, 0 or more"));
        }
    }
    if args
        .value_per_sample
        .is_some_and(|v| !v.is_finite() || v <= 0.0)
    {
        return Err("--value-per-sample: expected a value above 0".into());
    }
    if ranges > 0
        && args
            .app_service
            .as_deref()
            .is_none_or(|a| a.trim().is_empty())
    {
        return Err("a stored range needs --app-service (the process to compare)".into());
    }
    Ok(())
}

/// A side as the gate reads it.
fn side<'a>(args: &DiffArgs, r: &'a Read) -> Side<'a> {
    Side {
        profile: &r.profile,
        label: &r.label,
        event_type: &r.event_type,
        samples: r.samples.or_else(|| samples_at(args, r)),
    }
}

/// A side's samples at `--value-per-sample` (or a stored on-cpu range's 99 Hz).
fn samples_at(args: &DiffArgs, read: &Read) -> Option<u64> {
    // DeepFlow's agent and Embers' collector sample on-CPU stacks at 99 Hz by default and
    // store microseconds: a sample is 10101 µs.
    let stored_cpu = read.request.is_some() && read.event_type == DEFAULT_EVENT_TYPE;
    let per_sample = args.value_per_sample.or(stored_cpu.then_some(1e6 / 99.0))?;
    Some((read.profile.root_total() as f64 / per_sample).round() as u64)
}

/// The function the link selects: the first breach, else the largest self-time change.
fn top_function(report: &Report) -> Option<&str> {
    report
        .breaches
        .first()
        .map(|b| &b.row)
        .or(report.self_time.first())
        .map(|r| r.function.as_str())
}

fn printed(report: &Report, format: OutputFormat) -> Result<String, String> {
    Ok(match format {
        OutputFormat::Text => render::text(report),
        OutputFormat::Markdown => render::markdown(report),
        OutputFormat::Json => {
            serde_json::to_string_pretty(report).map_err(|e| format!("cannot write JSON: {e}"))?
                + "\n"
        }
    })
}

/// Both sides: files in order, ranges where given.
fn read_sides(args: &DiffArgs) -> Result<(Read, Read), String> {
    let options = file::FileOptions {
        format: args.input_format.0,
        event_type: args.event_type.as_deref(),
        max_bytes: args.max_file_bytes,
    };
    let mut files = args.files.iter();
    let mut pending = Vec::new();
    let mut sides = Vec::new();
    for (which, range) in [("base", &args.base_range), ("new", &args.new_range)] {
        match range {
            Some(text) => {
                let request = request(args, &format!("--{which}-range"), text)?;
                pending.push((sides.len(), request));
                sides.push(None);
            }
            None => {
                // `check` made sure there is a file for every side without a range.
                let path = files
                    .next()
                    .ok_or("a side has neither a file nor a range")?;
                let read = file::read(path, &options)?;
                sides.push(Some(Read {
                    profile: read.profile,
                    label: path.display().to_string(),
                    event_type: read.event_type,
                    samples: read.samples,
                    request: None,
                }));
            }
        }
    }
    if !pending.is_empty() {
        for (i, read) in fetch(args, pending)? {
            sides[i] = Some(read);
        }
    }
    let mut sides = sides.into_iter().flatten();
    match (sides.next(), sides.next()) {
        (Some(base), Some(new)) => Ok((base, new)),
        _ => Err("a side could not be read".into()),
    }
}

/// The ProfileTracing request of a range option.
fn request(args: &DiffArgs, flag: &str, text: &str) -> Result<ProfileRequest, String> {
    let now = crate::formats::now_seconds();
    let (start, end) = range::parse_range(text, now).map_err(|e| format!("{flag}: {e}"))?;
    Ok(ProfileRequest {
        app_service: args.app_service.as_deref().map(|a| a.trim().to_owned()),
        profile_language_type: args.language.as_deref().unwrap_or(DEFAULT_LANGUAGE).into(),
        profile_event_type: args
            .event_type
            .as_deref()
            .unwrap_or(DEFAULT_EVENT_TYPE)
            .into(),
        tag_filter: args.tag_filter.clone(),
        time_start: start,
        time_end: end,
        max_kernel_stack_depth: None,
    })
}

/// The stored ranges' profiles, asked of the store or the service.
fn fetch(
    args: &DiffArgs,
    pending: Vec<(usize, ProfileRequest)>,
) -> Result<Vec<(usize, Read)>, String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(async {
        let source = range::Source::open(
            args.url.as_deref(),
            args.token_file.as_deref(),
            args.db.as_deref(),
            &args.clickhouse,
        )?;
        let mut out = Vec::new();
        for (i, request) in pending {
            let which = if i == 0 {
                "--base-range"
            } else {
                "--new-range"
            };
            let profile = source
                .profile(&request)
                .await
                .map_err(|e| format!("{which}: {e}"))?;
            out.push((
                i,
                Read {
                    profile,
                    label: embers_model::summary::title::side_label(&request, None),
                    event_type: request.profile_event_type.clone(),
                    samples: None,
                    request: Some(request),
                },
            ));
        }
        Ok(out)
    })
}
