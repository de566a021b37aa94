//! Instruction files: what the user and the project tell the model, Claude Code's way.
//!
//! Discovery: `~/.claude/CLAUDE.md` first, then every directory from the filesystem root down
//! to the working directory, each contributing `CLAUDE.md`, `CLAUDE.local.md`,
//! `.claude/CLAUDE.md`, `.claude/instructions.md`, `AGENTS.md` and `.claude/rules/*.md`
//! (by name). Nearer files come later, so they win where they disagree. A line's `@path`
//! imports another file (relative to the importing file, `~/` for home), up to
//! [`MAX_IMPORT_DEPTH`] deep; cycles and repeats are skipped, and `@` inside code is not an
//! import. Three protections keep the prompt in bounds: a per-file cap, a total cap, and
//! identical content loaded once; every cut says so in the text.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A file's text beyond this many characters is cut.
pub const PER_FILE_CAP: usize = 40_000;
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
    pub path: PathBuf,
    /// The text as it goes into the prompt (after caps).
    pub text: String,
    /// The file that imported this one, if it was imported.
    pub imported_by: Option<PathBuf>,
}

/// Every instruction file of a session, and what is needed to notice a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionSet {
    pub files: Vec<InstructionFile>,
    /// Each path looked at (found or not) with its modification time then.
    watched: Vec<(PathBuf, Option<SystemTime>)>,
}

impl InstructionSet {
    /// Discovers and loads the instruction files for `cwd`, with `home` for `~`.
    pub fn load(cwd: &Path, home: Option<&Path>) -> Self {
        let mut loader = Loader::default();
        if let Some(home) = home {
            loader.consider(&home.join(".claude").join("CLAUDE.md"), home, None, 0);
        }
        let mut directories: Vec<&Path> = cwd.ancestors().collect();
        directories.reverse();
        for directory in directories {
            for name in PER_DIRECTORY {
                loader.consider(&directory.join(name), home.unwrap_or(directory), None, 0);
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
                loader.consider(&rule, home.unwrap_or(directory), None, 0);
            }
        }
        InstructionSet {
            files: loader.files,
            watched: loader.watched,
        }
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

#[derive(Debug, Default)]
struct Loader {
    files: Vec<InstructionFile>,
    watched: Vec<(PathBuf, Option<SystemTime>)>,
    seen_paths: HashSet<PathBuf>,
    seen_contents: HashSet<String>,
    total_chars: usize,
}

impl Loader {
    fn watch(&mut self, path: &Path) {
        self.watched.push((path.to_path_buf(), modified_time(path)));
    }

    /// Loads `path` if it exists and was not loaded before, then its imports.
    fn consider(&mut self, path: &Path, home: &Path, imported_by: Option<&Path>, depth: usize) {
        if imported_by.is_none() {
            self.watch(path);
        }
        let Ok(canonical) = path.canonicalize() else {
            return;
        };
        if !canonical.is_file() || !self.seen_paths.insert(canonical.clone()) {
            return;
        }
        if imported_by.is_some() {
            self.watch(path);
        }
        let Ok(raw) = std::fs::read_to_string(&canonical) else {
            return;
        };
        if raw.trim().is_empty() || !self.seen_contents.insert(raw.trim().to_string()) {
            return;
        }
        let imports = if depth < MAX_IMPORT_DEPTH {
            find_imports(&raw)
        } else {
            Vec::new()
        };
        let text = self.capped(&raw);
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
            self.consider(&target, home, Some(path), depth + 1);
        }
    }

    /// `raw` within the per-file cap and what is left of the total, with a note when cut.
    fn capped(&mut self, raw: &str) -> String {
        let length = raw.chars().count();
        let allowed = PER_FILE_CAP.min(TOTAL_CAP.saturating_sub(self.total_chars));
        if length <= allowed {
            self.total_chars += length;
            return raw.to_string();
        }
        let kept: String = raw.chars().take(allowed).collect();
        self.total_chars += allowed;
        let reason = if allowed < PER_FILE_CAP {
            format!("all instruction files together are limited to {TOTAL_CAP} characters")
        } else {
            format!("one instruction file is limited to {PER_FILE_CAP} characters")
        };
        format!(
            "{kept}\n\n[cut: this file has {length} characters; only the first {allowed} are included because {reason}]"
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
