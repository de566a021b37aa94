//! Tests of [`super::run_shell`]: how a command ends, that stopping it stops everything it
//! started, and what the transcript and the model get of its output.

use pretty_assertions::assert_eq;

use super::*;

/// The longest any one wait in these tests may take before it counts as a failure.
const WAIT: Duration = Duration::from_secs(10);

/// Runs `command` in the current directory, failing the test if it takes longer than [`WAIT`].
async fn run(command: &str, timeout: Duration) -> ShellOutput {
    let (_cancel, receiver) = oneshot::channel();
    let running = run_shell(command.into(), Path::new("."), timeout, receiver);
    tokio::time::timeout(WAIT, running)
        .await
        .expect("the command should be over")
}

#[tokio::test]
async fn output_and_exit_code_are_kept() {
    let output = run("echo hi; echo oops >&2; exit 3", SHELL_TIMEOUT).await;
    assert_eq!(
        output,
        ShellOutput {
            command: "echo hi; echo oops >&2; exit 3".into(),
            stdout: StreamOutput::whole("hi\n"),
            stderr: StreamOutput::whole("oops\n"),
            ending: ShellEnding::Exited(Some(3)),
            output_left_open: false,
        }
    );
    assert_eq!(
        output.notice(),
        "! echo hi; echo oops >&2; exit 3\nhi\noops\n(exit code 3)"
    );
    assert_eq!(
        output.context(),
        "<bash-input>echo hi; echo oops >&2; exit 3</bash-input>\n\
         <bash-stdout>hi</bash-stdout>\n<bash-stderr>oops</bash-stderr>"
    );
}

#[tokio::test]
async fn a_slow_command_is_killed_at_the_timeout_or_when_cancelled() {
    let output = run("sleep 30", Duration::from_millis(50)).await;
    assert_eq!(output.ending, ShellEnding::TimedOut);

    let (cancel, receiver) = oneshot::channel();
    let _ = cancel.send(());
    let output = run_shell("sleep 30".into(), Path::new("."), SHELL_TIMEOUT, receiver).await;
    assert_eq!(output.ending, ShellEnding::Cancelled);
}

/// Starts a `sleep 30` in the background (`&`); with a script around it, a `!command` that
/// leaves a process running. The process writes its pid to the FIFO `$FIFO` and holds it open
/// until it ends.
const WATCHED_SLEEP: &str = r#"sh -c 'echo $$; exec sleep 30' > "$FIFO" &"#;

/// A process that a `!command` started, seen through the FIFO of [`WATCHED_SLEEP`].
struct Watched {
    pid: i32,
    end: oneshot::Receiver<()>,
}

impl Watched {
    /// Waits until the process has ended, failing the test after [`WAIT`].
    async fn wait_until_ended(self) {
        let ended = tokio::time::timeout(WAIT, self.end).await;
        assert!(
            matches!(ended, Ok(Ok(()))),
            "process {} still runs",
            self.pid
        );
    }
}

/// Starts `script`, which runs [`WATCHED_SLEEP`], as a `!command` in `dir`; returns the
/// process it left running, the cancel switch and the running command.
async fn start_watched(
    dir: &Path,
    script: &str,
) -> (
    Watched,
    oneshot::Sender<()>,
    tokio::task::JoinHandle<ShellOutput>,
) {
    let fifo = dir.join("watched");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success(), "mkfifo failed");
    let (pid_sender, pid) = oneshot::channel();
    let (end_sender, end) = oneshot::channel();
    let reader_fifo = fifo.clone();
    // Opening and reading a FIFO block: on a thread of its own, which a failing test leaves
    // behind rather than waiting for it.
    std::thread::spawn(move || {
        use std::io::BufRead;
        let mut reader = std::io::BufReader::new(std::fs::File::open(reader_fifo).unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let _ = pid_sender.send(line.trim().parse::<i32>().unwrap());
        // The FIFO ends when its one writer, the process, has ended.
        std::io::copy(&mut reader, &mut std::io::sink()).unwrap();
        let _ = end_sender.send(());
    });
    let command = format!("FIFO='{}'; {script}", fifo.display());
    let (cancel, receiver) = oneshot::channel();
    let cwd = dir.to_path_buf();
    let running =
        tokio::spawn(async move { run_shell(command, &cwd, SHELL_TIMEOUT, receiver).await });
    let pid = tokio::time::timeout(WAIT, pid)
        .await
        .expect("the process should start")
        .unwrap();
    (Watched { pid, end }, cancel, running)
}

#[tokio::test]
async fn cancelling_stops_what_the_command_started() {
    let dir = tempfile::tempdir().unwrap();
    let (sleep, cancel, running) =
        start_watched(dir.path(), &format!("{WATCHED_SLEEP} wait")).await;
    cancel.send(()).unwrap();
    let output = tokio::time::timeout(WAIT, running).await.unwrap().unwrap();
    assert_eq!(output.ending, ShellEnding::Cancelled);
    sleep.wait_until_ended().await;
}

