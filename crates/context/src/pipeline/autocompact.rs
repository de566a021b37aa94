//! Step 5, autocompact (and `/compact`): the conversation becomes a structured summary plus
//! the state the work cannot go on without.
//!
//! The new conversation opens with one user message: the summary, then the files the session
//! edited (and then the ones it read last) as they are on disk now, the todo list, the skills
//! the session loaded ([`super::carried_skills`]), and the user's own messages verbatim, the
//! most recent always. After it come the messages of the
//! turn in progress when they fit, starting with the model's, so tool calls keep their results.
//! The whole stays under a third of the window, so the session has room to go on, and under
//! what went in: a file the kept messages already show whole is not attached again, and a
//! compaction that would not make the conversation smaller is not made.

use std::collections::BTreeSet;
use std::path::Path;

use cairn_protocol::{ContentBlock, Message, Role};
use serde_json::Value;

use super::accounting::{Calibration, message_tokens, messages_tokens};
use super::settings::Limits;
use super::view::calls;
use super::{Trigger, carried_skills};
use crate::estimate_tokens;

/// How the summary opens the new conversation (Claude Code's words); also how a later
/// compaction recognises the opening of an earlier one.
pub const SUMMARY_PREAMBLE: &str = "This session is being continued from a previous conversation \
that ran out of context. The conversation is summarized below:\n";

/// What precedes each of the user's messages carried over verbatim.
pub const USER_MESSAGE_HEADER: &str = "[The user's message, verbatim from before compaction]\n";

/// What precedes the todo list carried over.
pub const TODO_HEADER: &str = "[The todo list when the conversation was compacted]\n";

/// What precedes a file re-read after compaction: `[File <path>, edited in this session, as it
/// is on disk now]` or `[File <path>, read in this session, as it is on disk now]`.
const FILE_HEADER_PREFIX: &str = "[File ";
const FILE_EDITED_SUFFIX: &str = ", edited in this session, as it is on disk now]";
const FILE_READ_SUFFIX: &str = ", read in this session, as it is on disk now]";

/// After an automatic compaction with nothing of the current turn kept: go on, do not ask.
const CONTINUE_NOTE: &str = "Continue the conversation from where it left off without asking \
the user any further questions. Continue with the last task that you were asked to work on.";

/// At most this many files are re-read.
const MAX_FILES: usize = 5;
/// The re-read files together hold at most this many tokens (fewer in a small window).
const MAX_FILE_TOKENS: u64 = 50_000;
/// The turn in progress is kept up to this many tokens (fewer in a small window).
const MAX_TAIL_TOKENS: u64 = 20_000;

/// Tools whose `file_path` (or `notebook_path`) the session changed.
pub(crate) const EDIT_TOOLS: &[&str] = &["Edit", "MultiEdit", "Write", "NotebookEdit"];

/// The instructions the summary request ends with: Claude Code's sections, and the user's own
/// instructions from `/compact` last.
pub fn summary_instructions(trigger: &Trigger) -> String {
    let mut text = String::from(
        "Your task is to create a detailed summary of the conversation so far. It replaces the \
conversation: the work continues from it alone, with the user's own messages, the todo list and \
the files the session touched added back verbatim afterwards. Pay close attention to the user's \
explicit requests and to what you were doing last. Do not call any tool; answer with text only.

Write the summary in these sections:
1. Primary Request and Intent: everything the user asked for, in detail.
2. Key Technical Concepts: the technologies, frameworks and ideas discussed.
3. Files and Code Sections: the files examined, changed or created, why each matters, and the \
important code (full snippets where a change was made).
4. Errors and Fixes: every error met and how it was fixed, including what the user said about it.
5. Problem Solving: problems solved and troubleshooting still going on.
6. All User Messages: every message the user wrote (not tool results), in order.
7. Pending Tasks: what you were asked to do that is not done yet.
8. Current Work: precisely what was being worked on just before this summary, with file names \
and code.
9. Optional Next Step: the next step, only if it follows directly from the user's most recent \
request; quote the conversation to show where you left off.

Wrap your analysis in <analysis> tags first if it helps, then give the summary in <summary> tags.",
    );
    if let Trigger::Manual {
        instructions: Some(instructions),
    } = trigger
        && !instructions.trim().is_empty()
    {
        text.push_str("\n\nAdditional instructions from the user for this summary:\n");
        text.push_str(instructions.trim());
    }
    text
}

