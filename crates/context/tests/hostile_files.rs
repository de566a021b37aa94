//! A hostile repository's instruction and command files: a FIFO (opening one waits for a
//! writer), a link to `/dev/zero` (endless), a directory where a file belongs, a huge file.
//! Each load must end at once, skip what it cannot read with a warning naming the file, and
//! keep everything else.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::mpsc;
use std::time::Duration;

use cairn_context::UnreadFile;
use cairn_context::commands::{CommandScope, load_commands};
use cairn_context::instructions::{ImportScope, InstructionSet, PER_FILE_CAP};
use pretty_assertions::assert_eq;

/// Far longer than any load takes; a hang fails the test instead of stalling the suite.
const DEADLINE: Duration = Duration::from_secs(20);

/// Runs `load` on its own thread and waits for its answer, at most [`DEADLINE`].
fn within_deadline<T: Send + 'static>(load: impl FnOnce() -> T + Send + 'static) -> T {
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = sender.send(load());
    });
    match receiver.recv_timeout(DEADLINE) {
        Ok(value) => value,
        Err(error) => panic!("the load did not finish within {DEADLINE:?}: {error}"),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let status = Command::new("mkfifo").arg(path).status().unwrap();
    assert!(status.success(), "mkfifo {}", path.display());
}

fn link_to_dev_zero(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::os::unix::fs::symlink("/dev/zero", path).unwrap();
}

fn unread(path: PathBuf, reason: &str) -> UnreadFile {
    UnreadFile {
        path,
        reason: reason.to_owned(),
    }
}

/// The instruction files of `project` (no home), loaded within the deadline: each file's
/// path and text, and the warnings.
fn load_instructions(project: &Path) -> (Vec<(PathBuf, String)>, Vec<UnreadFile>) {
    let project = project.to_path_buf();
    let set =
        within_deadline(move || InstructionSet::load(&project, None, &ImportScope::default()));
    let files = set
        .files
        .iter()
        .map(|file| (file.path.clone(), file.text.clone()))
        .collect();
    (files, set.unread)
}

#[test]
fn a_fifo_named_claude_md_is_skipped_with_a_warning() {
    let project = tempfile::tempdir().unwrap();
    mkfifo(&project.path().join("CLAUDE.md"));
    write(&project.path().join("AGENTS.md"), "Use tabs.");

    let (files, warnings) = load_instructions(project.path());

    assert_eq!(
        files,
        vec![(project.path().join("AGENTS.md"), "Use tabs.".to_owned())]
    );
    assert_eq!(
        warnings,
        vec![unread(
            project.path().join("CLAUDE.md"),
            "it is a FIFO, not a regular file"
        )]
    );
    assert_eq!(
        warnings[0].to_string(),
        format!(
            "{} was skipped: it is a FIFO, not a regular file",
            project.path().join("CLAUDE.md").display()
        )
    );
}

#[test]
fn a_rule_file_linked_to_dev_zero_is_skipped_with_a_warning() {
    let project = tempfile::tempdir().unwrap();
    let rules = project.path().join(".claude/rules");
    link_to_dev_zero(&rules.join("endless.md"));
    write(&rules.join("style.md"), "Short functions.");

    let (files, warnings) = load_instructions(project.path());

    assert_eq!(
        files,
        vec![(rules.join("style.md"), "Short functions.".to_owned())]
    );
    assert_eq!(
        warnings,
        vec![unread(
            rules.join("endless.md"),
            "it is a device, not a regular file"
        )]
    );
}

#[test]
fn an_import_that_is_a_fifo_is_skipped_and_its_importer_kept() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join("CLAUDE.md"),
        "Read @docs/notes.md first.",
    );
    mkfifo(&project.path().join("docs/notes.md"));

    let (files, warnings) = load_instructions(project.path());

    assert_eq!(
        files,
        vec![(
            project.path().join("CLAUDE.md"),
            "Read @docs/notes.md first.".to_owned()
        )]
    );
    assert_eq!(
        warnings,
        vec![unread(
            project.path().join("docs/notes.md"),
            "it is a FIFO, not a regular file"
        )]
    );
}

