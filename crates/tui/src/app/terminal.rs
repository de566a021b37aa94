//! Raw mode and bracketed paste, switched on for the app's life and off again however it
//! ends (a `Drop` guard, so errors and panics restore the terminal too).

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use crossterm::execute;

pub struct TerminalGuard;

impl TerminalGuard {
    pub fn enter() -> std::io::Result<TerminalGuard> {
        crossterm::terminal::enable_raw_mode()?;
        // From here on the guard undoes what was done, even if the next step fails.
        let guard = TerminalGuard;
        execute!(std::io::stdout(), EnableBracketedPaste)?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        let _ = execute!(std::io::stdout(), DisableBracketedPaste);
        let _ = crossterm::terminal::disable_raw_mode();
    }
}