/// The part of `view` the summary request sends: all of it when it fits with the
/// instructions and the summary's own room for output (as it does at the autocompact
/// threshold, so the request reuses the cached prefix), else from the first message on which
/// it does: a user prompt, or a model message after a note that the start is left out (a
/// reactive compaction, or one after the breaker, starts over the window), so the summary
/// request is not refused too. Tool calls are never separated from their results.
pub fn summary_input(
    view: &[Message],
    instructions: &str,
    calibration: Calibration,
    limits: Limits,
) -> Vec<Message> {
    // The summary's output counts against the window too: keep the room the thresholds keep
    // for it (20,000 of the 33,000 below the window at 200K).
    let output_room = limits.window.saturating_sub(limits.autocompact_at) * 20 / 33;
    let budget = limits
        .window
        .saturating_sub(output_room)
        .saturating_sub(estimate(instructions));
    let mut size = calibration.estimate(view);
    let mut start = 0;
    for (index, message) in view.iter().enumerate() {
        if index == 0 || is_prompt(message) || message.role == Role::Assistant {
            start = index;
            if size <= budget {
                break;
            }
        }
        size = size.saturating_sub(message_tokens(message));
    }
    let mut input = view[start..].to_vec();
    if input
        .first()
        .is_some_and(|message| message.role == Role::Assistant)
    {
        input.insert(0, Message::user_text(LEFT_OUT));
    }
    input
}

/// Where a summary request starts past the conversation's beginning.
const LEFT_OUT: &str = "[The start of this conversation is left out here: it no longer fits. \
                        Summarize what follows.]";

/// The summary text the model wrote, without its `<analysis>` and with `<summary>` tags taken
/// off, as Claude Code keeps it.
pub fn clean_summary(text: &str) -> String {
    let mut text = text.to_string();
    if let (Some(start), Some(end)) = (text.find("<analysis>"), text.find("</analysis>"))
        && start < end
    {
        text.replace_range(start..end + "</analysis>".len(), "");
    }
    if let (Some(start), Some(end)) = (text.find("<summary>"), text.rfind("</summary>"))
        && start < end
    {
        text = text[start + "<summary>".len()..end].to_string();
    }
    text.trim().to_string()
}

/// The conversation after compaction: the opening message, then the kept part of the turn
/// in progress.
pub fn rebuild(
    conversation: &[Message],
    summary: &str,
    trigger: &Trigger,
    limits: Limits,
) -> Vec<Message> {
    rebuild_within(conversation, summary, trigger, limits, u64::MAX)
}

/// [`rebuild`], the whole also kept under `ceiling` estimated tokens (what the request before
/// sent, so a compaction never grows the context): the files, the kept messages and the older
/// prompts get only what is left of it. The summary and the latest prompt always go in, so the
/// result may still reach `ceiling` when they alone do; the caller then keeps the conversation.
pub fn rebuild_within(
    conversation: &[Message],
    summary: &str,
    trigger: &Trigger,
    limits: Limits,
    ceiling: u64,
) -> Vec<Message> {
    let third = (limits.window / 3).min(ceiling.saturating_sub(1));
    let summary_block = format!("{SUMMARY_PREAMBLE}{summary}");
    let prompts = session_prompts(conversation);
    let todo = todo_block(conversation);
    let mut used = estimate(&summary_block) + todo.as_deref().map_or(0, estimate);
    let latest = prompts
        .last()
        .map(|prompt| format!("{USER_MESSAGE_HEADER}{prompt}"));
    used += latest.as_deref().map_or(0, estimate);
    let remaining = |used: u64| third.saturating_sub(used);

    let file_budget = MAX_FILE_TOKENS.min(remaining(used) * 3 / 5);
    let mut files = file_blocks(conversation, file_budget);
    let files_tokens = |files: &[FileBlock]| files.iter().map(|file| file.tokens).sum::<u64>();
    let tail_budget = |used: u64| MAX_TAIL_TOKENS.min(remaining(used) / 2);
    let mut tail = current_turn_tail(conversation, tail_budget(used + files_tokens(&files)));
    // A file the kept messages show whole is there already. Leaving it out frees room, so the
    // tail may start earlier; what the shorter one held the longer one holds too.
    let held = files_held(tail);
    if files.iter().any(|file| held.contains(&file.path)) {
        files.retain(|file| !held.contains(&file.path));
        tail = current_turn_tail(conversation, tail_budget(used + files_tokens(&files)));
    }
    used += files_tokens(&files) + messages_tokens(tail);

    let skills = carried_skills::skill_blocks(
        conversation,
        conversation.len() - tail.len(),
        remaining(used),
    );
    used += skills.iter().map(|block| estimate(block)).sum::<u64>();

    // Older messages of the user, newest first while they fit, then back in order.
    let mut older: Vec<String> = Vec::new();
    for prompt in prompts.iter().rev().skip(1) {
        let block = format!("{USER_MESSAGE_HEADER}{prompt}");
        let tokens = estimate(&block);
        if tokens > remaining(used) {
            break;
        }
        used += tokens;
        older.push(block);
    }
    older.reverse();

    let mut content = vec![ContentBlock::text(summary_block)];
    content.extend(files.into_iter().map(|file| ContentBlock::text(file.text)));
    content.extend(todo.into_iter().map(ContentBlock::text));
    content.extend(skills.into_iter().map(ContentBlock::text));
    content.extend(older.into_iter().map(ContentBlock::text));
    content.extend(latest.into_iter().map(ContentBlock::text));
    let automatic = match trigger {
        Trigger::Auto | Trigger::Reactive => true,
        Trigger::Manual { .. } => false,
    };
    if automatic && tail.is_empty() {
        content.push(ContentBlock::text(CONTINUE_NOTE));
    }
    let mut rebuilt = vec![Message {
        role: Role::User,
        content,
    }];
    rebuilt.extend_from_slice(tail);
    rebuilt
}

