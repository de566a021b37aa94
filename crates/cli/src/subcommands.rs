//! Claude Code's subcommands, where they mean something here: `cairn doctor`, `cairn agents`,
//! and `cairn update`/`install`, which say how cairn is updated rather than pretending to do
//! it. A word alone that is a Claude Code subcommand cairn lacks (`cairn plugin`) is refused
//! with how to send it as a prompt, instead of going to the model.

use std::io::Write;
use std::process::ExitCode;

use anyhow::Context;
use cairn_core::agent::AgentCatalog;
use cairn_core::reports::{self, doctor};

use crate::args::{Args, USAGE_STATUS};

/// Claude Code's subcommands that cairn does not have. Alone on the command line they are
/// refused rather than sent to the model as a one-word prompt.
const CLAUDE_CODE_ONLY: [(&str, &str); 4] = [
    (
        "auth",
        "cairn uses your provider's API key (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, \
         apiKeyHelper, or another provider's key); it has no login",
    ),
    (
        "migrate-installer",
        "cairn is a single binary with no installer to migrate",
    ),
    ("plugin", "cairn has no plugins yet"),
    (
        "setup-token",
        "cairn has no subscription login: set ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN",
    ),
];

/// How to update cairn, for `cairn update` and `cairn install`.
const UPDATE_TEXT: &str = "cairn does not update itself. To update it, build the new version \
from its source, as it was installed:\n\n  git pull && cargo install --locked --path crates/cli\n\n\
in a clone of cairn's repository. The binary is self-contained: replacing it is the whole \
update, and sessions and settings carry over.\n";

/// The refusal of a prompt that is nothing but one of Claude Code's subcommands cairn lacks,
/// when it would be sent as a prompt without `-p` (`cairn plugin`). `None`: send it.
pub fn refuse_claude_code_word(args: &Args) -> Option<ExitCode> {
    if args.print {
        return None;
    }
    let word = args.prompt.as_deref()?.trim();
    let (_, why) = CLAUDE_CODE_ONLY.iter().find(|(name, _)| *name == word)?;
    eprintln!(
        "error: `cairn {word}` is a Claude Code subcommand that cairn does not have: {why}.\n\
         To send \"{word}\" to the model as a prompt: cairn -p {word}"
    );
    Some(ExitCode::from(USAGE_STATUS))
}

/// `cairn update` and `cairn install`: how to update, since cairn does not do it itself.
pub fn print_update() -> ExitCode {
    let _ = std::io::stdout().lock().write_all(UPDATE_TEXT.as_bytes());
    ExitCode::SUCCESS
}

/// `cairn doctor`: `/doctor`'s checks, printed; exits 1 when one failed.
pub fn run_doctor(args: &Args) -> ExitCode {
    let cwd = match std::env::current_dir() {
        Ok(cwd) => cwd,
        Err(err) => {
            eprintln!("error: cannot read the working directory: {err}");
            return ExitCode::FAILURE;
        }
    };
    let Some(home) = std::env::home_dir() else {
        eprintln!("error: cannot find the home directory: set HOME");
        return ExitCode::FAILURE;
    };
    // The settings checks report a file that does not load; the credential check needs the
    // merged settings (their env, apiKeyHelper, providers) and says so when they do not load.
    let client = crate::settings::load_settings(args, &cwd).and_then(|settings| {
        let model = crate::setup::chosen_model(args, &settings);
        crate::provider::model_client(&settings, &model, args.max_thinking_tokens)
    });
    let variable = match &client {
        Ok(provider) => provider.credential_variable,
        Err(_) => "ANTHROPIC_API_KEY",
    };
    let mut checks = doctor::run_checks(&doctor::DoctorFacts {
        version: env!("CARGO_PKG_VERSION"),
        home: &home,
        cwd: &cwd,
        credential_variable: variable,
    });
    match crate::mcp::doctor_checks_standalone(args, &cwd, &home) {
        Ok(mcp) => checks.extend(mcp),
        Err(err) => checks.push(doctor::Check {
            outcome: doctor::Outcome::Failed,
            what: "MCP servers".into(),
            detail: format!("{err:#}"),
        }),
    }
    if let Err(err) = &client {
        for check in checks
            .iter_mut()
            .filter(|check| check.what == "credentials")
        {
            check.outcome = doctor::Outcome::Failed;
            check.detail = format!("{err:#}");
        }
    }
    let mut text = doctor::render(&checks);
    text.push('\n');
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
    if checks
        .iter()
        .any(|check| check.outcome == doctor::Outcome::Failed)
    {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// `cairn agents`: what `/agents` lists, from the agent files and `--agents`.
pub fn run_agents(args: &Args) -> ExitCode {
    let listing = std::env::current_dir()
        .context("cannot read the working directory")
        .and_then(|cwd| {
            let home = std::env::home_dir();
            AgentCatalog::load(&cwd, home.as_deref(), args.agents.as_deref())
                .map_err(anyhow::Error::msg)
        });
    match listing {
        Ok((catalog, warnings)) => {
            for warning in warnings {
                eprintln!("warning: {warning}");
            }
            let mut text = reports::agents_report(Some(&catalog));
            text.push('\n');
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
