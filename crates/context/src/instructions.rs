//! Instruction files: what the user and the project tell the model, Claude Code's way.
//!
//! Discovery: `~/.claude/CLAUDE.md` first, then every directory from the filesystem root down
//! to the working directory, each contributing `CLAUDE.md`, `CLAUDE.local.md`,
//! `.claude/CLAUDE.md`, `.claude/instructions.md`, `AGENTS.md` and `.claude/rules/*.md`
//! (by name). Nearer files come later, so they win where they disagree. A line's `@path`
//! imports another file (relative to the importing file, `~/` for home), up to
//! [`MAX_IMPORT_DEPTH`] deep; cycles and repeats are skipped, and `@` inside code is not an
//! import. Three protections keep the prompt in bounds: a per-file cap, a total cap, and
//! identical content loaded once; every cut says so in the text. A file that is not a regular
//! file (a FIFO, a link to a device, a directory) is skipped with a warning
//! ([`InstructionSet::unread`]), and no file is read past what the cap can keep.
//!
//! Imports are what a repository could use to send the user's secrets to the model: a
//! `CLAUDE.md` with `@~/.ssh/id_rsa` would put the key into the system prompt. So an import
//! whose real path (symlinks followed) lies outside the workspace ([`ImportScope`]) and outside
//! `~/.claude/` is an *external import*, included only when the user approved it
//! ([`ExternalApproval`]); the others are skipped and listed in [`InstructionSet::external`]
//! for the faces to tell the user. An instruction file that is itself a symlink leading out of
//! its directory counts the same way. What `~/.claude/CLAUDE.md` imports is the user's own
//! choice and needs no approval, as in Claude Code.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use cairn_config::Rest;

use crate::project_file::{TextStart, UnreadFile, read_text_start};

/// A file's text beyond this many characters is cut.
pub const PER_FILE_CAP: usize = 40_000;
/// The most of one file read: enough for [`PER_FILE_CAP`] characters of any width, so a
/// longer file is cut as it always was without being read whole.
const MAX_FILE_BYTES: u64 = PER_FILE_CAP as u64 * 4;
/// All instruction text together stays under this many characters.
pub const TOTAL_CAP: usize = 100_000;
/// How deep `@path` imports are followed.
pub const MAX_IMPORT_DEPTH: usize = 5;

/// The names looked for in each directory, in order.
const PER_DIRECTORY: &[&str] = &[
    "CLAUDE.md",
    "CLAUDE.local.md",
    ".claude/CLAUDE.md",
    ".claude/instructions.md",
    "AGENTS.md",
];

/// One loaded instruction file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionFile {
    /// Where the file is, as found (not resolved through links).
    pub path: PathBuf,
    /// The text as it goes into the prompt (after caps).
    pub text: String,
    /// The file that imported this one, if it was imported.
    pub imported_by: Option<PathBuf>,
}

/// Where `@path` imports may reach without asking, and which others the user approved.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ImportScope {
    /// Directories whose files are the project's own besides the working directory (which
    /// always is): those the user added with `--add-dir`.
    pub workspace_roots: Vec<PathBuf>,
    /// Which external imports go into the prompt.
    pub external: ExternalApproval,
}

/// Which external imports (outside the workspace and `~/.claude/`) the user approved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ExternalApproval {
    /// Only these, by their real paths (symlinks resolved); every other one is skipped.
    /// Empty: none, the default.
    Only(BTreeSet<PathBuf>),
    /// Every one: the user allowed them for this run, or for the project as a whole.
    All,
}

impl Default for ExternalApproval {
    fn default() -> Self {
        ExternalApproval::Only(BTreeSet::new())
    }
}

impl ExternalApproval {
    /// Whether the external file at `path` (its real path) may be included.
    pub fn approves(&self, path: &Path) -> bool {
        match self {
            ExternalApproval::Only(paths) => paths.contains(path),
            ExternalApproval::All => true,
        }
    }
}

/// A file from outside the project that an instruction file reaches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExternalImport {
    /// Where it really is, symlinks resolved: what an approval names.
    pub path: PathBuf,
    /// The importing file, or the symlink (see [`Reach`]).
    pub by: PathBuf,
    /// How it is reached.
    pub reach: Reach,
    /// Whether it went into the prompt.
    pub status: ImportStatus,
}

