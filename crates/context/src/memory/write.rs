//! Saving a memory that the user dictates (the TUI's `# always use pnpm, not npm`): one file
//! named for the text, with front matter the scan reads back, and its line in `MEMORY.md`.
//! Each file is written whole under a temporary name and then put in place, so recall never
//! reads half a memory and an existing memory is never overwritten.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};

use cairn_protocol::{private_dir_builder, private_file_options};

use super::file::{FrontMatter, INDEX_FILE, MemoryType};

/// The longest title made from a memory's text, in characters.
const TITLE_MAX_CHARS: usize = 60;

/// The longest slug in a memory's file name, in characters.
const SLUG_MAX_CHARS: usize = 40;

/// How many numbered names (`_2`, `_3`, …) are tried before giving up on a free one.
const MAX_NAME_TRIES: usize = 1000;

/// A memory [`save_memory`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedMemory {
    /// The memory file.
    pub path: PathBuf,
    /// Its name in the memory directory (`feedback_always_use_pnpm_not_npm.md`).
    pub file_name: String,
    /// The front matter written at its top.
    pub front_matter: FrontMatter,
    /// The line added to `MEMORY.md`.
    pub index_line: String,
}

/// Why a memory was not saved.
#[derive(Debug, thiserror::Error)]
pub enum MemoryWriteError {
    /// The memory's text is blank (its first line is its description).
    #[error("the memory is empty: there is nothing to save")]
    Empty,
    /// The memory directory could not be created.
    #[error("cannot create the memory directory {}: {source}", path.display())]
    Directory {
        /// The memory directory.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The memory file could not be written; nothing was saved.
    #[error("cannot write the memory file {}: {source}", path.display())]
    File {
        /// The memory file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The memory file was written but `MEMORY.md` could not be updated: the memory exists,
    /// and recall can find it, but the index does not list it.
    #[error(
        "{} was saved, but its line could not be added to {}: {source}",
        file.display(),
        index.display()
    )]
    Index {
        /// The memory file that was saved.
        file: PathBuf,
        /// `MEMORY.md`.
        index: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
}

/// Saves `text` as a memory of `memory_type` in `directory` (created, only the user's, when
/// missing): the file `<type>_<slug of the text>.md` (numbered when the name is taken) with
/// front matter — `name` a short title, `description` the text's first line — and the text
/// as its body; then `- [title](file.md) — description` at the end of `MEMORY.md` (created
/// when missing). Blocking: small writes, each in a temporary file renamed into place.
///
/// ```
/// use cairn_context::memory::{MemoryType, save_memory};
///
/// let dir = tempfile::tempdir()?;
/// let saved = save_memory(dir.path(), MemoryType::Feedback, "always use pnpm, not npm")?;
/// assert_eq!(saved.file_name, "feedback_always_use_pnpm_not_npm.md");
/// assert_eq!(
///     std::fs::read_to_string(dir.path().join("MEMORY.md"))?,
///     "- [Always use pnpm, not npm](feedback_always_use_pnpm_not_npm.md) — always use pnpm, not npm\n"
/// );
/// # Ok::<_, Box<dyn std::error::Error>>(())
/// ```
pub fn save_memory(
    directory: &Path,
    memory_type: MemoryType,
    text: &str,
) -> Result<SavedMemory, MemoryWriteError> {
    let text = text.trim();
    let Some(description) = text.lines().next().map(str::trim) else {
        return Err(MemoryWriteError::Empty);
    };
    let front_matter = FrontMatter {
        name: memory_title(without_preamble(description)),
        description: description.to_owned(),
        memory_type,
    };
    let contents = format!(
        "---\nname: {}\ndescription: {}\ntype: {memory_type}\n---\n{text}\n",
        front_matter_value(&front_matter.name),
        front_matter_value(&front_matter.description),
    );
    private_dir_builder()
        .create(directory)
        .map_err(|source| MemoryWriteError::Directory {
            path: directory.to_path_buf(),
            source,
        })?;
    let slug = memory_slug(without_preamble(description));
    let file_name = place_new_file(directory, memory_type, &slug, contents.as_bytes())?;
    let path = directory.join(&file_name);
    let index_line = format!(
        "- [{}]({file_name}) — {}",
        front_matter.name, front_matter.description
    );
    let index = directory.join(INDEX_FILE);
    append_index_line(directory, &index, &index_line).map_err(|source| {
        MemoryWriteError::Index {
            file: path.clone(),
            index,
            source,
        }
    })?;
    Ok(SavedMemory {
        path,
        file_name,
        front_matter,
        index_line,
    })
}

/// What a note to cairn often starts with and says nothing of the memory itself, as words.
const PREAMBLES: [&[&str]; 10] = [
    &["please"],
    &["remember", "that"],
    &["remember", "to"],
    &["remember"],
    &["note", "that"],
    &["note"],
    &["keep", "in", "mind", "that"],
    &["keep", "in", "mind"],
    &["don't", "forget", "that"],
    &["don't", "forget"],
];

/// Words a file name can do without: the name says what the memory is about.
const FILLER_WORDS: [&str; 22] = [
    "a", "an", "the", "that", "this", "these", "those", "is", "are", "was", "be", "of", "to",
    "for", "in", "on", "at", "and", "it", "its", "we", "our",
];

/// `line` without the words that only introduce it ("remember that", "please note"), as
/// often as they come; the line itself when nothing else would be left.
fn without_preamble(line: &str) -> &str {
    let mut rest = line.trim_start();
    'strip: loop {
        for preamble in PREAMBLES {
            let mut after = rest;
            let matched = preamble.iter().all(|word| {
                let Some((first, tail)) = split_first_word(after) else {
                    return false;
                };
                let bare = first.trim_end_matches([',', ':', ';']);
                let fits = bare.eq_ignore_ascii_case(word)
                    || bare.replace('’', "'").eq_ignore_ascii_case(word);
                after = tail;
                fits
            });
            if matched && !after.trim().is_empty() {
                rest = after.trim_start();
                continue 'strip;
            }
        }
        return rest;
    }
}

