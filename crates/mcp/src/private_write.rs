//! cairn's own files under `~/.cairn` (manifests, tokens): in a 0700 directory, 0600 each,
//! replaced whole — a temp file renamed over the old one — so a reader never sees half of one.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` whole, creating its directory (0700) first.
pub(crate) fn replace_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    // Two writers in one process (two servers' refreshes) never share a temp file.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    cairn_protocol::private_dir_builder().create(dir)?;
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let temp = dir.join(format!(".{name}.{}.{n}.tmp", std::process::id()));
    let mut file = cairn_protocol::private_file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&temp)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    std::fs::rename(&temp, path)
}