#[tokio::test]
async fn what_ignores_sigterm_gets_sigkill_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    // A signal ignored by the shell stays ignored in what it starts.
    let script = format!("trap '' TERM; {WATCHED_SLEEP} wait");
    let (sleep, cancel, running) = start_watched(dir.path(), &script).await;
    cancel.send(()).unwrap();
    let output = tokio::time::timeout(WAIT, running).await.unwrap().unwrap();
    assert_eq!(output.ending, ShellEnding::Cancelled);
    sleep.wait_until_ended().await;
}

#[tokio::test]
async fn dropping_the_runner_stops_what_the_command_started() {
    let dir = tempfile::tempdir().unwrap();
    let (sleep, _cancel, running) =
        start_watched(dir.path(), &format!("{WATCHED_SLEEP} wait")).await;
    running.abort();
    assert!(running.await.unwrap_err().is_cancelled());
    sleep.wait_until_ended().await;
}

#[tokio::test]
async fn a_job_left_in_the_background_does_not_hold_the_command_up() {
    // `run` fails the test after 10 s, well before the job's 30.
    let output = run("sleep 30 & echo $!", SHELL_TIMEOUT).await;
    let pid: i32 = output.stdout.head.trim().parse().unwrap();
    // It was meant to run on; this test has no more use for it.
    let _ = rustix::process::kill_process(Pid::from_raw(pid).unwrap(), Signal::KILL);
    assert_eq!(
        output,
        ShellOutput {
            command: "sleep 30 & echo $!".into(),
            stdout: StreamOutput::whole(format!("{pid}\n")),
            stderr: StreamOutput::default(),
            ending: ShellEnding::Exited(Some(0)),
            output_left_open: true,
        }
    );
    assert_eq!(
        output.notice(),
        format!(
            "! sleep 30 & echo $!\n{pid}\n(something it started runs on in the background; \
             its later output is not shown)"
        )
    );
}

#[tokio::test]
async fn endless_output_is_kept_in_bounded_memory() {
    let output = run("yes", Duration::from_millis(300)).await;
    assert_eq!(output.ending, ShellEnding::TimedOut);
    let kept = output.stdout.head.len() + output.stdout.tail.len();
    assert!(kept <= MAX_OUTPUT_BYTES, "{kept} bytes kept");
    assert!(output.stdout.dropped.bytes > 0);
    assert!(output.context().len() < MAX_OUTPUT_BYTES + 200);
}

#[tokio::test]
async fn long_output_keeps_its_two_ends_and_counts_the_middle() {
    let output = run("yes | head -c 3000000", SHELL_TIMEOUT).await;
    let dropped = 3_000_000 - MAX_OUTPUT_BYTES;
    assert_eq!(
        output.stdout,
        StreamOutput {
            head: "y\n".repeat(KEPT_BYTES_EACH_END / 2),
            dropped: Dropped {
                bytes: dropped,
                line_breaks: dropped / 2,
            },
            tail: "y\n".repeat(KEPT_BYTES_EACH_END / 2),
        }
    );
    let context = output.context();
    assert!(
        context.contains(&format!(
            "y\n[… {dropped} bytes ({} lines) left out of the middle …]\ny\n",
            dropped / 2
        )),
        "{}",
        &context[KEPT_BYTES_EACH_END..KEPT_BYTES_EACH_END + 200]
    );
}

#[tokio::test]
async fn the_notice_shows_the_last_lines_and_says_what_the_model_gets() {
    let output = run("seq 1 100000", SHELL_TIMEOUT).await;
    let last: Vec<String> = (99_981..=100_000).map(|n| n.to_string()).collect();
    // `seq` printed 588,895 bytes; 30 KB of them are kept.
    assert_eq!(
        output.notice(),
        format!(
            "! seq 1 100000\n… +99980 lines\n{}\n(the model gets the first and last 15 KB of \
             long output: 558175 bytes of stdout left out)",
            last.join("\n")
        )
    );
}

#[test]
fn the_notice_goes_no_further_back_than_a_cut() {
    let output = ShellOutput {
        command: "build".into(),
        stdout: StreamOutput::whole("compiling\n"),
        stderr: StreamOutput {
            head: "warning 1\nwarn".into(),
            dropped: Dropped {
                bytes: 5000,
                line_breaks: 500,
            },
            tail: "ing 9\nerror: 1\nerror: 2\n".into(),
        },
        ending: ShellEnding::Exited(Some(101)),
        output_left_open: false,
    };
    // stderr had 1 + 500 + 2 line breaks and a last line, stdout one line; two are shown.
    assert_eq!(
        output.notice(),
        "! build\n… +503 lines\nerror: 1\nerror: 2\n(the model gets the first and last 15 KB \
         of long output: 5000 bytes of stderr left out)\n(exit code 101)"
    );
}

