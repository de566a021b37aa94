//! What the user asks for in the input box: slash commands and messages, and the reports
//! the commands write into the transcript.

use std::path::PathBuf;

use cairn_core::assembly::Turn;
use cairn_core::commands::{
    CommandError, CommandSource, CommandTable, CommandTurn, Interactive, McpPromptCall, Report,
    Resolved,
};
use cairn_core::reports::{self, doctor};
use cairn_protocol::{ContentBlock, Op};
use ratatui::Terminal;

use super::inline_backend::InlineBackend;
use super::*;

/// What MCP work done off the UI reports back to it.
#[derive(Debug)]
pub(super) enum McpDone {
    /// A turn ready to go (a prompt fetched, a message with its mentions attached).
    Send {
        turn: Turn,
        shown: String,
        warnings: Vec<String>,
    },
    /// What could not be done, for the transcript.
    Failed(String),
    /// The servers' resources, for `@` completion.
    Resources(Vec<String>),
    /// A line to run again now that the servers have started.
    Retry(String),
}

impl App {
    /// Runs a slash command or sends a message.
    pub(super) fn submit(&mut self, text: String) {
        if text.trim().is_empty() {
            return;
        }
        if let Some(warning) = self.input.record(&text) {
            self.transcript.push_warning(warning);
        }
        if let Some(command) = text.trim_start().strip_prefix('!') {
            if let Err(message) = self.input.start_shell(command.trim()) {
                self.transcript.push_error(message);
            }
            return;
        }
        // `# <text>` is a memory to save, never a message (with a space before the `#`, the
        // line goes as a message: a Markdown heading can still be sent).
        if text.starts_with('#') {
            self.ask_memory_type(text);
            return;
        }
        self.run_line(text, false);
    }

    /// Runs a line typed: a command, or a message. `waited` says the MCP servers were waited
    /// for already.
    fn run_line(&mut self, text: String, waited: bool) {
        // The shared table tells a command from a message, the same way as every face; it
        // holds the connected MCP servers' prompts too.
        let resolved = match cairn_core::commands::command_line(&text) {
            None => Resolved::Message,
            Some(_) => self.command_table().resolve(&text, &self.config.cwd),
        };
        match resolved {
            Resolved::Message => self.send_message(text),
            Resolved::Report {
                report: Report::Mcp,
                arguments,
            } if !arguments.is_empty() => match &self.config.mcp {
                Some(mcp) => self.transcript.push_info(mcp.act(&arguments)),
                None => self
                    .transcript
                    .push_error("No MCP servers are configured here.".to_string()),
            },
            Resolved::Report { report, .. } => {
                let report = self.report(report);
                self.transcript.push_info(report);
            }
            Resolved::Turn(CommandTurn::Compact { instructions }) => self.compact(instructions),
            Resolved::Turn(CommandTurn::Prompt {
                mut turn,
                shown,
                source,
            }) => {
                // The transcript shows the line as typed, the model gets the expansion; what
                // the input box holds for a message goes with a custom command's expansion.
                match source {
                    CommandSource::BuiltIn | CommandSource::Mcp => {}
                    CommandSource::Project | CommandSource::User => {
                        turn.content = self.with_input_blocks(turn.content);
                    }
                }
                self.send_turn(turn, shown);
            }
            Resolved::Interactive {
                command, arguments, ..
            } => self.interactive(command, &arguments),
            Resolved::McpPrompt(call) => self.run_mcp_prompt(call),
            // A prompt of a server still starting, as `-p` does: the line runs once the
            // servers are up (or failed).
            Resolved::Unknown { name, .. }
                if !waited && name.starts_with("mcp__") && self.config.mcp_face.is_some() =>
            {
                if let Some(face) = &self.config.mcp_face {
                    let settled = face.settled();
                    let done = self.mcp_done.clone();
                    tokio::spawn(async move {
                        settled.await;
                        let _ = done.send(McpDone::Retry(text));
                    });
                }
            }
            Resolved::Unknown { name, warnings } => {
                // One of the files that could not be read may be the command asked for.
                for warning in warnings {
                    self.transcript.push_warning(warning);
                }
                self.transcript
                    .push_error(CommandError::Unknown { name }.to_string());
            }
        }
    }

