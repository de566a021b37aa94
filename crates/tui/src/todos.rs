//! The session's todo list as a checklist.

use cairn_protocol::{TodoItem, TodoStatus};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};

use crate::theme::Theme;
use crate::wrap::{Prefix, sanitize, wrap_words};

/// One line per item (more where an item wraps): `☒` done and struck through, `☐` to do, the
/// item in progress in bold. Each is named by its `content`, as in Claude Code; the
/// `activeForm` ("Running the tests") is what the spinner says while it is in progress.
///
/// ```
/// use cairn_protocol::{TodoItem, TodoStatus};
/// use cairn_tui::{Theme, render_todos};
///
/// let todos = [TodoItem {
///     content: "Run the tests".into(),
///     status: TodoStatus::Completed,
///     active_form: "Running the tests".into(),
/// }];
/// let lines = render_todos(&todos, 40, &Theme::plain());
/// assert_eq!(lines[0].to_string(), "☒ Run the tests");
/// ```
pub fn render_todos(todos: &[TodoItem], width: u16, theme: &Theme) -> Vec<Line<'static>> {
    if todos.is_empty() {
        return vec![Line::from(Span::styled("(no todos)", theme.dim))];
    }
    let mut lines = Vec::new();
    for todo in todos {
        let (mark, style) = match todo.status {
            TodoStatus::Completed => ("☒ ", theme.todo_done),
            TodoStatus::InProgress => ("☐ ", theme.todo_active),
            TodoStatus::Pending => ("☐ ", theme.todo_pending),
        };
        // The mark is not struck through: only the words are done.
        let mark_style = style.remove_modifier(Modifier::CROSSED_OUT);
        let prefix = Prefix::hanging(Span::styled(mark, mark_style));
        let spans = [Span::styled(sanitize(&todo.content), style)];
        lines.extend(wrap_words(&spans, usize::from(width), &prefix));
    }
    lines
}
