//! `!command`: the user runs a shell command themselves. It runs with `sh -c` in the working
//! directory, outside the model and the permission gate, and its output becomes context for
//! the next message.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::sync::oneshot;

/// A command still running after this long is killed.
pub const SHELL_TIMEOUT: Duration = Duration::from_secs(120);
/// Each of stdout and stderr is cut at this many bytes in the context.
const MAX_OUTPUT_BYTES: usize = 30 * 1024;

/// How a `!command` ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellOutput {
    pub command: String,
    pub stdout: String,
    pub stderr: String,
    pub ending: ShellEnding,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShellEnding {
    /// The exit code, `None` when a signal ended it.
    Exited(Option<i32>),
    TimedOut,
    Cancelled,
    /// `sh` could not be started.
    FailedToStart,
}

/// Runs `command` with `sh -c` in `cwd` until it ends, `timeout` passes, or `cancel` fires
/// (or is dropped); the process is killed in the last two cases.
pub async fn run_shell(
    command: String,
    cwd: &Path,
    timeout: Duration,
    cancel: oneshot::Receiver<()>,
) -> ShellOutput {
    let child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(&command)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn();
    let Ok(child) = child else {
        return ShellOutput {
            command,
            stdout: String::new(),
            stderr: String::new(),
            ending: ShellEnding::FailedToStart,
        };
    };
    // Dropping the `wait_with_output` future drops the child, which kills it.
    let (stdout, stderr, ending) = tokio::select! {
        output = child.wait_with_output() => match output {
            Ok(output) => (
                String::from_utf8_lossy(&output.stdout).into_owned(),
                String::from_utf8_lossy(&output.stderr).into_owned(),
                ShellEnding::Exited(output.status.code()),
            ),
            Err(err) => (String::new(), err.to_string(), ShellEnding::FailedToStart),
        },
        () = tokio::time::sleep(timeout) => (String::new(), String::new(), ShellEnding::TimedOut),
        _ = cancel => (String::new(), String::new(), ShellEnding::Cancelled),
    };
    ShellOutput {
        command,
        stdout,
        stderr,
        ending,
    }
}

impl ShellOutput {
    /// What the transcript shows.
    pub fn notice(&self) -> String {
        let mut text = format!("! {}", self.command);
        for part in [&self.stdout, &self.stderr] {
            let part = part.trim_end();
            if !part.is_empty() {
                text.push('\n');
                text.push_str(part);
            }
        }
        match self.ending {
            ShellEnding::Exited(Some(0)) => {}
            ShellEnding::Exited(Some(code)) => text.push_str(&format!("\n(exit code {code})")),
            ShellEnding::Exited(None) => text.push_str("\n(ended by a signal)"),
            ShellEnding::TimedOut => {
                text.push_str(&format!("\n(killed after {}s)", SHELL_TIMEOUT.as_secs()))
            }
            ShellEnding::Cancelled => text.push_str("\n(interrupted)"),
            ShellEnding::FailedToStart => text.push_str("\n(could not start sh)"),
        }
        text
    }

    /// The block added to the next user message. The transcript leaves a block of this shape
    /// out of the user's prompt (`transcript/user_prompt.rs`); a change here needs one there.
    pub fn context(&self) -> String {
        format!(
            "<bash-input>{}</bash-input>\n<bash-stdout>{}</bash-stdout>\n<bash-stderr>{}</bash-stderr>",
            self.command,
            cut(&self.stdout),
            cut(&self.stderr)
        )
    }
}

fn cut(text: &str) -> String {
    if text.len() <= MAX_OUTPUT_BYTES {
        return text.trim_end().to_string();
    }
    let mut end = MAX_OUTPUT_BYTES;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n… ({} bytes in all; the rest is left out)",
        &text[..end],
        text.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[tokio::test]
    async fn output_and_exit_code_are_kept() {
        let (_cancel, receiver) = oneshot::channel();
        let output = run_shell(
            "echo hi; echo oops >&2; exit 3".into(),
            Path::new("."),
            SHELL_TIMEOUT,
            receiver,
        )
        .await;
        assert_eq!(
            output,
            ShellOutput {
                command: "echo hi; echo oops >&2; exit 3".into(),
                stdout: "hi\n".into(),
                stderr: "oops\n".into(),
                ending: ShellEnding::Exited(Some(3)),
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
        let (_cancel, receiver) = oneshot::channel();
        let output = run_shell(
            "sleep 30".into(),
            Path::new("."),
            Duration::from_millis(50),
            receiver,
        )
        .await;
        assert_eq!(output.ending, ShellEnding::TimedOut);

        let (cancel, receiver) = oneshot::channel();
        let _ = cancel.send(());
        let output = run_shell("sleep 30".into(), Path::new("."), SHELL_TIMEOUT, receiver).await;
        assert_eq!(output.ending, ShellEnding::Cancelled);
    }

    #[test]
    fn the_transcript_leaves_the_output_out_of_the_prompt() {
        use cairn_protocol::{ContentBlock, Message, Role};
        let output = ShellOutput {
            command: "cat notes".into(),
            stdout: "a\nb\n".into(),
            stderr: String::new(),
            ending: ShellEnding::Exited(Some(0)),
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
    fn long_output_is_cut() {
        let long = "é".repeat(MAX_OUTPUT_BYTES);
        let shown = cut(&long);
        assert!(shown.ends_with("bytes in all; the rest is left out)"));
        assert!(shown.len() < long.len());
    }
}