/// The first word of `text` (up to white space) and what follows it.
fn split_first_word(text: &str) -> Option<(&str, &str)> {
    let text = text.trim_start();
    if text.is_empty() {
        return None;
    }
    Some(text.split_at(text.find(char::is_whitespace).unwrap_or(text.len())))
}

/// A short title for a memory whose first line is `line`: its first words, up to
/// [`TITLE_MAX_CHARS`], starting with a capital, without closing punctuation or square
/// brackets (it goes between the brackets of a Markdown link).
fn memory_title(line: &str) -> String {
    let line: String = line
        .chars()
        .map(|c| match c {
            '[' | ']' => ' ',
            c if c.is_control() => ' ',
            c => c,
        })
        .collect();
    let mut title = String::new();
    for word in line.split_whitespace() {
        let len = title.chars().count();
        if len > 0 && len + 1 + word.chars().count() > TITLE_MAX_CHARS {
            break;
        }
        if len > 0 {
            title.push(' ');
        }
        title.push_str(word);
    }
    // One word longer than a title.
    let mut title: String = title.chars().take(TITLE_MAX_CHARS).collect();
    while title.ends_with(['.', ',', ';', ':', '!', '?']) {
        title.pop();
    }
    let mut chars = title.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => "Memory".to_owned(),
    }
}

/// The part of a file name that says what the memory is: its words but the small ones
/// ([`FILLER_WORDS`]), lower-case ASCII letters and digits, any run of other characters one `_`, at most [`SLUG_MAX_CHARS`] (cut at a `_` when it
/// can be); `memory` when nothing is left.
fn memory_slug(line: &str) -> String {
    let words: Vec<&str> = line
        .split_whitespace()
        .filter(|word| {
            let bare = word.trim_matches(|c: char| !c.is_alphanumeric());
            !FILLER_WORDS
                .iter()
                .any(|filler| filler.eq_ignore_ascii_case(bare))
        })
        .collect();
    // A line of nothing but small words keeps them.
    let named = if words.is_empty() {
        line.to_string()
    } else {
        words.join(" ")
    };
    let mut slug = String::new();
    for c in named.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.is_empty() && !slug.ends_with('_') {
            slug.push('_');
        }
    }
    if slug.len() > SLUG_MAX_CHARS {
        // ASCII only: byte and character counts agree.
        let cut = &slug[..=SLUG_MAX_CHARS];
        let end = cut
            .rfind('_')
            .filter(|&end| end > 0)
            .unwrap_or(SLUG_MAX_CHARS);
        slug.truncate(end);
    }
    let slug = slug.trim_end_matches('_');
    if slug.is_empty() {
        "memory".to_owned()
    } else {
        slug.to_owned()
    }
}

