//! Settings from the command line's point of view: loading them for a run, and
//! `cairn config list|get|set|add|remove`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Mutex;

use anyhow::Context;
use cairn_config::project_level::{
    Consent, Effect, Face, GuardedKey, ProjectSetting, guarded_project_settings, project_key_effect,
};
use cairn_config::rules_file::{GitUser, keep_out_of_git, local_settings_path};
use cairn_config::settings_edit::{Edited, SettingEdit, edit_setting, parse_value};
use cairn_config::trust::TrustedFolders;
use cairn_config::{LoadedSettings, PermissionMode, SettingSources, SettingsLoader};
use cairn_tui::{Appearance, SettingsAnswer, Theme, run_settings_dialog};

use crate::args::{Args, ConfigCommand, ConfigFile};

/// The merged settings for a run in `project`, with warnings (skipped legacy files) printed
/// once on standard error.
pub fn load_settings(args: &Args, project: &Path) -> anyhow::Result<LoadedSettings> {
    let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
    let loaded = settings_loader(args, &home, project).load()?;
    for warning in loaded.warnings() {
        eprintln!("warning: {warning}");
    }
    Ok(loaded)
}

/// Applies the rule for project-level files ([`cairn_config::project_level`]) to a run's
/// settings, before anything acts on them: a guarded key the rule ignores is overridden by
/// what the user's own levels say (or the safe default), with a warning naming the file and
/// the key; one it refuses stops the run, naming the file, the key and the ways on.
pub fn apply_project_rule(
    args: &Args,
    settings: &mut LoadedSettings,
    cwd: &Path,
    face: Face,
) -> anyhow::Result<()> {
    let guarded = guarded_project_settings(settings);
    if guarded.is_empty() {
        return Ok(());
    }
    let approvals = approvals();
    let bypass_flag = args.dangerously_skip_permissions
        || args.permission_mode == Some(PermissionMode::BypassPermissions);
    let mut refused = Vec::new();
    for setting in guarded {
        // A mode the command line chose makes the files' mode moot: nothing to warn about.
        if setting.key == GuardedKey::BypassPermissions && args.permission_mode.is_some() {
            continue;
        }
        let consent = Consent {
            face,
            bypass_flag,
            user_set_it: setting.user_set_it(),
            approved: approvals.as_ref().is_some_and(|folders| {
                folders.setting_approved(cwd, setting.key.key(), &setting.value)
            }),
        };
        match project_key_effect(&setting.origin, &setting.key, &consent) {
            Effect::Holds => {}
            Effect::Ignored => ignore(settings, &setting)?,
            Effect::Refused => refused.push(setting),
        }
    }
    if refused.is_empty() {
        return Ok(());
    }
    let named: Vec<String> = refused
        .iter()
        .map(|setting| format!("{}: {}", setting.origin, setting.key.key()))
        .collect();
    anyhow::bail!(
        "{}: a project's settings may not choose where cairn sends your credentials, or which \
         credentials it sends, so cairn stopped before sending anything. To use {}, approve it \
         by running cairn (the interactive UI) in this folder, or set it in your own settings \
         (~/.claude/settings.json or --settings); to run without this folder's settings, pass \
         --setting-sources user.",
        named.join(", "),
        if refused.len() == 1 { "it" } else { "them" }
    )
}

/// Gives `setting`'s key the value the user's own levels give it, or the safe default, over
/// the project's; says so on standard error.
fn ignore(settings: &mut LoadedSettings, setting: &ProjectSetting) -> anyhow::Result<()> {
    let (fallback, consequence) = match &setting.key {
        GuardedKey::BypassPermissions => (
            setting
                .users_value
                .clone()
                .unwrap_or_else(|| "default".into()),
            "this run keeps permission checks; pass --permission-mode bypassPermissions (or set \
             it in ~/.claude/settings.json) to run without them",
        ),
        GuardedKey::SandboxDisabled => (
            setting
                .users_value
                .clone()
                .unwrap_or(serde_json::Value::Bool(true)),
            "shell commands run in the sandbox; set sandbox.enabled to false in \
             ~/.claude/settings.json or --settings to run them without it",
        ),
        // The rule refuses credential keys, never ignores them.
        GuardedKey::Credential(_) => return Ok(()),
    };
    eprintln!(
        "warning: {}: {} {} from the project's settings is ignored in -p: {consequence}.",
        setting.origin,
        setting.key.key(),
        setting.value
    );
    settings.apply_override(
        setting.key.key(),
        fallback,
        format!("{} ignored in {}", setting.key.key(), setting.origin),
    )?;
    Ok(())
}

/// The user's answers about folders, for their approvals of credential settings. Without a
/// readable trust file nothing is approved.
fn approvals() -> Option<TrustedFolders> {
    let home = std::env::home_dir()?;
    let cairn_home = crate::session::cairn_home().ok()?;
    Some(TrustedFolders::load(&cairn_home, &home).0)
}

/// The settings files the user chose, in the interactive UI, to run this process without
/// (they did not load). Every load of the run leaves them out.
static LEFT_OUT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

fn left_out() -> Vec<PathBuf> {
    LEFT_OUT
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .clone()
}