fn estimate(text: &str) -> u64 {
    estimate_tokens(text) as u64
}

/// Whether `message` is something the user wrote: a user message with no tool results, that
/// is not the opening of an earlier compaction.
pub(crate) fn is_prompt(message: &Message) -> bool {
    message.role == Role::User
        && !message
            .content
            .iter()
            .any(|block| matches!(block, ContentBlock::ToolResult { .. }))
        && !is_opening(message)
}

fn is_opening(message: &Message) -> bool {
    matches!(
        message.content.first(),
        Some(ContentBlock::Text { text }) if text.starts_with(SUMMARY_PREAMBLE)
    )
}

/// The opening's text blocks that start with `header`, without it.
fn opening_blocks<'a>(message: &'a Message, header: &'a str) -> impl Iterator<Item = &'a str> {
    message.content.iter().filter_map(move |block| match block {
        ContentBlock::Text { text } => text.strip_prefix(header),
        _ => None,
    })
}

/// The user's messages of the whole session, oldest first: those an earlier compaction
/// carried over, then the prompts since. Reminders cairn added and interruption notes are
/// not the user's words.
pub fn session_prompts(conversation: &[Message]) -> Vec<String> {
    let mut prompts = Vec::new();
    for message in conversation {
        if is_opening(message) {
            prompts.extend(opening_blocks(message, USER_MESSAGE_HEADER).map(str::to_string));
        } else if is_prompt(message) {
            let words: Vec<&str> = message
                .content
                .iter()
                .filter_map(|block| match block {
                    ContentBlock::Text { text } => Some(text.as_str()),
                    _ => None,
                })
                .filter(|text| {
                    let text = text.trim_start();
                    !text.starts_with("<system-reminder>")
                        && !text.starts_with("[Request interrupted by user")
                        // A skill's slash command: the skill is carried as a skill.
                        && !text.starts_with(crate::skills::SKILL_BASE_PREFIX)
                })
                .collect();
            let words = words.join("\n");
            if !words.trim().is_empty() {
                prompts.push(words);
            }
        }
    }
    prompts
}

/// The todo list: the last `TodoWrite` of the conversation, or the one an earlier compaction
/// carried over when none came since.
fn todo_block(conversation: &[Message]) -> Option<String> {
    let written = calls(conversation)
        .into_iter()
        .rev()
        .find(|call| call.name == "TodoWrite")
        .and_then(|call| call.input.get("todos").and_then(Value::as_array).cloned());
    if let Some(todos) = written {
        if todos.is_empty() {
            return None;
        }
        let lines: Vec<String> = todos
            .iter()
            .map(|todo| {
                let text = |field: &str| todo.get(field).and_then(Value::as_str).unwrap_or("");
                format!("- [{}] {}", text("status"), text("content"))
            })
            .collect();
        return Some(format!("{TODO_HEADER}{}", lines.join("\n")));
    }
    conversation
        .iter()
        .filter(|message| is_opening(message))
        .flat_map(|message| opening_blocks(message, TODO_HEADER))
        .last()
        .map(|list| format!("{TODO_HEADER}{list}"))
}

