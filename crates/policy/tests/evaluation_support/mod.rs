//! What the two suites of issue 11's classes 1 and 2 share: the files their instances use,
//! a real bash run proving an instance runs its hidden `touch pwned`, and the gate in
//! `cairn -p` and in plan mode.

#![allow(
    dead_code,
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "each suite uses a different part; a test should fail loudly"
)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

use cairn_policy::rules::{RuleKind, RuleOrigin, RuleSet};
use cairn_policy::{Asking, CallInfo, PermissionGate, PermissionMode, Verdict};
use cairn_shell::BashVerdict;
use serde_json::json;

use super::security_support::{World, kind};

/// `tools/ls`, a program that creates `pwned`; `evil.sh`, a script that does; `seed.txt`,
/// a file whose first line is an array subscript that does.
pub fn plant_tools(world: &World) {
    world.file("tools/ls", "#!/bin/sh\ntouch pwned\n");
    let ls = world.workspace.join("tools/ls");
    fs::set_permissions(&ls, fs::Permissions::from_mode(0o755)).unwrap();
    world.file("evil.sh", "touch pwned\n");
    world.file("seed.txt", "k[$(touch pwned)]\n");
}

/// Runs `command` with the real bash in the workspace and says whether it created `pwned`.
pub fn runs_the_payload(world: &World, command: &str) -> bool {
    let marker = world.workspace.join("pwned");
    let _ = fs::remove_file(&marker);
    Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(&world.workspace)
        .env("HOME", &world.home)
        .output()
        .unwrap();
    let ran = marker.exists();
    let _ = fs::remove_file(&marker);
    ran
}

/// The gate refuses `command` in default mode with nobody to ask although `rules` allow its
/// words, and in plan mode; `Err` says where it did not.
pub fn denied_everywhere(world: &World, command: &str, rules: &[&str]) -> Result<(), String> {
    let print_mode = world.check(rules, command);
    let plan = check_in(world, PermissionMode::Plan, rules, command);
    match (kind(&print_mode), kind(&plan)) {
        ("deny", "deny") => Ok(()),
        _ => Err(format!(
            "{command:?}: -p with {rules:?}: {print_mode:?}; plan mode: {plan:?}"
        )),
    }
}

/// The gate's verdict in `mode`, with someone to ask.
fn check_in(world: &World, mode: PermissionMode, allow: &[&str], command: &str) -> Verdict {
    let (rules, errors) = RuleSet::new(allow.iter().map(|text| {
        (
            RuleKind::Allow,
            text.to_string(),
            RuleOrigin::new("test settings", world.workspace.clone()),
        )
    }));
    assert!(errors.is_empty(), "{errors:?}");
    let gate = PermissionGate::new(
        mode,
        rules,
        vec![world.workspace.clone()],
        world.workspace.clone(),
        world.home.clone(),
    );
    let input = json!({ "command": command });
    let paths = [world.workspace.clone()];
    gate.check(&CallInfo {
        tool: "Bash",
        input: &input,
        paths: &paths,
        read_only: false,
        destructive: true,
        asking: Asking::Interactive,
    })
}

/// The instances of `cases` (a command and the allow rules matching its words) that did not
/// run their hidden `touch pwned` in the real bash: each should.
pub fn harmless_instances(cases: &[(&'static str, &[&str])]) -> Vec<&'static str> {
    let world = World::new();
    plant_tools(&world);
    cases
        .iter()
        .map(|(command, _)| *command)
        .filter(|command| !runs_the_payload(&world, command))
        .collect()
}

/// The instances the analysis does not call unanalysable with a reason, and what it said.
pub fn not_unanalysable(cases: &[(&str, &[&str])]) -> Vec<String> {
    let world = World::new();
    cases
        .iter()
        .filter_map(|(command, _)| {
            let analysis = world.analyze(command);
            (analysis.verdict != BashVerdict::Unanalysable || analysis.reasons.is_empty())
                .then(|| format!("{command:?}: {:?} {:?}", analysis.verdict, analysis.reasons))
        })
        .collect()
}

/// The instances the real gate lets through in `cairn -p` with their allow rules, or in plan
/// mode.
pub fn not_refused(cases: &[(&str, &[&str])]) -> Vec<String> {
    let world = World::new();
    cases
        .iter()
        .filter_map(|(command, rules)| denied_everywhere(&world, command, rules).err())
        .collect()
}