/// How an instruction file reaches an external one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// A `@path` import in `by`.
    Import,
    /// `by` is an instruction file that is a symlink to it.
    Symlink,
}

/// Whether an external file went into the prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImportStatus {
    /// Approved: it is in the prompt.
    Included,
    /// Not approved: left out.
    Skipped,
}

impl fmt::Display for ExternalImport {
    /// `/home/me/.ssh/id_rsa (imported by /work/app/CLAUDE.md)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let how = match self.reach {
            Reach::Import => "imported by",
            Reach::Symlink => "linked from",
        };
        write!(f, "{} ({how} {})", self.path.display(), self.by.display())
    }
}

/// Every instruction file of a session, and what is needed to notice a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionSet {
    /// The files in the order the prompt carries them, each import after its importer.
    pub files: Vec<InstructionFile>,
    /// The external files reached, included or skipped, in the order they were met.
    pub external: Vec<ExternalImport>,
    /// The instruction files that could not be read (a FIFO, a device, a directory, not
    /// UTF-8), each once: warnings for the user.
    pub unread: Vec<UnreadFile>,
    /// Each path looked at (found or not) with its modification time then.
    watched: Vec<(PathBuf, Option<SystemTime>)>,
}

impl InstructionSet {
    /// Discovers and loads the instruction files for `cwd`, with `home` for `~`; imports
    /// reaching outside `cwd`, `scope`'s roots and `~/.claude/` need `scope`'s approval.
    pub fn load(cwd: &Path, home: Option<&Path>, scope: &ImportScope) -> Self {
        let workspace = std::iter::once(cwd)
            .chain(scope.workspace_roots.iter().map(PathBuf::as_path))
            .filter_map(|root| cwd.join(root).canonicalize().ok())
            .collect();
        let mut loader = Loader {
            workspace,
            user_claude_dir: home.and_then(|home| home.join(".claude").canonicalize().ok()),
            approval: scope.external.clone(),
            ..Loader::default()
        };
        if let Some(home) = home {
            loader.consider(
                &home.join(".claude").join("CLAUDE.md"),
                home,
                Reached::UserFile,
                0,
            );
        }
        let mut directories: Vec<&Path> = cwd.ancestors().collect();
        directories.reverse();
        for directory in directories {
            let found = Reached::Found { directory };
            for name in PER_DIRECTORY {
                loader.consider(&directory.join(name), home.unwrap_or(directory), found, 0);
            }
            let rules_dir = directory.join(".claude").join("rules");
            loader.watch(&rules_dir);
            let mut rules: Vec<PathBuf> = std::fs::read_dir(&rules_dir)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
                .collect();
            rules.sort();
            for rule in rules {
                loader.consider(&rule, home.unwrap_or(directory), found, 0);
            }
        }
        InstructionSet {
            files: loader.files,
            external: loader.external,
            unread: loader.unread,
            watched: loader.watched,
        }
    }

    /// The external files `cwd`'s instruction files would bring in that `scope` does not
    /// approve yet, imports of imports included: what the user is asked about, so that one
    /// answer covers them all.
    pub fn unapproved_imports(
        cwd: &Path,
        home: Option<&Path>,
        scope: &ImportScope,
    ) -> Vec<ExternalImport> {
        let everything = ImportScope {
            external: ExternalApproval::All,
            ..scope.clone()
        };
        InstructionSet::load(cwd, home, &everything)
            .external
            .into_iter()
            .filter(|import| !scope.external.approves(&import.path))
            .map(|import| ExternalImport {
                status: ImportStatus::Skipped,
                ..import
            })
            .collect()
    }

    /// The external files left out for want of approval.
    pub fn skipped_imports(&self) -> impl Iterator<Item = &ExternalImport> {
        self.external
            .iter()
            .filter(|import| import.status == ImportStatus::Skipped)
    }

    /// Whether any file was added, changed or removed since loading.
    pub fn is_stale(&self) -> bool {
        self.watched
            .iter()
            .any(|(path, modified)| modified_time(path) != *modified)
    }

    /// The section for the prompt; empty when there are no files.
    pub fn render(&self) -> String {
        if self.files.is_empty() {
            return String::new();
        }
        let mut text = String::from(
            "# Instructions\nThe user and the project keep these instructions for you. Follow \
             them; they override your defaults. Files later in the list are nearer to the \
             working directory and win where they disagree.\n",
        );
        for file in &self.files {
            let origin = match &file.imported_by {
                Some(parent) => format!(" (imported by {})", parent.display()),
                None => String::new(),
            };
            text.push_str(&format!(
                "\nContents of {}{origin}:\n\n{}\n",
                file.path.display(),
                file.text.trim_end()
            ));
        }
        text.trim_end().to_string()
    }
}

