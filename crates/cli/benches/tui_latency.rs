//! Latency of the interactive UI, measured on a pseudo-terminal the benchmark owns (tmux polls
//! too coarsely for milliseconds):
//!
//! - startup: from spawning `cairn` to the input box's `>` prompt reaching the terminal;
//! - keystroke echo: while a 1 MB answer streams as fast as the scripted server sends it, a
//!   key is typed every 20 ms and timed until the terminal receives it back; typing goes on
//!   for 600 ms after the answer's last word is on screen, and those keys are reported on
//!   their own (work the finished answer causes after that must not hold keys up either);
//! - stream lag: from the moment the server could have sent the answer's last byte (the
//!   request's arrival plus the time a plain socket reader takes to receive the whole reply)
//!   to the answer's last word reaching the terminal.
//!
//! `cargo bench -p cairn-cli --bench tui_latency`

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark reports on stdout and fails loudly"
)]

use std::fs::File;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::ops::RangeInclusive;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cairn_test_support::{Reply, ScriptedServer};
use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
use rustix::termios::{Winsize, tcsetwinsize};

const ROWS: u16 = 30;
const COLS: u16 = 100;
const STARTUP_RUNS: usize = 20;
const KEYSTROKES: usize = 100;
const KEY_INTERVAL: Duration = Duration::from_millis(20);
/// How long keys are still typed once the answer's last word is on screen: long enough to
/// cover writing the finished answer (about 10,000 lines) into the scrollback.
const AFTER_END_TYPING: Duration = Duration::from_millis(600);
const ANSWER_BYTES: usize = 1 << 20;
/// The answer's last word; nothing else on screen spells it.
const END_MARKER: &str = "qqendqq";
/// Typed keys, in order, each once a session: letters no part of the UI or the (ASCII) answer
/// shows. When the input box moves (the live region above it grows or empties) its redraw
/// sends every letter typed so far again, so a letter must not repeat to be matched by its
/// first appearance after it was typed.
const KEYS: &[RangeInclusive<char>] = &['Ā'..='ſ', 'А'..='я', 'α'..='ω'];
const WAIT: Duration = Duration::from_secs(60);
/// How long one answer may take to reach the screen before the benchmark gives up on it.
const STREAM_WAIT: Duration = Duration::from_secs(20);

/// Everything the terminal received, and when each read returned.
#[derive(Default)]
struct Capture {
    bytes: Vec<u8>,
    /// (end offset of a read, when it returned)
    reads: Vec<(usize, Instant)>,
}

impl Capture {
    /// When the byte at `offset` arrived.
    fn arrival(&self, offset: usize) -> Instant {
        let index = self.reads.partition_point(|(end, _)| *end <= offset);
        self.reads[index].1
    }

    fn find_from(&self, from: usize, needle: &[u8]) -> Option<usize> {
        let from = from.min(self.bytes.len());
        self.bytes[from..]
            .windows(needle.len())
            .position(|window| window == needle)
            .map(|at| from + at)
    }
}

/// `cairn` on a pseudo-terminal, its output captured by a reader thread that also answers
/// the terminal queries a real terminal would.
struct Session {
    child: Child,
    master: File,
    capture: Arc<Mutex<Capture>>,
    started: Instant,
}

