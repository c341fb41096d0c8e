//! `embers-server`: parse arguments, set up logging (`RUST_LOG`), run `serve`, `import`, `delete`,
//! `mcp` or `diff` (whose exit status is its verdict: 0 passed, 1 failed, 2 an error).

use std::process::ExitCode;

use clap::Parser;
use embers_server::cli::{self, Cli, Command};
use tracing_subscriber::EnvFilter;

fn main() -> ExitCode {
    let args = Cli::parse();
    // `diff` is a CI gate: its stderr carries the verdict, so the store's progress notes
    // (schema, opened store) stay out unless RUST_LOG asks for them.
    let default_level = match args.command {
        Some(Command::Diff(_)) => "warn",
        _ => "info",
    };
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default_level)),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let outcome = match args.command {
        Some(Command::Diff(diff)) => return diff_status(&diff),
        Some(Command::Import(import)) => cli::import(&import),
        Some(Command::Delete(delete)) => embers_server::retention::delete(&delete),
        Some(Command::Serve(serve)) => run_serve(*serve),
        Some(Command::Mcp(mcp)) => block_on(embers_server::mcp::stdio::run(
            mcp,
            embers_server::internal_app,
        )),
        None => run_serve(args.serve),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("embers-server: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `diff`'s exit status: the gate's verdict, or 2 with the error (1 means "a regression").
fn diff_status(args: &cli::diff::DiffArgs) -> ExitCode {
    match cli::diff::diff(args) {
        Ok(cli::diff::Verdict::Passed) => ExitCode::SUCCESS,
        Ok(cli::diff::Verdict::Failed) => ExitCode::from(1),
        Err(message) => {
            eprintln!("embers-server diff: {message}");
            ExitCode::from(2)
        }
    }
}

fn run_serve(args: cli::ServeArgs) -> Result<(), String> {
    block_on(cli::serve(args))
}

fn block_on(work: impl std::future::Future<Output = Result<(), String>>) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the async runtime: {e}"))?;
    runtime.block_on(work)
}
