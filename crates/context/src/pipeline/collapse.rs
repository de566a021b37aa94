//! Step 4, collapse: older turns go out as a log of what happened in them.
//!
//! When snip and microcompact leave a request over [`Limits::collapse_at`], the turns after
//! the conversation's first message and before a later prompt are shown as one text block, a
//! "commit log" written from the stored messages alone (no model call): for each turn the
//! user's words verbatim, the tools used with their targets and whether they failed (a denied
//! call says so in its failure), the files changed and the gist of the answer; then the todo
//! list as those turns left it. The block joins the first message (the user's first prompt, or
//! an earlier compaction's summary) and the prompt the view continues from, so roles still
//! alternate and no tool call is parted from its result.
//!
//! It is a read-time projection: the stored conversation and the transcript keep every
//! message. The only decision is how many leading messages are collapsed (the mark); it is
//! made in large steps (down to [`target`], never undone, extended only when the threshold is
//! reached again) so requests repeat the same first message and the prompt cache serves it,
//! and it is recorded in the session so a resume shows the same view. The most recent
//! [`KEEP_RECENT_TURNS`] turns are never collapsed.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_protocol::{ContentBlock, Message, Role, ToolResultContent};
use serde_json::Value;

use super::accounting::{Calibration, message_tokens};
use super::autocompact::{EDIT_TOOLS, is_prompt};
use super::settings::Limits;
use super::view::ViewDecisions;

/// The most recent turns (the one in progress included) never collapsed.
pub const KEEP_RECENT_TURNS: usize = 3;

/// At most this many calls of one turn are listed; the rest are counted.
const MAX_CALLS_LISTED: usize = 20;
/// A call's target (a path, a command) is cut to this many characters.
const TARGET_CHARS: usize = 80;
/// A failure is told by its first line, cut to this many characters.
const FAILURE_CHARS: usize = 120;
/// The gist of an answer: its first characters, this many.
const ANSWER_CHARS: usize = 300;

/// How the log opens; also how a reader recognises one.
pub const LOG_HEADER: &str = "[Collapsed history: the earlier turns of this conversation after \
the first message are shown here as a log of what happened in each (the user's words verbatim, \
the tools used and their targets, the files changed, the gist of the answer). Their full \
messages are kept in the session's transcript; their tool results are not shown, so run a tool \
again if you need its output.]\n\n";

/// How the log ends, before the prompt the conversation continues from.
pub const LOG_FOOTER: &str = "[End of the collapsed history. The conversation continues here.]";

/// What precedes the todo list in the log.
pub const TODO_HEADING: &str = "The todo list as these turns left it:\n";

/// The estimate collapse brings a request down to: 60% of the autocompact threshold, so the
/// same collapsed opening serves the requests of many turns before the threshold comes again.
pub fn target(limits: Limits) -> u64 {
    limits.autocompact_at / 5 * 3
}

/// A collapse that cannot get below this (half-way from [`target`] to the threshold) is not
/// made: it would be needed again soon, each time rewriting the whole cached prompt, so
/// autocompact is left to act when the time comes.
fn good_enough(limits: Limits) -> u64 {
    (target(limits) + limits.collapse_at) / 2
}

/// Whether requests can show `conversation` collapsed through message `through`: a user's
/// prompt after the model's message, with at least one message between it and the first.
pub fn is_boundary(conversation: &[Message], through: usize) -> bool {
    through >= 2
        && through < conversation.len()
        && conversation[0].role == Role::User
        && conversation[through - 1].role == Role::Assistant
        && is_prompt(&conversation[through])
}

/// The messages a request sends for `conversation`, its first `through` messages collapsed
/// (none when `through` is 0 or no boundary) and the rest as `decisions` show them.
pub fn project(
    conversation: &[Message],
    through: usize,
    decisions: &ViewDecisions,
) -> Vec<Message> {
    Collapsed::new(conversation, through).project(conversation, decisions)
}

/// How far a view is collapsed, with the log written for it: the messages a log covers never
/// change, so it is written once and kept for the requests after.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Collapsed {
    through: usize,
    log: Arc<str>,
}

impl Collapsed {
    /// `conversation` collapsed through `through`; not collapsed at all where `through` is no
    /// boundary ([`is_boundary`]).
    pub fn new(conversation: &[Message], through: usize) -> Self {
        if !is_boundary(conversation, through) {
            return Collapsed::default();
        }
        Collapsed {
            through,
            log: log_text(&turns(conversation, through)).into(),
        }
    }

    /// How many leading messages are collapsed (0: none).
    pub fn through(&self) -> usize {
        self.through
    }

    /// The messages a request sends for `conversation` (the one this was made for, or a later
    /// state of it), the rest as `decisions` show them.
    pub fn project(&self, conversation: &[Message], decisions: &ViewDecisions) -> Vec<Message> {
        let through = self.through;
        if through == 0 {
            return decisions.project(conversation);
        }
        let mut first = conversation[0].clone();
        first.content.push(ContentBlock::text(&*self.log));
        first
            .content
            .extend(conversation[through].content.iter().cloned());
        let mut view = vec![first];
        view.extend(decisions.project(&conversation[through + 1..]));
        view
    }
}