/// The loader of this run's settings: the files `--setting-sources` names under `home` and
/// `project`, the `--settings` flag, less the files the user chose to run without.
pub fn settings_loader(args: &Args, home: &Path, project: &Path) -> SettingsLoader {
    loader_for(
        args.settings.as_deref(),
        args.setting_sources,
        home,
        project,
    )
}

/// [`settings_loader`] from the two flags themselves, for a reader that outlives the `Args`
/// (the interactive UI's `/config`).
pub fn loader_for(
    flag: Option<&str>,
    sources: Option<SettingSources>,
    home: &Path,
    project: &Path,
) -> SettingsLoader {
    let mut loader =
        SettingsLoader::new(home, project).setting_sources(sources.unwrap_or_default());
    if let Some(flag) = flag {
        loader = loader.settings_flag(flag);
    }
    for path in left_out() {
        loader = loader.leave_out(path);
    }
    loader
}

/// The `statusLine` setting's command, when it is the one kind there is (`"type":
/// "command"`) and holds a command.
pub fn status_command(settings: &LoadedSettings) -> Option<String> {
    let status_line = settings.settings().status_line.clone()?;
    (status_line.kind == "command" && !status_line.command.trim().is_empty())
        .then_some(status_line.command)
}

/// In the interactive UI, before the session is set up: while a settings file does not load,
/// shows its error (file, line, field) and asks whether to go on without it. Enter leaves it
/// out of every load of this run; Esc ends the run with the error, as `-p` does. A broken
/// `--settings` file is not asked about: setup reports it.
pub async fn ask_about_broken_settings(args: &Args) -> Result<(), ExitCode> {
    let (Some(home), Ok(cwd)) = (std::env::home_dir(), std::env::current_dir()) else {
        // Setup reports what is missing.
        return Ok(());
    };
    loop {
        let loader = settings_loader(args, &home, &cwd);
        let error = match loader.load() {
            Ok(_) => return Ok(()),
            Err(error) => error,
        };
        let Some(file) = loader.file_at_fault(&error).map(Path::to_path_buf) else {
            return Ok(());
        };
        let theme = Theme::from_env(
            Appearance::from_colorfgbg(std::env::var("COLORFGBG").ok().as_deref()),
            std::env::var_os("NO_COLOR").as_deref(),
        );
        let message = error.to_string();
        let asked = file.clone();
        // The dialog blocks on the terminal's keys; the app has not started reading them.
        let answer =
            tokio::task::spawn_blocking(move || run_settings_dialog(asked, message, &theme)).await;
        match answer {
            Ok(Ok(SettingsAnswer::ContinueWithout)) => LEFT_OUT
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .push(file),
            Ok(Ok(SettingsAnswer::Exit)) | Ok(Err(_)) | Err(_) => {
                let _ = writeln!(std::io::stderr(), "error: {error}");
                return Err(ExitCode::FAILURE);
            }
        }
    }
}

/// `cairn config list` and `cairn config get KEY`.
pub fn run_config_command(args: &Args, command: &ConfigCommand) -> ExitCode {
    let cwd = std::env::current_dir().context("cannot read the working directory");
    let result = match command {
        ConfigCommand::List | ConfigCommand::Get { .. } => cwd
            .and_then(|cwd| load_settings(args, &cwd))
            .and_then(|loaded| render(&loaded, command)),
        // An edit reads only the file it changes: another file that does not load must not
        // stop the user from fixing things through this one.
        ConfigCommand::Set { file, key, value } => {
            cwd.and_then(|cwd| edit(&cwd, *file, key, SettingEdit::Set(parse_value(value))))
        }
        ConfigCommand::Add { file, key, values } => cwd.and_then(|cwd| {
            let values = values.iter().map(|value| parse_value(value)).collect();
            edit(&cwd, *file, key, SettingEdit::Add(values))
        }),
        ConfigCommand::Remove { file, key, values } => cwd.and_then(|cwd| {
            let values = values.iter().map(|value| parse_value(value)).collect();
            edit(&cwd, *file, key, SettingEdit::Remove(values))
        }),
    };
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

/// Changes one setting in the file `file` names and says what it did, naming the file.
fn edit(cwd: &Path, file: ConfigFile, key: &str, edit: SettingEdit) -> anyhow::Result<String> {
    let path = if file.global {
        let home = std::env::home_dir().context("cannot find the home directory: set HOME")?;
        home.join(".claude").join("settings.json")
    } else if file.project {
        cwd.join(".claude").join("settings.json")
    } else {
        local_settings_path(cwd)
    };
    let existed = path.exists();
    let edited = edit_setting(&path, key, edit)?;
    if !existed
        && path.exists()
        && path == local_settings_path(cwd)
        && let Some(git) = GitUser::from_env()
    {
        // As for a rule kept from a dialog: the local file is personal.
        let _ = keep_out_of_git(&path, &git);
    }
    let file = path.display();
    Ok(match edited {
        Edited::Now(value) => format!("{key} = {value} in {file}\n"),
        Edited::Removed => format!("Removed {key} from {file}\n"),
        Edited::Unchanged => format!("Nothing to change: {file} already has it so\n"),
    })
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
        ConfigCommand::Set { .. } | ConfigCommand::Add { .. } | ConfigCommand::Remove { .. } => {
            anyhow::bail!("an edit is not rendered from the merged settings")
        }
    }
}
