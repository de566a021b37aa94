//! cairn's interactive UI in a terminal the test owns: the real binary on a pseudo-terminal
//! (`pty-process`: cairn leads a session of its own with the pty as its controlling terminal,
//! so it gets SIGWINCH and hang-ups as in a real terminal), its output rendered by `vt100`
//! the way a terminal would, keys and pastes written as a terminal sends them.
//!
//! A reader thread feeds everything cairn writes to the emulator, answers the queries a real
//! terminal answers (cursor position, device attributes), and signals a condition variable;
//! waiting for text waits on that signal, with a deadline, never on sleeps.

use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Instant;

use pty_process::blocking::{Command, Pty};
use rustix::event::{PollFd, PollFlags};
use rustix::process::{Pid, Signal};
use serde_json::Value;

use super::{Harness, WAIT};

/// Rows of history kept above the screen, as many as the tmux runs these tests began with read.
const HISTORY_ROWS: usize = 200;

/// What to start on the terminal, its environment, size and directory: from
/// [`Terminal::launch`], ended by [`Launch::start`], [`Launch::spawn`] or [`Launch::in_shell`].
#[must_use = "nothing starts until `start`, `spawn` or `in_shell`"]
pub struct Launch<'h> {
    h: &'h Harness,
    args: Vec<String>,
    env: Vec<(String, String)>,
    cwd: PathBuf,
    cols: u16,
    rows: u16,
    trust: Trust,
    kitty_keyboard: bool,
}

/// Whether the harness trusts the folder cairn starts in before it starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trust {
    /// Trusted beforehand: cairn goes straight to its input box.
    Given,
    /// Left as it is: a folder nobody trusted yet gets the question.
    Left,
}

impl Launch<'_> {
    /// Does not trust the folder beforehand, so that cairn asks "Do you trust the files in
    /// this folder?" unless an earlier answer covers it.
    pub fn untrusted(mut self) -> Self {
        self.trust = Trust::Left;
        self
    }

    /// A terminal with kitty's keyboard protocol (kitty, foot, WezTerm, Ghostty): once the
    /// program asks for it, keys it makes distinct (Shift+Enter, Escape, Ctrl+letter) are sent
    /// as `CSI … u`. Without this the terminal is a legacy one that ignores the request.
    pub fn kitty_keyboard(mut self) -> Self {
        self.kitty_keyboard = true;
        self
    }

    /// Adds arguments to cairn's command line.
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|arg| (*arg).to_string()));
        self
    }

    /// Sets `name=value` in cairn's environment (over the harness's own values too).
    pub fn env(mut self, name: &str, value: &str) -> Self {
        self.env.push((name.to_string(), value.to_string()));
        self
    }

    /// Runs cairn in `dir` instead of the harness's working directory.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = dir.into();
        self
    }

    /// The terminal's size; 100×30 unless set.
    pub fn size(mut self, cols: u16, rows: u16) -> Self {
        self.cols = cols;
        self.rows = rows;
        self
    }

    /// Starts cairn and waits until it is ready for input.
    ///
    /// This is the one place that gets a fresh cairn to its input box: a question cairn asks
    /// before it (issue 14's "Do you trust the files in this folder?") is answered here, or
    /// the harness's HOME pre-trusts the folder. A test about such a question uses
    /// [`Launch::spawn`] and answers it itself.
    pub fn start(self) -> Terminal {
        let terminal = self.spawn();
        terminal.wait_for("> ");
        terminal
    }

    /// Starts cairn without waiting for anything.
    pub fn spawn(self) -> Terminal {
        let program = env!("CARGO_BIN_EXE_cairn").to_string();
        let args = self.args.clone();
        self.run(&program, &args)
    }

    /// Starts `sh -c SCRIPT` instead, `script` getting the (quoted) command that starts
    /// cairn; the environment is set on the shell, so cairn inherits it.
    pub fn in_shell(self, script: impl FnOnce(&str) -> String) -> Terminal {
        let cairn: Vec<String> = std::iter::once(env!("CARGO_BIN_EXE_cairn"))
            .chain(self.args.iter().map(String::as_str))
            .map(|word| format!("'{}'", word.replace('\'', "'\\''")))
            .collect();
        let script = script(&cairn.join(" "));
        self.run("sh", &["-c".to_string(), script])
    }

    fn run(self, program: &str, args: &[String]) -> Terminal {
        match self.trust {
            Trust::Given => self.h.trust_folder(&self.cwd),
            Trust::Left => {}
        }
        let home = self.h.home.path();
        let mut command = Command::new(program)
            .args(args)
            .current_dir(&self.cwd)
            // None of the caller's credentials or settings from the environment.
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("CAIRN_MAX_RETRIES")
            .env_remove("DISABLE_PROMPT_CACHING")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .env("ANTHROPIC_API_KEY", "sk-test-key")
            .env("ANTHROPIC_BASE_URL", self.h.server.url())
            .env("HOME", home)
            .env("CAIRN_HOME", home.join(".cairn"));
        for (name, value) in &self.env {
            command = command.env(name, value);
        }
        Terminal::spawn(command, self.cols, self.rows, self.kitty_keyboard)
    }
}

