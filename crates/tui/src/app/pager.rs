//! The transcript view (Ctrl+O): the whole conversation in full detail (thinking expanded,
//! every tool's whole result) on the alternate screen, scrolled with the keyboard. The
//! scrollback keeps the compact form; this is where it expands.

use std::io::Stdout;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use crossterm::terminal::{EnterAlternateScreen, LeaveAlternateScreen};
use ratatui::backend::CrosstermBackend;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::Paragraph;
use ratatui::{Frame, Terminal};

use crate::Theme;

/// The rendered transcript and where the view is in it.
#[derive(Debug)]
pub struct Pager {
    lines: Vec<Line<'static>>,
    /// The first line shown; `None` follows the end.
    top: Option<usize>,
    /// Lines the last frame showed, for paging.
    page: usize,
}

impl Pager {
    /// A view of `lines` that starts at their end, where the conversation is now.
    pub fn new(lines: Vec<Line<'static>>) -> Pager {
        Pager {
            lines,
            top: None,
            page: 1,
        }
    }

    /// New content (after a resize), keeping the view at the end if it was there.
    pub fn replace(&mut self, lines: Vec<Line<'static>>) {
        self.lines = lines;
    }

    /// Scrolls for `key`; returns whether the key closes the view.
    pub fn handle_key(&mut self, key: KeyEvent) -> bool {
        let control = key.modifiers.contains(KeyModifiers::CONTROL);
        let last_top = self.lines.len().saturating_sub(self.page);
        let top = self.top.unwrap_or(last_top).min(last_top);
        let page = self.page.max(1);
        let new_top = match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return true,
            KeyCode::Char('o' | 'c') if control => return true,
            KeyCode::Up | KeyCode::Char('k') => top.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') | KeyCode::Enter => top + 1,
            KeyCode::PageUp | KeyCode::Char('b') => top.saturating_sub(page),
            KeyCode::Char('u') if control => top.saturating_sub(page / 2),
            KeyCode::Char('d') if control => top + page / 2,
            KeyCode::PageDown | KeyCode::Char(' ') => top + page,
            KeyCode::Home | KeyCode::Char('g') => 0,
            KeyCode::End | KeyCode::Char('G') => last_top,
            _ => top,
        };
        self.top = (new_top < last_top).then_some(new_top);
        false
    }

    pub fn draw(&mut self, frame: &mut Frame<'_>, theme: &Theme) {
        let area = frame.area();
        let body_rows = usize::from(area.height.saturating_sub(1));
        self.page = body_rows.max(1);
        let last_top = self.lines.len().saturating_sub(body_rows);
        let top = self.top.unwrap_or(last_top).min(last_top);
        let end = (top + body_rows).min(self.lines.len());
        let shown: Vec<Line<'static>> = self.lines[top..end].to_vec();
        frame.render_widget(
            Paragraph::new(shown),
            Rect::new(area.x, area.y, area.width, area.height.saturating_sub(1)),
        );
        let position = if self.lines.is_empty() {
            "empty".to_string()
        } else {
            format!("lines {}–{end} of {}", top + 1, self.lines.len())
        };
        let footer = Line::from(vec![
            Span::styled("Transcript", theme.status),
            Span::styled(
                format!(" · {position} · ↑/↓ PgUp/PgDn g/G to scroll · q, Esc or Ctrl+O to return"),
                theme.dim,
            ),
        ]);
        frame.render_widget(
            Paragraph::new(footer),
            Rect::new(area.x, area.bottom().saturating_sub(1), area.width, 1),
        );
    }
}

/// The alternate screen, entered for the view and left when this is dropped (errors and
/// panics included), which brings the shell's screen and the inline viewport back.
pub struct AltScreen {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
}

impl AltScreen {
    pub fn enter() -> std::io::Result<AltScreen> {
        crossterm::execute!(std::io::stdout(), EnterAlternateScreen)?;
        let screen = AltScreen {
            terminal: Terminal::new(CrosstermBackend::new(std::io::stdout()))?,
        };
        Ok(screen)
    }
}

impl Drop for AltScreen {
    fn drop(&mut self) {
        let _ = crossterm::execute!(std::io::stdout(), LeaveAlternateScreen);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;

    fn numbered(count: usize) -> Vec<Line<'static>> {
        (1..=count)
            .map(|n| Line::from(format!("line {n}")))
            .collect()
    }

    fn screen(pager: &mut Pager) -> Vec<String> {
        let mut terminal = Terminal::new(TestBackend::new(40, 5)).unwrap();
        terminal
            .draw(|frame| pager.draw(frame, &Theme::plain()))
            .unwrap();
        let buffer = terminal.backend().buffer().clone();
        (0..buffer.area.height)
            .map(|y| {
                (0..buffer.area.width)
                    .map(|x| buffer[(x, y)].symbol())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    #[test]
    fn starts_at_the_end_and_scrolls_by_line_and_page() {
        let mut pager = Pager::new(numbered(20));
        let shown = screen(&mut pager);
        assert_eq!(shown[..4], ["line 17", "line 18", "line 19", "line 20"]);
        assert!(
            shown[4].starts_with("Transcript · lines 17–20 of 20"),
            "{shown:?}"
        );
        assert!(!pager.handle_key(key(KeyCode::Up)));
        assert_eq!(screen(&mut pager)[0], "line 16");
        pager.handle_key(key(KeyCode::PageUp));
        assert_eq!(screen(&mut pager)[0], "line 12");
        pager.handle_key(key(KeyCode::Char('g')));
        assert_eq!(screen(&mut pager)[0], "line 1");
        pager.handle_key(key(KeyCode::Up));
        assert_eq!(screen(&mut pager)[0], "line 1", "the top stays the top");
        pager.handle_key(key(KeyCode::PageDown));
        assert_eq!(screen(&mut pager)[0], "line 5");
        pager.handle_key(key(KeyCode::End));
        assert_eq!(screen(&mut pager)[0], "line 17");
        // At the end it follows new lines.
        pager.replace(numbered(22));
        assert_eq!(screen(&mut pager)[3], "line 22");
    }

    #[test]
    fn q_esc_and_ctrl_o_close_it() {
        let mut pager = Pager::new(numbered(3));
        assert!(pager.handle_key(key(KeyCode::Char('q'))));
        assert!(pager.handle_key(key(KeyCode::Esc)));
        assert!(pager.handle_key(KeyEvent::new(KeyCode::Char('o'), KeyModifiers::CONTROL)));
        assert!(!pager.handle_key(key(KeyCode::Char('x'))));
        let shown = screen(&mut pager);
        assert_eq!(shown[..3], ["line 1", "line 2", "line 3"]);
    }
}
