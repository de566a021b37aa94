//! What surrounds the input box besides editing: Up/Down through past prompts, the `/`
//! command menu, `@` file completions, and `!` shell commands whose output rides along with
//! the next message.

use std::path::{Path, PathBuf};

use cairn_protocol::ContentBlock;
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::text::{Line, Span};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};
use tokio::sync::oneshot;

use super::command_menu::{self, CommandEntry};
use super::composer::{Composer, Edit};
use super::history::PromptHistory;
use super::mention::{FileIndex, MAX_COMPLETIONS, attachments, mention_at};
use super::shell_escape::{SHELL_TIMEOUT, ShellOutput, run_shell};
use crate::Theme;

pub struct InputAids {
    cwd: PathBuf,
    history: PromptHistory,
    /// A failed history write was reported once; later ones are silent.
    history_warned: bool,
    files: FileIndex,
    /// Files matching the `@mention` at the cursor, and which one Tab/Enter would take.
    completions: Vec<String>,
    selected: usize,
    /// The running `!command` and how to stop it.
    shell: Option<(String, oneshot::Sender<()>)>,
    shell_done: UnboundedSender<ShellOutput>,
    shell_done_receiver: Option<UnboundedReceiver<ShellOutput>>,
    /// `!command` results not yet sent, added to the next message.
    pending_shell: Vec<String>,
    /// Ctrl+R's reverse search through the history, while it is open.
    search: Option<HistorySearch>,
    /// The slash commands the `/` menu offers.
    commands: Vec<CommandEntry>,
    /// The commands matching the name typed after `/` (indexes into `commands`); when this is
    /// not empty, `selected` points into it.
    menu: Vec<usize>,
    /// The MCP servers' resources as `server:uri`, offered by `@` completion before files.
    resources: Vec<String>,
}

/// A Ctrl+R search: what is typed, the entry it found, and the text it replaced.
struct HistorySearch {
    query: String,
    found: Option<usize>,
    draft: String,
}

impl InputAids {
    pub fn new(history_path: Option<PathBuf>, cwd: &Path) -> InputAids {
        let (shell_done, receiver) = unbounded_channel();
        InputAids {
            cwd: cwd.to_path_buf(),
            history: PromptHistory::load(history_path, cwd),
            history_warned: false,
            files: FileIndex::default(),
            completions: Vec::new(),
            selected: 0,
            shell: None,
            shell_done,
            shell_done_receiver: Some(receiver),
            pending_shell: Vec::new(),
            search: None,
            commands: Vec::new(),
            menu: Vec::new(),
            resources: Vec::new(),
        }
    }

    /// The MCP resources `@` completion offers (as `server:uri`).
    pub fn set_resources(&mut self, resources: Vec<String>) {
        self.resources = resources;
    }

    /// The commands the `/` menu offers.
    pub fn set_commands(&mut self, commands: Vec<CommandEntry>) {
        self.commands = commands;
    }

    /// Starts listing the project's files in the background (needs a tokio runtime).
    pub fn start_file_index(&mut self) {
        self.files.ensure_started(&self.cwd);
    }

    /// Where finished `!command`s arrive, for the event loop. Asked again, it hands out a
    /// new channel, and results go there from then on.
    pub fn take_shell_results(&mut self) -> UnboundedReceiver<ShellOutput> {
        match self.shell_done_receiver.take() {
            Some(receiver) => receiver,
            None => {
                let (sender, receiver) = unbounded_channel();
                self.shell_done = sender;
                receiver
            }
        }
    }