#[test]
fn a_long_line_is_cut_in_the_notice() {
    let output = ShellOutput {
        command: "cat min.js".into(),
        stdout: StreamOutput::whole("é".repeat(1000)),
        stderr: StreamOutput::default(),
        ending: ShellEnding::Exited(Some(0)),
        output_left_open: false,
    };
    assert_eq!(
        output.notice(),
        format!("! cat min.js\n{}…", "é".repeat(NOTICE_LINE_CHARS))
    );
}

#[test]
fn a_character_cut_in_two_at_the_gap_is_dropped_whole() {
    let mut stream = CappedStream::default();
    // "é" is two bytes: after the odd first byte, both ends of the gap fall inside one.
    stream.push(b"a");
    for _ in 0..40_000 {
        stream.push("é".as_bytes());
    }
    stream.push(b"b");
    let kept_chars = (KEPT_BYTES_EACH_END - 2) / 2;
    assert_eq!(
        stream.finish(),
        StreamOutput {
            head: format!("a{}", "é".repeat(kept_chars)),
            dropped: Dropped {
                bytes: 80_002 - 2 * (KEPT_BYTES_EACH_END - 1),
                line_breaks: 0,
            },
            tail: format!("{}b", "é".repeat(kept_chars)),
        }
    );
}

#[test]
fn the_transcript_leaves_the_output_out_of_the_prompt() {
    use cairn_protocol::{ContentBlock, Message, Role};
    let output = ShellOutput {
        command: "cat notes".into(),
        stdout: StreamOutput {
            head: "a\n".into(),
            dropped: Dropped {
                bytes: 100_000,
                line_breaks: 50_000,
            },
            tail: "b\n".into(),
        },
        stderr: StreamOutput::default(),
        ending: ShellEnding::Exited(Some(0)),
        output_left_open: false,
    };
    let message = Message {
        role: Role::User,
        content: vec![
            ContentBlock::text(output.context()),
            ContentBlock::text("what do the notes say?"),
        ],
    };
    let prompt = crate::transcript::user_prompt::UserPrompt::of(&message);
    assert_eq!(prompt.text, "what do the notes say?");
    assert_eq!(prompt.attachments, []);
}

#[test]
fn an_incomplete_last_character_is_measured() {
    assert_eq!(incomplete_char_at_end(b"abc"), 0);
    assert_eq!(incomplete_char_at_end("a€".as_bytes()), 0);
    assert_eq!(incomplete_char_at_end(&[0x41, 0xC3]), 1);
    assert_eq!(incomplete_char_at_end(&[0x41, 0xE2, 0x82]), 2);
    // After the last bytes of an earlier character.
    assert_eq!(incomplete_char_at_end(&[0xC3, 0xA9, 0xE2, 0x82]), 2);
    assert_eq!(incomplete_char_at_end(&[]), 0);
}

/// The twin of [`a_command_gets_no_credentials`], by its full test name.
const CREDENTIALS_TWIN: &str = "app::shell_escape::tests::in_child_a_command_gets_no_credentials";

/// A `!command`'s output goes to the model, so it must not reach cairn's credentials. They
/// have to be in this process's environment for the test to mean anything, and a test cannot
/// set its own without `unsafe`: its twin runs in a new process of this test binary with them
/// set.
#[test]
fn a_command_gets_no_credentials() {
    let output = std::process::Command::new(std::env::current_exe().unwrap())
        .args([CREDENTIALS_TWIN, "--exact", "--include-ignored"])
        .env("ANTHROPIC_API_KEY", "sk-ant-test-secret")
        .env("OPENAI_API_KEY", "sk-test-openai-secret")
        .env("CAIRN_TEST_ORDINARY", "ordinary-kept")
        .output()
        .unwrap();
    let report = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{report}");
    assert!(report.contains("test result: ok. 1 passed"), "{report}");
}

#[tokio::test]
#[ignore = "run by a_command_gets_no_credentials with credentials set"]
async fn in_child_a_command_gets_no_credentials() {
    assert_eq!(
        std::env::var("ANTHROPIC_API_KEY").as_deref(),
        Ok("sk-ant-test-secret")
    );
    let command = "printenv ANTHROPIC_API_KEY; printenv OPENAI_API_KEY; \
                   printenv CAIRN_TEST_ORDINARY; env | grep -c secret";
    let output = run(command, SHELL_TIMEOUT).await;
    assert_eq!(output.stdout, StreamOutput::whole("ordinary-kept\n0\n"));
}
