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
mod output;
mod prompt;
mod provider;
mod session;
mod settings;
mod setup;

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
    let args = args::Args::parse();
    match &args.command {
        Some(args::Command::Debug {
            what: args::DebugCommand::Prompt,
        }) => return prompt::print_debug_prompt(&args),
        Some(args::Command::Config { what }) => return settings::run_config_command(&args, what),
        Some(args::Command::Sessions) => return session::run_sessions_command(),
        None => {}
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
    let code = if args.print || !terminal {
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