impl Session {
    fn spawn(server: &ScriptedServer, home: &std::path::Path, work: &std::path::Path) -> Session {
        let master =
            openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap();
        grantpt(&master).unwrap();
        unlockpt(&master).unwrap();
        tcsetwinsize(
            &master,
            Winsize {
                ws_row: ROWS,
                ws_col: COLS,
                ws_xpixel: 0,
                ws_ypixel: 0,
            },
        )
        .unwrap();
        let name = ptsname(&master, Vec::new()).unwrap();
        let slave = File::options()
            .read(true)
            .write(true)
            .open(name.to_str().unwrap())
            .unwrap();
        let master = File::from(master);
        let capture = Arc::new(Mutex::new(Capture::default()));
        let started = Instant::now();
        // `setsid -c` makes cairn a session leader with the pty as its controlling terminal.
        let child = Command::new("setsid")
            .arg("-c")
            .arg(env!("CARGO_BIN_EXE_cairn"))
            .current_dir(work)
            .env_remove("ANTHROPIC_AUTH_TOKEN")
            .env_remove("ANTHROPIC_MODEL")
            .env_remove("CAIRN_MAX_RETRIES")
            .env_remove("DISABLE_PROMPT_CACHING")
            .env_remove("NO_COLOR")
            .env("TERM", "xterm-256color")
            .env("ANTHROPIC_API_KEY", "bench-key")
            .env("ANTHROPIC_BASE_URL", server.url())
            .env("HOME", home)
            .env("CAIRN_HOME", home.join(".cairn"))
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave))
            .spawn()
            .unwrap();
        let mut reader = master.try_clone().unwrap();
        let mut answerer = master.try_clone().unwrap();
        let sink = Arc::clone(&capture);
        std::thread::spawn(move || {
            let mut buf = vec![0; 1 << 16];
            loop {
                let n = match reader.read(&mut buf) {
                    Ok(0) | Err(_) => return,
                    Ok(n) => n,
                };
                let now = Instant::now();
                let mut capture = sink.lock().unwrap();
                let scan_from = capture.bytes.len().saturating_sub(3);
                capture.bytes.extend_from_slice(&buf[..n]);
                let end = capture.bytes.len();
                capture.reads.push((end, now));
                // A cursor-position query (the inline viewport asks at startup).
                let mut from = scan_from;
                while let Some(at) = capture.find_from(from, b"\x1b[6n") {
                    let _ = answerer.write_all(b"\x1b[1;1R");
                    from = at + 1;
                }
            }
        });
        Session {
            child,
            master,
            capture,
            started,
        }
    }

    /// Waits until `needle` appears at or after `from`; returns its offset and arrival time.
    fn wait_for(&self, from: usize, needle: &[u8]) -> (usize, Instant) {
        let deadline = Instant::now() + WAIT;
        loop {
            {
                let capture = self.capture.lock().unwrap();
                if let Some(at) = capture.find_from(from, needle) {
                    return (at, capture.arrival(at + needle.len() - 1));
                }
            }
            assert!(
                Instant::now() < deadline,
                "{:?} never reached the terminal; it shows:\n{}",
                String::from_utf8_lossy(needle),
                String::from_utf8_lossy(&self.capture.lock().unwrap().bytes),
            );
            std::thread::sleep(Duration::from_micros(200));
        }
    }

    /// Waits for the input box: the `>` prompt drawn after the welcome line.
    fn wait_for_input_box(&self) -> Instant {
        let (welcome, _) = self.wait_for(0, b"Welcome to cairn");
        self.wait_for(welcome, b">").1
    }

    fn len(&self) -> usize {
        self.capture.lock().unwrap().bytes.len()
    }

    fn type_bytes(&mut self, bytes: &[u8]) -> Instant {
        self.master.write_all(bytes).unwrap();
        Instant::now()
    }

    /// Types the first key of [`KEYS`] not in `typed` and adds it there; false once every
    /// key has been typed.
    fn type_next_key(&mut self, typed: &mut Vec<TypedKey>) -> bool {
        let Some(key) = KEYS.iter().flat_map(|range| range.clone()).nth(typed.len()) else {
            return false;
        };
        let offset = self.len();
        let at = self.type_bytes(key.encode_utf8(&mut [0; 4]).as_bytes());
        typed.push(TypedKey { key, offset, at });
        true
    }
}

/// A key typed into the input box.
struct TypedKey {
    key: char,
    /// How much the terminal had received before the key was typed.
    offset: usize,
    at: Instant,
}

/// Keystroke echo times, by when the key was typed.
#[derive(Default)]
struct Echoes {
    during_streaming: Vec<Duration>,
    /// Typed after the answer's last word reached the screen.
    after_end: Vec<Duration>,
    /// Keys whose letter never reached the terminal.
    missing: usize,
}