/// A program running on a pseudo-terminal, and the screen it has drawn. Dropping it kills
/// the program (if it still runs) and closes the terminal, panics included.
pub struct Terminal {
    /// The pty's master side; `None` once the terminal is closed.
    pty: Option<Arc<Pty>>,
    shared: Arc<Shared>,
    pid: Pid,
    /// Dropping this wakes the reader thread to let go of the pty.
    hang_up: Option<OwnedFd>,
    reader: Option<JoinHandle<()>>,
}

/// What the reader and waiter threads share with the test.
struct Shared {
    state: Mutex<State>,
    /// Signalled whenever `state.events` moves.
    changed: Condvar,
}

struct State {
    emulator: vt100::Parser<Replies>,
    /// Counts changes (output, the output's end, the program's exit) so a waiter can tell
    /// whether anything happened since it last looked.
    events: u64,
    output_ended: bool,
    exit: Option<ExitStatus>,
}

/// Answers to the queries the program sent, in the order sent, until written back.
#[derive(Default)]
struct Replies {
    pending: Vec<u8>,
    /// The terminal has kitty's keyboard protocol (else it ignores the protocol's requests).
    kitty_keyboard: bool,
    /// The protocol's stack of flags the program pushed: the last one holds.
    keyboard_flags: Vec<u16>,
}

impl vt100::Callbacks for Replies {
    fn unhandled_csi(
        &mut self,
        screen: &mut vt100::Screen,
        i1: Option<u8>,
        _i2: Option<u8>,
        params: &[&[u16]],
        c: char,
    ) {
        match (i1, c, params) {
            // Where the cursor is (crossterm asks before drawing an inline viewport).
            (None, 'n', [[6]]) => {
                let (row, col) = screen.cursor_position();
                let answer = format!("\x1b[{};{}R", row + 1, col + 1);
                self.pending.extend_from_slice(answer.as_bytes());
            }
            // Kitty's keyboard protocol: push, pop, query.
            (Some(b'>'), 'u', flags) if self.kitty_keyboard => self
                .keyboard_flags
                .push(flags.first().and_then(|f| f.first()).copied().unwrap_or(0)),
            (Some(b'<'), 'u', count) if self.kitty_keyboard => {
                let count = count.first().and_then(|c| c.first()).copied().unwrap_or(1);
                for _ in 0..count.max(1) {
                    self.keyboard_flags.pop();
                }
            }
            (Some(b'?'), 'u', []) if self.kitty_keyboard => {
                let flags = self.keyboard_flags.last().copied().unwrap_or(0);
                self.pending
                    .extend_from_slice(format!("\x1b[?{flags}u").as_bytes());
            }
            // Device status: fine.
            (None, 'n', [[5]]) => self.pending.extend_from_slice(b"\x1b[0n"),
            // Primary device attributes: a VT100 with advanced video, as xterm answers.
            (None, 'c', [] | [[0]]) => self.pending.extend_from_slice(b"\x1b[?1;2c"),
            _ => {}
        }
    }
}