/// The files to read again, most important first: edited (most recent first), then read
/// (most recent first); those an earlier compaction carried over count as oldest.
fn files_touched(conversation: &[Message]) -> Vec<(String, bool)> {
    let mut edited: Vec<String> = Vec::new();
    let mut read: Vec<String> = Vec::new();
    for call in calls(conversation).iter().rev() {
        let path = call
            .input
            .get("file_path")
            .or_else(|| call.input.get("notebook_path"))
            .and_then(Value::as_str);
        let Some(path) = path else { continue };
        if EDIT_TOOLS.contains(&call.name) {
            edited.push(path.to_string());
        } else if call.name == "Read" {
            read.push(path.to_string());
        }
    }
    for message in conversation
        .iter()
        .rev()
        .filter(|message| is_opening(message))
    {
        for block in opening_blocks(message, FILE_HEADER_PREFIX) {
            let first_line = block.lines().next().unwrap_or("");
            if let Some(path) = first_line.strip_suffix(FILE_EDITED_SUFFIX) {
                edited.push(path.to_string());
            } else if let Some(path) = first_line.strip_suffix(FILE_READ_SUFFIX) {
                read.push(path.to_string());
            }
        }
    }
    let mut seen = BTreeSet::new();
    edited
        .into_iter()
        .map(|path| (path, true))
        .chain(read.into_iter().map(|path| (path, false)))
        .filter(|(path, _)| seen.insert(path.clone()))
        .collect()
}

/// A file read again for the opening.
struct FileBlock {
    path: String,
    /// Its header and its text as it is on disk now.
    text: String,
    tokens: u64,
}

/// The files `kept` shows whole as they are after it: read without `offset` or `limit` (the
/// result there, not an error) or written whole. Edits after either are in `kept` too.
fn files_held(kept: &[Message]) -> BTreeSet<String> {
    let failed: BTreeSet<&str> = kept
        .iter()
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                is_error: true,
                ..
            } => Some(tool_use_id.as_str()),
            _ => None,
        })
        .collect();
    calls(kept)
        .into_iter()
        .filter(|call| call.result.is_some() && !failed.contains(call.id))
        .filter(|call| match call.name {
            "Read" => call.input.get("offset").is_none() && call.input.get("limit").is_none(),
            "Write" => true,
            _ => false,
        })
        .filter_map(|call| call.input.get("file_path").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The re-read files: at most [`MAX_FILES`], together within `budget` tokens; a file that is
/// gone or too large for what is left is passed over.
fn file_blocks(conversation: &[Message], budget: u64) -> Vec<FileBlock> {
    let mut left = budget;
    let mut blocks = Vec::new();
    for (path, edited) in files_touched(conversation) {
        if blocks.len() == MAX_FILES {
            break;
        }
        let Ok(content) = std::fs::read_to_string(Path::new(&path)) else {
            continue;
        };
        let suffix = if edited {
            FILE_EDITED_SUFFIX
        } else {
            FILE_READ_SUFFIX
        };
        let text = format!("{FILE_HEADER_PREFIX}{path}{suffix}\n{content}");
        let tokens = estimate(&text);
        if tokens > left {
            continue;
        }
        left -= tokens;
        blocks.push(FileBlock { path, text, tokens });
    }
    blocks
}

/// The longest end of the turn in progress (after the user's last prompt) that fits
/// `budget` tokens and starts with the model's message, so every result keeps its call.
fn current_turn_tail(conversation: &[Message], budget: u64) -> &[Message] {
    let Some(prompt) = conversation.iter().rposition(is_prompt) else {
        return &[];
    };
    let mut size = messages_tokens(&conversation[prompt + 1..]);
    for start in prompt + 1..conversation.len() {
        if conversation[start].role == Role::Assistant && size <= budget {
            return &conversation[start..];
        }
        size -= message_tokens(&conversation[start]);
    }
    &[]
}

#[cfg(test)]
#[path = "autocompact_tests.rs"]
mod tests;
