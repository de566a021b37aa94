//! The last way out when the terminal is gone.
//!
//! The app leaves by itself when its terminal closes: a read error, the hang-up signal, or the
//! check each second that standard input is still a terminal. But crossterm's default reader
//! loops forever on a terminal that has hung up (each read returns end of file, and its inner
//! loop never breaks); when the app's own thread is the one caught in it, none of those ways
//! runs again, and cairn would spin on a core until killed. A thread of its own watches for
//! that: once standard input has stopped being a terminal for [`GRACE`] — ample time for the
//! app to leave the usual way — it ends the process. Nothing is lost that the usual way would
//! keep: the session file is written entry by entry, and there is no terminal to put back.

use std::io::IsTerminal;
use std::sync::Once;
use std::time::{Duration, Instant};

/// How often the watchdog looks.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// How long the terminal may be gone before the watchdog ends the process.
const GRACE: Duration = Duration::from_secs(3);

/// The exit status then: a hang-up's (128 + SIGHUP).
const HUNG_UP_STATUS: i32 = 129;

/// Starts the watchdog, once per process (the app starts again after `/clear`).
pub(crate) fn watch_terminal() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        // Without the thread cairn still works; only this last resort is missing.
        let _ = std::thread::Builder::new()
            .name("terminal-watchdog".into())
            .spawn(|| {
                let mut gone_since: Option<Instant> = None;
                loop {
                    std::thread::sleep(CHECK_EVERY);
                    if std::io::stdin().is_terminal() {
                        gone_since = None;
                        continue;
                    }
                    let since = *gone_since.get_or_insert_with(Instant::now);
                    if since.elapsed() >= GRACE {
                        std::process::exit(HUNG_UP_STATUS);
                    }
                }
            });
    });
}
