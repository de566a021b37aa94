//! The app's terminal backend: crossterm's, except that it never asks the terminal where the
//! cursor is once the app is reading keys.
//!
//! ratatui's inline viewport asks for the cursor position whenever the terminal's size changes
//! (`Terminal::resize`, and `autoresize` inside every `draw`). The answer comes on standard
//! input, where crossterm's `EventStream` is already reading, so the question times out and the
//! app would stop. This backend answers from what it was last told instead; on a resize the app
//! clears the screen and tells it the cursor is at the top, so the viewport is rebuilt there.

use std::io::{self, Stdout};

use ratatui::backend::{Backend, ClearType, CrosstermBackend, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};

/// A [`CrosstermBackend`] over stdout that remembers the cursor instead of querying it.
pub struct InlineBackend {
    inner: CrosstermBackend<Stdout>,
    /// Where the cursor was last put; `None` until the first move, when the terminal is asked
    /// (before the app reads keys, so the answer is read by the question).
    cursor: Option<Position>,
}

impl InlineBackend {
    pub fn new(stdout: Stdout) -> InlineBackend {
        InlineBackend {
            inner: CrosstermBackend::new(stdout),
            cursor: None,
        }
    }

    /// A backend whose cursor is known to be at `cursor` (the app put it there), so a new
    /// viewport can start there without asking the terminal.
    pub fn at(stdout: Stdout, cursor: Position) -> InlineBackend {
        InlineBackend {
            inner: CrosstermBackend::new(stdout),
            cursor: Some(cursor),
        }
    }

    /// Clears the whole screen and puts the cursor in its top-left corner, so the next
    /// `Terminal::resize` rebuilds the viewport there at the new width without garbage from
    /// the old one (the terminal's reflow makes the old position unknowable).
    pub fn reset_to_top(&mut self) -> io::Result<()> {
        self.inner.clear_region(ClearType::All)?;
        self.set_cursor_position(Position::ORIGIN)
    }
}

impl Backend for InlineBackend {
    type Error = io::Error;

    fn draw<'a, I>(&mut self, content: I) -> io::Result<()>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        self.inner.draw(content)
    }

    fn append_lines(&mut self, n: u16) -> io::Result<()> {
        self.inner.append_lines(n)
    }

    fn hide_cursor(&mut self) -> io::Result<()> {
        self.inner.hide_cursor()
    }

    fn show_cursor(&mut self) -> io::Result<()> {
        self.inner.show_cursor()
    }

    fn get_cursor_position(&mut self) -> io::Result<Position> {
        match self.cursor {
            Some(position) => Ok(position),
            None => {
                let position = self.inner.get_cursor_position()?;
                self.cursor = Some(position);
                Ok(position)
            }
        }
    }

    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> io::Result<()> {
        let position = position.into();
        self.inner.set_cursor_position(position)?;
        self.cursor = Some(position);
        Ok(())
    }

    fn clear(&mut self) -> io::Result<()> {
        self.inner.clear()
    }

    fn clear_region(&mut self, clear_type: ClearType) -> io::Result<()> {
        self.inner.clear_region(clear_type)
    }

    fn size(&self) -> io::Result<Size> {
        self.inner.size()
    }

    fn window_size(&mut self) -> io::Result<WindowSize> {
        self.inner.window_size()
    }

    fn flush(&mut self) -> io::Result<()> {
        Backend::flush(&mut self.inner)
    }

    fn scroll_region_up(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> io::Result<()> {
        self.inner.scroll_region_up(region, line_count)
    }

    fn scroll_region_down(
        &mut self,
        region: std::ops::Range<u16>,
        line_count: u16,
    ) -> io::Result<()> {
        self.inner.scroll_region_down(region, line_count)
    }
}
