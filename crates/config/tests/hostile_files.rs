//! Settings files a hostile repository may plant: a FIFO (which would hang a plain read), a
//! link to `/dev/zero` (which would fill the memory), a huge file. Each is refused at once
//! with an error naming the file; a link to a real settings file still works.

#![cfg(unix)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use cairn_config::{MAX_SETTINGS_BYTES, PermissionMode, SettingsLoader};
use pretty_assertions::assert_eq;

/// A home and a project with a `.claude` directory, and the project settings file's path.
fn project() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::create_dir(project.path().join(".claude")).unwrap();
    let file = project.path().join(".claude/settings.json");
    (home, project, file)
}

fn load_error(home: &Path, project: &Path) -> String {
    match SettingsLoader::new(home, project).load() {
        Ok(_) => panic!("the settings should have been refused"),
        Err(error) => error.to_string(),
    }
}

#[test]
fn a_fifo_is_refused_at_once_not_waited_on() {
    let (home, project, file) = project();
    let made = Command::new("mkfifo").arg(&file).status().unwrap();
    assert!(made.success());
    assert_eq!(
        load_error(home.path(), project.path()),
        format!(
            "{}: not read as a settings file: it is a FIFO, not a regular file",
            file.display()
        )
    );
}

#[test]
fn a_link_to_a_device_is_refused() {
    let (home, project, file) = project();
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap();
    assert_eq!(
        load_error(home.path(), project.path()),
        format!(
            "{}: not read as a settings file: it is a device, not a regular file",
            file.display()
        )
    );
}

#[test]
fn a_file_over_the_cap_is_refused() {
    let (home, project, file) = project();
    let padding = " ".repeat(usize::try_from(MAX_SETTINGS_BYTES).unwrap());
    std::fs::write(&file, format!("{{{padding}}}")).unwrap();
    assert_eq!(
        load_error(home.path(), project.path()),
        format!(
            "{}: not read as a settings file: it is larger than 16777216 bytes, more than a \
             file of this kind ever needs",
            file.display()
        )
    );
}

#[test]
fn a_link_to_a_regular_settings_file_is_read() {
    let (home, project, file) = project();
    let real = project.path().join("shared-settings.json");
    std::fs::write(&real, r#"{"permissions": {"defaultMode": "plan"}}"#).unwrap();
    std::os::unix::fs::symlink(&real, &file).unwrap();
    let loaded = SettingsLoader::new(home.path(), project.path())
        .load()
        .unwrap();
    assert_eq!(
        loaded.settings().permissions.default_mode,
        Some(PermissionMode::Plan)
    );
}
