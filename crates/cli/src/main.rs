//! `cairn`: parses the command line and wires the crates together.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the binary is where cairn talks to the terminal"
)]

mod args;
mod headless;
mod output;
mod prompt;
mod session;
mod settings;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let args = args::Args::parse();
    match &args.command {
        Some(args::Command::Debug {
            what: args::DebugCommand::Prompt,
        }) => return prompt::print_debug_prompt(&args),
        Some(args::Command::Config { what }) => return settings::run_config_command(&args, what),
        Some(args::Command::Sessions) => return session::run_sessions_command(),
        None => {}
    }
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(headless::run(args));
    // Don't wait for stray blocking work (a stdin reader, a tool) on the way out.
    runtime.shutdown_background();
    code
}
