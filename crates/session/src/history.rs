//! Turning the message entries of a file into a history the API accepts.
//!
//! The API wants every `tool_use` of an assistant message answered by a `tool_result` in the
//! user message right after it, and no `tool_result` without its call. A crash can break both
//! rules, so the history is built with these decisions:
//!
//! - tool calls with no recorded result (a crash or interrupt mid-tool) get an `is_error`
//!   result saying the call was interrupted ([`INTERRUPTED_TOOL_RESULT`]), in the results
//!   message if there is one, otherwise in a new user message. At the end of the history that
//!   message is also returned as the repair, for the caller to append to the file;
//! - tool results that answer no pending call (unknown id, duplicate, or no preceding call)
//!   are dropped with a warning: sending them would make the API refuse the whole history;
//! - results split over several `tool_results` entries are merged into one message;
//! - consecutive user messages are kept as they are: the API accepts them (it joins them);
//! - a history that begins with the assistant (its first prompt's line was damaged) gets the
//!   user message [`LOST_START`] in front: the API takes only a user message first.

use std::path::PathBuf;

use cairn_protocol::{ContentBlock, Message, Role};

use crate::{LoadWarning, LoadWarningKind};

/// The result given to a tool call whose result was never recorded.
pub const INTERRUPTED_TOOL_RESULT: &str =
    "The tool call was interrupted and did not complete; its result is unknown.";

/// The user message put first when the history's first prompt was lost: the API takes only
/// a user message first.
pub const LOST_START: &str =
    "(The start of this conversation could not be read back from the session file.)";

#[derive(Debug)]
pub(crate) struct History {
    path: PathBuf,
    messages: Vec<Message>,
    pending: Option<PendingCalls>,
    warnings: Vec<LoadWarning>,
    /// Set when the history begins with an assistant message: the line it came from.
    first_assistant_line: Option<usize>,
}

/// The tool calls of the last assistant message that still wait for results.
#[derive(Debug)]
struct PendingCalls {
    /// The line of the assistant entry.
    line: usize,
    unanswered: Vec<String>,
    /// Where the results message is, once one arrived.
    results_at: Option<usize>,
}

impl History {
    pub(crate) fn new(path: PathBuf) -> Self {
        History {
            path,
            messages: Vec::new(),
            pending: None,
            warnings: Vec::new(),
            first_assistant_line: None,
        }
    }

    pub(crate) fn push_user(&mut self, message: Message) {
        self.close_pending();
        self.messages.push(message);
    }

    pub(crate) fn push_assistant(&mut self, message: Message, line: usize) {
        self.close_pending();
        if self.messages.is_empty() {
            self.first_assistant_line = Some(line);
        }
        let unanswered: Vec<String> = message
            .tool_uses()
            .map(|(id, _, _)| id.to_owned())
            .collect();
        if !unanswered.is_empty() {
            self.pending = Some(PendingCalls {
                line,
                unanswered,
                results_at: None,
            });
        }
        self.messages.push(message);
    }

    pub(crate) fn push_tool_results(&mut self, message: Message, line: usize) {
        let mut kept = Vec::with_capacity(message.content.len());
        let mut unmatched = Vec::new();
        for block in message.content {
            let ContentBlock::ToolResult { tool_use_id, .. } = &block else {
                kept.push(block);
                continue;
            };
            let answered = self.pending.as_mut().and_then(|pending| {
                let at = pending.unanswered.iter().position(|id| id == tool_use_id)?;
                Some(pending.unanswered.remove(at))
            });
            match answered {
                Some(_) => kept.push(block),
                None => unmatched.push(tool_use_id.clone()),
            }
        }
        if !unmatched.is_empty() {
            self.warn(
                line,
                LoadWarningKind::UnmatchedToolResults {
                    tool_use_ids: unmatched,
                },
            );
        }
        if kept.is_empty() {
            return;
        }
        match &mut self.pending {
            Some(pending) => {
                match pending.results_at.and_then(|at| self.messages.get_mut(at)) {
                    Some(results) => results.content.extend(kept),
                    None => {
                        pending.results_at = Some(self.messages.len());
                        self.messages.push(Message {
                            role: Role::User,
                            content: kept,
                        });
                    }
                }
                if pending.unanswered.is_empty() {
                    self.pending = None;
                }
            }
            // Only blocks other than tool results are left: an ordinary user message.
            None => self.messages.push(Message {
                role: Role::User,
                content: kept,
            }),
        }
    }

    /// A compaction boundary: the history restarts from its summary.
    /// A compaction boundary: the history so far is replaced by the compacted conversation's
    /// opening messages (or, from a file that has none, the summary alone).
    pub(crate) fn restart_from_summary(&mut self, summary: &str, opening: &[Message]) {
        self.pending = None;
        self.first_assistant_line = None;
        self.messages.clear();
        if opening.is_empty() {
            self.messages.push(Message::user_text(summary));
        } else {
            self.messages.extend_from_slice(opening);
        }
    }

    /// The messages, the repair appended at the end (if any), and the warnings.
    pub(crate) fn finish(mut self) -> (Vec<Message>, Option<Message>, Vec<LoadWarning>) {
        let repair = self.close_pending();
        if let Some(line) = self.first_assistant_line {
            self.messages.insert(0, Message::user_text(LOST_START));
            self.warn(line, LoadWarningKind::LostStart);
        }
        (self.messages, repair, self.warnings)
    }

    /// Answers the pending calls that got no result as interrupted; returns those answers.
    fn close_pending(&mut self) -> Option<Message> {
        let pending = self.pending.take()?;
        if pending.unanswered.is_empty() {
            return None;
        }
        let answers: Vec<ContentBlock> = pending
            .unanswered
            .iter()
            .map(|id| ContentBlock::tool_result(id, INTERRUPTED_TOOL_RESULT, true))
            .collect();
        match pending.results_at.and_then(|at| self.messages.get_mut(at)) {
            Some(results) => results.content.extend(answers.iter().cloned()),
            None => self.messages.push(Message {
                role: Role::User,
                content: answers.clone(),
            }),
        }
        self.warn(
            pending.line,
            LoadWarningKind::InterruptedToolCalls {
                tool_use_ids: pending.unanswered,
            },
        );
        Some(Message {
            role: Role::User,
            content: answers,
        })
    }

    fn warn(&mut self, line: usize, kind: LoadWarningKind) {
        self.warnings.push(LoadWarning {
            path: self.path.clone(),
            line,
            kind,
        });
    }
}
