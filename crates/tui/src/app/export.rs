//! `/export`: the conversation so far as Markdown, written to a file.

use std::path::Path;

use cairn_protocol::{ContentBlock, Message, Role};

use crate::transcript::user_prompt::UserPrompt;

/// The most bytes of one tool result the export keeps; the rest is cut with a note.
const MAX_RESULT_BYTES: usize = 4 * 1024;

/// The file name `/export` without one offers: `cairn-<session>.md`.
pub fn suggested_file_name(session_id: &str) -> String {
    format!("cairn-{session_id}.md")
}

/// Writes the conversation to `path`; the error message names the file and what went wrong.
pub fn write_export(path: &Path, messages: &[Message], session_id: &str) -> Result<(), String> {
    std::fs::write(path, conversation_markdown(messages, session_id))
        .map_err(|err| format!("Cannot write {}: {err}", path.display()))
}

/// The conversation as Markdown: each user prompt and assistant reply under its own heading,
/// tool calls as `**Tool** name(arg)` with their results in fenced blocks.
pub fn conversation_markdown(messages: &[Message], session_id: &str) -> String {
    let mut out = format!("# cairn session {session_id}\n\n");
    for message in messages {
        let is_tool_results = message
            .content
            .iter()
            .all(|block| matches!(block, ContentBlock::ToolResult { .. }))
            && !message.content.is_empty();
        match (message.role, is_tool_results) {
            (Role::User, true) => {}
            (Role::User, false) => {
                // As the transcript shows it: what was typed, a line per attached file; not
                // the files, `!command` output or hook reminders that went with it.
                let prompt = UserPrompt::of(message);
                out.push_str("## User\n\n");
                if !prompt.text.trim().is_empty() {
                    out.push_str(prompt.text.trim_end());
                    out.push_str("\n\n");
                }
                for attachment in &prompt.attachments {
                    out.push_str(&format!("*{}*\n\n", attachment.summary()));
                }
                continue;
            }
            (Role::Assistant, _) => out.push_str("## Assistant\n\n"),
        }
        for block in &message.content {
            push_block(&mut out, block);
        }
    }
    out
}

fn push_block(out: &mut String, block: &ContentBlock) {
    match block {
        ContentBlock::Text { text } => {
            // The engine adds hook context as reminders; they are not what the user wrote.
            if text.starts_with("<system-reminder>") {
                return;
            }
            out.push_str(text.trim_end());
            out.push_str("\n\n");
        }
        ContentBlock::ToolUse { name, input, .. } if name == "TodoWrite" => {
            out.push_str("**Tool** TodoWrite\n\n");
            out.push_str(&todo_checklist(input));
        }
        ContentBlock::ToolUse { name, input, .. } => {
            out.push_str(&format!("**Tool** {name}({})\n\n", tool_argument(input)));
        }
        ContentBlock::ToolResult {
            content, is_error, ..
        } => {
            let text = truncate(&content.text(), MAX_RESULT_BYTES);
            let fence = fence_for(&text);
            let label = if *is_error { "Error" } else { "Result" };
            out.push_str(&format!(
                "{label}:\n\n{fence}\n{}\n{fence}\n\n",
                text.trim_end()
            ));
        }
        ContentBlock::Image { .. } => out.push_str("*[image]*\n\n"),
        ContentBlock::Thinking { .. } | ContentBlock::RedactedThinking { .. } => {}
    }
}

