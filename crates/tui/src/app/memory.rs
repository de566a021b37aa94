//! What the user keeps for later sessions, from the input box: `/memory` lists the instruction
//! files and the memory files, `/memory <file>` opens one in the user's editor, and
//! `# <text>` saves a memory after asking its type. cairn reads instruction files again when
//! they change and recall scans the memory files at each message, so what the user writes
//! applies from the next message on.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

use cairn_context::memory::{INDEX_FILE, MemoryType, save_memory, scan_heads};
use ratatui::Terminal;

use super::App;
use super::inline_backend::InlineBackend;
use crate::memory_dialog::{MemoryTypeAnswer, MemoryTypeDialog};

/// What `/memory <argument>` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MemoryCommand {
    /// The instruction files and the memory files.
    List,
    /// A file to open in the editor.
    Edit(PathBuf),
}

/// The instruction files `/memory` names: `project` is `./CLAUDE.md`, `user` is
/// `~/.claude/CLAUDE.md`, `local` is `./CLAUDE.local.md`.
fn instruction_files(cwd: &Path, home: &Path) -> [(&'static str, PathBuf); 3] {
    [
        ("project", cwd.join("CLAUDE.md")),
        ("user", home.join(".claude").join("CLAUDE.md")),
        ("local", cwd.join("CLAUDE.local.md")),
    ]
}

/// What `/memory <argument>` asks for: nothing is a list; `project`, `user` or `local` an
/// instruction file; anything else a file of the memory directory (`MEMORY.md` too), with
/// or without its `.md`.
pub fn command(
    argument: &str,
    cwd: &Path,
    home: &Path,
    memory_dir: Option<&Path>,
) -> Result<MemoryCommand, String> {
    let argument = argument.trim();
    if argument.is_empty() {
        return Ok(MemoryCommand::List);
    }
    if let Some((_, path)) = instruction_files(cwd, home)
        .into_iter()
        .find(|(which, _)| *which == argument)
    {
        return Ok(MemoryCommand::Edit(path));
    }
    let plain_name = !argument.contains(['/', '\\']) && !argument.starts_with('.');
    if let Some(dir) = memory_dir.filter(|_| plain_name) {
        let with_md = format!("{argument}.md");
        let names = [argument, with_md.as_str()];
        if let Some(path) = names
            .iter()
            .map(|name| dir.join(name))
            .find(|path| path.is_file())
        {
            return Ok(MemoryCommand::Edit(path));
        }
    }
    Err(format!(
        "Unknown memory file {argument:?}: /memory lists the memory files; /memory <file> \
         opens one, /memory project (./CLAUDE.md), /memory user (~/.claude/CLAUDE.md) or \
         /memory local (./CLAUDE.local.md) an instruction file."
    ))
}

/// What `/memory` shows: the instruction files (their length, or that they are not there
/// yet), then each memory file of `memory_dir` with its type, age, name and description,
/// newest first (and the files that could not be read, with why).
pub fn listing(cwd: &Path, home: &Path, memory_dir: Option<&Path>, now: SystemTime) -> String {
    let mut text =
        "Instruction files (/memory project, user or local opens one in $EDITOR):".to_string();
    for (which, path) in instruction_files(cwd, home) {
        let state = match std::fs::read_to_string(&path) {
            Ok(contents) => {
                let lines = contents.lines().count();
                format!("{lines} line{}", if lines == 1 { "" } else { "s" })
            }
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => "not created yet".into(),
            Err(err) => format!("cannot be read: {err}"),
        };
        text.push_str(&format!("\n  {which:<8} {} ({state})", path.display()));
    }
    text.push_str("\n\n");
    let Some(dir) = memory_dir else {
        text.push_str(
            "Memory is off (autoMemoryEnabled is false in the settings): no memory is \
             recalled and # saves none.",
        );
        return text;
    };
    let scan = scan_heads(dir);
    if scan.heads.is_empty() && scan.skipped.is_empty() {
        text.push_str(&format!(
            "No memories yet in {}: # <text> saves one, and the model saves what is worth \
             keeping.",
            dir.display()
        ));
        return text;
    }
    text.push_str(&format!(
        "Memories in {} (/memory <file> opens one, /memory {INDEX_FILE} the index, # <text> \
         saves one):",
        dir.display()
    ));
    for head in &scan.heads {
        let front = &head.front_matter;
        text.push_str(&format!(
            "\n  {} · {} · {}\n    {}: {}",
            head.file_name,
            front.memory_type,
            age(head.stamp.modified, now),
            front.name,
            front.description
        ));
    }
    for unread in &scan.skipped {
        let name = unread
            .path
            .file_name()
            .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
        text.push_str(&format!("\n  {name} · not read: {}", unread.reason));
    }
    text
}

/// How long ago `modified` was, as a person says it: `just now`, `5 minutes ago`, `1 hour
/// ago`, `3 days ago`.
fn age(modified: SystemTime, now: SystemTime) -> String {
    let seconds = now.duration_since(modified).unwrap_or_default().as_secs();
    let (count, unit) = match seconds {
        0..60 => return "just now".to_string(),
        60..3_600 => (seconds / 60, "minute"),
        3_600..86_400 => (seconds / 3_600, "hour"),
        _ => (seconds / 86_400, "day"),
    };
    format!("{count} {unit}{} ago", if count == 1 { "" } else { "s" })
}

impl App {
    /// `/memory [argument]`: the list, or a file opened in the editor.
    pub(super) fn memory_command(&mut self, argument: &str) {
        let config = &self.config;
        match command(
            argument,
            &config.cwd,
            &config.home,
            config.memory_dir.as_deref(),
        ) {
            Ok(MemoryCommand::List) => {
                let list = listing(
                    &config.cwd,
                    &config.home,
                    config.memory_dir.as_deref(),
                    SystemTime::now(),
                );
                self.transcript.push_info(list);
            }
            Ok(MemoryCommand::Edit(path)) => self.edit_request = Some(path),
            Err(message) => self.transcript.push_error(message),
        }
    }

    /// `# <text>`: asks which type of memory the text is (nothing goes to the model). With
    /// memory off, or nothing after the `#`, says so and gives the line back.
    pub(super) fn ask_memory_type(&mut self, typed: String) {
        let no_dir = std::path::PathBuf::new();
        let dir = self.config.memory_dir.as_deref().unwrap_or(&no_dir);
        let choice = MemoryTypeDialog::new(typed, dir);
        let refusal = match (&self.config.memory_dir, choice.memory().is_empty()) {
            (None, _) => {
                "Memory is off, so nothing was saved (and nothing was sent): autoMemoryEnabled \
                 is false in the settings. To turn it on, remove that setting or set it to \
                 true, then start cairn again."
            }
            (Some(_), true) => {
                "Type what to remember after the #, as in `# always use pnpm, not npm`."
            }
            (Some(_), false) => {
                self.memory_choice = Some(choice);
                return;
            }
        };
        self.transcript.push_error(refusal);
        self.give_back(choice.line());
    }

    /// The answer to the type question: saves the memory and says where, or (cancelled, or
    /// the save failed) gives the line back to the input box.
    pub(super) fn answer_memory_type(&mut self, answer: MemoryTypeAnswer) {
        let Some(choice) = self.memory_choice.take() else {
            return;
        };
        let memory_type = match answer {
            MemoryTypeAnswer::Save(memory_type) => memory_type,
            MemoryTypeAnswer::ProjectInstructions => {
                let path = self.config.cwd.join("CLAUDE.md");
                match append_instruction(&path, choice.memory()) {
                    Ok(()) => self.transcript.push_info(format!(
                        "# {}\nAdded to {}, the project's instructions (shared with the team \
                         once committed): cairn reads it again from the next message.",
                        choice.memory(),
                        path.display()
                    )),
                    Err(err) => {
                        self.transcript
                            .push_error(format!("Nothing was added to {}: {err}", path.display()));
                        self.give_back(choice.line());
                    }
                }
                return;
            }
            MemoryTypeAnswer::Cancel => {
                self.give_back(choice.line());
                return;
            }
        };
        let Some(dir) = self.config.memory_dir.clone() else {
            return;
        };
        match save_memory(&dir, memory_type, choice.memory()) {
            Ok(saved) => {
                let note = saved_note(memory_type, choice.memory(), &saved.path);
                self.transcript.push_info(note);
            }
            Err(err) => {
                self.transcript
                    .push_error(format!("The memory was not saved: {err}"));
                self.give_back(choice.line());
            }
        }
    }

    /// Puts the line as typed back in the input box, to change or send again.
    fn give_back(&mut self, line: &str) {
        self.composer.set_text(line);
        self.input.refresh(&self.composer);
    }
}

/// Appends `text` to the instruction file at `path` as a list item (each line of it), after a
/// blank line when the file does not end with one; creates the file when missing. The whole
/// new content is written beside it and renamed into place, so the file is never half written.
fn append_instruction(path: &Path, text: &str) -> std::io::Result<()> {
    let mut content = match std::fs::read_to_string(path) {
        Ok(content) => content,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(err),
    };
    if !content.is_empty() && !content.ends_with('\n') {
        content.push('\n');
    }
    if !content.is_empty() && !content.ends_with("\n\n") {
        content.push('\n');
    }
    for (index, line) in text.lines().enumerate() {
        let mark = if index == 0 { "- " } else { "  " };
        content.push_str(&format!("{mark}{}\n", line.trim_end()));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let temp = dir.join(format!(".CLAUDE.md.{}.tmp", std::process::id()));
    std::fs::write(&temp, content)?;
    // The file keeps its permissions; a new one gets the usual ones.
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })
}