/// Where to collapse `conversation` through now, beyond `current`: the first boundary that
/// brings the request to [`target`], else the furthest one allowed, if that gets it below
/// "good enough" (half-way from [`target`] to the collapse threshold); `None` when no collapse
/// helps enough.
pub fn choose(
    conversation: &[Message],
    current: usize,
    decisions: &ViewDecisions,
    calibration: Calibration,
    limits: Limits,
) -> Option<usize> {
    let prompts: Vec<usize> = (1..conversation.len())
        .filter(|&index| is_prompt(&conversation[index]))
        .collect();
    let newest_kept = *prompts.get(prompts.len().checked_sub(KEEP_RECENT_TURNS)?)?;
    let candidates: Vec<usize> = prompts
        .iter()
        .copied()
        .filter(|&index| index > current && index <= newest_kept)
        .filter(|&index| is_boundary(conversation, index))
        .collect();
    let furthest = *candidates.last()?;

    // What each message costs as the view shows it, summed from the end.
    let mut after = vec![0; conversation.len() + 1];
    for index in (0..conversation.len()).rev() {
        let shown = decisions
            .shown(&conversation[index])
            .map_or(0, |message| message_tokens(&message));
        after[index] = after[index + 1] + shown;
    }
    let turns = turns(conversation, furthest);
    let first = message_tokens(&conversation[0]);
    let estimate = |through: usize| {
        let log = (log_len(collapsed_turns(&turns, through)) as u64).div_ceil(4);
        calibration.estimate_from(
            first + log + message_tokens(&conversation[through]) + after[through + 1],
        )
    };
    candidates
        .iter()
        .copied()
        .find(|&through| estimate(through) <= target(limits))
        .or_else(|| (estimate(furthest) <= good_enough(limits)).then_some(furthest))
}

/// The furthest boundary `conversation` can be collapsed through beyond `current`, the most
/// recent [`KEEP_RECENT_TURNS`] turns left whole; `None` when there is none.
pub fn furthest(conversation: &[Message], current: usize) -> Option<usize> {
    let prompts: Vec<usize> = (1..conversation.len())
        .filter(|&index| is_prompt(&conversation[index]))
        .collect();
    let newest_kept = *prompts.get(prompts.len().checked_sub(KEEP_RECENT_TURNS)?)?;
    prompts
        .into_iter()
        .filter(|&index| index > current && index <= newest_kept)
        .rfind(|&index| is_boundary(conversation, index))
}

/// One turn of the collapsed part, as its log tells it.
#[derive(Debug)]
struct Turn {
    /// The index of its first message in the conversation.
    start: usize,
    entry: String,
    /// The todo list its last `TodoWrite` wrote, as lines.
    todos: Option<String>,
}

/// The turns of `conversation[1..through]`: each prompt starts one, and the messages after the
/// first message and before the first later prompt make one too.
fn turns(conversation: &[Message], through: usize) -> Vec<Turn> {
    let mut starts: Vec<usize> = (1..through)
        .filter(|&index| index == 1 || is_prompt(&conversation[index]))
        .collect();
    starts.push(through);
    starts
        .windows(2)
        .map(|pair| turn(pair[0], &conversation[pair[0]..pair[1]]))
        .collect()
}

/// The turns among `turns` that a collapse through `through` covers.
fn collapsed_turns(turns: &[Turn], through: usize) -> &[Turn] {
    let count = turns.partition_point(|turn| turn.start < through);
    &turns[..count]
}

/// The log's text for the collapsed `turns`.
fn log_text(turns: &[Turn]) -> String {
    let mut text = String::from(LOG_HEADER);
    for turn in turns {
        text.push_str(&turn.entry);
    }
    if let Some(todos) = turns.iter().rev().find_map(|turn| turn.todos.as_deref()) {
        text.push_str(TODO_HEADING);
        text.push_str(todos);
        text.push_str("\n\n");
    }
    text.push_str(LOG_FOOTER);
    text
}

/// The length of [`log_text`] for `turns`, without writing it (as [`crate::estimate_tokens`]
/// counts: in bytes).
fn log_len(turns: &[Turn]) -> usize {
    let entries: usize = turns.iter().map(|turn| turn.entry.len()).sum();
    let todos = turns
        .iter()
        .rev()
        .find_map(|turn| turn.todos.as_deref())
        .map_or(0, |todos| TODO_HEADING.len() + todos.len() + 2);
    LOG_HEADER.len() + entries + todos + LOG_FOOTER.len()
}