    /// A report's text, from what the app knows now.
    fn report(&self, report: Report) -> String {
        match report {
            Report::Help => slash::help_text(&self.command_table()),
            Report::Cost => self.cost_report(),
            Report::Context => self.context_report(),
            Report::Status => self.status_report(),
            // The agents of the files (the UI's own catalog is not in its config yet).
            Report::Mcp => self.config.mcp.as_ref().map_or_else(
                || "No MCP servers are configured here.".to_string(),
                |mcp| mcp.report(),
            ),
            Report::Agents => reports::agents_report(
                cairn_core::agent::AgentCatalog::load(
                    &self.config.cwd,
                    Some(&self.config.home),
                    None,
                )
                .ok()
                .map(|(catalog, _)| catalog)
                .as_ref(),
            ),
            Report::Doctor => {
                let mut checks = doctor::run_checks(&doctor::DoctorFacts {
                    version: &self.config.version,
                    home: &self.config.home,
                    cwd: &self.config.cwd,
                    credential_variable: &self.config.credential_variable,
                });
                let mcp = self.config.mcp.as_ref().map(|mcp| mcp.health());
                checks.extend(doctor::mcp_checks(&mcp.unwrap_or_default()));
                doctor::render(&checks)
            }
            Report::Skills => cairn_core::skill::skills_report(&self.config.cwd, &self.config.home),
        }
    }

    /// Carries out a command only the interactive UI can.
    fn interactive(&mut self, command: Interactive, arguments: &str) {
        match command {
            Interactive::Exit => self.exit = Some(AppExit::UserQuit),
            Interactive::Clear => self.exit = Some(AppExit::Clear),
            Interactive::Model if arguments.is_empty() => {
                self.transcript.push_info(model_choices(&self.status.model));
            }
            Interactive::Model => {
                let model = (self.config.resolve_model)(arguments);
                if self.is_running() {
                    self.transcript
                        .push_info(format!("Switching to {model} after this turn"));
                }
                let _ = self.ops.send(Op::SetModel { model });
            }
            Interactive::Export => self.export(arguments),
            Interactive::AddDir => self.add_dir(arguments),
            Interactive::Permissions => self.permissions(arguments),
            Interactive::Memory => self.memory_command(arguments),
            Interactive::Resume => self.resume(arguments),
            Interactive::Config => match self.config.settings.read() {
                Ok((_, listing)) => self.transcript.push_info(format!("Settings:\n{listing}")),
                Err(message) => self.transcript.push_error(message),
            },
        }
    }

    /// Sends a message: the text, with what the input box adds to it (see
    /// [`InputAids::message_content`]).
    pub(super) fn send_message(&mut self, text: String) {
        let turn = Turn::message(self.input.message_content(text.clone()));
        // `@server:uri` mentions are read off the UI, then the message goes with them.
        match &self.config.mcp_face {
            Some(face) if face.mentions_resources(&text) => {
                let attached = face.attach_mentions(turn);
                let done = self.mcp_done.clone();
                tokio::spawn(async move {
                    let (turn, warnings) = attached.await;
                    let _ = done.send(McpDone::Send {
                        turn,
                        shown: text,
                        warnings,
                    });
                });
            }
            _ => self.send_turn(turn, text),
        }
    }

    /// The command table of a line typed now: the built-ins, the command files as they are
    /// now, and the connected MCP servers' prompts.
    pub(super) fn command_table(&self) -> CommandTable {
        let table = CommandTable::load(&self.config.cwd, &self.config.home);
        match &self.config.mcp_face {
            Some(face) => table.with_mcp_prompts(face.prompts()),
            None => table,
        }
    }