    /// Handles a key for the input box: completions and history first, then the composer.
    pub fn handle_key(&mut self, key: KeyEvent, composer: &mut Composer) -> Edit {
        let plain = key.modifiers.is_empty();
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        if control && key.code == KeyCode::Char('r') {
            self.completions.clear();
            match &mut self.search {
                Some(search) => {
                    let found = search.found;
                    self.run_search(composer, found);
                }
                None => {
                    self.search = Some(HistorySearch {
                        query: String::new(),
                        found: None,
                        draft: composer.text().to_string(),
                    });
                }
            }
            return Edit::Changed;
        }
        if let Some(search) = &mut self.search {
            match key.code {
                KeyCode::Enter => {
                    // Accepting puts the entry in the box to edit or send.
                    self.search = None;
                    self.history.stop_browsing();
                }
                KeyCode::Backspace => {
                    search.query.pop();
                    self.run_search(composer, None);
                }
                KeyCode::Char(c) if !control => {
                    search.query.push(c);
                    self.run_search(composer, None);
                }
                _ => {}
            }
            return Edit::Changed;
        }
        if !self.menu.is_empty() && plain {
            let count = self.menu.len();
            let chosen = self.commands[self.menu[self.selected.min(count - 1)]].clone();
            match key.code {
                KeyCode::Up => {
                    self.selected = (self.selected + count - 1) % count;
                    return Edit::Changed;
                }
                KeyCode::Down => {
                    self.selected = (self.selected + 1) % count;
                    return Edit::Changed;
                }
                // Enter runs the command, unless it needs an argument: then, as Tab, it is
                // filled in for the argument to follow.
                KeyCode::Enter if !chosen.needs_argument => {
                    self.menu.clear();
                    composer.clear();
                    return Edit::Submitted(format!("/{}", chosen.name));
                }
                KeyCode::Tab | KeyCode::Enter => {
                    composer.set_text(&format!("/{} ", chosen.name));
                    self.menu.clear();
                    return Edit::Changed;
                }
                _ => {}
            }
        }
        if !self.completions.is_empty() && plain {
            let count = self.completions.len();
            match key.code {
                KeyCode::Up => {
                    self.selected = (self.selected + count - 1) % count;
                    return Edit::Changed;
                }
                KeyCode::Down => {
                    self.selected = (self.selected + 1) % count;
                    return Edit::Changed;
                }
                KeyCode::Tab | KeyCode::Enter => {
                    self.accept_completion(composer);
                    return Edit::Changed;
                }
                _ => {}
            }
        }
        // Up and Down move between the lines of a multi-line text (a recalled one too) and
        // go to the history only from its first or last line.
        if plain && key.code == KeyCode::Up && composer.cursor_on_first_line() {
            if let Some(text) = self.history.previous(composer.text()) {
                composer.set_text(&text);
            }
            return Edit::Changed;
        }
        if plain
            && key.code == KeyCode::Down
            && self.history.is_browsing()
            && composer.cursor_on_last_line()
        {
            if let Some(text) = self.history.next() {
                composer.set_text(&text);
            }
            return Edit::Changed;
        }
        let before = composer.text().to_string();
        let edit = composer.handle_key(key);
        if composer.text() != before {
            self.history.stop_browsing();
        }
        self.update_completions(composer);
        edit
    }

    /// Esc: cancels a history search, closes the completions, or stops a running
    /// `!command`. False if none was there, so Esc can interrupt the turn instead.
    pub fn dismiss(&mut self, composer: &mut Composer) -> bool {
        if let Some(search) = self.search.take() {
            composer.set_text(&search.draft);
            return true;
        }
        if !self.completions.is_empty() || !self.menu.is_empty() {
            self.completions.clear();
            self.menu.clear();
            return true;
        }
        if let Some((_, cancel)) = self.shell.take() {
            let _ = cancel.send(());
            return true;
        }
        false
    }

    /// Brings the `/` menu and the `@` list up to date with the box after a change that did
    /// not come through [`InputAids::handle_key`] (a paste).
    pub fn refresh(&mut self, composer: &Composer) {
        self.history.stop_browsing();
        self.update_completions(composer);
    }

    /// Closes the completion list and any history search (the box was cleared).
    pub fn close_completions(&mut self) {
        self.completions.clear();
        self.menu.clear();
        self.search = None;
    }

    /// Remembers a sent prompt; a warning to show the first time the file cannot be written.
    pub fn record(&mut self, text: &str) -> Option<String> {
        match self.history.record(text) {
            Ok(()) => None,
            Err(err) if !self.history_warned => {
                self.history_warned = true;
                Some(err.to_string())
            }
            Err(_) => None,
        }
    }

    /// Starts `!command`; an error message if one is already running.
    pub fn start_shell(&mut self, command: &str) -> Result<(), String> {
        if let Some((running, _)) = &self.shell {
            return Err(format!(
                "`{running}` is still running; press Esc to stop it first."
            ));
        }
        let (cancel, cancelled) = oneshot::channel();
        self.shell = Some((command.to_string(), cancel));
        let done = self.shell_done.clone();
        let cwd = self.cwd.clone();
        let command = command.to_string();
        tokio::spawn(async move {
            let output = run_shell(command, &cwd, SHELL_TIMEOUT, cancelled).await;
            let _ = done.send(output);
        });
        Ok(())
    }

    /// The `!command` running now.
    pub fn running_shell(&self) -> Option<&str> {
        self.shell.as_ref().map(|(command, _)| command.as_str())
    }

