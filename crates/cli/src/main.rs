//! `cairn`: parses the command line and wires the crates together.

#![allow(
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "the binary is where cairn talks to the terminal"
)]

mod args;
mod governance;
mod headless;
mod interactive;
mod mcp;
mod mcp_approval;
mod mcp_face;
mod mcp_login;
mod memory;
mod output;
mod prompt;
mod provider;
mod sdk;
mod session;
mod settings;
mod setup;
mod subcommands;
mod wire;

use std::io::IsTerminal;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // The sandbox wrapper (`cairn __sandbox … -- command`) restricts itself and becomes the
    // command; it must run before any thread starts.
    let mut raw = std::env::args_os();
    if raw.nth(1).as_deref() == Some(cairn_policy::sandbox::WRAPPER_SUBCOMMAND.as_ref()) {
        let error = cairn_policy::sandbox::run_wrapper(raw.collect());
        eprintln!("cairn sandbox: {error}");
        return ExitCode::from(u8::try_from(error.exit_code()).unwrap_or(125));
    }
    // Before any command runs: they must not read cairn's environment (its API key) from
    // /proc/<cairn's pid>/environ.
    cairn_tools::hide_own_process_from_commands();
    let started = std::time::Instant::now();
    let raw: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let args = match args::Args::try_parse_from(&raw) {
        Ok(args) => args,
        Err(error) => return refuse_command_line(&error, &raw, started.elapsed()),
    };
    match &args.command {
        Some(args::Command::Debug {
            what: args::DebugCommand::Prompt,
        }) => return prompt::print_debug_prompt(&args),
        Some(args::Command::Config { what }) => return settings::run_config_command(&args, what),
        Some(args::Command::Sessions) => return session::run_sessions_command(),
        Some(args::Command::Mcp { what }) => return mcp::run_mcp_command(&args, what),
        Some(args::Command::Doctor) => return subcommands::run_doctor(&args),
        Some(args::Command::Agents) => return subcommands::run_agents(&args),
        Some(args::Command::Update | args::Command::Install { .. }) => {
            return subcommands::print_update();
        }
        None => {}
    }
    if let Some(refused) = subcommands::refuse_claude_code_word(&args) {
        return refused;
    }
    reap_commands_of_killed_cairns();
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
    // Without a terminal on both sides (a pipe, a script, CI), or on one that cannot move the
    // cursor (`TERM=dumb`: an editor's shell buffer), plain `cairn "prompt"` answers in plain
    // text as `cairn -p` does.
    let dumb = std::env::var("TERM").is_ok_and(|term| term == "dumb");
    let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal() && !dumb;
    let code = if args.input_format == args::InputFormat::StreamJson {
        runtime.block_on(sdk::run(args))
    } else if args.print || !terminal {
        runtime.block_on(headless::run(args))
    } else {
        runtime.block_on(interactive::run(args))
    };
    // Don't wait for stray blocking work (a stdin reader, a tool) on the way out.
    runtime.shutdown_background();
    // Its commands were stopped, or deliberately left running, on the way out.
    cairn_tools::forget_recorded_process_groups();
    code
}

/// A command line clap refused (exit 2), or `--help`/`--version` (exit 0). A script that
/// asked for `json` or `stream-json` gets the error as a result object on standard output
/// too, as for any other failure.
fn refuse_command_line(
    error: &clap::Error,
    raw: &[std::ffi::OsString],
    elapsed: std::time::Duration,
) -> ExitCode {
    if !error.use_stderr() {
        let _ = error.print();
        return ExitCode::SUCCESS;
    }
    match args::requested_output_format(raw) {
        args::OutputFormat::Text => {
            let _ = error.print();
        }
        format @ (args::OutputFormat::Json | args::OutputFormat::StreamJson) => {
            // clap's text without its `error: ` and its closing hint about `--help`.
            let rendered = error.render().to_string();
            let message = rendered
                .trim_start_matches("error: ")
                .split("\n\n")
                .next()
                .unwrap_or_default()
                .trim();
            output::print_error_result(format, message, elapsed);
        }
    }
    ExitCode::from(args::USAGE_STATUS)
}

/// Stops the commands that a cairn killed without a chance to stop them (SIGKILL) left
/// running, and records this cairn's commands under `~/.cairn/process-groups` so that the next
/// cairn can do the same for it (see [`cairn_tools::reap_orphaned_process_groups`]).
fn reap_commands_of_killed_cairns() {
    let Ok(home) = session::cairn_home() else {
        return;
    };
    match cairn_tools::reap_orphaned_process_groups(&home.join("process-groups")) {
        Ok(reaped) if !reaped.killed.is_empty() => {
            let groups: Vec<String> = reaped.killed.iter().map(ToString::to_string).collect();
            eprintln!(
                "cairn: stopped commands that a cairn killed earlier left running (process \
                 groups {})",
                groups.join(", ")
            );
        }
        // An unwritable `~/.cairn` is already warned about when the session cannot be saved;
        // commands then run unrecorded.
        Ok(_) | Err(_) => {}
    }
}