    /// `/mcp__server__prompt args`: a missing required argument is refused by name; else the
    /// prompt is fetched off the UI and sent as the turn.
    fn run_mcp_prompt(&mut self, call: McpPromptCall) {
        if let Some(error) = call.error() {
            self.transcript.push_error(error.to_string());
            return;
        }
        let Some(face) = &self.config.mcp_face else {
            self.transcript
                .push_error(format!("{}: no MCP servers", call.shown));
            return;
        };
        let shown = call.shown.clone();
        let fetched = face.prompt_turn(call);
        let done = self.mcp_done.clone();
        tokio::spawn(async move {
            let _ = done.send(match fetched.await {
                Ok(turn) => McpDone::Send {
                    turn,
                    shown,
                    warnings: Vec::new(),
                },
                Err(reason) => McpDone::Failed(format!("{shown}: {reason}")),
            });
        });
    }

    /// What MCP work done off the UI came back with.
    pub(super) fn on_mcp_done(&mut self, done: McpDone) {
        match done {
            McpDone::Send {
                turn,
                shown,
                warnings,
            } => {
                for warning in warnings {
                    self.transcript.push_warning(warning);
                }
                self.send_turn(turn, shown);
            }
            McpDone::Failed(message) => self.transcript.push_error(message),
            McpDone::Retry(text) => self.run_line(text, true),
            McpDone::Resources(resources) => {
                self.input.set_resources(resources);
                self.input.refresh(&self.composer);
            }
        }
    }

    /// `@` typed: the servers' resources are listed afresh for its completion.
    pub(super) fn refresh_resources(&self) {
        let Some(face) = &self.config.mcp_face else {
            return;
        };
        let listed = face.resources();
        let done = self.mcp_done.clone();
        tokio::spawn(async move {
            let _ = done.send(McpDone::Resources(listed.await));
        });
    }

    /// An MCP server's elicitation: its form joins the queue (a schema no form can take is
    /// declined at once, with a warning).
    pub(super) fn open_form(&mut self, pending: crate::elicitation_form::PendingElicitation) {
        match crate::elicitation_form::ElicitationForm::new(pending) {
            Ok(form) => self.forms.push_back(form),
            Err(reason) => self.transcript.push_warning(reason),
        }
    }

    /// A custom command's blocks (its tag and expansion) with what the input box adds to a
    /// message: the `!command` output waiting to go before them, the files the expansion
    /// `@`-mentions after.
    fn with_input_blocks(&mut self, command: Vec<ContentBlock>) -> Vec<ContentBlock> {
        let Some(ContentBlock::Text { text: expansion }) = command.last().cloned() else {
            return command;
        };
        let mut content = self.input.message_content(expansion.clone());
        // The pending output, the expansion, its files: the command's blocks take the
        // expansion's place.
        match content
            .iter()
            .position(|block| matches!(block, ContentBlock::Text { text } if *text == expansion))
        {
            Some(at) => {
                content.splice(at..=at, command);
                content
            }
            None => command,
        }
    }

    /// `/compact`: the engine summarizes the conversation as a turn of its own; the
    /// transcript shows the line, then what the compaction did.
    fn compact(&mut self, instructions: Option<String>) {
        let shown = match &instructions {
            Some(text) => format!("/compact {text}"),
            None => "/compact".to_string(),
        };
        if self.ops.compact(instructions).is_err() {
            self.transcript
                .push_error("The engine has stopped; the conversation was not compacted.");
            return;
        }
        self.transcript
            .push_info(format!("{shown}: compacting the conversation…"));
        self.turns_pending += 1;
        if self.turn_started.is_none() {
            self.turn_started = Some(Instant::now());
        }
    }

    /// Sends `turn`, which the transcript shows as `shown` (for a custom command, the line
    /// as typed rather than its expansion). The session host adds the context the
    /// SessionStart hooks gave to the first message.
    fn send_turn(&mut self, turn: Turn, shown: String) {
        let queued = self.is_running().then_some(shown);
        if self.ops.submit(turn).is_err() {
            self.transcript
                .push_error("The engine has stopped; the message was not sent.");
            return;
        }
        self.turns_pending += 1;
        self.queued.extend(queued);
        if self.turn_started.is_none() {
            self.turn_started = Some(Instant::now());
        }
    }

