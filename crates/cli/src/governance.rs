//! The governance layer from the command line's point of view: permission rules from every
//! settings file and flag (each with the directory its path patterns are relative to), the
//! permission gate, hooks, and the sandbox for shell commands.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn_config::{LoadedSettings, Source};
use cairn_core::Governance;
use cairn_policy::PermissionGate;
use cairn_policy::hooks::{HookCommon, HookConfig, HookRunner};
use cairn_policy::rules::{PrefixReach, RuleKind, RuleOrigin, RuleSet};
use cairn_policy::sandbox::{
    NetworkAccess, SandboxSupport, default_policy, detect_support, explain_failure, wrap_command,
};
use cairn_protocol::PermissionMode;
use cairn_tools::{CommandSandbox, GuardedFiles, GuardedList};
use serde_json::Value;

use crate::args::Args;

/// What the run needs from the governance layer.
#[derive(Debug)]
pub struct GovernanceSetup {
    pub governance: Governance,
    /// The sandbox shell commands run in, when it is on.
    pub sandbox: Option<Arc<CommandSandbox>>,
}

/// Everything the permission gate, the hooks and the sandbox are built from.
pub struct GovernanceInputs<'a> {
    pub args: &'a Args,
    pub settings: &'a LoadedSettings,
    pub cwd: &'a Path,
    pub home: &'a Path,
    pub mode: PermissionMode,
    pub session_id: &'a str,
    pub transcript_path: &'a Path,
}

pub fn build_governance(inputs: &GovernanceInputs<'_>) -> anyhow::Result<GovernanceSetup> {
    let GovernanceInputs {
        args,
        settings,
        cwd,
        home,
        mode,
        session_id,
        transcript_path,
    } = *inputs;
    let (rules, errors) = RuleSet::new(collect_rules(args, settings, cwd, home));
    for error in errors {
        eprintln!("warning: {error} (ignored)");
    }
    let workspace_roots = workspace_roots(args, settings, cwd);
    let read_denied: Vec<(PathBuf, PrefixReach)> = rules
        .rules()
        .iter()
        .filter_map(|rule| rule.read_deny_prefix(home, cwd))
        .collect();
    let gate = PermissionGate::new(
        mode,
        rules,
        workspace_roots.clone(),
        cwd.to_path_buf(),
        home.to_path_buf(),
    );

    // Each layer's hooks are checked on their own, so a message names the file it is about;
    // the merged configuration then runs what is valid.
    for source in settings.sources() {
        if let Some(hooks) = layer_json(args, source).and_then(|json| json.get("hooks").cloned()) {
            for error in HookConfig::from_settings(&hooks).1 {
                eprintln!("warning: {source}: {error} (this hook is ignored)");
            }
        }
    }
    let (hook_config, _reported_above) = HookConfig::from_settings(&settings.settings().hooks);
    let hooks = Arc::new(HookRunner::new(hook_config, cwd.to_path_buf()));
    let hook_common = HookCommon {
        session_id: session_id.to_string(),
        transcript_path: transcript_path.display().to_string(),
        cwd: cwd.display().to_string(),
        permission_mode: mode.as_str().to_string(),
    };

    Ok(GovernanceSetup {
        governance: Governance::new(Arc::new(gate), hooks, hook_common),
        sandbox: sandbox(settings, &workspace_roots, &read_denied, home)?,
    })
}