impl Terminal {
    /// Starts cairn in a 100×30 terminal and waits for its input box.
    pub fn start(h: &Harness) -> Terminal {
        Terminal::launch(h).start()
    }

    /// What to start, to be set up further: arguments, environment, size, directory.
    pub fn launch(h: &Harness) -> Launch<'_> {
        Launch {
            h,
            args: Vec::new(),
            env: Vec::new(),
            cwd: h.work.path().to_path_buf(),
            cols: 100,
            rows: 30,
            trust: Trust::Given,
            kitty_keyboard: false,
        }
    }

    fn spawn(command: Command, cols: u16, rows: u16, kitty_keyboard: bool) -> Terminal {
        let (pty, pts) = pty_process::blocking::open().unwrap();
        pty.resize(pty_process::Size::new(rows, cols)).unwrap();
        let child = command.spawn(pts).unwrap();
        let pid = Pid::from_child(&child);
        let pty = Arc::new(pty);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                emulator: vt100::Parser::new_with_callbacks(
                    rows.try_into().unwrap(),
                    cols.try_into().unwrap(),
                    HISTORY_ROWS,
                    Replies {
                        kitty_keyboard,
                        ..Replies::default()
                    },
                ),
                events: 0,
                output_ended: false,
                exit: None,
            }),
            changed: Condvar::new(),
        });
        // Close-on-exec: a copy in a program another test starts would keep the pipe open.
        let (wake, hang_up) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC).unwrap();
        let reader = {
            let (pty, shared) = (Arc::clone(&pty), Arc::clone(&shared));
            std::thread::spawn(move || read_output(&pty, &shared, &wake))
        };
        {
            let shared = Arc::clone(&shared);
            let mut child = child;
            std::thread::spawn(move || {
                let status = child.wait();
                shared.update(|state| state.exit = status.ok());
            });
        }
        Terminal {
            pty: Some(pty),
            shared,
            pid,
            hang_up: Some(hang_up),
            reader: Some(reader),
        }
    }

    /// The process started on the terminal.
    pub fn pid(&self) -> Pid {
        self.pid
    }

    /// Sends `signal` to the process started on the terminal.
    pub fn signal(&self, signal: Signal) {
        rustix::process::kill_process(self.pid, signal).unwrap();
    }

    /// History (up to 200 rows) and screen, a line per row, wrapped rows joined.
    pub fn screen(&self) -> String {
        screen_text(&mut self.shared.lock().emulator, Rows::HistoryAndScreen)
    }

    /// The rows on screen now, without the history above them, wrapped rows joined.
    pub fn visible(&self) -> String {
        screen_text(&mut self.shared.lock().emulator, Rows::Screen)
    }

    /// The rows on screen now, each as the terminal shows it (wrapped rows not joined).
    pub fn visible_rows(&self) -> Vec<String> {
        let state = self.shared.lock();
        let screen = state.emulator.screen();
        screen.rows(0, screen.size().1.get()).collect()
    }

    /// Whether the program has switched to the alternate screen.
    pub fn alternate_screen(&self) -> bool {
        self.shared.lock().emulator.screen().alternate_screen()
    }

    /// Whether the terminal is in raw mode (keys go to the program one by one, without the
    /// line editing and echo of cooked mode): cairn's state while it reads keys.
    pub fn raw_mode(&self) -> bool {
        rustix::termios::tcgetattr(self.pty()).is_ok_and(|termios| {
            !termios
                .local_modes
                .contains(rustix::termios::LocalModes::ICANON)
        })
    }

    /// The program's exit status if it has exited.
    pub fn exit_status(&self) -> Option<ExitStatus> {
        self.shared.lock().exit
    }

    /// Waits until the screen (history included) shows `text`; fails with the screen after
    /// the deadline.
    pub fn wait_for(&self, text: &str) -> String {
        self.wait_until(text, |screen| screen.contains(text))
    }

    /// Waits until the screen (history included) shows `text` at least `count` times.
    pub fn wait_for_count(&self, text: &str, count: usize) -> String {
        self.wait_until(&format!("{count} × {text}"), |screen| {
            screen.matches(text).count() >= count
        })
    }

    /// Waits until `done` holds for the screen (history included), looking again after
    /// each change; returns that screen. `done` may read the terminal itself.
    pub fn wait_until(&self, what: &str, done: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let (screen, seen) = {
                let mut state = self.shared.lock();
                let screen = screen_text(&mut state.emulator, Rows::HistoryAndScreen);
                (screen, state.events)
            };
            if done(&screen) {
                return screen;
            }
            let changed = self.shared.wait_for_event(seen, deadline);
            assert!(
                changed,
                "timed out waiting for {what:?}; the screen:\n{}",
                self.screen()
            );
        }
    }

    /// Waits for the program to exit and for everything written to the terminal to be on the
    /// screen; returns its exit code.
    pub fn wait_for_exit(&self) -> i32 {
        let deadline = Instant::now() + WAIT;
        loop {
            let (exit, output_ended, seen) = {
                let state = self.shared.lock();
                (state.exit, state.output_ended, state.events)
            };
            if let (Some(status), true) = (exit, output_ended) {
                return status.code().unwrap_or_else(|| {
                    panic!(
                        "ended by a signal ({status}); the screen:\n{}",
                        self.screen()
                    )
                });
            }
            assert!(
                self.shared.wait_for_event(seen, deadline),
                "timed out waiting for the program to exit (exited: {exit:?}, terminal \
                 closed by all: {output_ended}); the screen:\n{}",
                self.screen()
            );
        }
    }

    /// Types `text` as keys.
    pub fn type_text(&self, text: &str) {
        self.write(text.as_bytes());
    }

    /// Presses a key by the names tmux gives them: `Enter`, `S-Enter` (Shift), `M-Enter`
    /// (Alt), `Escape`, `Tab`, `BSpace`, `Up`/`Down`/`Left`/`Right`, `C-d` (Ctrl+D), or a
    /// single character; sent as this terminal sends it (see [`Launch::kitty_keyboard`]).
    pub fn press(&self, key: &str) {
        let (application_cursor, flags) = {
            let mut state = self.shared.lock();
            let flags = state
                .emulator
                .callbacks_mut()
                .keyboard_flags
                .last()
                .copied();
            (state.emulator.screen().application_cursor(), flags)
        };
        let disambiguate = flags.is_some_and(|flags| flags & 1 != 0);
        self.write(&key_bytes(key, application_cursor, disambiguate));
    }

    /// The keyboard protocol's flags the program has pushed and not popped (0: none): what a
    /// kitty-protocol terminal is left with.
    pub fn keyboard_flags(&self) -> u16 {
        let mut state = self.shared.lock();
        state
            .emulator
            .callbacks_mut()
            .keyboard_flags
            .last()
            .copied()
            .unwrap_or(0)
    }

    /// Types a line, waits for it to show, and sends it.
    pub fn send_line(&self, text: &str) {
        self.type_text(text);
        self.wait_for(text);
        self.press("Enter");
    }

    /// Pastes `text` as a terminal does: line breaks sent as carriage returns, and the
    /// whole bracketed when the program asked for bracketed paste.
    pub fn paste(&self, text: &str) {
        let text = text.replace("\r\n", "\r").replace('\n', "\r");
        if self.shared.lock().emulator.screen().bracketed_paste() {
            self.write(format!("\x1b[200~{text}\x1b[201~").as_bytes());
        } else {
            self.write(text.as_bytes());
        }
    }

    /// Resizes the terminal, as when its window is: the emulator reflows nothing (like
    /// xterm), and the program gets SIGWINCH.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.shared
            .lock()
            .emulator
            .screen_mut()
            .set_size(rows.try_into().unwrap(), cols.try_into().unwrap());
        self.pty()
            .resize(pty_process::Size::new(rows, cols))
            .unwrap();
    }

    /// Closes the window as terminal emulators do (xterm, VTE): SIGHUP to the process group
    /// of the program started on it, then [`Terminal::hang_up`].
    pub fn close_window(&mut self) {
        let _ = rustix::process::kill_process_group(self.pid, Signal::HUP);
        self.hang_up();
    }

    /// Closes the terminal: the pty's master side goes, and the kernel hangs up the session
    /// on it (SIGHUP to its leader only, the program started on the terminal).
    pub fn hang_up(&mut self) {
        // The reader thread lets go of its handle when woken, then ours is the last.
        drop(self.hang_up.take());
        if let Some(reader) = self.reader.take() {
            reader.join().unwrap();
        }
        self.pty = None;
    }

    fn pty(&self) -> &Pty {
        self.pty.as_deref().expect("the terminal was closed")
    }

    /// Sends keys once the program reads them: typed while cooked mode is on (cairn leaving
    /// the session list or an editor and not yet back in raw mode), Enter would reach it as
    /// Ctrl+J. Raw mode comes before the program's next frame, whose output wakes the wait.
    fn write(&self, bytes: &[u8]) {
        if !self.raw_mode() {
            self.wait_until("the terminal in raw mode (cairn reading keys)", |_| {
                self.raw_mode()
            });
        }
        let mut pty = self.pty();
        pty.write_all(bytes).unwrap();
    }
}

