//! Plain `cairn` (or `cairn "first prompt"`): the interactive terminal UI over the engine.

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context;

use cairn_config::project_level::Face;
use cairn_config::trust::{self, TrustedFolders};
use cairn_config::{PermissionMode, Source};
use cairn_context::commands::discover_commands;
use cairn_core::{AskThroughEvents, EndReason, StartSource};
use cairn_llm::models;
use cairn_tui::app::{AppConfig, AppExit, SettingsView, run_app};
use cairn_tui::picker::{PickerEntry, run_picker};
use cairn_tui::{
    Appearance, ImportsAnswer, Theme, TrustAnswer, TrustQuestion, run_imports_dialog,
    run_trust_dialog,
};

use crate::args::Args;
use crate::session::sessions_to_resume;
use crate::setup::{Prepared, prepare_for_host};

/// The exit status after SIGTERM or SIGHUP, as a shell reports a process killed by SIGTERM.
const TERMINATED_STATUS: u8 = 143;

/// Runs the interactive UI; `main` calls it only when stdin and stdout are terminals.
pub async fn run(mut args: Args) -> ExitCode {
    // Before anything of the folder acts: its hooks, rules, mode, servers and commands.
    if let Folder::Declined(code) = ask_about_trust(&mut args).await {
        return code;
    }
    if args.resume.as_deref() == Some("") {
        match choose_session().await {
            Ok(Some(id)) => args.resume = Some(id),
            Ok(None) => return ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("{err:#}");
                return ExitCode::FAILURE;
            }
        }
    }
    ask_about_external_imports(&args).await;
    // After the trust dialog: the project's `.mcp.json` servers no setting approves yet.
    crate::mcp_approval::ask_about_project_servers(&args, &theme_from_env()).await;
    let mut start = Start::Startup;
    loop {
        let (code, exit) = run_session(&args, start).await;
        // A new app for another session, set up like a new start: the simplest way to
        // change the engine's history and the log together.
        args.continue_session = false;
        args.fork_session = false;
        args.session_id = None;
        args.prompt = None;
        match exit {
            // `/clear`: a fresh conversation in a new session file.
            Some(AppExit::Clear) => {
                args.resume = None;
                start = Start::Clear;
            }
            // `/resume`: the session the app checked (named, or picked in its list).
            Some(AppExit::Resume(id)) => {
                args.resume = Some(id);
                start = Start::Resume;
            }
            Some(AppExit::Terminated) => return ExitCode::from(TERMINATED_STATUS),
            Some(AppExit::UserQuit | AppExit::InputClosed) | None => return code,
        }
    }
}

/// Why a session's app starts, for the SessionStart hooks' `source`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    Startup,
    Clear,
    Resume,
}