fn modified_time(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path)
        .and_then(|meta| meta.modified())
        .ok()
}

/// How the loader came to a file.
#[derive(Debug, Clone, Copy)]
enum Reached<'a> {
    /// `~/.claude/CLAUDE.md`.
    UserFile,
    /// An instruction file found in `directory` (from the root down to the working directory).
    Found { directory: &'a Path },
    /// A `@path` import in `by`, a file `origin` chose.
    Import { by: &'a Path, origin: Origin },
}

/// Who chose a file: the user's own choices need no approval to reach outside the project.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Origin {
    /// `~/.claude/CLAUDE.md` and the files outside the workspace it imports.
    User,
    /// Everything else: what a repository could have written.
    Project,
}

#[derive(Debug, Default)]
struct Loader {
    files: Vec<InstructionFile>,
    external: Vec<ExternalImport>,
    unread: Vec<UnreadFile>,
    watched: Vec<(PathBuf, Option<SystemTime>)>,
    seen_paths: HashSet<PathBuf>,
    seen_contents: HashSet<String>,
    total_chars: usize,
    /// The working directory and the other workspace roots, symlinks resolved.
    workspace: Vec<PathBuf>,
    /// `~/.claude`, symlinks resolved.
    user_claude_dir: Option<PathBuf>,
    approval: ExternalApproval,
}

impl Loader {
    fn watch(&mut self, path: &Path) {
        self.watched.push((path.to_path_buf(), modified_time(path)));
    }

    fn in_workspace(&self, canonical: &Path) -> bool {
        self.workspace
            .iter()
            .any(|root| canonical.starts_with(root))
    }

    /// Who chose the file at `canonical`, and how it reaches outside the project when it does
    /// so without the user's say.
    fn judge(&self, canonical: &Path, reached: Reached<'_>) -> (Origin, Option<Reach>) {
        let trusted = self.in_workspace(canonical)
            || self
                .user_claude_dir
                .as_ref()
                .is_some_and(|dir| canonical.starts_with(dir));
        match reached {
            Reached::UserFile => (Origin::User, None),
            Reached::Import {
                origin: Origin::User,
                ..
            } if !self.in_workspace(canonical) => (Origin::User, None),
            Reached::Import { .. } => (Origin::Project, (!trusted).then_some(Reach::Import)),
            Reached::Found { directory } => {
                // A file outside the workspace found in its own directory (a parent's
                // CLAUDE.md) loads as always; a symlink out of its directory is an import.
                let in_its_directory = directory
                    .canonicalize()
                    .is_ok_and(|directory| canonical.starts_with(directory));
                let outside = !trusted && !in_its_directory;
                (Origin::Project, outside.then_some(Reach::Symlink))
            }
        }
    }

    /// Loads `path` if it exists and was not loaded before, then its imports. An external
    /// file is loaded only when approved, and recorded either way.
    fn consider(&mut self, path: &Path, home: &Path, reached: Reached<'_>, depth: usize) {
        let imported_by = match reached {
            Reached::Import { by, .. } => Some(by),
            Reached::UserFile | Reached::Found { .. } => None,
        };
        if imported_by.is_none() {
            self.watch(path);
        }
        let Ok(canonical) = path.canonicalize() else {
            return;
        };
        if self.seen_paths.contains(&canonical) {
            return;
        }
        // Read through the name found (a link is followed): a FIFO, a device or a directory
        // there is skipped with a warning naming it, and a huge file costs only its start.
        let raw = match read_text_start(path, MAX_FILE_BYTES) {
            Ok(Some(raw)) => raw,
            Ok(None) => return,
            Err(unread) => {
                if !self.unread.contains(&unread) {
                    self.unread.push(unread);
                }
                return;
            }
        };
        let (origin, outside) = self.judge(&canonical, reached);
        if let Some(reach) = outside {
            let by = imported_by.unwrap_or(path).to_path_buf();
            let status = if self.approval.approves(&canonical) {
                ImportStatus::Included
            } else {
                ImportStatus::Skipped
            };
            let record = ExternalImport {
                path: canonical.clone(),
                by,
                reach,
                status,
            };
            if !self.external.contains(&record) {
                self.external.push(record);
            }
            if status == ImportStatus::Skipped {
                return;
            }
        }
        self.seen_paths.insert(canonical.clone());
        if imported_by.is_some() {
            self.watch(path);
        }
        let TextStart { text: raw, rest } = raw;
        if raw.trim().is_empty() || !self.seen_contents.insert(raw.trim().to_string()) {
            return;
        }
        let imports = if depth < MAX_IMPORT_DEPTH {
            find_imports(&raw)
        } else {
            Vec::new()
        };
        let text = self.capped(&raw, rest);
        self.files.push(InstructionFile {
            path: path.to_path_buf(),
            text,
            imported_by: imported_by.map(Path::to_path_buf),
        });
        let base = path.parent().unwrap_or(Path::new("/"));
        for import in imports {
            let target = match import.strip_prefix("~/") {
                Some(rest) => home.join(rest),
                None => base.join(&import),
            };
            let reached = Reached::Import { by: path, origin };
            self.consider(&target, home, reached, depth + 1);
        }
    }