/// `value` as the front matter holds it: quoted when it would otherwise read as something
/// else (a quoted string, a YAML list or mapping, a comment).
fn front_matter_value(value: &str) -> String {
    let ambiguous = value.starts_with([
        '"', '\'', '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@',
        '`',
    ]) || value.contains(": ")
        || value.contains(" #")
        || value.ends_with(':');
    match (ambiguous, value.contains('"')) {
        (false, _) => value.to_owned(),
        (true, false) => format!("\"{value}\""),
        (true, true) if !value.contains('\'') => format!("'{value}'"),
        // The front matter parser takes what is between the outer quotes as it is.
        (true, true) => format!("\"{value}\""),
    }
}

/// Writes `contents` as `<type>_<slug>.md` in `directory`, or `<type>_<slug>_2.md` and so on
/// when the name is taken; returns the name used. The file appears whole: it is written under
/// a temporary name and linked into place, which fails rather than replace a file.
fn place_new_file(
    directory: &Path,
    memory_type: MemoryType,
    slug: &str,
    contents: &[u8],
) -> Result<String, MemoryWriteError> {
    let first = format!("{memory_type}_{slug}.md");
    let file_error = |name: &str, source| MemoryWriteError::File {
        path: directory.join(name),
        source,
    };
    let temp =
        write_temp(directory, &first, contents).map_err(|source| file_error(&first, source))?;
    let placed = (1..=MAX_NAME_TRIES).find_map(|number| {
        let name = match number {
            1 => first.clone(),
            number => format!("{memory_type}_{slug}_{number}.md"),
        };
        match link_new(&temp, &directory.join(&name)) {
            Ok(()) => Some(Ok(name)),
            Err(error) if error.kind() == ErrorKind::AlreadyExists => None,
            Err(error) => Some(Err(file_error(&name, error))),
        }
    });
    let _ = std::fs::remove_file(&temp);
    placed.unwrap_or_else(|| {
        Err(file_error(
            &first,
            std::io::Error::new(
                ErrorKind::AlreadyExists,
                format!("it and {MAX_NAME_TRIES} numbered names like it are taken"),
            ),
        ))
    })
}

/// Puts the file `temp` at `target` unless something is there already (`AlreadyExists`).
fn link_new(temp: &Path, target: &Path) -> std::io::Result<()> {
    match std::fs::hard_link(temp, target) {
        Ok(()) => Ok(()),
        Err(error) if error.kind() == ErrorKind::AlreadyExists => Err(error),
        // A file system without hard links: a rename, after checking the name is free.
        Err(_) => match std::fs::symlink_metadata(target) {
            Ok(_) => Err(ErrorKind::AlreadyExists.into()),
            Err(error) if error.kind() == ErrorKind::NotFound => std::fs::rename(temp, target),
            Err(error) => Err(error),
        },
    }
}