/// One session of the app, from setup to the SessionEnd hook. Returns the exit code, how the
/// app ended (`None` when it did not start).
async fn run_session(args: &Args, start: Start) -> (ExitCode, Option<AppExit>) {
    // Questions go to the app's dialog, through the event stream.
    let broker = Arc::new(AskThroughEvents::default());
    // MCP servers' elicitations go to the app's form.
    let (elicitor, elicitations) = cairn_tui::elicitation_form::form_elicitor();
    let parts = crate::setup::HostParts {
        elicitation: Some(cairn_mcp::elicitation::Elicitation::new(elicitor)),
        ..crate::setup::HostParts::default()
    };
    let Prepared {
        host,
        session,
        resumed,
        cwd,
        home,
        memory_dir,
        status_command,
        instruction_warnings,
        unsupported,
        mcp,
        client,
        thinking,
        ..
    } = match prepare_for_host(args, Face::Interactive, broker, parts) {
        Ok(prepared) => prepared,
        Err(err) => {
            eprintln!("error: {err:#}");
            return (ExitCode::FAILURE, None);
        }
    };
    let source = match (start, resumed) {
        (Start::Clear, _) => StartSource::Clear,
        (Start::Resume, _) | (Start::Startup, true) => StartSource::Resume,
        (Start::Startup, false) => StartSource::Startup,
    };
    let system_prompt = host.engine().config().system_prompt.clone();
    let history = if resumed {
        host.engine().messages().to_vec()
    } else {
        Vec::new()
    };
    let permission_gate = Some(host.governance().gate().clone());
    let tool_specs = host.spawner().tools().specs();
    // The engine records the session before the UI sees each event.
    let mut running = host.start(source).await;
    let ui_events = running.take_events();

    let config = AppConfig {
        version: env!("CARGO_PKG_VERSION").to_string(),
        model: session.model.clone(),
        permission_mode: session.permission_mode.to_string(),
        cwd: cwd.clone(),
        session_id: session.session_id.clone(),
        settings: Arc::new(DiskSettings {
            flag: args.settings.clone(),
            sources: args.setting_sources,
            home: home.clone(),
            cwd: cwd.clone(),
        }),
        commands: discover_commands(&cwd, Some(&home)),
        initial_prompt: args.prompt.clone(),
        resolve_model: models::resolve_model,
        // What the provider's client knows: its window, prices and overrides for any model.
        model_facts: cairn_tui::ModelFacts::new(move |model| client.model_info(model)),
        thinking: Some(thinking),
        history_path: crate::session::cairn_home()
            .ok()
            .map(|home| home.join("history.jsonl")),
        home: home.clone(),
        credential_variable: session.api_key_source.to_string(),
        // The engine's own prompt, for `/context`'s estimate.
        system_prompt: Some(system_prompt),
        // What the session's requests offer, MCP tools and ToolSearch included.
        tool_specs,
        permission_gate,
        history,
        resumable_sessions,
        status_command,
        // The directory the engine's memory uses, for `#` and `/memory`.
        memory_dir,
        startup_warnings: instruction_warnings,
        startup_notes: unsupported.into_iter().collect(),
        mcp_face: mcp
            .clone()
            .map(|mcp| Arc::new(crate::mcp_face::TuiMcp(mcp)) as Arc<dyn cairn_tui::McpFace>),
        elicitations: mcp.is_some().then_some(elicitations),
        mcp: mcp.map(crate::mcp::report_source),
    };
    // The UI interrupts any running turn on its way out.
    let result = run_app(config, running.input(), ui_events).await;
    let reason = match &result {
        Ok(AppExit::Clear) => EndReason::Clear,
        Ok(AppExit::Resume(_) | AppExit::Terminated | AppExit::InputClosed) => EndReason::Other,
        Ok(AppExit::UserQuit) | Err(_) => EndReason::PromptInputExit,
    };
    for warning in running.end(reason).await {
        say_err(format_args!("warning: {warning}"));
    }
    let (code, exit) = match result {
        Ok(exit) => (ExitCode::SUCCESS, Some(exit)),
        Err(err) => {
            say_err(format_args!("error: {err}"));
            (ExitCode::FAILURE, None)
        }
    };
    // Only a session with a transcript can be resumed: one in which nothing was said has none.
    if crate::session::is_resumable(&cwd, &session.session_id) {
        // The terminal may be gone (a closed window): what cannot be written is dropped.
        let _ = writeln!(
            std::io::stdout(),
            "Resume this session with: cairn --resume {}",
            session.session_id
        );
    }
    (code, exit)
}

/// `cwd`'s sessions that have messages, newest first (none when they cannot be listed).
fn resumable_sessions(cwd: &std::path::Path) -> Vec<PickerEntry> {
    sessions_to_resume(cwd)
        .map(picker_entries)
        .unwrap_or_default()
}

/// The sessions that have messages, as the picker lists them.
fn picker_entries(sessions: Vec<cairn_session::SessionSummary>) -> Vec<PickerEntry> {
    sessions
        .into_iter()
        .filter(|session| session.message_count > 0)
        .map(|session| PickerEntry {
            id: session.id.to_string(),
            started_at_ms: session.started_at,
            message_count: session.message_count,
            cost_usd: session.cost_usd,
            first_prompt: session.first_prompt,
            failed: session.failure.is_some(),
        })
        .collect()
}

/// The settings files read again each time `/config` or `/status` asks.
#[derive(Debug)]
struct DiskSettings {
    /// `--settings`, as given.
    flag: Option<String>,
    /// `--setting-sources`, as given.
    sources: Option<cairn_config::SettingSources>,
    home: std::path::PathBuf,
    cwd: std::path::PathBuf,
}

impl SettingsView for DiskSettings {
    fn read(&self) -> Result<(Vec<String>, String), String> {
        let loader =
            crate::settings::loader_for(self.flag.as_deref(), self.sources, &self.home, &self.cwd);
        let settings = loader.load().map_err(|err| err.to_string())?;
        let sources = settings.sources().iter().map(ToString::to_string).collect();
        Ok((sources, settings_listing(&settings)))
    }
}

/// The merged settings, one `key = value (sources)` line each, as `cairn config list`.
fn settings_listing(settings: &cairn_config::LoadedSettings) -> String {
    let lines: Vec<String> = settings
        .list()
        .iter()
        .map(|entry| format!("  {entry}"))
        .collect();
    if lines.is_empty() {
        "  (none: no settings file exists)".to_string()
    } else {
        lines.join("\n")
    }
}