    /// `/resume [id]`: leaves this session for another one, once it is sure there is one.
    /// The whole conversation in full detail for the transcript view: the messages a resume
    /// left out, then the transcript.
    pub(super) fn full_transcript(&mut self, width: u16) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if self.earlier > 0 {
            if self
                .earlier_lines
                .as_ref()
                .is_none_or(|(at, _)| *at != width)
            {
                let mut earlier = Transcript::new();
                earlier.set_working_dir(self.config.cwd.clone());
                replay::replay_all(&mut earlier, &self.conversation[..self.earlier]);
                self.earlier_lines = Some((width, earlier.render_full(width, &self.theme)));
            }
            if let Some((_, earlier)) = &self.earlier_lines {
                lines.extend(earlier.iter().cloned());
            }
        }
        lines.extend(self.transcript.render_full(width, &self.theme));
        lines
    }

    /// `/resume [id]`: leaves this session for the one named, or opens the list of the
    /// others (the app stays as it is if the user cancels).
    pub(super) fn resume(&mut self, session: &str) {
        let others: Vec<crate::picker::PickerEntry> =
            (self.config.resumable_sessions)(&self.config.cwd)
                .into_iter()
                .filter(|entry| entry.id != self.config.session_id)
                .collect();
        if session == self.config.session_id {
            self.transcript
                .push_error(format!("{session} is this session."));
        } else if !session.is_empty() && !others.iter().any(|entry| entry.id == session) {
            self.transcript.push_error(format!(
                "No session {session} in this directory; /resume without an id lists them."
            ));
        } else if others.is_empty() {
            self.transcript
                .push_error("No other session to resume in this directory.");
        } else if session.is_empty() {
            self.pick_request = Some(others);
        } else {
            self.exit = Some(AppExit::Resume(session.to_string()));
        }
    }

    pub(super) fn permissions(&mut self, arguments: &str) {
        let Some(gate) = &self.config.permission_gate else {
            self.transcript
                .push_error("This session runs without a permission gate.");
            return;
        };
        let outcome = match permissions_view::parse(arguments) {
            permissions_view::Action::List => {
                Ok(permissions_view::render(gate, &self.status.permission_mode))
            }
            permissions_view::Action::Add(kind, rule) => {
                permissions_view::add(gate, &self.config.cwd, kind, rule)
            }
            permissions_view::Action::Remove(rule) => permissions_view::remove(gate, rule),
            permissions_view::Action::Usage => Err(permissions_view::USAGE.to_string()),
        };
        match outcome {
            Ok(report) => self.transcript.push_info(report),
            Err(message) => self.transcript.push_error(message),
        }
    }

    pub(super) fn cost_report(&self) -> String {
        let agents: Vec<reports::AgentCost> = self
            .agent_costs
            .iter()
            .map(|(_, agent)| agent.clone())
            .filter(|agent| agent.requests > 0)
            .collect();
        reports::cost_report(&reports::CostFacts {
            agents: &agents,
            usage: self.usage,
            cost_usd: self.cost_usd,
            cost_unknown: self.cost_unknown,
            session_time: self.started.elapsed(),
        })
    }

    pub(super) fn add_dir(&mut self, path: &str) {
        let Some(gate) = &self.config.permission_gate else {
            self.transcript
                .push_error("/add-dir needs the permission gate, which this session runs without.");
            return;
        };
        if path.is_empty() {
            self.transcript.push_error("Usage: /add-dir <path>");
            return;
        }
        let dir = resolve_path(path, &self.config.cwd, &self.config.home);
        match dir.canonicalize() {
            Ok(dir) if dir.is_dir() => {
                gate.add_workspace_root(dir.clone());
                self.transcript.push_info(format!(
                    "Added {} to the workspace for this session. (Sandboxed Bash commands \
                     still write only where they could at startup.)",
                    dir.display()
                ));
            }
            Ok(dir) => self
                .transcript
                .push_error(format!("{} is not a directory", dir.display())),
            Err(err) => self
                .transcript
                .push_error(format!("Cannot add {}: {err}", dir.display())),
        }
    }

    /// `/export <file>` writes the file; `/export` alone writes nothing yet: it says where the
    /// file would go and puts `/export <suggested name>` in the input box, for Enter to
    /// confirm or for the name to be changed first.
    pub(super) fn export(&mut self, file: &str) {
        if file.trim().is_empty() {
            let name = export::suggested_file_name(&self.config.session_id);
            let path = self.config.cwd.join(&name);
            self.composer.set_text(&format!("/export {name}"));
            self.input.refresh(&self.composer);
            self.transcript.push_info(format!(
                "/export writes the conversation as Markdown. Press Enter to write {}, or change \
                 the file name first (Ctrl+C clears it).",
                path.display()
            ));
            return;
        }
        let path = resolve_path(file.trim(), &self.config.cwd, &self.config.home);
        match export::write_export(&path, &self.conversation, &self.config.session_id) {
            Ok(()) => self
                .transcript
                .push_info(format!("Exported the conversation to {}", path.display())),
            Err(message) => self.transcript.push_error(message),
        }
    }

    pub(super) fn status_report(&self) -> String {
        let settings = self.config.settings.read();
        reports::status_report(&reports::StatusFacts {
            version: &self.config.version,
            model: &self.status.model,
            credential_variable: &self.config.credential_variable,
            permission_mode: &self.status.permission_mode,
            cwd: &self.config.cwd,
            session_id: &self.config.session_id,
            settings_sources: match &settings {
                Ok((sources, _)) => Ok(sources),
                Err(message) => Err(message),
            },
        })
    }
}

