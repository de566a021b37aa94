//! How cairn creates its own state under `~/.cairn` (sessions, spilled results, history,
//! approvals, process-group records): directories only the user can enter (0700), files only
//! the user can read (0600). Builders only: nothing here touches the disk.

use std::fs::{DirBuilder, OpenOptions};

/// A builder of directories, missing parents included, only the user can enter.
pub fn private_dir_builder() -> DirBuilder {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
}

/// Open options whose newly created file only the user can read; the caller says how it is
/// opened (`append`, `truncate`, `create_new`…).
pub fn private_file_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options
}
