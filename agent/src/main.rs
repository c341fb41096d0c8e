//! `embers-agent`: parse the command line, set up logging (`RUST_LOG`), check the machine,
//! then collect until SIGINT/SIGTERM (or `--duration`).

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use clap::Parser;
use embers_agent::cli::Cli;
use embers_agent::sink::http::HttpSink;
use embers_agent::sink::{PrintSink, Sink};
use embers_agent::{preflight, Collector};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let cli = Cli::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("embers-agent: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: &Cli) -> Result<(), String> {
    if cli.check {
        let warnings = preflight::check().map_err(|e| e.to_string())?;
        for w in warnings {
            println!("warning: {w}");
        }
        println!("this machine lets the collector run");
        return Ok(());
    }
    let options = cli.options()?;
    let mut sink: Box<dyn Sink> = match cli.http()? {
        Some(http) => Box::new(HttpSink::start(http)?),
        None => Box::new(PrintSink),
    };
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, stop.clone())
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    if let Some(limit) = cli.duration {
        let stop = stop.clone();
        let started = Instant::now();
        std::thread::spawn(move || {
            std::thread::sleep(limit.saturating_sub(started.elapsed()));
            stop.store(true, Ordering::Relaxed);
        });
    }
    let mut collector = Collector::start(options).map_err(|e| e.to_string())?;
    collector
        .run(sink.as_mut(), &stop)
        .map_err(|e| e.to_string())
}