/// Shows the session list where the viewport was and returns the id chosen (`None`:
/// cancelled). The caller has stopped reading keys; the viewport is drawn anew after.
pub(super) async fn pick_session(
    terminal: &mut Terminal<InlineBackend>,
    sessions: Vec<crate::picker::PickerEntry>,
    theme: Theme,
) -> Result<Option<String>, String> {
    let terminal_error = |err: std::io::Error| format!("Terminal error around the list: {err}");
    terminal.clear().map_err(terminal_error)?;
    let chosen = tokio::task::spawn_blocking(move || {
        crate::picker::run_picker(&sessions, &theme)
            .map(|index| index.and_then(|index| sessions.get(index).map(|s| s.id.clone())))
    })
    .await;
    // The list leaves raw mode when it ends; the app needs it back.
    let _ = crossterm::terminal::enable_raw_mode();
    crate::event_reader::take_pending_wake();
    terminal.clear().map_err(terminal_error)?;
    match chosen {
        Ok(Ok(id)) => Ok(id),
        Ok(Err(err)) => Err(format!("Cannot show the session list: {err}")),
        Err(err) => Err(format!("The session list stopped unexpectedly: {err}")),
    }
}

/// What `/model` without a name shows: the model in use and what `/model <name>` takes, the
/// aliases with the model each stands for, the current one marked.
pub(super) fn model_choices(current: &str) -> String {
    let mut text = format!("Model: {current}\nSwitch with /model <name>:");
    for (alias, id) in cairn_llm::models::ALIASES {
        let mark = if *id == current { "  ← current" } else { "" };
        text.push_str(&format!("\n  {alias:<8}{id}{mark}"));
    }
    text.push_str("\n  or any model id the API takes (/model claude-opus-4-1)");
    text
}

/// A path the user typed: `~` and `~/…` are in the home directory, a relative path is in the
/// working directory.
pub(super) fn resolve_path(typed: &str, cwd: &std::path::Path, home: &std::path::Path) -> PathBuf {
    match std::path::Path::new(typed).strip_prefix("~") {
        Ok(rest) if rest.as_os_str().is_empty() => home.to_path_buf(),
        Ok(rest) => home.join(rest),
        Err(_) => cwd.join(typed),
    }
}

#[cfg(test)]
#[path = "commands_tests.rs"]
mod tests;