#[test]
fn a_directory_named_claude_md_is_skipped_with_a_warning() {
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join("CLAUDE.md")).unwrap();
    write(&project.path().join("CLAUDE.local.md"), "Local notes.");

    let (files, warnings) = load_instructions(project.path());

    assert_eq!(
        files,
        vec![(
            project.path().join("CLAUDE.local.md"),
            "Local notes.".to_owned()
        )]
    );
    assert_eq!(
        warnings,
        vec![unread(
            project.path().join("CLAUDE.md"),
            "it is a directory, not a regular file"
        )]
    );
}

#[test]
fn a_huge_instruction_file_is_cut_from_its_start_without_reading_it_whole() {
    let project = tempfile::tempdir().unwrap();
    let size: u64 = 64 * 1024 * 1024;
    let file = std::fs::File::create(project.path().join("CLAUDE.md")).unwrap();
    // Sparse: 64 MB of NUL bytes on disk for free, which a whole read would hold in memory.
    std::io::Write::write_all(&mut &file, "Be brief. ".repeat(5000).as_bytes()).unwrap();
    file.set_len(size).unwrap();

    let (files, warnings) = load_instructions(project.path());

    assert_eq!(warnings, vec![]);
    let kept: String = "Be brief. "
        .repeat(5000)
        .chars()
        .take(PER_FILE_CAP)
        .collect();
    assert_eq!(
        files,
        vec![(
            project.path().join("CLAUDE.md"),
            format!(
                "{kept}\n\n[cut: this file has {size} bytes; only the first {PER_FILE_CAP} are \
                 included because one instruction file is limited to {PER_FILE_CAP} characters]"
            )
        )]
    );
}

#[test]
fn command_files_that_are_a_link_to_dev_zero_or_a_fifo_are_skipped_with_warnings() {
    let project = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let commands = project.path().join(".claude/commands");
    link_to_dev_zero(&commands.join("endless.md"));
    mkfifo(&commands.join("git/stuck.md"));
    write(&commands.join("review.md"), "Review $ARGUMENTS");
    let too_large = home.path().join(".claude/commands/large.md");
    write(&too_large, &"x".repeat(2 * 1024 * 1024));

    let (project_dir, home_dir) = (project.path().to_owned(), home.path().to_owned());
    let set = within_deadline(move || load_commands(&project_dir, Some(&home_dir)));

    let names: Vec<(&str, CommandScope, &str)> = set
        .commands
        .iter()
        .map(|command| {
            (
                command.name.as_str(),
                command.scope,
                command.template.as_str(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![("review", CommandScope::Project, "Review $ARGUMENTS")]
    );
    // The user's commands are read first; a directory's entries in no set order.
    let mut warnings = set.unread.clone();
    warnings[1..].sort_by(|a, b| a.path.cmp(&b.path));
    assert_eq!(
        warnings,
        vec![
            unread(
                too_large,
                "it is larger than 1048576 bytes, more than a file of this kind ever needs"
            ),
            unread(
                commands.join("endless.md"),
                "it is a device, not a regular file"
            ),
            unread(
                commands.join("git/stuck.md"),
                "it is a FIFO, not a regular file"
            ),
        ]
    );
}

#[test]
fn a_command_inlining_a_fifo_says_so_instead_of_hanging() {
    let project = tempfile::tempdir().unwrap();
    write(
        &project.path().join(".claude/commands/show.md"),
        "Look at @pipe and @notes.txt",
    );
    mkfifo(&project.path().join("pipe"));
    write(&project.path().join("notes.txt"), "the notes");

    let project_dir = project.path().to_owned();
    let expanded = within_deadline(move || {
        let set = load_commands(&project_dir, None);
        set.commands[0].expand("", &project_dir)
    });

    assert_eq!(
        expanded,
        "Look at @pipe (it is a FIFO, not a regular file) and \nContents of notes.txt:\n```\nthe notes\n```\n"
    );
}

#[test]
fn a_commands_directory_linking_to_itself_ends() {
    let project = tempfile::tempdir().unwrap();
    let commands = project.path().join(".claude/commands");
    write(&commands.join("deploy.md"), "Deploy.");
    std::os::unix::fs::symlink(&commands, commands.join("again")).unwrap();

    let project_dir = project.path().to_owned();
    let set = within_deadline(move || load_commands(&project_dir, None));

    let names: Vec<&str> = set.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, vec!["deploy"]);
    assert_eq!(set.unread, vec![]);
}
