//! One memory file: front matter (`name`, `description`, `type`), then the body; and the
//! scan of a memory directory for the heads recall shows the small model.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::UnreadFile;
use crate::project_file::read_text_start;

/// The index file, which is not a memory itself.
pub const INDEX_FILE: &str = "MEMORY.md";

/// Lines of a memory file shown to the recall model: the front matter and the start of the
/// body.
pub const HEAD_LINES: usize = 30;

/// The most bytes of a file read for its head: 30 ordinary lines fit many times over, and a
/// file of one endless line costs no more than this.
const HEAD_BYTES: u64 = 4 * 1024;

/// What a memory is about, as Claude Code sorts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryType {
    /// Who the user is: role, expertise, preferences.
    User,
    /// How the user wants the work done: corrections and confirmed approaches.
    Feedback,
    /// What is going on in the project that the code does not say: goals, decisions, dates.
    Project,
    /// Where to find things outside the repository.
    Reference,
}

impl MemoryType {
    /// Every type.
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The name in front matter's `type` (`feedback`); read case-insensitively.
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    fn parse(text: &str) -> Option<MemoryType> {
        MemoryType::ALL
            .into_iter()
            .find(|kind| kind.as_str().eq_ignore_ascii_case(text))
    }
}

impl fmt::Display for MemoryType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The front matter of a memory file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrontMatter {
    /// A short name for the memory, never empty.
    pub name: String,
    /// One line saying what the memory is for: what recall judges relevance by.
    pub description: String,
    /// What kind of memory it is (`type:` in the file).
    pub memory_type: MemoryType,
}

impl FrontMatter {
    /// Parses the front matter at the start of `text`: a `---` line, `key: value` lines, a
    /// closing `---`. Values may be quoted; unknown keys, blank lines and comments are
    /// ignored, and `\r\n` line ends and a byte-order mark are accepted. The error says what
    /// is missing, for a warning naming the file.
    ///
    /// ```
    /// use cairn_context::memory::{FrontMatter, MemoryType};
    ///
    /// let text = "---\nname: no-mocks\ndescription: \"tests use a real database\"\ntype: feedback\n---\nBody";
    /// assert_eq!(
    ///     FrontMatter::parse(text),
    ///     Ok(FrontMatter {
    ///         name: "no-mocks".into(),
    ///         description: "tests use a real database".into(),
    ///         memory_type: MemoryType::Feedback,
    ///     })
    /// );
    /// assert_eq!(FrontMatter::parse("Body"), Err("it has no front matter (a `---` line first)".into()));
    /// ```
    pub fn parse(text: &str) -> Result<FrontMatter, String> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let mut lines = text.lines().map(|line| line.trim_end_matches('\r'));
        if lines.next().map(str::trim_end) != Some("---") {
            return Err("it has no front matter (a `---` line first)".to_owned());
        }
        let (mut name, mut description, mut memory_type) = (None, None, None);
        let mut closed = false;
        for line in lines {
            if line.trim_end() == "---" {
                closed = true;
                break;
            }
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = unquote(value.trim()).to_owned();
            match key.trim() {
                "name" => name = Some(value),
                "description" => description = Some(value),
                "type" => {
                    memory_type = Some(MemoryType::parse(&value).ok_or_else(|| {
                        format!(
                            "its type `{value}` is not one of user, feedback, project, reference"
                        )
                    })?);
                }
                _ => {}
            }
        }
        if !closed {
            return Err("its front matter has no closing `---` line".to_owned());
        }
        let missing = |key: &str| format!("its front matter has no `{key}`");
        Ok(FrontMatter {
            name: name
                .filter(|name| !name.is_empty())
                .ok_or_else(|| missing("name"))?,
            description: description
                .filter(|description| !description.is_empty())
                .ok_or_else(|| missing("description"))?,
            memory_type: memory_type.ok_or_else(|| missing("type"))?,
        })
    }
}

fn unquote(value: &str) -> &str {
    for quote in ['"', '\''] {
        if let Some(inner) = value
            .strip_prefix(quote)
            .and_then(|rest| rest.strip_suffix(quote))
        {
            return inner;
        }
    }
    value
}

/// The version of a file that was seen: a changed file has another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileStamp {
    /// The modification time; the epoch when the file system gives none.
    pub modified: SystemTime,
    /// The size in bytes.
    pub len: u64,
}

impl FileStamp {
    fn of(metadata: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            modified: metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            len: metadata.len(),
        }
    }
}

/// The start of one memory file, as recall shows it to the small model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryHead {
    /// The file's name in the memory directory (`feedback_no_mocks.md`).
    pub file_name: String,
    /// Its parsed front matter.
    pub front_matter: FrontMatter,
    /// The file's first [`HEAD_LINES`] lines, front matter included.
    pub head: String,
    /// The file as it was when scanned, so a later change is noticed.
    pub stamp: FileStamp,
}

/// A memory directory's files, newest first, and those that were skipped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryScan {
    /// The memory files that could be used, newest first.
    pub heads: Vec<MemoryHead>,
    /// The files left out, with why: warnings for `--verbose`.
    pub skipped: Vec<UnreadFile>,
}