/// `--resume` without an id: this directory's sessions in the picker. The chosen session's
/// id, or `None` when the user cancelled. Sessions without messages are not offered.
async fn choose_session() -> anyhow::Result<Option<String>> {
    let cwd = std::env::current_dir().context("cannot read the working directory")?;
    // Fails, saying so, when the directory has no sessions at all.
    let entries = picker_entries(sessions_to_resume(&cwd)?);
    if entries.is_empty() {
        anyhow::bail!(
            "No sessions to resume in {} (only empty ones; start one with `cairn`)",
            cwd.display()
        );
    }
    let theme = theme_from_env();
    // The picker blocks on the terminal's keys; the app has not started reading them yet.
    tokio::task::spawn_blocking(move || {
        let chosen = run_picker(&entries, &theme).context("cannot show the session picker")?;
        Ok(chosen.and_then(|index| entries.get(index).map(|entry| entry.id.clone())))
    })
    .await
    .context("the session picker stopped unexpectedly")?
}

/// Whether the run goes on after the trust questions.
enum Folder {
    Trusted,
    /// The user said no, or could not be asked: the run ends with this code.
    Declined(ExitCode),
}

/// Asks whether the user trusts the working folder, unless an earlier answer covers it
/// (`cairn_config::trust`); a no ends the run before any of the folder's files act. Then, when
/// the folder's own settings turn on `bypassPermissions` and no flag chose the mode, asks
/// whether that mode may hold; a no runs the session in `default` mode.
async fn ask_about_trust(args: &mut Args) -> Folder {
    let places = std::env::current_dir()
        .context("cannot read the working directory")
        .and_then(|cwd| {
            let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
            Ok((cwd, home, crate::session::cairn_home()?))
        });
    let (cwd, home, cairn_home) = match places {
        Ok(places) => places,
        Err(err) => {
            say_err(format_args!("error: {err:#}"));
            return Folder::Declined(ExitCode::FAILURE);
        }
    };
    let (mut folders, warning) = TrustedFolders::load(&cairn_home, &home);
    if let Some(warning) = warning {
        say_err(format_args!("warning: {warning}"));
    }
    if !folders.trust_of(&cwd).is_trusted() {
        let question = TrustQuestion::Folder {
            folder: cwd.clone(),
            acting: trust::files_that_act(&cwd)
                .into_iter()
                .map(String::from)
                .collect(),
        };
        match ask(question).await {
            Ok(TrustAnswer::Yes) => {
                if let Err(err) = folders.trust(&cwd) {
                    say_err(format_args!(
                        "warning: {err}; the folder is trusted for this run and cairn asks again \
                         next time"
                    ));
                }
            }
            Ok(TrustAnswer::No) => {
                say_err(format_args!(
                    "{} is not trusted: cairn exits without running anything from it.",
                    cwd.display()
                ));
                return Folder::Declined(ExitCode::FAILURE);
            }
            Err(err) => {
                say_err(format_args!(
                    "error: cannot ask whether you trust {}: {err:#}",
                    cwd.display()
                ));
                return Folder::Declined(ExitCode::FAILURE);
            }
        }
    }
    // A settings file that does not load: its error, and whether to go on without it (before
    // the bypass question, which reads the settings as the session will).
    if let Err(code) = crate::settings::ask_about_broken_settings(args).await {
        return Folder::Declined(code);
    }
    confirm_bypass_from_folder(args, &cwd, &home, &mut folders).await;
    confirm_credential_settings(args, &cwd, &home, &mut folders).await
}

/// When the folder's own settings choose the provider's endpoint or credential
/// (`cairn_config::project_level`) with values not yet approved here, lists them and asks;
/// a yes is kept for those values in this folder, a no ends the run before any request.
async fn confirm_credential_settings(
    args: &Args,
    cwd: &std::path::Path,
    home: &std::path::Path,
    folders: &mut TrustedFolders,
) -> Folder {
    let loader = crate::settings::settings_loader(args, home, cwd);
    let Ok(settings) = loader.load() else {
        return Folder::Trusted;
    };
    let unapproved: Vec<_> = cairn_config::project_level::guarded_project_settings(&settings)
        .into_iter()
        .filter(|setting| {
            matches!(
                setting.key,
                cairn_config::project_level::GuardedKey::Credential(_)
            ) && !setting.user_set_it()
                && !folders.setting_approved(cwd, setting.key.key(), &setting.value)
        })
        .collect();
    if unapproved.is_empty() {
        return Folder::Trusted;
    }
    let listed = unapproved
        .iter()
        .map(|setting| {
            let key = setting.key.key();
            let shown = if key.ends_with("_KEY") || key.ends_with("_TOKEN") {
                "(a credential, not shown)".to_string()
            } else {
                setting.value.to_string()
            };
            format!("{}: {key} = {shown}", setting.origin)
        })
        .collect();
    match ask(TrustQuestion::CredentialSettings { settings: listed }).await {
        Ok(TrustAnswer::Yes) => {
            for setting in &unapproved {
                if let Err(err) = folders.approve_setting(cwd, setting.key.key(), &setting.value) {
                    say_err(format_args!(
                        "warning: {err}; the approval could not be kept, so this run cannot \
                         use them"
                    ));
                }
            }
            Folder::Trusted
        }
        Ok(TrustAnswer::No) | Err(_) => {
            say_err(format_args!(
                "This folder's credential settings were not approved: cairn exits without \
                 sending anything. Set them in ~/.claude/settings.json instead, or run with \
                 --setting-sources user."
            ));
            Folder::Declined(ExitCode::FAILURE)
        }
    }
}

