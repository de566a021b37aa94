//! Context pipeline step 1, the lightest: large tool results go to disk, not into the window.
//!
//! A result over [`SPILL_THRESHOLD`] characters is written to a file and replaced by a short
//! preview plus the file's path, which the model can `Read` if it needs more. The results
//! of one message together stay under [`MESSAGE_BUDGET`] characters: the largest are spilled
//! first until the rest fit.

use std::io::Write;
use std::path::{Path, PathBuf};

use cairn_protocol::{ToolResultContent, private_dir_builder, private_file_options};

/// A single result longer than this (in characters) is spilled.
pub const SPILL_THRESHOLD: usize = 50_000;
/// The results of one message together stay under this many characters.
pub const MESSAGE_BUDGET: usize = 200_000;
/// How much of a spilled result stays in the conversation.
const PREVIEW_CHARS: usize = 2_000;

/// One tool result, as the budget sees it.
#[derive(Debug)]
pub(crate) struct SpillCandidate<'a> {
    pub(crate) tool_use_id: &'a str,
    pub(crate) content: &'a mut ToolResultContent,
}

/// A result the model got as a preview instead of whole.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Spilled {
    /// The `tool_use` id of the call whose result it was.
    pub tool_use_id: String,
    /// Its length, in characters.
    pub chars: usize,
    /// The characters of it the model got.
    pub preview_chars: usize,
    /// Where the whole was saved; `None` when saving it failed.
    pub saved: Option<PathBuf>,
}

/// Spills results to files under `dir` until every result is under the threshold and all of
/// them together fit the message budget. Images are never spilled. Returns what was spilled,
/// for the user to be told. A result that cannot be written to disk is cut to its preview
/// instead, with a note.
pub(crate) fn apply_budget(results: &mut [SpillCandidate<'_>], dir: &Path) -> Vec<Spilled> {
    let mut spilled = Vec::new();
    let mut sizes: Vec<(usize, usize)> = results
        .iter()
        .enumerate()
        .filter_map(|(index, result)| match &*result.content {
            ToolResultContent::Text(text) => Some((index, text.chars().count())),
            ToolResultContent::Blocks(_) => None,
        })
        .collect();
    // Largest first.
    sizes.sort_by_key(|(_, size)| std::cmp::Reverse(*size));
    let mut total: usize = sizes.iter().map(|(_, size)| size).sum();
    for (index, size) in sizes {
        if size <= SPILL_THRESHOLD && total <= MESSAGE_BUDGET {
            break;
        }
        if size <= PREVIEW_CHARS {
            continue;
        }
        let result = &mut results[index];
        let ToolResultContent::Text(text) = &*result.content else {
            continue;
        };
        let preview: String = text.chars().take(PREVIEW_CHARS).collect();
        let path = dir.join(format!("{}.txt", safe_file_name(result.tool_use_id)));
        let saved = write_spill(&path, text);
        spilled.push(Spilled {
            tool_use_id: result.tool_use_id.to_string(),
            chars: size,
            preview_chars: PREVIEW_CHARS,
            saved: saved.is_ok().then(|| path.clone()),
        });
        let replacement = match saved {
            Ok(()) => {
                format!(
                    "This result was {size} characters, too large for the conversation. The whole \
                     output is saved in {}; Read it (with offset and limit) or Grep it for what you \
                     need. Its first {PREVIEW_CHARS} characters:\n\n{preview}",
                    path.display()
                )
            }
            Err(err) => format!(
                "This result was {size} characters, too large for the conversation, and saving it \
                 to {} failed ({err}). Its first {PREVIEW_CHARS} characters:\n\n{preview}",
                path.display()
            ),
        };
        total = total - size + replacement.chars().count();
        *result.content = ToolResultContent::Text(replacement);
    }
    spilled
}

/// Writes `text` to `path`, readable by the user alone (the directories made on the way too:
/// a tool's output can hold anything the tool read). A write that fails part-way (a full
/// disk) removes the partial file: the model is told saving failed, and a file cut short at
/// that path would say otherwise to whoever reads it later.
fn write_spill(path: &Path, text: &str) -> std::io::Result<()> {
    if let Some(parent) = path.parent() {
        private_dir_builder().create(parent)?;
    }
    let mut file = private_file_options()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)?;
    // `sync_data`: a full disk may only show itself when the data is written back.
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| file.sync_data());
    if written.is_err() {
        drop(file);
        let _ = std::fs::remove_file(path);
    }
    written
}

