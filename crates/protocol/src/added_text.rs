//! The text blocks cairn adds around what the user typed, written and recognised in one
//! place: the engine and the faces write them (`<system-reminder>`s, a custom command's
//! `<command-name>` block, a `!command`'s output), and the session list and the transcript
//! read a message back as the user typed it.

use crate::{ContentBlock, Message};

/// Context for the model only (hooks, memory, plan mode), in Claude Code's tags.
pub fn system_reminder_text(body: &str) -> String {
    format!("<system-reminder>\n{body}\n</system-reminder>")
}

/// Whether `text` is a block [`system_reminder_text`] wrote.
pub fn is_system_reminder(text: &str) -> bool {
    text.starts_with("<system-reminder>") && text.trim_end().ends_with("</system-reminder>")
}

/// The block a `!command`'s output is sent in, as Claude Code tags it.
pub fn shell_context_text(command: &str, stdout: &str, stderr: &str) -> String {
    format!(
        "<bash-input>{command}</bash-input>\n<bash-stdout>{stdout}</bash-stdout>\n<bash-stderr>{stderr}</bash-stderr>"
    )
}

/// Whether `text` is a block [`shell_context_text`] wrote.
pub fn is_shell_context(text: &str) -> bool {
    text.starts_with("<bash-input>")
        && text.contains("</bash-input>\n<bash-stdout>")
        && text.contains("</bash-stdout>\n<bash-stderr>")
        && text.ends_with("</bash-stderr>")
}

/// `/name args` from the block a custom command's message starts with:
/// `<command-name>/name</command-name>\n<command-args>args</command-args>`.
///
/// ```
/// use cairn_protocol::command_line;
/// assert_eq!(
///     command_line("<command-name>/fix</command-name>\n<command-args>the bug</command-args>"),
///     Some("/fix the bug".to_string())
/// );
/// assert_eq!(command_line("<command-name>/init</command-name>\n<command-args></command-args>"), Some("/init".to_string()));
/// assert_eq!(command_line("plain text"), None);
/// ```
pub fn command_line(text: &str) -> Option<String> {
    let rest = text.strip_prefix("<command-name>")?;
    let (name, rest) = rest.split_once("</command-name>")?;
    let arguments = rest
        .trim_start()
        .strip_prefix("<command-args>")?
        .strip_suffix("</command-args>")?;
    Some(if arguments.is_empty() {
        name.to_string()
    } else {
        format!("{name} {arguments}")
    })
}

/// What the user typed in `message`: its first text block that is not context cairn added
/// around it (earlier `!command` output before it, `<system-reminder>`s, `@` attachments
/// after it); a custom command's message gives its line, `/name args`.
pub fn typed_text(message: &Message) -> Option<String> {
    message.content.iter().find_map(|block| match block {
        ContentBlock::Text { text } if !is_shell_context(text) && !is_system_reminder(text) => {
            Some(command_line(text).unwrap_or_else(|| text.clone()))
        }
        _ => None,
    })
}