/// When the mode comes from the folder's own settings and is `bypassPermissions`, asks (once
/// per folder) whether it may hold; without a yes the session runs in `default` mode. A mode
/// from a flag or the user's own settings is the user's choice and is not asked about.
async fn confirm_bypass_from_folder(
    args: &mut Args,
    cwd: &std::path::Path,
    home: &std::path::Path,
    folders: &mut TrustedFolders,
) {
    if args.permission_mode.is_some() || args.dangerously_skip_permissions {
        return;
    }
    let loader = crate::settings::settings_loader(args, home, cwd);
    // A settings file that does not load was asked about (or is reported at setup).
    let Ok(settings) = loader.load() else {
        return;
    };
    if settings.settings().permissions.default_mode != Some(PermissionMode::BypassPermissions) {
        return;
    }
    let file = match settings.origin("permissions.defaultMode") {
        Some(Source::ProjectLegacy(file) | Source::Project(file) | Source::ProjectLocal(file)) => {
            file.clone()
        }
        Some(
            Source::UserLegacy(_)
            | Source::User(_)
            | Source::FlagFile(_)
            | Source::FlagInline
            | Source::Override(_),
        )
        | None => return,
    };
    if folders.bypass_permissions_accepted(cwd) {
        return;
    }
    let answer = ask(TrustQuestion::BypassPermissions { file: file.clone() }).await;
    match answer {
        Ok(TrustAnswer::Yes) => {
            if let Err(err) = folders.accept_bypass_permissions(cwd) {
                say_err(format_args!("warning: {err}; cairn asks again next time"));
            }
        }
        Ok(TrustAnswer::No) | Err(_) => {
            args.permission_mode = Some(PermissionMode::Default);
            let _ = writeln!(
                std::io::stdout(),
                "{} sets bypassPermissions, which was not confirmed: this session runs in \
                 default mode.",
                file.display()
            );
        }
    }
}

/// Shows one trust question until the user answers.
async fn ask(question: TrustQuestion) -> anyhow::Result<TrustAnswer> {
    let theme = theme_from_env();
    // The dialog blocks on the terminal's keys; the app has not started reading them yet.
    tokio::task::spawn_blocking(move || run_trust_dialog(question, &theme))
        .await
        .context("the question stopped unexpectedly")?
        .context("cannot show the question")
}

/// Before the first prompt: when the project's instruction files import files from outside
/// it that nobody approved, asks whether to include them; a Yes is remembered for the
/// project. The system prompt is built afterwards, when the session is set up.
async fn ask_about_external_imports(args: &Args) {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let imports = crate::prompt::unapproved_imports(args, &cwd);
    if imports.is_empty() {
        return;
    }
    let theme = theme_from_env();
    let asked = imports.clone();
    let answer = tokio::task::spawn_blocking(move || run_imports_dialog(asked, &theme)).await;
    let outcome = match answer {
        Ok(Ok(ImportsAnswer::Include)) => {
            crate::prompt::approve_imports(&cwd, &imports).context("cannot remember the approval")
        }
        Ok(Ok(ImportsAnswer::Skip)) => Ok(()),
        Ok(Err(err)) => Err(anyhow::Error::new(err).context("cannot ask about them")),
        Err(err) => Err(anyhow::Error::new(err).context("the question stopped unexpectedly")),
    };
    if let Err(err) = outcome {
        say_err(format_args!(
            "warning: instruction files import files from outside this project; {err:#}, so \
             they are left out (CAIRN_ALLOW_EXTERNAL_IMPORTS=1 includes them for one run)"
        ));
    }
}

/// The theme the environment asks for (`COLORFGBG`, `NO_COLOR`).
fn theme_from_env() -> Theme {
    Theme::from_env(
        Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()),
        std::env::var_os("NO_COLOR").as_deref(),
    )
}

/// Writes a line to standard error, dropping it if the terminal is gone.
pub(crate) fn say_err(line: std::fmt::Arguments<'_>) {
    let _ = writeln!(std::io::stderr(), "{line}");
}