/// Every rule from every settings layer and flag, with its origin. Rules are read from each
/// layer on its own (the merged view has lost where each came from), because path patterns
/// are relative to their own file's place: user settings to `~/.claude`, project settings to
/// the project, local settings and flags to the working directory.
fn collect_rules(
    args: &Args,
    settings: &LoadedSettings,
    cwd: &Path,
    home: &Path,
) -> Vec<(RuleKind, String, RuleOrigin)> {
    let mut rules = Vec::new();
    for source in settings.sources() {
        let base_dir = match source {
            Source::UserLegacy(_) | Source::User(_) => home.join(".claude"),
            Source::ProjectLegacy(_)
            | Source::Project(_)
            | Source::ProjectLocal(_)
            | Source::FlagFile(_)
            | Source::FlagInline
            | Source::Override(_) => cwd.to_path_buf(),
        };
        let Some(json) = layer_json(args, source) else {
            continue;
        };
        for (kind, key) in [
            (RuleKind::Allow, "allow"),
            (RuleKind::Ask, "ask"),
            (RuleKind::Deny, "deny"),
        ] {
            let texts = json
                .pointer(&format!("/permissions/{key}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str);
            for text in texts {
                rules.push((
                    kind,
                    text.to_string(),
                    RuleOrigin::new(source.to_string(), base_dir.clone()),
                ));
            }
        }
    }
    for (kind, flag, values) in [
        (RuleKind::Allow, "--allowedTools", &args.allowed_tools),
        (RuleKind::Deny, "--disallowedTools", &args.disallowed_tools),
    ] {
        for text in values
            .iter()
            .flat_map(|value| cairn_policy::rules::split_rule_list(value))
        {
            rules.push((kind, text, RuleOrigin::new(flag, cwd.to_path_buf())));
        }
    }
    rules
}

/// One settings layer's own JSON (the merged view has lost which layer said what).
fn layer_json(args: &Args, source: &Source) -> Option<Value> {
    match source.path() {
        Some(path) => std::fs::read_to_string(path)
            .ok()
            .and_then(|text| serde_json::from_str(text.trim_start_matches('\u{feff}')).ok()),
        // An override (a project key the run ignores) is not the inline flag.
        None if *source == Source::FlagInline => args
            .settings
            .as_deref()
            .and_then(|inline| serde_json::from_str(inline).ok()),
        None => None,
    }
}

/// The project directory, `permissions.additionalDirectories` and `--add-dir`.
fn workspace_roots(args: &Args, settings: &LoadedSettings, cwd: &Path) -> Vec<PathBuf> {
    let mut roots = vec![cwd.to_path_buf()];
    for dir in settings
        .settings()
        .permissions
        .additional_directories
        .iter()
        .chain(&args.add_dir)
    {
        let path = cwd.join(dir);
        if !roots.contains(&path) {
            roots.push(path);
        }
    }
    roots
}

/// The sandbox shell commands run in: on where the kernel supports it unless
/// `sandbox.enabled` is false; `sandbox.network: false` also cuts the network off. What the
/// `Read(…)` deny rules deny is hidden from commands where Landlock can hide it
/// ([`hidden_paths`]).
fn sandbox(
    settings: &LoadedSettings,
    workspace_roots: &[PathBuf],
    read_denied: &[(PathBuf, PrefixReach)],
    home: &Path,
) -> anyhow::Result<Option<Arc<CommandSandbox>>> {
    let configured = settings.settings().sandbox.as_ref();
    if configured.and_then(|sandbox| sandbox.enabled) == Some(false) {
        return Ok(None);
    }
    match detect_support() {
        SandboxSupport::Full { .. } | SandboxSupport::Partial { .. } => {}
        SandboxSupport::Unsupported { reason } => {
            eprintln!(
                "warning: the sandbox is not available ({reason}); shell commands run without \
                 it. Set sandbox.enabled to false in settings to silence this."
            );
            return Ok(None);
        }
    }
    let network = match configured.and_then(|sandbox| sandbox.network) {
        Some(false) => NetworkAccess::Denied,
        Some(true) | None => NetworkAccess::Allowed,
    };
    let mut policy = default_policy(workspace_roots, network);
    policy.deny_read = hidden_paths(read_denied, &policy.writable, workspace_roots, home);
    let exe = std::env::current_exe()?;
    // The wrapper's argv for an empty command ends with that command; the rest is the prefix
    // every shell command is started with.
    let (program, mut prefix) = wrap_command(&exe, &policy, OsString::new().as_os_str(), &[]);
    prefix.pop();
    let roots: Vec<PathBuf> = workspace_roots
        .iter()
        .map(|root| root.canonicalize().unwrap_or_else(|_| root.clone()))
        .collect();
    let guarded_files = GuardedFiles::listed_by(move || {
        let mut list = GuardedList {
            paths: Vec::new(),
            complete: true,
        };
        for root in &roots {
            let (paths, complete) = cairn_policy::protected::guarded_files(root);
            list.paths.extend(paths);
            list.complete &= complete;
        }
        list
    });
    Ok(Some(Arc::new(CommandSandbox {
        program,
        prefix,
        explain: Box::new(move |code, stderr| explain_failure(&policy, code, stderr)),
        guarded_files,
    })))
}

/// The paths the sandbox hides from shell commands, from the `Read(…)` deny rules' literal
/// prefixes ([`Rule::read_deny_prefix`](cairn_policy::rules::Rule::read_deny_prefix)):
/// `~/.ssh/**` hides `~/.ssh`, `//etc/shadow` that file, `~/.ssh/*.pub` all of `~/.ssh`.
///
/// Some are left to the permission gate alone, which judges every path a command names but
/// cannot see what a program reads on its own:
/// - a path inside a directory the sandbox leaves writable (the workspace, the temp dirs),
///   because Landlock cannot take back reading there: `./.env`, and `**/.env`, whose only
///   literal part is the working directory;
/// - the filesystem root, without which no command could start;
/// - for a rule that covers only part of its prefix (`~/**/*.pem`, `//**/id_rsa`), a prefix
///   holding the home directory or a workspace root: hiding all of it would stop most
///   commands for the sake of a few files.
fn hidden_paths(
    read_denied: &[(PathBuf, PrefixReach)],
    writable: &[PathBuf],
    workspace_roots: &[PathBuf],
    home: &Path,
) -> Vec<PathBuf> {
    let resolved = |path: &Path| path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let writable: Vec<PathBuf> = writable.iter().map(|dir| resolved(dir)).collect();
    let must_stay_visible: Vec<PathBuf> = workspace_roots
        .iter()
        .map(|root| resolved(root))
        .chain([resolved(home)])
        .collect();
    let mut hidden: Vec<PathBuf> = Vec::new();
    for (path, reach) in read_denied {
        let real = resolved(path);
        let keep = match reach {
            PrefixReach::Whole => true,
            PrefixReach::Part => !must_stay_visible.iter().any(|dir| dir.starts_with(&real)),
        };
        if keep
            && real.parent().is_some()
            && !writable.iter().any(|dir| real.starts_with(dir))
            && !hidden.contains(path)
        {
            hidden.push(path.clone());
        }
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn deny_rules_hide_their_prefix_unless_landlock_cannot_or_it_would_hide_too_much() {
        let home = Path::new("/nonexistent-home/me");
        let project = PathBuf::from("/nonexistent-home/me/project");
        let writable = [project.clone(), PathBuf::from("/nonexistent-tmp")];
        let whole = |path: &str| (PathBuf::from(path), PrefixReach::Whole);
        let part = |path: &str| (PathBuf::from(path), PrefixReach::Part);
        let read_denied = [
            whole("/nonexistent-home/me/.ssh"),
            part("/nonexistent-home/me/.aws"),
            whole("/etc/shadow"),
            whole("/etc/shadow"),
            whole("/nonexistent-home/me/project/.env"),
            part("/nonexistent-home/me/project"),
            part("/nonexistent-tmp/cache"),
            part("/nonexistent-home/me"),
            part("/nonexistent-home"),
            part("/"),
            whole("/"),
            whole("/nonexistent-home/me"),
        ];
        assert_eq!(
            hidden_paths(
                &read_denied,
                &writable,
                std::slice::from_ref(&project),
                home
            ),
            [
                PathBuf::from("/nonexistent-home/me/.ssh"),
                PathBuf::from("/nonexistent-home/me/.aws"),
                PathBuf::from("/etc/shadow"),
                PathBuf::from("/nonexistent-home/me"),
            ]
        );
    }
}
