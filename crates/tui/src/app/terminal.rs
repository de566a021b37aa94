//! Raw mode, bracketed paste and the keyboard protocol, switched on for the app's life and off
//! again however it ends (a `Drop` guard, so errors and panics restore the terminal too), and
//! around a program that takes the terminal for a while (`$EDITOR`).
//!
//! The keyboard protocol (kitty's, "disambiguate escape codes") lets a terminal that has it
//! report Shift+Enter apart from Enter, so Shift+Enter starts a new line there. A terminal
//! without it ignores the request; there Alt+Enter, Ctrl+J and `\` then Enter do.

use crossterm::event::{
    DisableBracketedPaste, EnableBracketedPaste, KeyboardEnhancementFlags,
    PopKeyboardEnhancementFlags, PushKeyboardEnhancementFlags,
};
use crossterm::execute;

pub struct TerminalGuard;

impl TerminalGuard {
    pub fn enter() -> std::io::Result<TerminalGuard> {
        crossterm::terminal::enable_raw_mode()?;
        // From here on the guard undoes what was done, even if the next step fails.
        let guard = TerminalGuard;
        resume_input_modes()?;
        Ok(guard)
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        pause_input_modes();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// Bracketed paste and the keyboard protocol, on (again) in raw mode.
pub fn resume_input_modes() -> std::io::Result<()> {
    execute!(
        std::io::stdout(),
        EnableBracketedPaste,
        PushKeyboardEnhancementFlags(KeyboardEnhancementFlags::DISAMBIGUATE_ESCAPE_CODES)
    )
}

/// Both off, for a program that reads the terminal itself, or for good on the way out.
pub fn pause_input_modes() {
    let _ = execute!(
        std::io::stdout(),
        PopKeyboardEnhancementFlags,
        DisableBracketedPaste
    );
}