/// Tool-use ids come from the model; keep only characters that are safe in a file name.
fn safe_file_name(id: &str) -> String {
    let name: String = id
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .take(100)
        .collect();
    if name.is_empty() {
        "result".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// The files the spilled results were saved in.
    fn saved(spilled: &[Spilled]) -> Vec<PathBuf> {
        spilled.iter().filter_map(|s| s.saved.clone()).collect()
    }

    fn text(content: &ToolResultContent) -> &str {
        match content {
            ToolResultContent::Text(text) => text,
            ToolResultContent::Blocks(_) => panic!("expected text"),
        }
    }

    #[test]
    fn a_large_result_is_spilled_with_a_preview_and_its_path() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(60_000);
        let mut content = ToolResultContent::Text(big.clone());
        let mut small = ToolResultContent::Text("small".into());
        let written = apply_budget(
            &mut [
                SpillCandidate {
                    tool_use_id: "toolu_big",
                    content: &mut content,
                },
                SpillCandidate {
                    tool_use_id: "toolu_small",
                    content: &mut small,
                },
            ],
            dir.path(),
        );
        let path = dir.path().join("toolu_big.txt");
        assert_eq!(saved(&written), vec![path.clone()]);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), big);
        let replaced = text(&content);
        assert!(replaced.contains(&path.display().to_string()));
        assert!(replaced.len() < 2_600, "{}", replaced.len());
        assert_eq!(text(&small), "small");
    }

    #[test]
    fn results_of_one_message_stay_under_the_budget_largest_first() {
        let dir = tempfile::tempdir().unwrap();
        let mut contents: Vec<ToolResultContent> = [45_000, 49_000, 48_000, 47_000, 46_000]
            .iter()
            .map(|n| ToolResultContent::Text("y".repeat(*n)))
            .collect();
        let ids = ["a", "b", "c", "d", "e"];
        let mut candidates: Vec<SpillCandidate<'_>> = contents
            .iter_mut()
            .zip(ids)
            .map(|(content, id)| SpillCandidate {
                tool_use_id: id,
                content,
            })
            .collect();
        let written = apply_budget(&mut candidates, dir.path());
        // 235K in all: spilling the largest (49K) leaves ~188K, under the 200K budget.
        assert_eq!(saved(&written), vec![dir.path().join("b.txt")]);
        let total: usize = contents.iter().map(|c| text(c).len()).sum();
        assert!(total <= MESSAGE_BUDGET, "{total}");
    }

    #[cfg(unix)]
    #[test]
    fn spilled_files_and_their_directories_are_the_users_alone() {
        use std::os::unix::fs::PermissionsExt;

        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join("project").join("session");
        let mut content = ToolResultContent::Text("s".repeat(60_000));
        let written = apply_budget(
            &mut [SpillCandidate {
                tool_use_id: "toolu_secret",
                content: &mut content,
            }],
            &dir,
        );
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        let file = dir.join("toolu_secret.txt");
        assert_eq!(saved(&written), vec![file.clone()]);
        assert_eq!(
            (mode(&home.path().join("project")), mode(&dir), mode(&file)),
            (0o700, 0o700, 0o600)
        );
    }

    #[test]
    fn an_unwritable_directory_still_shrinks_the_result() {
        let mut content = ToolResultContent::Text("z".repeat(60_000));
        let written = apply_budget(
            &mut [SpillCandidate {
                tool_use_id: "t",
                content: &mut content,
            }],
            Path::new("/proc/cannot-write-here"),
        );
        assert!(saved(&written).is_empty());
        assert!(text(&content).contains("failed"));
        assert!(text(&content).len() < 2_600);
    }
}