/// Adds `line` at the end of the index at `index`, creating it when missing; the new index
/// replaces the old one whole.
fn append_index_line(directory: &Path, index: &Path, line: &str) -> std::io::Result<()> {
    let mut text = match std::fs::read(index) {
        Ok(bytes) => bytes,
        Err(error) if error.kind() == ErrorKind::NotFound => Vec::new(),
        Err(error) => return Err(error),
    };
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    text.extend_from_slice(line.as_bytes());
    text.push(b'\n');
    let temp = write_temp(directory, INDEX_FILE, &text)?;
    std::fs::rename(&temp, index).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// Writes `contents` to a new hidden file in `directory` named after `target` (which the
/// memory scan passes over), readable only by the user; returns its path.
fn write_temp(directory: &Path, target: &str, contents: &[u8]) -> std::io::Result<PathBuf> {
    let mut attempt = 0u32;
    loop {
        let path = directory.join(format!(
            ".{target}.{}.{attempt}.cairn-tmp",
            std::process::id()
        ));
        match private_file_options()
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(mut file) => {
                return file
                    .write_all(contents)
                    .and_then(|()| file.sync_all())
                    .map(|()| path.clone())
                    .inspect_err(|_| {
                        let _ = std::fs::remove_file(&path);
                    });
            }
            Err(error) if error.kind() == ErrorKind::AlreadyExists && attempt < 100 => {
                attempt += 1;
            }
            Err(error) => return Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryIndex, scan_heads};
    use pretty_assertions::assert_eq;

    fn read(path: &Path) -> String {
        std::fs::read_to_string(path).unwrap()
    }

    #[test]
    fn a_memory_file_has_front_matter_the_scan_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let directory = dir.path().join("projects").join("p").join("memory");

        let saved = save_memory(
            &directory,
            MemoryType::Feedback,
            "  always use pnpm, not npm.\nThe lockfile is pnpm-lock.yaml.\n",
        )
        .unwrap();

        let front_matter = FrontMatter {
            name: "Always use pnpm, not npm".into(),
            description: "always use pnpm, not npm.".into(),
            memory_type: MemoryType::Feedback,
        };
        assert_eq!(
            saved,
            SavedMemory {
                path: directory.join("feedback_always_use_pnpm_not_npm.md"),
                file_name: "feedback_always_use_pnpm_not_npm.md".into(),
                front_matter: front_matter.clone(),
                index_line: "- [Always use pnpm, not npm](feedback_always_use_pnpm_not_npm.md) \
                             — always use pnpm, not npm."
                    .into(),
            }
        );
        assert_eq!(
            read(&saved.path),
            "---\nname: Always use pnpm, not npm\ndescription: always use pnpm, not npm.\n\
             type: feedback\n---\nalways use pnpm, not npm.\nThe lockfile is pnpm-lock.yaml.\n"
        );
        let scan = scan_heads(&directory);
        assert_eq!(scan.skipped, vec![]);
        assert_eq!(scan.heads.len(), 1);
        assert_eq!(scan.heads[0].file_name, saved.file_name);
        assert_eq!(scan.heads[0].front_matter, front_matter);
        // Nothing but the memory and its index is left behind.
        let mut names: Vec<String> = std::fs::read_dir(&directory)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, ["MEMORY.md", "feedback_always_use_pnpm_not_npm.md"]);
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_and_files_are_only_the_users() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let directory = dir.path().join("memory");
        let saved = save_memory(&directory, MemoryType::User, "I review in the morning").unwrap();
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&directory), 0o700);
        assert_eq!(mode(&saved.path), 0o600);
        assert_eq!(mode(&directory.join(INDEX_FILE)), 0o600);
    }

    #[test]
    fn values_that_would_read_as_something_else_are_quoted_and_read_back_as_typed() {
        let dir = tempfile::tempdir().unwrap();
        for (number, text) in [
            "\"quoted\" words stay quoted",
            "deploys: by tag, never by branch",
            "- a list-like line",
            "it's \"fine\": really",
            "'single' at the start",
        ]
        .into_iter()
        .enumerate()
        {
            let saved = save_memory(dir.path(), MemoryType::Project, text).unwrap();
            let parsed = FrontMatter::parse(&read(&saved.path)).unwrap();
            assert_eq!(parsed.description, text, "memory {number}");
            assert_eq!(parsed, saved.front_matter, "memory {number}");
        }
    }

    #[test]
    fn a_taken_name_gets_the_next_number_and_the_first_file_is_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = save_memory(dir.path(), MemoryType::Feedback, "Use pnpm").unwrap();
        let second = save_memory(dir.path(), MemoryType::Feedback, "use pnpm!").unwrap();
        let third = save_memory(dir.path(), MemoryType::Feedback, "use PNPM").unwrap();
        let other_type = save_memory(dir.path(), MemoryType::Project, "use pnpm").unwrap();
        assert_eq!(
            [
                first.file_name.as_str(),
                &second.file_name,
                &third.file_name,
                &other_type.file_name
            ],
            [
                "feedback_use_pnpm.md",
                "feedback_use_pnpm_2.md",
                "feedback_use_pnpm_3.md",
                "project_use_pnpm.md"
            ]
        );
        assert!(read(&first.path).ends_with("---\nUse pnpm\n"));
        assert!(read(&second.path).ends_with("---\nuse pnpm!\n"));
    }

    #[test]
    fn the_index_line_is_appended_to_an_index_that_has_no_final_line_end() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(INDEX_FILE),
            "# Memories\n- [Old](user_old.md) — an older one",
        )
        .unwrap();
        save_memory(
            dir.path(),
            MemoryType::Reference,
            "Bugs are tracked in Linear INGEST",
        )
        .unwrap();
        assert_eq!(
            read(&dir.path().join(INDEX_FILE)),
            "# Memories\n- [Old](user_old.md) — an older one\n\
             - [Bugs are tracked in Linear INGEST](reference_bugs_tracked_linear_ingest.md) \
             — Bugs are tracked in Linear INGEST\n"
        );
        // The prompt carries the index as written.
        assert!(
            MemoryIndex::read(dir.path())
                .unwrap()
                .unwrap()
                .text
                .ends_with("— Bugs are tracked in Linear INGEST")
        );
    }

    #[test]
    fn a_missing_index_is_created_with_the_line() {
        let dir = tempfile::tempdir().unwrap();
        let saved = save_memory(dir.path(), MemoryType::User, "Senior Go developer").unwrap();
        assert_eq!(
            read(&dir.path().join(INDEX_FILE)),
            format!("{}\n", saved.index_line)
        );
        assert_eq!(
            saved.index_line,
            "- [Senior Go developer](user_senior_go_developer.md) — Senior Go developer"
        );
    }

    #[test]
    fn an_empty_memory_is_refused_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let directory = dir.path().join("memory");
        let error = save_memory(&directory, MemoryType::User, " \n\t").unwrap_err();
        assert_eq!(
            error.to_string(),
            "the memory is empty: there is nothing to save"
        );
        assert!(!directory.exists());
    }

    #[test]
    fn an_index_that_cannot_be_replaced_is_named_after_the_memory_is_saved() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where the index should be: the rename over it fails.
        std::fs::create_dir_all(dir.path().join(INDEX_FILE).join("x")).unwrap();
        let error = save_memory(dir.path(), MemoryType::User, "likes tabs").unwrap_err();
        let message = error.to_string();
        let file = dir.path().join("user_likes_tabs.md");
        assert!(
            message.starts_with(&format!(
                "{} was saved, but its line could not be added to {}: ",
                file.display(),
                dir.path().join(INDEX_FILE).display()
            )),
            "{message}"
        );
        assert!(file.exists());
    }

    #[test]
    fn a_memory_is_named_by_its_content_not_its_preamble() {
        let dir = tempfile::tempdir().unwrap();
        let saved = save_memory(
            dir.path(),
            MemoryType::Project,
            "remember that the release build uses jemalloc",
        )
        .unwrap();
        assert_eq!(saved.file_name, "project_release_build_uses_jemalloc.md");
        assert_eq!(saved.front_matter.name, "The release build uses jemalloc");
        assert_eq!(
            saved.front_matter.description, "remember that the release build uses jemalloc",
            "the description keeps the words as typed"
        );
        assert_eq!(
            without_preamble("Please, remember to run cargo fmt"),
            "run cargo fmt"
        );
        assert_eq!(
            without_preamble("Don’t forget: CI needs Node 22"),
            "CI needs Node 22"
        );
        assert_eq!(without_preamble("remember"), "remember");
        assert_eq!(
            without_preamble("note the port is 8080"),
            "the port is 8080"
        );
    }

    #[test]
    fn titles_are_short_and_slugs_plain() {
        assert_eq!(
            memory_title(
                "the staging database is reset every Monday at 06:00 UTC by the ops cron job"
            ),
            "The staging database is reset every Monday at 06:00 UTC by"
        );
        assert_eq!(memory_title("see [the wiki] page."), "See the wiki page");
        assert_eq!(memory_title("…"), "…");
        assert_eq!(
            memory_slug("the staging database is reset every Monday at 06:00 UTC"),
            "staging_database_reset_every_monday_06"
        );
        assert_eq!(memory_slug("it is the one"), "one");
        assert_eq!(memory_slug("to be or not to be"), "or_not");
        assert_eq!(memory_slug("it is"), "it_is");
        assert_eq!(memory_slug("Déjà vu: ça marche"), "d_j_vu_a_marche");
        assert_eq!(memory_slug("日本語"), "memory");
        assert_eq!(memory_slug(&"x".repeat(50)), "x".repeat(40));
    }
}