    /// Takes in a finished `!command`; returns what the transcript shows.
    pub fn finish_shell(&mut self, output: &ShellOutput) -> String {
        self.shell = None;
        self.pending_shell.push(output.context());
        output.notice()
    }

    /// The blocks of a user message: pending `!command` output, the text, then the files
    /// its `@mentions` name.
    pub fn message_content(&mut self, text: String) -> Vec<ContentBlock> {
        let files = attachments(&text, &self.cwd);
        let mut content: Vec<ContentBlock> = self
            .pending_shell
            .drain(..)
            .map(ContentBlock::text)
            .collect();
        content.push(ContentBlock::text(text));
        content.extend(files);
        content
    }

    /// The completion list under the input box, the selected one marked, or the history
    /// search's query.
    pub fn completion_lines(&self, theme: &Theme) -> Vec<Line<'static>> {
        if let Some(search) = &self.search {
            let found = if search.found.is_some() || search.query.is_empty() {
                ""
            } else {
                " (no match)"
            };
            return vec![Line::from(vec![
                Span::styled("  search history: ", theme.dim),
                Span::raw(search.query.clone()),
                Span::styled(
                    format!("{found} · ctrl+r older · enter use · esc cancel"),
                    theme.dim,
                ),
            ])];
        }
        if !self.menu.is_empty() {
            // `name [hint]`, as /help writes it.
            let usage = |entry: &CommandEntry| match &entry.hint {
                Some(hint) => format!("{} {hint}", entry.name),
                None => entry.name.clone(),
            };
            let width = self
                .menu
                .iter()
                .map(|&index| usage(&self.commands[index]).chars().count())
                .max()
                .unwrap_or(0);
            // A window of the list that holds the selection; a last line says what is below.
            let rows = if self.menu.len() > MAX_COMPLETIONS {
                MAX_COMPLETIONS - 1
            } else {
                MAX_COMPLETIONS
            };
            let first = (self.selected + 1).saturating_sub(rows);
            let below = self.menu.len().saturating_sub(first + rows);
            let mut lines: Vec<Line<'static>> = self
                .menu
                .iter()
                .enumerate()
                .skip(first)
                .take(rows)
                .map(|(position, &index)| {
                    let entry = &self.commands[index];
                    let name = format!("/{:<width$}  ", usage(entry));
                    let (mark, style) = if position == self.selected {
                        ("  › ", theme.status)
                    } else {
                        ("    ", theme.dim)
                    };
                    Line::from(vec![
                        Span::styled(mark, style),
                        Span::styled(name, style),
                        Span::styled(entry.description.clone(), theme.dim),
                    ])
                })
                .collect();
            if self.menu.len() > MAX_COMPLETIONS {
                let more = if below > 0 {
                    format!("    ↓ {below} more")
                } else {
                    format!("    ↑ {first} above")
                };
                lines.push(Line::from(Span::styled(more, theme.dim)));
            }
            return lines;
        }
        self.completions
            .iter()
            .enumerate()
            .map(|(index, path)| {
                if index == self.selected {
                    Line::from(vec![
                        Span::styled("  › ", theme.status),
                        Span::styled(path.clone(), theme.status),
                    ])
                } else {
                    Line::from(vec![
                        Span::raw("    "),
                        Span::styled(path.clone(), theme.dim),
                    ])
                }
            })
            .collect()
    }

    /// Shows the newest entry older than `before` that matches the search's query.
    fn run_search(&mut self, composer: &mut Composer, before: Option<usize>) {
        let Some(search) = &mut self.search else {
            return;
        };
        if search.query.is_empty() {
            search.found = None;
            composer.set_text(&search.draft);
            return;
        }
        match self.history.search(&search.query, before) {
            Some((index, text)) => {
                search.found = Some(index);
                composer.set_text(text);
            }
            // Nothing older: keep showing the last match.
            None if before.is_some() => {}
            None => {
                search.found = None;
                composer.set_text(&search.draft);
            }
        }
    }

    fn update_completions(&mut self, composer: &Composer) {
        let menu = match command_menu::typed_name(composer.text(), composer.cursor()) {
            Some(name) => command_menu::matches(&self.commands, name, usize::MAX),
            None => Vec::new(),
        };
        if menu != self.menu {
            self.menu = menu;
            self.selected = 0;
        }
        if !self.menu.is_empty() {
            self.completions.clear();
            return;
        }
        let matches = match mention_at(composer.text(), composer.cursor()) {
            Some((_, query)) => {
                // The servers' resources that hold what is typed, then the files.
                let query_lower = query.to_lowercase();
                let mut matches: Vec<String> = self
                    .resources
                    .iter()
                    .filter(|resource| resource.to_lowercase().contains(&query_lower))
                    .take(MAX_COMPLETIONS)
                    .cloned()
                    .collect();
                let room = MAX_COMPLETIONS - matches.len();
                matches.extend(self.files.complete(query, room));
                matches
            }
            None => Vec::new(),
        };
        if matches != self.completions {
            self.completions = matches;
            self.selected = 0;
        }
    }

    fn accept_completion(&mut self, composer: &mut Composer) {
        let chosen = self.completions.get(self.selected).cloned();
        if let (Some(path), Some((start, _))) =
            (chosen, mention_at(composer.text(), composer.cursor()))
        {
            composer.replace_before_cursor(start, &format!("@{path} "));
        }
        self.completions.clear();
        self.selected = 0;
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, reason = "a test should fail loudly")]
    use super::*;
    use pretty_assertions::assert_eq;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    fn typed(aids: &mut InputAids, composer: &mut Composer, text: &str) {
        for c in text.chars() {
            aids.handle_key(key(KeyCode::Char(c)), composer);
        }
    }

    #[test]
    fn up_and_down_walk_the_history_and_come_back_to_the_draft() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        let mut earlier = InputAids::new(Some(path.clone()), dir.path());
        assert_eq!(earlier.record("first"), None);
        assert_eq!(earlier.record("second"), None);

        let mut aids = InputAids::new(Some(path), dir.path());
        let mut composer = Composer::default();
        typed(&mut aids, &mut composer, "dra");
        aids.handle_key(key(KeyCode::Up), &mut composer);
        assert_eq!(composer.text(), "second");
        aids.handle_key(key(KeyCode::Up), &mut composer);
        assert_eq!(composer.text(), "first");
        aids.handle_key(key(KeyCode::Down), &mut composer);
        aids.handle_key(key(KeyCode::Down), &mut composer);
        assert_eq!(composer.text(), "dra");
    }

    #[test]
    fn slash_opens_the_command_menu_which_runs_or_fills_in_the_choice() {
        let mut aids = InputAids::new(None, Path::new("/p"));
        aids.set_commands(command_menu::entries(
            &cairn_core::commands::CommandTable::built_in(),
        ));
        let mut composer = Composer::default();
        let shown = |aids: &InputAids| -> Vec<String> {
            aids.completion_lines(&Theme::plain())
                .iter()
                .map(|line| line.to_string().trim_end().to_string())
                .collect()
        };
        typed(&mut aids, &mut composer, "/");
        let all = shown(&aids);
        assert_eq!(all.len(), MAX_COMPLETIONS);
        assert!(all[MAX_COMPLETIONS - 1].contains("more"), "{all:?}");
        // Down past the window scrolls it: every command can be reached.
        let count = command_menu::entries(&cairn_core::commands::CommandTable::built_in()).len();
        for _ in 0..count - 1 {
            aids.handle_key(key(KeyCode::Down), &mut composer);
        }
        let end = shown(&aids);
        assert!(end[MAX_COMPLETIONS - 2].starts_with("  › /init"), "{end:?}");
        assert!(end[MAX_COMPLETIONS - 1].contains("above"), "{end:?}");
        aids.handle_key(key(KeyCode::Down), &mut composer);
        assert!(shown(&aids)[0].starts_with("  › /help"), "wraps to the top");
        typed(&mut aids, &mut composer, "co");
        let menu = shown(&aids);
        assert!(menu[0].starts_with("  › /cost"), "{menu:?}");
        assert!(menu[1].starts_with("    /context"), "{menu:?}");
        aids.handle_key(key(KeyCode::Down), &mut composer);
        assert_eq!(
            aids.handle_key(key(KeyCode::Enter), &mut composer),
            Edit::Submitted("/context".into())
        );
        assert_eq!(composer.text(), "");
        assert!(shown(&aids).is_empty());

        // A command that needs an argument is filled in instead.
        typed(&mut aids, &mut composer, "/add");
        assert_eq!(
            aids.handle_key(key(KeyCode::Enter), &mut composer),
            Edit::Changed
        );
        assert_eq!(composer.text(), "/add-dir ");
        assert!(shown(&aids).is_empty(), "the menu closes at the space");

        // Esc closes the menu and keeps the text.
        composer.clear();
        typed(&mut aids, &mut composer, "/he");
        assert!(aids.dismiss(&mut composer));
        assert_eq!(composer.text(), "/he");
        assert!(shown(&aids).is_empty());
    }

    #[test]
    fn up_moves_through_a_recalled_multi_line_entry_before_going_further_back() {
        let mut aids = InputAids::new(None, Path::new("/p"));
        aids.record("older");
        aids.record("first line\nsecond line");
        let mut composer = Composer::default();
        aids.handle_key(key(KeyCode::Up), &mut composer);
        assert_eq!(composer.text(), "first line\nsecond line");
        aids.handle_key(key(KeyCode::Up), &mut composer);
        assert_eq!(
            composer.text(),
            "first line\nsecond line",
            "up a line, same entry"
        );
        assert!(composer.cursor_on_first_line());
        aids.handle_key(key(KeyCode::Up), &mut composer);
        assert_eq!(composer.text(), "older");
        aids.handle_key(key(KeyCode::Down), &mut composer);
        assert_eq!(composer.text(), "first line\nsecond line");
    }

    #[test]
    fn a_history_write_failure_warns_once() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("history.jsonl");
        std::fs::create_dir(&path).unwrap();
        let mut aids = InputAids::new(Some(path), dir.path());
        assert!(aids.record("one").is_some());
        assert_eq!(aids.record("two"), None);
    }

    #[test]
    fn ctrl_r_searches_back_and_esc_restores_the_draft() {
        let mut aids = InputAids::new(None, Path::new("/p"));
        for text in ["fix the build", "run tests", "build again"] {
            aids.record(text);
        }
        let mut composer = Composer::default();
        let ctrl_r = KeyEvent::new(KeyCode::Char('r'), KeyModifiers::CONTROL);
        typed(&mut aids, &mut composer, "draft");
        aids.handle_key(ctrl_r, &mut composer);
        typed(&mut aids, &mut composer, "buil");
        assert_eq!(composer.text(), "build again");
        aids.handle_key(ctrl_r, &mut composer);
        assert_eq!(composer.text(), "fix the build");
        aids.handle_key(ctrl_r, &mut composer);
        assert_eq!(composer.text(), "fix the build");
        assert!(aids.dismiss(&mut composer));
        assert_eq!(composer.text(), "draft");

        aids.handle_key(ctrl_r, &mut composer);
        typed(&mut aids, &mut composer, "tests");
        assert_eq!(
            aids.handle_key(key(KeyCode::Enter), &mut composer),
            Edit::Changed
        );
        assert_eq!(composer.text(), "run tests");
        assert!(aids.search.is_none());
    }

    #[tokio::test]
    async fn tab_completes_a_mention_and_the_file_is_attached() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/notes.txt"), "the notes").unwrap();
        let mut aids = InputAids::new(None, dir.path());
        aids.files = FileIndex::with_files(vec!["src/main.rs".into(), "src/notes.txt".into()]);
        let mut composer = Composer::default();
        typed(&mut aids, &mut composer, "read @notes");
        assert_eq!(aids.completions, vec!["src/notes.txt".to_string()]);
        aids.handle_key(key(KeyCode::Tab), &mut composer);
        assert_eq!(composer.text(), "read @src/notes.txt ");
        assert!(aids.completions.is_empty());
        let Edit::Submitted(text) = aids.handle_key(key(KeyCode::Enter), &mut composer) else {
            panic!("Enter should submit");
        };
        assert_eq!(
            aids.message_content(text),
            vec![
                ContentBlock::text("read @src/notes.txt "),
                ContentBlock::text("Contents of src/notes.txt:\n```\nthe notes\n```"),
            ]
        );
    }

    #[tokio::test]
    async fn shell_output_goes_before_the_next_message() {
        let dir = tempfile::tempdir().unwrap();
        let mut aids = InputAids::new(None, dir.path());
        let mut results = aids.take_shell_results();
        aids.start_shell("echo hi").unwrap();
        assert!(aids.start_shell("echo again").is_err());
        let output = results.recv().await.unwrap();
        assert_eq!(aids.finish_shell(&output), "! echo hi\nhi");
        assert_eq!(aids.running_shell(), None);
        assert_eq!(
            aids.message_content("next".into()),
            vec![
                ContentBlock::text(
                    "<bash-input>echo hi</bash-input>\n<bash-stdout>hi</bash-stdout>\n\
                     <bash-stderr></bash-stderr>"
                ),
                ContentBlock::text("next"),
            ]
        );
        assert_eq!(aids.message_content("after".into()).len(), 1);
    }
}
