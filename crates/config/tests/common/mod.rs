//! A temporary home and project directory per test; the real HOME is never read.

#![allow(dead_code, reason = "each test file uses a different part of this")]

use std::fs;
use std::path::{Path, PathBuf};

use cairn_config::{SettingsLoader, Source};
use tempfile::TempDir;

pub struct Dirs {
    pub home: TempDir,
    pub project: TempDir,
}

impl Dirs {
    pub fn new() -> Self {
        Dirs {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        }
    }

    pub fn loader(&self) -> SettingsLoader {
        SettingsLoader::new(self.home.path(), self.project.path())
    }

    /// Writes `~/.claude.json`.
    pub fn user_legacy(&self, text: &str) -> Source {
        Source::UserLegacy(write(self.home.path(), ".claude.json", text))
    }

    /// Writes `~/.claude/settings.json`.
    pub fn user(&self, text: &str) -> Source {
        Source::User(write(self.home.path(), ".claude/settings.json", text))
    }

    /// Writes `<project>/.claude.json`.
    pub fn project_legacy(&self, text: &str) -> Source {
        Source::ProjectLegacy(write(self.project.path(), ".claude.json", text))
    }

    /// Writes `<project>/.claude/settings.json`.
    pub fn project(&self, text: &str) -> Source {
        Source::Project(write(self.project.path(), ".claude/settings.json", text))
    }

    /// Writes `<project>/.claude/settings.local.json`.
    pub fn local(&self, text: &str) -> Source {
        Source::ProjectLocal(write(
            self.project.path(),
            ".claude/settings.local.json",
            text,
        ))
    }
}

pub fn write(dir: &Path, relative: &str, text: &str) -> PathBuf {
    let path = dir.join(relative);
    if let Some(parent) = path.parent() {
        fs::create_dir_all(parent).unwrap();
    }
    fs::write(&path, text).unwrap();
    path
}