impl Echoes {
    /// Reads each typed key's echo off the capture: the first time the key's letter reached
    /// the terminal after it was typed (each letter is typed once, see [`KEYS`]). Keys typed
    /// before `end_seen` count as typed during streaming.
    fn collect(&mut self, capture: &Capture, typed: Vec<TypedKey>, end_seen: Instant) {
        for TypedKey { key, offset, at } in typed {
            let mut utf8 = [0; 4];
            let letter = key.encode_utf8(&mut utf8).as_bytes();
            let Some(found) = capture.find_from(offset, letter) else {
                self.missing += 1;
                continue;
            };
            let echo = capture.arrival(found + letter.len() - 1).duration_since(at);
            if at < end_seen {
                self.during_streaming.push(echo);
            } else {
                self.after_end.push(echo);
            }
        }
    }

    fn all(&self) -> Vec<Duration> {
        [self.during_streaming.as_slice(), self.after_end.as_slice()].concat()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn main() {
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let server = ScriptedServer::start();
    let answer = answer_text();
    server.set_default_reply(Reply::text(answer));
    // As if the folder trust question had been answered yes: the timings are of the app.
    let (mut folders, _) =
        cairn_config::trust::TrustedFolders::load(&home.path().join(".cairn"), home.path());
    folders.trust(work.path()).unwrap();

    // Startup to a usable input box; the first run warms the page cache.
    let mut startup = Vec::new();
    for run in 0..=STARTUP_RUNS {
        let session = Session::spawn(&server, home.path(), work.path());
        let ready = session.wait_for_input_box();
        if run > 0 {
            startup.push(ready.duration_since(session.started));
        }
    }

    let send_time = raw_send_time(&server);
    let mut headless = headless_times(&server, home.path(), work.path());
    let mut echoes = Echoes::default();
    let mut lags = Vec::new();
    let mut stream_times = Vec::new();
    // Keys not typed because a session had used up all of KEYS.
    let mut untyped = 0;
    let mut rounds = 0;
    while echoes.during_streaming.len() < KEYSTROKES && rounds < 60 {
        rounds += 1;
        let mut session = Session::spawn(&server, home.path(), work.path());
        session.wait_for_input_box();
        let before = server.requests().len();
        session.type_bytes(b"go\r");
        let request = server.wait_for_requests(before + 1, WAIT)[before].clone();
        let mut typed = Vec::new();
        let mut next_key = Instant::now();
        let mut searched = 0;
        let end_seen = loop {
            if !session.type_next_key(&mut typed) {
                untyped += 1;
            }
            next_key += KEY_INTERVAL;
            // Only the bytes not searched before: the lock must not stall the reader.
            let end = {
                let capture = session.capture.lock().unwrap();
                let found = capture
                    .find_from(searched, END_MARKER.as_bytes())
                    .map(|at| capture.arrival(at + END_MARKER.len() - 1));
                searched = capture.bytes.len().saturating_sub(END_MARKER.len());
                found
            };
            if end.is_some() {
                break end;
            }
            if request.received_at.elapsed() > STREAM_WAIT {
                break None;
            }
            if let Some(pause) = next_key.checked_duration_since(Instant::now()) {
                std::thread::sleep(pause);
            }
        };
        let Some(end_seen) = end_seen else {
            println!(
                "the answer's last word was not on screen {} s after the request; stopping",
                STREAM_WAIT.as_secs()
            );
            let capture = session.capture.lock().unwrap();
            echoes.collect(&capture, typed, Instant::now());
            break;
        };
        stream_times.push(end_seen.duration_since(request.received_at));
        lags.push(
            end_seen
                .checked_duration_since(request.received_at + send_time)
                .unwrap_or_default(),
        );
        // Keys typed after the last word, while the finished answer may still be going into
        // the scrollback.
        while next_key < end_seen + AFTER_END_TYPING {
            if let Some(pause) = next_key.checked_duration_since(Instant::now()) {
                std::thread::sleep(pause);
            }
            if !session.type_next_key(&mut typed) {
                untyped += 1;
            }
            next_key += KEY_INTERVAL;
        }
        // Let the last keys echo, then read each key's echo off the capture.
        std::thread::sleep(Duration::from_millis(300));
        let capture = session.capture.lock().unwrap();
        echoes.collect(&capture, typed, end_seen);
    }

    println!("== startup to input box ({STARTUP_RUNS} runs)");
    println!("{}", summary(&mut startup));
    let mut all_echoes = echoes.all();
    println!(
        "== keystroke echo while {} KB streams ({} keys during streaming over {rounds} rounds; {} in all)",
        ANSWER_BYTES / 1024,
        echoes.during_streaming.len(),
        all_echoes.len()
    );
    println!(
        "during streaming: {}",
        summary(&mut echoes.during_streaming)
    );
    println!("after the answer ended: {}", summary(&mut echoes.after_end));
    println!("all keys:         {}", summary(&mut all_echoes));
    if echoes.missing > 0 || untyped > 0 {
        println!(
            "({} keys never echoed; {untyped} not typed because a session had used up its {} keys)",
            echoes.missing,
            KEYS.iter()
                .map(|range| range.clone().count())
                .sum::<usize>()
        );
    }
    println!(
        "== stream lag: last word on screen after the server could have sent it (raw send {:.1} ms)",
        ms(send_time)
    );
    println!("{}", summary(&mut lags));
    println!("== request to last word on screen");
    println!("{}", summary(&mut stream_times));
    println!("== the same answer without the UI: `cairn -p`, request to exit");
    println!("{}", summary(&mut headless));
}

/// `cairn -p` receiving the same answer, from its request to its exit: what the engine and
/// HTTP client cost without the interactive UI.
fn headless_times(
    server: &ScriptedServer,
    home: &std::path::Path,
    work: &std::path::Path,
) -> Vec<Duration> {
    (0..3)
        .map(|_| {
            let before = server.requests().len();
            let status = Command::new(env!("CARGO_BIN_EXE_cairn"))
                .current_dir(work)
                .env_remove("ANTHROPIC_AUTH_TOKEN")
                .env_remove("ANTHROPIC_MODEL")
                .env("ANTHROPIC_API_KEY", "bench-key")
                .env("ANTHROPIC_BASE_URL", server.url())
                .env("HOME", home)
                .env("CAIRN_HOME", home.join(".cairn"))
                .args(["-p", "go"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .status()
                .unwrap();
            let exited = Instant::now();
            assert!(status.success());
            let request = &server.requests()[before];
            exited.duration_since(request.received_at)
        })
        .collect()
}

/// About 1 MB of lowercase prose in paragraphs, ending with [`END_MARKER`] on a line of its own.
fn answer_text() -> String {
    const WORDS: &[&str] = &[
        "stream", "render", "token", "answer", "latency", "frame", "buffer", "cairn", "model",
        "terminal", "quick", "line", "delta", "window", "scroll",
    ];
    let mut text = String::with_capacity(ANSWER_BYTES + 64);
    let mut n = 0usize;
    while text.len() < ANSWER_BYTES {
        text.push_str(WORDS[(n * 7 + n / 3) % WORDS.len()]);
        n += 1;
        text.push_str(if n.is_multiple_of(120) { ".\n\n" } else { " " });
    }
    text.push_str("\n\n");
    text.push_str(END_MARKER);
    text.push('\n');
    text
}

/// How long a plain socket reader takes to receive the whole reply: the server's own speed.
fn raw_send_time(server: &ScriptedServer) -> Duration {
    let url = server.url();
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let body = r#"{"model":"bench","max_tokens":1,"stream":true,"messages":[]}"#;
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut stream = TcpStream::connect(address).unwrap();
        let started = Instant::now();
        write!(
            stream,
            "POST /v1/messages HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let mut received = Vec::new();
        stream.read_to_end(&mut received).unwrap();
        assert!(
            received.windows(12).any(|w| w == b"message_stop"),
            "the raw reply was cut short"
        );
        times.push(started.elapsed());
    }
    times.sort();
    times[times.len() / 2]
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

fn summary(samples: &mut [Duration]) -> String {
    if samples.is_empty() {
        return "no samples".to_string();
    }
    samples.sort();
    let at = |q: f64| {
        let index = ((q * samples.len() as f64).ceil() as usize).clamp(1, samples.len()) - 1;
        ms(samples[index])
    };
    format!(
        "n {}  p50 {:.1} ms  p95 {:.1} ms  p99 {:.1} ms  max {:.1} ms",
        samples.len(),
        at(0.50),
        at(0.95),
        at(0.99),
        ms(samples[samples.len() - 1])
    )
}