/// The heads of the memory files in `directory` (its `*.md` files but `MEMORY.md`; not its
/// subdirectories), newest first. A file that cannot be read or has no valid front matter is
/// skipped and named in [`MemoryScan::skipped`]; a missing directory has no memories.
/// Blocking: run it off the async threads.
pub fn scan_heads(directory: &Path) -> MemoryScan {
    let mut scan = MemoryScan::default();
    let Ok(entries) = std::fs::read_dir(directory) else {
        return scan;
    };
    let mut files: Vec<(PathBuf, String, FileStamp)> = Vec::new();
    for entry in entries.flatten() {
        let Some(file_name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        if !file_name.ends_with(".md") || file_name == INDEX_FILE || file_name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // Followed, so that a link to a memory file counts; what it is is checked on reading.
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_dir() => {}
            Ok(metadata) => files.push((path, file_name, FileStamp::of(&metadata))),
            Err(error) => scan.skipped.push(UnreadFile {
                path,
                reason: format!("reading it failed: {error}"),
            }),
        }
    }
    files.sort_by(|a, b| b.2.modified.cmp(&a.2.modified).then_with(|| a.1.cmp(&b.1)));
    for (path, file_name, stamp) in files {
        match read_head(&path) {
            Ok(Some((front_matter, head))) => scan.heads.push(MemoryHead {
                file_name,
                front_matter,
                head,
                stamp,
            }),
            Ok(None) => {}
            Err(unread) => scan.skipped.push(unread),
        }
    }
    scan
}

/// The front matter and the first [`HEAD_LINES`] lines of the memory file at `path`.
fn read_head(path: &Path) -> Result<Option<(FrontMatter, String)>, UnreadFile> {
    let Some(start) = read_text_start(path, HEAD_BYTES)? else {
        return Ok(None);
    };
    let front_matter = FrontMatter::parse(&start.text).map_err(|reason| UnreadFile {
        path: path.to_path_buf(),
        reason,
    })?;
    Ok(Some((front_matter, first_lines(&start.text, HEAD_LINES))))
}

/// The first `count` lines of `text`, without the line end after the last.
pub(crate) fn first_lines(text: &str, count: usize) -> String {
    let end = text
        .match_indices('\n')
        .nth(count.saturating_sub(1))
        .map_or(text.len(), |(index, _)| index);
    text[..end].trim_end_matches('\r').to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn memory(name: &str, kind: &str, body: &str) -> String {
        format!("---\nname: {name}\ndescription: about {name}\ntype: {kind}\n---\n{body}")
    }

    #[test]
    fn front_matter_is_read_tolerantly() {
        let text = "\u{feff}---\r\n# a comment\r\nname: 'deploys'\r\nextra: kept out\r\n\
                    description: how deploys go: by tag\r\ntype: Reference\r\n---\r\nbody";
        assert_eq!(
            FrontMatter::parse(text),
            Ok(FrontMatter {
                name: "deploys".into(),
                description: "how deploys go: by tag".into(),
                memory_type: MemoryType::Reference,
            })
        );
    }

    #[test]
    fn bad_front_matter_says_what_is_wrong() {
        assert_eq!(
            FrontMatter::parse("---\nname: a\ndescription: b\ntype: fact\n---\n"),
            Err("its type `fact` is not one of user, feedback, project, reference".into())
        );
        assert_eq!(
            FrontMatter::parse("---\nname: a\ndescription: b\ntype: user\n"),
            Err("its front matter has no closing `---` line".into())
        );
        assert_eq!(
            FrontMatter::parse("---\nname: a\ntype: user\n---\n"),
            Err("its front matter has no `description`".into())
        );
    }

    #[test]
    fn first_lines_stops_at_the_count() {
        assert_eq!(first_lines("a\nb\nc\n", 2), "a\nb");
        assert_eq!(first_lines("a\r\nb\r\nc", 2), "a\r\nb");
        assert_eq!(first_lines("a\nb", 5), "a\nb");
    }

    #[test]
    fn the_scan_keeps_good_files_newest_first_and_names_the_bad_ones() {
        let dir = tempfile::tempdir().unwrap();
        let body: String = (1..=40).map(|n| format!("line {n}\n")).collect();
        std::fs::write(dir.path().join("old.md"), memory("old", "user", &body)).unwrap();
        std::fs::write(dir.path().join("new.md"), memory("new", "project", "short")).unwrap();
        std::fs::write(dir.path().join("bad.md"), "no front matter").unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), "- [old](old.md)").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "not a memory").unwrap();
        std::fs::create_dir(dir.path().join("sub.md")).unwrap();
        let hour_ago = SystemTime::now() - std::time::Duration::from_secs(3600);
        std::fs::File::options()
            .write(true)
            .open(dir.path().join("old.md"))
            .unwrap()
            .set_modified(hour_ago)
            .unwrap();

        let scan = scan_heads(dir.path());

        let names: Vec<&str> = scan.heads.iter().map(|h| h.file_name.as_str()).collect();
        assert_eq!(names, ["new.md", "old.md"]);
        let old = &scan.heads[1];
        assert_eq!(old.head.lines().count(), HEAD_LINES);
        assert_eq!(old.head.lines().last(), Some("line 25"));
        assert_eq!(
            scan.skipped,
            vec![UnreadFile {
                path: dir.path().join("bad.md"),
                reason: "it has no front matter (a `---` line first)".into(),
            }]
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_among_the_memories_is_skipped_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("trap.md");
        let status = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(status.success());
        std::fs::write(dir.path().join("ok.md"), memory("ok", "user", "fine")).unwrap();

        let scan = scan_heads(dir.path());

        assert_eq!(scan.heads.len(), 1);
        assert_eq!(
            scan.skipped,
            vec![UnreadFile {
                path: fifo,
                reason: "it is a FIFO, not a regular file".into(),
            }]
        );
    }

    #[test]
    fn a_missing_directory_has_no_memories() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(scan_heads(&dir.path().join("none")), MemoryScan::default());
    }
}
