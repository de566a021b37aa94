//! Where a run's memory lives, and whether it has one: the directory from the settings (or
//! `<cairn home>/projects/<project>/memory`), its index for the system prompt, and recall.

use std::path::{Path, PathBuf};

use cairn_config::LoadedSettings;
use cairn_context::memory::{MemorySettings, memory_prompt};

/// The memory of a run that has one.
#[derive(Debug, Clone)]
pub struct RunMemory {
    pub directory: PathBuf,
    /// The index and the instructions for the system prompt.
    pub prompt: String,
}

/// The run's memory, or `None` when the settings turn it off (`autoMemoryEnabled: false`),
/// and what the user should hear (settings that were ignored, an index that could not be
/// read).
pub fn run_memory(settings: &LoadedSettings, cwd: &Path) -> (Option<RunMemory>, Vec<String>) {
    let Ok(cairn_home) = crate::session::cairn_home() else {
        return (None, Vec::new());
    };
    let default = cairn_session::SessionStore::new(cairn_home)
        .project_dir(cwd)
        .join("memory");
    let home = std::env::home_dir();
    let chosen = MemorySettings::from_settings(settings, default, home.as_deref());
    let mut warnings: Vec<String> = chosen.warnings.iter().map(ToString::to_string).collect();
    let Some(directory) = chosen.directory else {
        return (None, warnings);
    };
    let prompt = memory_prompt(&directory);
    if let Some(unread) = &prompt.unread {
        warnings.push(unread.to_string());
    }
    (
        Some(RunMemory {
            directory,
            prompt: prompt.text,
        }),
        warnings,
    )
}
