//! crossterm's key reader, which every part of the UI that reads keys shares.

use std::time::Duration;

/// Takes the wake-up that a dropped key stream (`EventStream`, after `/clear`, the editor or
/// a list) leaves in crossterm's reader, so that the next read — a cursor-position query, the
/// first key — does not take it for an error. The poll is short rather than zero-length:
/// crossterm's `/dev/tty` reader does not look at all in a zero-length one. Keys read
/// meanwhile stay queued.
pub(crate) fn take_pending_wake() {
    let _ = crossterm::event::poll(Duration::from_millis(1));
}