/// A TodoWrite call's list as a Markdown checklist (`- [x] done`, `- [ ] to do`), the item in
/// progress in bold.
fn todo_checklist(input: &serde_json::Value) -> String {
    let todos = input
        .get("todos")
        .and_then(|todos| todos.as_array())
        .cloned()
        .unwrap_or_default();
    let mut out = String::new();
    for todo in &todos {
        let content = todo.get("content").and_then(|c| c.as_str()).unwrap_or("");
        let line = match todo.get("status").and_then(|s| s.as_str()) {
            Some("completed") => format!("- [x] {content}"),
            Some("in_progress") => format!("- [ ] **{content}**"),
            _ => format!("- [ ] {content}"),
        };
        out.push_str(&line);
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The argument that says most about a call: a path, command or pattern, else the JSON.
fn tool_argument(input: &serde_json::Value) -> String {
    for key in ["file_path", "command", "pattern", "path", "url", "query"] {
        if let Some(value) = input.get(key).and_then(|value| value.as_str()) {
            return value.to_string();
        }
    }
    truncate(&input.to_string(), 200)
}

/// `text` cut to at most `max` bytes at a character boundary, saying how much was left out.
fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… ({} more bytes)",
        &text[..end],
        text.len().saturating_sub(end)
    )
}

/// A backtick fence longer than any run of backticks in `text`.
fn fence_for(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        if c == '`' {
            run += 1;
            longest = longest.max(run);
        } else {
            run = 0;
        }
    }
    "`".repeat((longest + 1).max(3))
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn renders_prompts_replies_and_tool_calls() {
        let messages = vec![
            Message::user_text("Read the notes"),
            Message {
                role: Role::Assistant,
                content: vec![
                    ContentBlock::text("Reading them."),
                    ContentBlock::ToolUse {
                        id: "t1".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "notes.txt"}),
                    },
                ],
            },
            Message {
                role: Role::User,
                content: vec![ContentBlock::tool_result("t1", "hello ``` world", false)],
            },
            Message {
                role: Role::Assistant,
                content: vec![ContentBlock::text("They say hello.")],
            },
        ];
        assert_eq!(
            conversation_markdown(&messages, "s1"),
            "# cairn session s1\n\n## User\n\nRead the notes\n\n## Assistant\n\nReading them.\n\n\
             **Tool** Read(notes.txt)\n\nResult:\n\n````\nhello ``` world\n````\n\n\
             ## Assistant\n\nThey say hello.\n\n"
        );
    }

    #[test]
    fn a_prompt_is_exported_as_typed_with_its_attachments_named() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("notes.txt"), "the secret is 7431\n").unwrap();
        let typed = "what do @notes.txt say?";
        let mut content = vec![ContentBlock::text(typed)];
        content.extend(crate::app::mention::attachments(typed, dir.path()));
        content.push(ContentBlock::text(
            "<system-reminder>\nhook context\n</system-reminder>",
        ));
        let markdown = conversation_markdown(
            &[Message {
                role: Role::User,
                content,
            }],
            "s1",
        );
        assert!(markdown.contains(typed), "{markdown}");
        assert!(
            markdown.contains("*Attached notes.txt (1 line)*"),
            "{markdown}"
        );
        assert!(!markdown.contains("7431"), "{markdown}");
        assert!(!markdown.contains("hook context"), "{markdown}");
    }

    #[test]
    fn a_todo_list_is_exported_as_a_checklist() {
        let messages = vec![Message {
            role: Role::Assistant,
            content: vec![ContentBlock::ToolUse {
                id: "t1".into(),
                name: "TodoWrite".into(),
                input: serde_json::json!({"todos": [
                    {"content": "Read it", "status": "completed", "activeForm": "Reading it"},
                    {"content": "Fix it", "status": "in_progress", "activeForm": "Fixing it"},
                    {"content": "Test it", "status": "pending", "activeForm": "Testing it"}
                ]}),
            }],
        }];
        let markdown = conversation_markdown(&messages, "s1");
        assert!(
            markdown.contains("- [x] Read it\n- [ ] **Fix it**\n- [ ] Test it\n"),
            "{markdown}"
        );
    }

    #[test]
    fn long_results_are_truncated_at_a_character_boundary() {
        let text = "é".repeat(3000);
        let cut = truncate(&text, 4095);
        assert!(cut.starts_with(&"é".repeat(2047)), "{cut}");
        assert!(cut.ends_with("… (1906 more bytes)"), "{cut}");
    }

    #[test]
    fn the_suggested_file_is_named_for_the_session() {
        assert_eq!(suggested_file_name("abc"), "cairn-abc.md");
    }
}
