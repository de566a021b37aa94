//! Instruction-file discovery, imports, caps and refresh on real temp directories.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};

use cairn_context::instructions::{
    ExternalApproval, ImportScope, InstructionSet, PER_FILE_CAP, TOTAL_CAP,
};
use cairn_context::{PromptBuilder, PromptOptions, PromptSource};
use pretty_assertions::assert_eq;

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn paths(set: &InstructionSet) -> Vec<PathBuf> {
    set.files.iter().map(|file| file.path.clone()).collect()
}

#[test]
fn discovery_goes_from_home_then_root_down_to_the_working_directory() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    let project = root.path().join("project");
    let sub = project.join("crates/app");
    write(&home.path().join(".claude/CLAUDE.md"), "user prefs");
    write(&root.path().join("AGENTS.md"), "outer agents");
    write(&project.join("CLAUDE.md"), "project rules");
    write(&project.join("CLAUDE.local.md"), "my local notes");
    write(&project.join(".claude/CLAUDE.md"), "dot claude");
    write(&project.join(".claude/instructions.md"), "instructions");
    write(&project.join(".claude/rules/b-style.md"), "rule b");
    write(&project.join(".claude/rules/a-tests.md"), "rule a");
    write(&project.join(".claude/rules/ignored.txt"), "not markdown");
    write(&sub.join("CLAUDE.md"), "nearest");

    let set = InstructionSet::load(&sub, Some(home.path()), &ImportScope::default());
    assert_eq!(
        paths(&set),
        vec![
            home.path().join(".claude/CLAUDE.md"),
            root.path().join("AGENTS.md"),
            project.join("CLAUDE.md"),
            project.join("CLAUDE.local.md"),
            project.join(".claude/CLAUDE.md"),
            project.join(".claude/instructions.md"),
            project.join(".claude/rules/a-tests.md"),
            project.join(".claude/rules/b-style.md"),
            sub.join("CLAUDE.md"),
        ]
    );
    let text = set.render();
    assert!(text.contains(&format!(
        "Contents of {}:\n\nnearest",
        sub.join("CLAUDE.md").display()
    )));
}

#[test]
fn identical_content_is_loaded_once() {
    let root = tempfile::tempdir().unwrap();
    write(&root.path().join("CLAUDE.md"), "same text\n");
    write(&root.path().join("AGENTS.md"), "same text");
    let set = InstructionSet::load(root.path(), None, &ImportScope::default());
    assert_eq!(paths(&set), vec![root.path().join("CLAUDE.md")]);
}

#[test]
fn imports_follow_relative_and_home_paths_and_stop_at_cycles() {
    let home = tempfile::tempdir().unwrap();
    let root = tempfile::tempdir().unwrap();
    write(
        &root.path().join("CLAUDE.md"),
        "Start. See @docs/a.md and @~/personal.md",
    );
    write(&root.path().join("docs/a.md"), "A imports @b.md");
    write(
        &root.path().join("docs/b.md"),
        "B imports @a.md again, a cycle",
    );
    write(&home.path().join("personal.md"), "from home");
    // `~/personal.md` is outside the project: approved here (external_imports.rs has the rest).
    let approved = ImportScope {
        external: ExternalApproval::All,
        ..ImportScope::default()
    };
    let set = InstructionSet::load(root.path(), Some(home.path()), &approved);
    assert_eq!(
        paths(&set),
        vec![
            root.path().join("CLAUDE.md"),
            root.path().join("docs/a.md"),
            root.path().join("docs/b.md"),
            home.path().join("personal.md"),
        ]
    );
    assert_eq!(
        set.files[2].imported_by,
        Some(root.path().join("docs/a.md"))
    );
}

#[test]
fn imports_stop_at_depth_five() {
    let root = tempfile::tempdir().unwrap();
    write(&root.path().join("CLAUDE.md"), "@d1.md");
    for depth in 1..=7 {
        write(
            &root.path().join(format!("d{depth}.md")),
            &format!("level {depth} @d{}.md", depth + 1),
        );
    }
    let set = InstructionSet::load(root.path(), None, &ImportScope::default());
    assert_eq!(
        set.files.len(),
        6,
        "the root file and five levels of imports"
    );
}

#[test]
fn caps_cut_large_files_and_say_so() {
    let root = tempfile::tempdir().unwrap();
    write(
        &root.path().join("CLAUDE.md"),
        &"a".repeat(PER_FILE_CAP + 500),
    );
    let set = InstructionSet::load(root.path(), None, &ImportScope::default());
    let text = &set.files[0].text;
    assert!(text.starts_with(&"a".repeat(PER_FILE_CAP)));
    assert!(text.ends_with(&format!(
        "[cut: this file has {} characters; only the first {PER_FILE_CAP} are included because one instruction file is limited to {PER_FILE_CAP} characters]",
        PER_FILE_CAP + 500
    )));

    let many = tempfile::tempdir().unwrap();
    for (index, name) in ["CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"]
        .iter()
        .enumerate()
    {
        let letter = ["x", "y", "z"][index];
        write(&many.path().join(name), &letter.repeat(PER_FILE_CAP));
    }
    let set = InstructionSet::load(many.path(), None, &ImportScope::default());
    let kept = |text: &str| text.split("\n\n[cut:").next().unwrap().chars().count();
    let total: usize = set.files.iter().map(|file| kept(&file.text)).sum();
    assert_eq!(total, TOTAL_CAP);
    assert!(
        set.files[2]
            .text
            .contains("all instruction files together are limited")
    );
}

#[test]
fn a_changed_file_is_read_again_before_the_next_request() {
    let root = tempfile::tempdir().unwrap();
    write(&root.path().join("CLAUDE.md"), "version one");
    let builder = PromptBuilder::new(PromptOptions {
        cwd: root.path().to_path_buf(),
        model: "claude-sonnet-4-5".into(),
        ..PromptOptions::default()
    });
    let first = builder.system_prompt();
    assert!(first.dynamic_part.contains("version one"));
    // A new file appears and the old one changes (different length, so a new stamp even on
    // filesystems with coarse timestamps).
    write(&root.path().join("CLAUDE.md"), "version two, longer");
    write(&root.path().join("AGENTS.md"), "agents file");
    let second = builder.system_prompt();
    assert!(
        second.dynamic_part.contains("version two, longer"),
        "{}",
        second.dynamic_part
    );
    assert!(second.dynamic_part.contains("agents file"));
    assert_eq!(first.static_part, second.static_part);
}

#[test]
fn system_prompt_flags_replace_or_extend_the_static_part_only() {
    let root = tempfile::tempdir().unwrap();
    let replaced = PromptBuilder::new(PromptOptions {
        cwd: root.path().to_path_buf(),
        model: "m".into(),
        system_prompt: Some("You are a pirate.".into()),
        append_system_prompt: Some("Answer in French.".into()),
        ..PromptOptions::default()
    })
    .system_prompt();
    assert_eq!(
        replaced.static_part,
        "You are a pirate.\n\nAnswer in French."
    );
    assert!(replaced.dynamic_part.starts_with("# Environment\n"));
    assert!(
        replaced
            .dynamic_part
            .contains(&format!("Working directory: {}", root.path().display()))
    );
}