    /// `raw` (the start of a file, all of it unless `rest` says otherwise) within the per-file
    /// cap and what is left of the total, with a note when cut.
    fn capped(&mut self, raw: &str, rest: Rest) -> String {
        let length = raw.chars().count();
        let allowed = PER_FILE_CAP.min(TOTAL_CAP.saturating_sub(self.total_chars));
        let size = match rest {
            Rest::None if length <= allowed => {
                self.total_chars += length;
                return raw.to_string();
            }
            Rest::None => format!("{length} characters"),
            // Only the start was read: at least PER_FILE_CAP characters, so it is cut anyway.
            Rest::More { size } => format!("{size} bytes"),
        };
        let kept: String = raw.chars().take(allowed).collect();
        self.total_chars += allowed;
        let reason = if allowed < PER_FILE_CAP {
            format!("all instruction files together are limited to {TOTAL_CAP} characters")
        } else {
            format!("one instruction file is limited to {PER_FILE_CAP} characters")
        };
        format!(
            "{kept}\n\n[cut: this file has {size}; only the first {allowed} are included because {reason}]"
        )
    }
}

/// The `@path` imports of a Markdown text, in order: an `@` at the start of a word, outside
/// fenced code blocks and inline code spans, followed by a path.
pub fn find_imports(text: &str) -> Vec<String> {
    let mut imports = Vec::new();
    let mut fence: Option<&str> = None;
    for line in text.lines() {
        let trimmed = line.trim_start();
        for marker in ["```", "~~~"] {
            if trimmed.starts_with(marker) {
                fence = match fence {
                    Some(open) if open == marker => None,
                    Some(open) => Some(open),
                    None => Some(marker),
                };
            }
        }
        if fence.is_some() || trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            continue;
        }
        let mut in_code = false;
        let mut previous = ' ';
        let chars: Vec<char> = line.chars().collect();
        let mut index = 0;
        while index < chars.len() {
            let c = chars[index];
            if c == '`' {
                in_code = !in_code;
            } else if c == '@' && !in_code && previous.is_whitespace() {
                let path: String = chars[index + 1..]
                    .iter()
                    .take_while(|c| !c.is_whitespace() && **c != '`')
                    .collect();
                let path = path.trim_end_matches(['.', ',', ';', ':', ')', '!', '?']);
                if looks_like_path(path) {
                    imports.push(path.to_string());
                }
                index += path.chars().count();
            }
            previous = c;
            index += 1;
        }
    }
    imports
}

fn looks_like_path(candidate: &str) -> bool {
    !candidate.is_empty()
        && candidate
            .chars()
            .all(|c| c.is_alphanumeric() || "._-/~+".contains(c))
        && (candidate.contains('/') || candidate.contains('.'))
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn imports_skip_code_emails_and_punctuation() {
        let text = "See @docs/style.md and @~/notes.md.\n\
                    Mail me at someone@example.com.\n\
                    `@not/this.md` is code.\n\
                    ```\n@inside/fence.md\n```\n\
                    Also @./local.md, done.";
        assert_eq!(
            find_imports(text),
            vec!["docs/style.md", "~/notes.md", "./local.md"]
        );
    }
}