/// What the transcript says once a memory is saved.
fn saved_note(memory_type: MemoryType, text: &str, path: &Path) -> String {
    format!(
        "# {text}\nSaved as a {memory_type} memory in {} and listed in {INDEX_FILE}: recall \
         offers it from the next message, and later sessions see it in the index.",
        path.display()
    )
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`. It is run by the shell, so it
/// may carry arguments (`code --wait`).
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Creates the directory that will hold `path`, missing parents included, only the user can
/// enter (`0o700`): the memory directory lies in cairn's own state, where every directory is
/// private.
fn create_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) => cairn_protocol::private_dir_builder()
            .create(dir)
            .map_err(|err| format!("Cannot create {}: {err}", dir.display())),
        None => Ok(()),
    }
}

/// Hands the terminal to the editor on `path` and takes it back: the viewport is cleared,
/// raw mode and bracketed paste are off while the editor runs, and everything is redrawn
/// after. The caller has stopped reading keys. Returns what to tell the user.
pub async fn edit(terminal: &mut Terminal<InlineBackend>, path: &Path) -> Result<String, String> {
    create_parent(path)?;
    let editor = editor_command();
    let before = std::fs::read(path).ok();
    let terminal_error = |err: std::io::Error| format!("Terminal error around the editor: {err}");
    terminal.clear().map_err(terminal_error)?;
    terminal.show_cursor().map_err(terminal_error)?;
    super::terminal::pause_input_modes();
    let _ = crossterm::terminal::disable_raw_mode();

    let command = format!("{editor} \"$1\"");
    let target = path.to_path_buf();
    let status = tokio::task::spawn_blocking(move || {
        Command::new("sh")
            .arg("-c")
            .arg(command)
            .arg("sh")
            .arg(target)
            .env_clear()
            .envs(cairn_protocol::child_environment())
            .status()
    })
    .await;

    let _ = crossterm::terminal::enable_raw_mode();
    let _ = super::terminal::resume_input_modes();
    crate::event_reader::take_pending_wake();
    terminal.clear().map_err(terminal_error)?;

    let status = match status {
        Ok(Ok(status)) => status,
        Ok(Err(err)) => return Err(format!("Could not start the editor ({editor}): {err}")),
        Err(err) => {
            return Err(format!(
                "The editor ({editor}) could not be waited for: {err}"
            ));
        }
    };
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_string(), |code| format!("status {code}"));
        return Err(format!(
            "The editor `{editor}` ended with {code}; {} is as it was unless it saved. Set \
             $EDITOR (or $VISUAL) to the editor you use.",
            path.display()
        ));
    }
    let after = std::fs::read(path).ok();
    Ok(match (before == after, after) {
        (_, None) => format!("{} was not saved.", path.display()),
        (true, Some(_)) => format!("{} is unchanged.", path.display()),
        (false, Some(text)) => {
            let lines = String::from_utf8_lossy(&text).lines().count();
            let plural = if lines == 1 { "" } else { "s" };
            format!(
                "Saved {} ({lines} line{plural}); cairn follows it from the next message.",
                path.display(),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    use std::time::Duration;

    #[cfg(unix)]
    #[test]
    fn the_editors_new_directories_are_private() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(".cairn/projects/p/memory/MEMORY.md");
        create_parent(&file).unwrap();
        for dir in [
            ".cairn",
            ".cairn/projects",
            ".cairn/projects/p",
            ".cairn/projects/p/memory",
        ] {
            let mode = std::fs::metadata(home.path().join(dir))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o700, "{dir}");
        }
    }

    fn edit(path: &Path) -> Result<MemoryCommand, String> {
        Ok(MemoryCommand::Edit(path.to_path_buf()))
    }

    #[test]
    fn names_the_instruction_files_and_the_memory_files() {
        let (cwd, home) = (Path::new("/w"), Path::new("/h"));
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("feedback_pnpm.md"), "x").unwrap();
        std::fs::write(dir.path().join(INDEX_FILE), "x").unwrap();
        let memory = Some(dir.path());
        assert_eq!(command(" ", cwd, home, memory), Ok(MemoryCommand::List));
        assert_eq!(
            command("project", cwd, home, memory),
            edit(Path::new("/w/CLAUDE.md"))
        );
        assert_eq!(
            command("user", cwd, home, None),
            edit(Path::new("/h/.claude/CLAUDE.md"))
        );
        assert_eq!(
            command(" local ", cwd, home, memory),
            edit(Path::new("/w/CLAUDE.local.md"))
        );
        let pnpm = dir.path().join("feedback_pnpm.md");
        assert_eq!(command("feedback_pnpm.md", cwd, home, memory), edit(&pnpm));
        assert_eq!(command("feedback_pnpm", cwd, home, memory), edit(&pnpm));
        assert_eq!(
            command("MEMORY.md", cwd, home, memory),
            edit(&dir.path().join(INDEX_FILE))
        );
        let unknown = |argument: &str, memory: Option<&Path>| {
            command(argument, cwd, home, memory).unwrap_err()
        };
        let error = unknown("team", memory);
        assert!(
            error.starts_with("Unknown memory file \"team\": /memory lists the memory files")
                && error.contains("/memory user (~/.claude/CLAUDE.md)"),
            "{error}"
        );
        // Only a name in the memory directory, and only when memory is on.
        assert!(unknown("feedback_pnpm", None).starts_with("Unknown memory file"));
        assert!(unknown("../memory/feedback_pnpm.md", memory).starts_with("Unknown memory file"));
    }

    #[test]
    fn the_listing_shows_each_memory_with_its_type_and_age_and_the_instruction_files() {
        let cwd = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(cwd.path().join("CLAUDE.md"), "one\ntwo\n").unwrap();
        let saved = save_memory(dir.path(), MemoryType::Feedback, "always use pnpm").unwrap();
        std::fs::write(dir.path().join("broken.md"), "no front matter").unwrap();
        let modified = std::fs::metadata(&saved.path).unwrap().modified().unwrap();

        let list = listing(
            cwd.path(),
            home.path(),
            Some(dir.path()),
            modified + Duration::from_secs(3 * 3600 + 5),
        );

        assert_eq!(
            list,
            format!(
                "Instruction files (/memory project, user or local opens one in $EDITOR):\n  \
                 project  {}/CLAUDE.md (2 lines)\n  \
                 user     {}/.claude/CLAUDE.md (not created yet)\n  \
                 local    {}/CLAUDE.local.md (not created yet)\n\n\
                 Memories in {} (/memory <file> opens one, /memory MEMORY.md the index, # <text> \
                 saves one):\n  \
                 feedback_always_use_pnpm.md · feedback · 3 hours ago\n    \
                 Always use pnpm: always use pnpm\n  \
                 broken.md · not read: it has no front matter (a `---` line first)",
                cwd.path().display(),
                home.path().display(),
                cwd.path().display(),
                dir.path().display(),
            )
        );
    }

    #[test]
    fn the_listing_says_when_memory_is_off_or_empty() {
        let (cwd, home) = (Path::new("/nonexistent/w"), Path::new("/nonexistent/h"));
        let off = listing(cwd, home, None, SystemTime::now());
        assert!(
            off.ends_with(
                "\n\nMemory is off (autoMemoryEnabled is false in the settings): no memory is \
                 recalled and # saves none."
            ),
            "{off}"
        );
        let dir = tempfile::tempdir().unwrap();
        let empty = listing(cwd, home, Some(dir.path()), SystemTime::now());
        assert!(
            empty.ends_with(&format!(
                "\n\nNo memories yet in {}: # <text> saves one, and the model saves what is \
                 worth keeping.",
                dir.path().display()
            )),
            "{empty}"
        );
    }

    #[test]
    fn ages_read_as_a_person_says_them() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(10 * 86_400);
        let ago = |seconds: u64| age(now - Duration::from_secs(seconds), now);
        assert_eq!(ago(5), "just now");
        assert_eq!(ago(60), "1 minute ago");
        assert_eq!(ago(59 * 60), "59 minutes ago");
        assert_eq!(ago(3_600), "1 hour ago");
        assert_eq!(ago(86_400 + 5), "1 day ago");
        assert_eq!(ago(9 * 86_400), "9 days ago");
        // A clock that went back reads as now.
        assert_eq!(age(now + Duration::from_secs(60), now), "just now");
    }
}
