//! Files a sandboxed command may not create although they lie in a writable directory
//! ([`CommandSandbox::guarded_files`]): the sandbox mounts existing protected files read-only,
//! but cannot mount one that does not exist yet, so one a command created is removed when the
//! command ends, foreground or background.

use std::path::PathBuf;

use crate::CommandSandbox;

/// The sandbox's guarded files that do not exist before a command runs.
pub(super) fn absent_guarded_files(sandbox: Option<&CommandSandbox>) -> Vec<PathBuf> {
    sandbox
        .into_iter()
        .flat_map(|sandbox| &sandbox.guarded_files)
        .filter(|path| std::fs::symlink_metadata(path).is_err())
        .cloned()
        .collect()
}

/// Removes the guarded files a command created, and says so.
pub(super) fn remove_created(absent: &[PathBuf]) -> Option<String> {
    let created: Vec<String> = absent
        .iter()
        .filter(|path| {
            std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_dir())
                && std::fs::remove_file(path).is_ok()
        })
        .map(|path| path.display().to_string())
        .collect();
    (!created.is_empty()).then(|| {
        format!(
            "The sandbox removed {}: commands may not create the files that decide which \
             programs cairn starts. Write it with the Write tool, which asks the user.",
            created.join(", ")
        )
    })
}