fn turn(start: usize, messages: &[Message]) -> Turn {
    let mut entry = match messages.first() {
        Some(message) if is_prompt(message) => {
            format!("The user wrote:\n{}\n", users_words(message))
        }
        _ => "After the first message:\n".to_string(),
    };
    let results: BTreeMap<&str, (&ToolResultContent, bool)> = messages
        .iter()
        .filter(|message| message.role == Role::User)
        .flat_map(|message| &message.content)
        .filter_map(|block| match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => Some((tool_use_id.as_str(), (content, *is_error))),
            _ => None,
        })
        .collect();
    let calls: Vec<(&str, &str, &Value)> = messages
        .iter()
        .filter(|message| message.role == Role::Assistant)
        .flat_map(Message::tool_uses)
        .collect();

    let mut listed: Vec<String> = Vec::new();
    let mut changed: Vec<String> = Vec::new();
    let mut todos = None;
    for (id, name, input) in &calls {
        let result = results.get(id);
        let failed = result.filter(|(_, is_error)| *is_error);
        if listed.len() < MAX_CALLS_LISTED {
            let mut line = match call_target(input) {
                Some(target) => format!("{name} {target}"),
                None => name.to_string(),
            };
            match (result, failed) {
                (None, _) => line.push_str(" (no result)"),
                (Some(_), Some((content, _))) => {
                    let first_line = content.text();
                    let first_line = first_line.lines().next().unwrap_or("");
                    line.push_str(&format!(
                        " (failed: {})",
                        shorten(first_line, FAILURE_CHARS)
                    ));
                }
                (Some(_), None) => {}
            }
            listed.push(line);
        }
        if result.is_some() && failed.is_none() {
            if EDIT_TOOLS.contains(name)
                && let Some(path) = edited_path(input)
                && !changed.iter().any(|known| known == path)
            {
                changed.push(path.to_string());
            }
            if *name == "TodoWrite"
                && let Some(list) = input.get("todos").and_then(Value::as_array)
            {
                todos = Some(todo_lines(list));
            }
        }
    }
    if !calls.is_empty() {
        entry.push_str("- tools: ");
        entry.push_str(&listed.join("; "));
        if calls.len() > listed.len() {
            entry.push_str(&format!("; and {} more", calls.len() - listed.len()));
        }
        entry.push('\n');
    }
    if !changed.is_empty() {
        entry.push_str("- files changed: ");
        entry.push_str(&changed.join(", "));
        entry.push('\n');
    }
    let answer = messages
        .iter()
        .rev()
        .filter(|message| message.role == Role::Assistant)
        .map(Message::text)
        .find(|text| !text.trim().is_empty());
    if let Some(answer) = answer {
        entry.push_str("- answer: ");
        entry.push_str(&shorten(&answer, ANSWER_CHARS));
        entry.push('\n');
    }
    entry.push('\n');
    Turn {
        start,
        entry,
        todos,
    }
}

/// What the user wrote in `message`, verbatim: its text without the reminders cairn added,
/// an image as `[image]`.
fn users_words(message: &Message) -> String {
    let words: Vec<&str> = message
        .content
        .iter()
        .filter_map(|block| match block {
            ContentBlock::Text { text } if text.trim_start().starts_with("<system-reminder>") => {
                None
            }
            ContentBlock::Text { text } => Some(text.as_str()),
            ContentBlock::Image { .. } => Some("[image]"),
            _ => None,
        })
        .collect();
    let words = words.join("\n");
    if words.trim().is_empty() {
        "(nothing but context cairn added)".to_string()
    } else {
        words
    }
}

/// What a call acted on: the first of the usual fields its input has, on one line.
fn call_target(input: &Value) -> Option<String> {
    const FIELDS: &[&str] = &[
        "file_path",
        "notebook_path",
        "command",
        "pattern",
        "url",
        "query",
        "description",
        "path",
    ];
    let (field, value) = FIELDS
        .iter()
        .find_map(|field| Some((*field, input.get(field)?.as_str()?)))?;
    let value = shorten(value, TARGET_CHARS);
    Some(if field == "command" {
        format!("`{value}`")
    } else {
        value
    })
}

fn edited_path(input: &Value) -> Option<&str> {
    input
        .get("file_path")
        .or_else(|| input.get("notebook_path"))
        .and_then(Value::as_str)
}

fn todo_lines(todos: &[Value]) -> String {
    todos
        .iter()
        .map(|todo| {
            let field = |name: &str| todo.get(name).and_then(Value::as_str).unwrap_or("");
            format!("- [{}] {}", field("status"), field("content"))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` on one line, cut to `max` characters with `…`.
fn shorten(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let mut cut: String = line.chars().take(max).collect();
    cut.push('…');
    cut
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn the_logs_length_is_counted_as_it_is_written() {
        let call = |id: &str, name: &str, input: Value| Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: id.into(),
                name: name.into(),
                input,
            }],
        };
        let done = |id: &str| Message {
            role: Role::User,
            content: vec![ContentBlock::tool_result(id, "ok", false)],
        };
        let conversation = vec![
            Message::user_text("start"),
            call(
                "t",
                "TodoWrite",
                json!({"todos": [{"content": "Ship it", "status": "pending"}]}),
            ),
            done("t"),
            call("é", "Bash", json!({"command": "echo café"})),
            done("é"),
            Message::user_text("next"),
        ];
        let turns = turns(&conversation, 5);
        assert_eq!(log_len(&turns), log_text(&turns).len());
        assert_eq!(log_len(&turns[..0]), log_text(&[]).len());
    }
}
