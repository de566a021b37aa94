//! Output styles (Claude Code's `outputStyle` setting): instructions that change how the model
//! talks to the user, added to the system prompt.
//!
//! A style is a Markdown file with optional front matter (`name`, `description`); its body is
//! the instructions. Styles are looked up by name in the project's `.claude/output-styles/`,
//! then the user's `~/.claude/output-styles/`, then the built-ins: `default` (cairn's own
//! manner, no extra text), `Explanatory` and `Learning`.
//!
//! ```
//! use cairn_context::output_style::OutputStyle;
//!
//! let dir = std::env::temp_dir();
//! let style = OutputStyle::find("explanatory", &dir, None).unwrap().unwrap();
//! assert_eq!(style.name, "Explanatory");
//! assert!(OutputStyle::find("default", &dir, None).unwrap().is_none());
//! assert_eq!(
//!     OutputStyle::find("Pirate", &dir, None).unwrap_err().to_string(),
//!     "the output style \"Pirate\" (outputStyle in the settings) was not found in \
//!      .claude/output-styles/ or ~/.claude/output-styles/, and is not one of default, \
//!      Explanatory, Learning: cairn's default style is used"
//! );
//! ```

use std::path::{Path, PathBuf};

use crate::UnreadFile;
use crate::commands::split_front_matter;
use crate::project_file::read_text;

/// The largest style file read.
const MAX_STYLE_BYTES: u64 = 64 * 1024;

/// The style that adds nothing.
const DEFAULT_STYLE: &str = "default";

/// The built-in styles besides `default`: name, description, instructions.
const BUILT_IN: &[(&str, &str, &str)] = &[
    (
        "Explanatory",
        "Explains the choices made while working",
        EXPLANATORY,
    ),
    (
        "Learning",
        "Leaves small pieces of code for the user to write",
        LEARNING,
    ),
];

const EXPLANATORY: &str = "\
The user wants to understand the code as well as get the work done. While you work, stop at \
the points that teach something and explain them briefly: why this approach rather than \
another, what a pattern in this codebase is for, what a change affects. Keep each explanation \
to two or three short points, tied to this code rather than general advice, and set it apart \
from the rest of your answer (a short block headed \"Insight\"). The task still comes first: \
do not let explanations delay or replace the work.";

const LEARNING: &str = "\
The user wants to learn by doing. Do the routine parts of a task yourself, but where a small \
piece of code involves a real decision (a condition, an algorithm's core, an error-handling \
choice, 2 to 10 lines), leave it for the user: prepare the surrounding code, mark the place \
with a `TODO(human)` comment, and ask them to write it, saying what it must do and what to \
weigh. Wait for them before going on, then look at what they wrote and say what works and \
what could be better. Explain your own choices briefly as you go, tied to this code.";

/// One output style, found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputStyle {
    /// Its name as the settings give it (`Explanatory`, a file's `name` or stem).
    pub name: String,
    /// What it is for, shown in listings; `None` when the file gives none.
    pub description: Option<String>,
    /// What the model is told.
    pub instructions: String,
    /// The file it came from; `None` for a built-in.
    pub path: Option<PathBuf>,
}

/// Why the style the settings name was not used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OutputStyleError {
    /// No built-in style and no style file has that name; the payload is the name.
    #[error(
        "the output style \"{0}\" (outputStyle in the settings) was not found in \
         .claude/output-styles/ or ~/.claude/output-styles/, and is not one of default, \
         Explanatory, Learning: cairn's default style is used"
    )]
    Unknown(String),
    /// The style's file exists but could not be read.
    #[error("the output style \"{name}\" could not be used: {file}")]
    Unread {
        /// The style's name.
        name: String,
        /// The file, and why it was not read.
        file: UnreadFile,
    },
}

impl OutputStyle {
    /// The style called `name` (case aside) for a session in `project`, `home` being the
    /// user's home; `Ok(None)` for `default`, which adds nothing.
    pub fn find(
        name: &str,
        project: &Path,
        home: Option<&Path>,
    ) -> Result<Option<OutputStyle>, OutputStyleError> {
        let name = name.trim();
        let dirs = std::iter::once(project.join(".claude/output-styles"))
            .chain(home.map(|home| home.join(".claude/output-styles")));
        for dir in dirs {
            if let Some(style) = find_in(&dir, name)? {
                return Ok(Some(style));
            }
        }
        if name.eq_ignore_ascii_case(DEFAULT_STYLE) {
            return Ok(None);
        }
        BUILT_IN
            .iter()
            .find(|(built_in, _, _)| built_in.eq_ignore_ascii_case(name))
            .map(|(name, description, instructions)| {
                Some(OutputStyle {
                    name: (*name).to_owned(),
                    description: Some((*description).to_owned()),
                    instructions: (*instructions).to_owned(),
                    path: None,
                })
            })
            .ok_or_else(|| OutputStyleError::Unknown(name.to_owned()))
    }

    /// The section of the system prompt that carries the style.
    pub fn prompt_text(&self) -> String {
        format!(
            "# Output style: {}\nThe user chose this style for your answers; it takes \
             precedence over the tone guidance above where they differ.\n\n{}",
            self.name,
            self.instructions.trim()
        )
    }
}

/// The style called `name` among the `*.md` files of `dir`: by its front matter's `name`, or
/// else its file name.
fn find_in(dir: &Path, name: &str) -> Result<Option<OutputStyle>, OutputStyleError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(None);
    };
    let mut paths: Vec<PathBuf> = entries
        .flatten()
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    paths.sort();
    for path in paths {
        let stem = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        let text = match read_text(&path, MAX_STYLE_BYTES) {
            Ok(Some(text)) => text,
            Ok(None) => continue,
            Err(file) if stem.eq_ignore_ascii_case(name) => {
                return Err(OutputStyleError::Unread {
                    name: name.to_owned(),
                    file,
                });
            }
            Err(_) => continue,
        };
        let (front, body) = split_front_matter(&text);
        let style_name = front.get("name").cloned().unwrap_or(stem);
        if style_name.eq_ignore_ascii_case(name) {
            return Ok(Some(OutputStyle {
                name: style_name,
                description: front.get("description").cloned(),
                instructions: body.trim().to_owned(),
                path: Some(path),
            }));
        }
    }
    Ok(None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn a_project_style_wins_over_the_users_and_is_found_by_its_front_matter_name() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let write = |root: &Path, file: &str, text: &str| {
            let dir = root.join(".claude/output-styles");
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join(file), text).unwrap();
        };
        write(
            project.path(),
            "terse.md",
            "---\nname: Very Terse\ndescription: One line answers\n---\n\nAnswer in one line.\n",
        );
        write(
            home.path(),
            "terse.md",
            "---\nname: Very Terse\n---\nFrom home.",
        );
        write(home.path(), "chatty.md", "Talk a lot.");
        let found = |name: &str| OutputStyle::find(name, project.path(), Some(home.path()));
        assert_eq!(
            found("very terse").unwrap(),
            Some(OutputStyle {
                name: "Very Terse".into(),
                description: Some("One line answers".into()),
                instructions: "Answer in one line.".into(),
                path: Some(project.path().join(".claude/output-styles/terse.md")),
            })
        );
        assert_eq!(
            found("chatty").unwrap().map(|style| style.instructions),
            Some("Talk a lot.".to_string())
        );
        assert_eq!(
            found("Learning").unwrap().map(|style| style.name),
            Some("Learning".to_string())
        );
        assert_eq!(found("Default").unwrap(), None);
    }
}
