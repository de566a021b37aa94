//! cairn's own state (the memory directory) is written without a question in every mode but
//! plan, even where nobody can be asked; everything else outside the workspace keeps its rules.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use std::path::{Path, PathBuf};

use cairn_policy::rules::RuleKind;
use cairn_policy::{Asking, CallInfo, PermissionMode, Verdict};
use cairn_protocol::DecisionSource;
use serde_json::json;

struct Fixture {
    _dir: tempfile::TempDir,
    workspace: PathBuf,
    home: PathBuf,
    memory: PathBuf,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().join("project");
    let home = dir.path().join("home");
    let memory = home.join(".cairn/projects/p/memory");
    for path in [&workspace, &memory] {
        std::fs::create_dir_all(path).unwrap();
    }
    Fixture {
        workspace: workspace.canonicalize().unwrap(),
        home: home.canonicalize().unwrap(),
        memory: memory.canonicalize().unwrap(),
        _dir: dir,
    }
}

fn gate(f: &Fixture, mode: PermissionMode, deny: &[&str]) -> security_support::TestGate {
    let rules: Vec<(RuleKind, &str)> = deny.iter().map(|text| (RuleKind::Deny, *text)).collect();
    let gate =
        security_support::gate_over(&f.workspace, &f.home, mode, &rules, Asking::NonInteractive);
    gate.allow_own_state(&f.memory);
    gate
}

fn write(gate: &security_support::TestGate, path: &Path) -> Verdict {
    gate.check(&CallInfo {
        tool: "Write",
        input: &json!({"file_path": path, "content": "x"}),
        paths: &[path.to_path_buf()],
        read_only: false,
        destructive: false,
        asking: gate.asking,
    })
}

fn allowed(verdict: &Verdict) -> bool {
    matches!(verdict, Verdict::Allow { .. })
}

#[test]
fn a_memory_file_is_written_unasked_where_nobody_can_be_asked() {
    let f = fixture();
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::DontAsk,
    ] {
        let gate = gate(&f, mode, &[]);
        let verdict = write(&gate, &f.memory.join("feedback_tests.md"));
        assert!(
            matches!(
                verdict,
                Verdict::Allow {
                    source: DecisionSource::Mode,
                    ..
                }
            ),
            "{mode}: {verdict:?}"
        );
        // Beside it, outside the workspace, the rules hold: refused in -p.
        let elsewhere = write(&gate, &f.home.join("notes.md"));
        assert!(!allowed(&elsewhere), "{mode}: {elsewhere:?}");
        // The directory's parent is not its own state.
        let above = write(&gate, &f.memory.with_file_name("MEMORY.md"));
        assert!(!allowed(&above), "{mode}: {above:?}");
    }
}

#[test]
fn plan_mode_and_deny_rules_still_refuse_memory_writes() {
    let f = fixture();
    let plan = gate(&f, PermissionMode::Plan, &[]);
    assert!(!allowed(&write(&plan, &f.memory.join("user_role.md"))));
    let denied = gate(
        &f,
        PermissionMode::Default,
        &[&format!("Edit(/{}/**)", f.memory.display())],
    );
    assert!(matches!(
        write(&denied, &f.memory.join("user_role.md")),
        Verdict::Deny {
            source: DecisionSource::Rule,
            ..
        }
    ));
}

#[test]
fn a_path_that_climbs_out_of_the_memory_directory_is_not_its_own_state() {
    let f = fixture();
    let gate = gate(&f, PermissionMode::Default, &[]);
    let climbing = f.memory.join("../../../../.bashrc");
    assert!(!allowed(&write(&gate, &climbing)));
}

#[test]
fn a_link_in_the_memory_directory_is_judged_where_it_leads() {
    let f = fixture();
    let target = f.home.join(".profile");
    std::fs::write(&target, "").unwrap();
    let link = f.memory.join("notes.md");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let gate = gate(&f, PermissionMode::Default, &[]);
    assert!(
        !allowed(&write(&gate, &link)),
        "the link leads out of cairn's state"
    );
    let linked_dir = f.memory.join("out");
    std::os::unix::fs::symlink(&f.home, &linked_dir).unwrap();
    assert!(!allowed(&write(&gate, &linked_dir.join("new.md"))));
}