impl Drop for Terminal {
    fn drop(&mut self) {
        if self.shared.lock().exit.is_none() {
            let _ = rustix::process::kill_process(self.pid, Signal::KILL);
        }
        self.hang_up();
    }
}

impl Shared {
    /// The state, even if a panicking test thread poisoned the lock.
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn update(&self, change: impl FnOnce(&mut State)) {
        let mut state = self.lock();
        change(&mut state);
        state.events += 1;
        self.changed.notify_all();
    }

    /// Waits until something happens after event `seen`; false if `deadline` passes first.
    fn wait_for_event(&self, seen: u64, deadline: Instant) -> bool {
        let mut state = self.lock();
        while state.events == seen {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return false;
            };
            state = self
                .changed
                .wait_timeout(state, left)
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0;
        }
        true
    }
}

/// Feeds what the program writes to the emulator and writes back the emulator's answers to
/// its queries, until the terminal's slave side is closed by all (EIO) or `wake` says the
/// terminal is closing.
fn read_output(pty: &Pty, shared: &Shared, wake: &OwnedFd) {
    let mut buffer = vec![0; 1 << 16];
    loop {
        let mut fds = [
            PollFd::new(pty, PollFlags::IN),
            PollFd::new(wake, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(_) => break,
        }
        if !fds[1].revents().is_empty() {
            break;
        }
        let mut reader = pty;
        let read = match reader.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        // Waiters look only once nothing more is waiting to be read, so that they see whole
        // frames rather than a frame's first kilobyte as often as the pty allows.
        let mut replies = Vec::new();
        let mut change = |state: &mut State| {
            state.emulator.process(&buffer[..read]);
            replies = std::mem::take(&mut state.emulator.callbacks_mut().pending);
        };
        if more_to_read(pty) {
            change(&mut shared.lock());
        } else {
            shared.update(change);
        }
        if !replies.is_empty() {
            let mut writer = pty;
            let _ = writer.write_all(&replies);
        }
    }
    shared.update(|state| state.output_ended = true);
}

/// Whether the program has written more than was read so far.
fn more_to_read(pty: &Pty) -> bool {
    let mut fds = [PollFd::new(pty, PollFlags::IN)];
    let now = rustix::event::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    rustix::event::poll(&mut fds, Some(&now)).is_ok_and(|ready| ready > 0)
}

#[derive(Clone, Copy)]
enum Rows {
    Screen,
    HistoryAndScreen,
}

/// The emulator's rows as text, a line per row (each ending in `\n`), a row the program's
/// text wrapped from joined with the next.
fn screen_text(emulator: &mut vt100::Parser<Replies>, rows: Rows) -> String {
    let screen = emulator.screen_mut();
    let height = usize::from(screen.size().0.get());
    let width = screen.size().1.get();
    let mut lines: Vec<(String, bool)> = Vec::new();
    let mut read_view = |screen: &vt100::Screen, take: usize| {
        let texts: Vec<String> = screen.rows(0, width).take(take).collect();
        for (row, text) in texts.into_iter().enumerate() {
            let wrapped = screen.row_wrapped(u16::try_from(row).unwrap());
            lines.push((text, wrapped));
        }
    };
    if let Rows::HistoryAndScreen = rows {
        // The history is read a screenful at a time by scrolling the view back.
        screen.set_scrollback(usize::MAX);
        let mut offset = screen.scrollback();
        while offset > 0 {
            screen.set_scrollback(offset);
            let take = offset.min(height);
            read_view(screen, take);
            offset -= take;
        }
        screen.set_scrollback(0);
    }
    read_view(screen, height);
    let mut text = String::new();
    for (row, wrapped) in lines {
        text.push_str(&row);
        if !wrapped {
            text.push('\n');
        }
    }
    text
}

/// The bytes a terminal sends for `key` (see [`Terminal::press`]).
fn key_bytes(key: &str, application_cursor: bool, disambiguate: bool) -> Vec<u8> {
    let arrow = |letter: char| {
        let prefix = if application_cursor { "\x1bO" } else { "\x1b[" };
        format!("{prefix}{letter}").into_bytes()
    };
    if disambiguate {
        // Kitty's protocol, "disambiguate escape codes": what legacy encodings confuse.
        match key {
            "S-Enter" => return b"\x1b[13;2u".to_vec(),
            "M-Enter" => return b"\x1b[13;3u".to_vec(),
            "Escape" => return b"\x1b[27u".to_vec(),
            _ => {}
        }
        if let Some(letter) = key.strip_prefix("C-")
            && let [letter] = letter.as_bytes()
            && letter.is_ascii_alphabetic()
        {
            return format!("\x1b[{};5u", letter.to_ascii_lowercase()).into_bytes();
        }
    }
    match key {
        "Enter" => b"\r".to_vec(),
        // A legacy terminal sends Shift+Enter as Enter: the program cannot tell them apart.
        "S-Enter" => b"\r".to_vec(),
        "M-Enter" => b"\x1b\r".to_vec(),
        "Escape" => b"\x1b".to_vec(),
        "Tab" => b"\t".to_vec(),
        "BSpace" => b"\x7f".to_vec(),
        "Up" => arrow('A'),
        "Down" => arrow('B'),
        "Right" => arrow('C'),
        "Left" => arrow('D'),
        _ => {
            if let Some(letter) = key.strip_prefix("C-")
                && let [letter] = letter.as_bytes()
                && letter.is_ascii_alphabetic()
            {
                return vec![letter.to_ascii_lowercase() - b'a' + 1];
            }
            let mut chars = key.chars();
            match (chars.next(), chars.next()) {
                (Some(_), None) => key.as_bytes().to_vec(),
                _ => panic!("unknown key {key:?}; type text with `type_text`"),
            }
        }
    }
}

/// The text of the last user message of a request body, all its text blocks joined.
pub fn last_user_text(body: &Value) -> String {
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    match &last["content"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|block| block["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => panic!("unexpected content {other}"),
    }
}
