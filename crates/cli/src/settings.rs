//! Settings from the command line's point of view: loading them for a run, and
//! `cairn config list|get`.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;

use anyhow::Context;
use cairn_config::{LoadedSettings, SettingsLoader};

use crate::args::{Args, ConfigCommand};

/// The merged settings for a run in `project`, with warnings (skipped legacy files) printed
/// once on standard error.
pub fn load_settings(args: &Args, project: &Path) -> anyhow::Result<LoadedSettings> {
    let loaded = settings_again(args, project)?;
    for warning in loaded.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(loaded)
}

/// The settings [`load_settings`] read, read again where a part of the run needs them
/// (its warnings were printed the first time).
pub fn settings_again(args: &Args, project: &Path) -> anyhow::Result<LoadedSettings> {
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let mut loader = SettingsLoader::new(home, project);
    if let Some(flag) = &args.settings {
        loader = loader.settings_flag(flag.clone());
    }
    Ok(loader.load()?)
}

/// The `statusLine` setting's command, when it is the one kind there is (`"type":
/// "command"`) and holds a command.
pub fn status_command(args: &Args, project: &Path) -> Option<String> {
    let status_line = settings_again(args, project)
        .ok()?
        .settings()
        .status_line
        .clone()?;
    (status_line.kind == "command" && !status_line.command.trim().is_empty())
        .then_some(status_line.command)
}

/// `cairn config list` and `cairn config get KEY`.
pub fn run_config_command(args: &Args, command: &ConfigCommand) -> ExitCode {
    let result = std::env::current_dir()
        .context("cannot read the working directory")
        .and_then(|cwd| load_settings(args, &cwd))
        .and_then(|loaded| render(&loaded, command));
    match result {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn render(loaded: &LoadedSettings, command: &ConfigCommand) -> anyhow::Result<String> {
    match command {
        ConfigCommand::List => {
            let mut out = String::new();
            for entry in loaded.list() {
                out.push_str(&format!("{entry}\n"));
            }
            if out.is_empty() {
                out.push_str("(no settings: none of the settings files exists)\n");
            }
            Ok(out)
        }
        ConfigCommand::Get { key } => {
            let value = loaded
                .get(key)
                .with_context(|| format!("{key} is not set in any settings file"))?;
            let sources: Vec<String> = loaded.origins(key).iter().map(|s| s.to_string()).collect();
            Ok(format!("{value}\n  from {}\n", sources.join(", ")))
        }
    }
}
