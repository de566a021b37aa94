//! `Bash`: runs one shell command and waits for it, within a timeout, in the directory the
//! previous command left the shell in.

use std::io;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::process::Child;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::ShellRegistry;
use super::background::BackgroundShell;
use super::capture::{CappedBuffer, Captured, MAX_OUTPUT_CHARS, cut_middle, join_streams};
use super::exit_dir::ExitDir;
use super::guarded::{snapshot, undo_changes};
use super::process::{KillOnDrop, ProcessGroup, describe_failure, pump, spawn_shell};
use crate::{
    Access, CommandSandbox, Concurrency, Destructiveness, Safety, Tool, ToolContext, ToolOutput,
};
use cairn_protocol::ToolResultContent;
use cairn_shell::{BashAnalysis, BashContext, BashVerdict, analyze};

const DEFAULT_TIMEOUT_MS: u64 = 120_000;
const MAX_TIMEOUT_MS: u64 = 600_000;
/// How long output is still read after the shell exits, for a process it left behind in the
/// background that still holds the output open.
const LINGER_AFTER_EXIT: Duration = Duration::from_millis(200);
/// How long output is still read after the group was killed. Only a process that left the
/// group (`setsid`) can keep the output open past the kill.
const DRAIN_AFTER_KILL: Duration = Duration::from_secs(1);

/// Runs the user's command (`$2`) with `eval`, so that an `exit` in it or a syntax error
/// still ends in the EXIT trap `$1`, where cairn learns the final working directory (see
/// [`ExitDir`]). The shell exits with the command's status: an EXIT trap does not change it.
const WRAPPER_SCRIPT: &str = r#"__cairn_command=$2
trap -- "$1" EXIT
shift 2
eval "$__cairn_command""#;

/// Runs a shell command.
#[derive(Debug, Clone, Copy)]
pub struct BashTool;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashInput {
    /// The shell command to run.
    command: String,
    /// How long the command may run, in milliseconds: 120000 (2 minutes) when not given, at
    /// most 600000 (10 minutes). Background commands have no timeout.
    #[schemars(range(min = 1, max = 600_000))]
    timeout: Option<u64>,
    /// What the command does, in 5 to 10 words, for the user watching (e.g. "Run the unit
    /// tests", "Show uncommitted changes").
    description: Option<String>,
    /// true to run this one command outside the sandbox. Only when a command failed because
    /// the sandbox blocked it (the result says so) and it really must write outside the
    /// workspace or reach the network; the user is asked first.
    #[serde(rename = "dangerouslyDisableSandbox")]
    dangerously_disable_sandbox: Option<bool>,
    /// true to start the command in the background and return at once with a shell id, for
    /// servers, watchers and other commands that keep running. Read its output with
    /// BashOutput and stop it with TaskStop.
    run_in_background: Option<bool>,
}

#[async_trait]
impl Tool for BashTool {
    type Input = BashInput;

    fn name(&self) -> &'static str {
        "Bash"
    }

    fn description(&self) -> String {
        format!(
            "Runs a command in a bash shell and returns what it printed (stdout, then stderr \
             after a [stderr] line) and, when it fails, its exit code.\n\
             \n\
             - The working directory carries over between calls: after `cd src`, the next \
             command runs in src. It starts in the project directory. Prefer absolute paths \
             over changing directory where you can.\n\
             - Commands get no input and cannot prompt: use non-interactive flags (`-y`, \
             `--no-edit`, `-m \"message\"`).\n\
             - A command may run for {DEFAULT_TIMEOUT_MS} ms (2 minutes) unless you set \
             timeout, up to {MAX_TIMEOUT_MS} ms (10 minutes). When the time is up, the command \
             and every process it started are killed, and you get the output it had printed.\n\
             - Output over {MAX_OUTPUT_CHARS} characters is cut in the middle; the start and \
             the end are kept. Narrow noisy commands (e.g. `| tail -50`, `--quiet`).\n\
             - Use the dedicated tools rather than their shell versions: Read instead of cat, \
             head or tail; Grep instead of grep or rg; Glob instead of find or ls for finding \
             files. They are faster and their output suits you better.\n\
             - Put double quotes around paths that contain spaces: `cd \"My Documents\"`.\n\
             - Chain dependent commands with `&&`; use `;` only when later commands should run \
             even if earlier ones fail.\n\
             - For servers, watchers and anything else that keeps running, set \
             run_in_background: true instead of appending `&`. You get a shell id at once; \
             read its output with BashOutput and stop it with TaskStop."
        )
    }

    fn safety(&self, input: &BashInput, ctx: &ToolContext) -> Safety {
        // Without a home directory `~` means nothing, and the analysis could not tell where
        // a path leads.
        let Some(home) = std::env::var_os("HOME") else {
            return WORST_CASE;
        };
        let cwd = ctx.session.shells.working_dir(&ctx.cwd);
        let roots = ctx.workspace_roots.all(&ctx.cwd);
        let analysis = analyze(
            &input.command,
            &BashContext {
                cwd: &cwd,
                workspace_roots: &roots,
                home: Path::new(&home),
            },
        );
        let background = input.run_in_background == Some(true);
        command_safety(&analysis, background)
    }

    fn touched_paths(&self, _input: &BashInput, ctx: &ToolContext) -> Vec<PathBuf> {
        vec![ctx.session.shells.working_dir(&ctx.cwd)]
    }

    async fn run(
        &self,
        input: BashInput,
        ctx: &ToolContext,
        cancel: &CancellationToken,
    ) -> ToolOutput {
        let shells = &ctx.session.shells;
        let (cwd, cwd_note) = shells.take_working_dir(&ctx.cwd);
        let mut notes: Vec<String> = cwd_note.into_iter().collect();

        let sandbox = match input.dangerously_disable_sandbox {
            Some(true) => None,
            Some(false) | None => ctx.sandbox.as_deref(),
        };
        if input.run_in_background == Some(true) {
            return start_in_background(input, shells, &cwd, &ctx.env, sandbox, notes);
        }
        let timeout_ms = effective_timeout(input.timeout, &mut notes);

        let guarded = snapshot(sandbox);
        let exit_dir = ExitDir::prepare();
        let child = match spawn_shell(
            WRAPPER_SCRIPT,
            &[&exit_dir.trap(), input.command.as_ref()],
            &cwd,
            &ctx.env,
            sandbox,
        ) {
            Ok(child) => child,
            Err(err) => {
                notes.push(cannot_start(&cwd, &err));
                return ToolOutput::error(notes.join("\n"));
            }
        };
        let exit_dir = exit_dir.watch(child.id());
        let run = wait_for(child, Duration::from_millis(timeout_ms), cancel).await;
        let cwd_note = settle_working_dir(exit_dir.finish().await, &cwd, &run.ending, ctx);
        let sandbox_note = match (sandbox, &run.ending) {
            (Some(sandbox), Ending::Exited(status)) if !status.success() => {
                (sandbox.explain)(status.code(), &run.stderr.text())
            }
            _ => None,
        };
        let guard_note = undo_changes(guarded).await;
        let mut output = report(run, timeout_ms, notes);
        if let ToolResultContent::Text(text) = &mut output.content {
            for note in [sandbox_note, guard_note, cwd_note].into_iter().flatten() {
                text.push_str("\n\n");
                text.push_str(&note);
            }
        }
        output
    }
}

/// What a command that the analysis cannot vouch for is assumed to be: writing, able to
/// destroy, and needing the machine to itself.
const WORST_CASE: Safety = Safety {
    access: Access::Writes,
    destructive: Destructiveness::Destructive,
    concurrency: Concurrency::Exclusive,
};

/// The builtins that move the shell, whose directory carries over to the next command.
const DIRECTORY_CHANGERS: [&str; 3] = ["cd", "pushd", "popd"];

/// The safety of a command from its analysis. Only a read-only command is better than the
/// worst case; it runs beside other read-only calls unless it may move the shell (the next
/// command's directory would depend on which finished last) or runs in the background.
fn command_safety(analysis: &BashAnalysis, background: bool) -> Safety {
    match analysis.verdict {
        BashVerdict::ReadOnly => {
            let moves_the_shell = analysis.commands.iter().any(|command| {
                command
                    .argv
                    .first()
                    .is_some_and(|name| DIRECTORY_CHANGERS.contains(&name.as_str()))
            });
            Safety {
                access: Access::ReadOnly,
                destructive: Destructiveness::Harmless,
                concurrency: if moves_the_shell || background {
                    Concurrency::Exclusive
                } else {
                    Concurrency::Safe
                },
            }
        }
        BashVerdict::NeedsApproval | BashVerdict::Unanalysable | BashVerdict::Destructive => {
            WORST_CASE
        }
    }
}

/// Records where the command left the shell for the next command, and says so when that is
/// not where the command took it: a directory outside the workspace is left for the project
/// directory, and an unknown one (the command never reached its exit trap) for the directory
/// the command started in.
fn settle_working_dir(
    final_dir: Option<PathBuf>,
    started_in: &Path,
    ending: &Ending,
    ctx: &ToolContext,
) -> Option<String> {
    let shells = &ctx.session.shells;
    match final_dir {
        Some(dir) => match ctx.workspace_roots.root_holding(&ctx.cwd, &dir) {
            Some(inside) => {
                shells.set_working_dir(inside);
                None
            }
            None => {
                shells.set_working_dir(ctx.cwd.clone());
                Some(format!(
                    "Shell cwd was reset to {}: the command left it in {}, which is outside the \
                     project directory and the added directories.",
                    ctx.cwd.display(),
                    dir.display()
                ))
            }
        },
        None => match ending {
            // The result already says the command was killed before it could end.
            Ending::TimedOut | Ending::Cancelled => None,
            Ending::Exited(_) | Ending::WaitFailed(_) => Some(format!(
                "Shell cwd was reset to {}, where the command started: where it left the shell \
                 could not be read (the command removed or replaced the shell's exit trap, \
                 replaced the shell with exec, or killed it).",
                started_in.display()
            )),
        },
    }
}

/// Starts the command as a background shell and says how to reach it.
fn start_in_background(
    input: BashInput,
    shells: &ShellRegistry,
    cwd: &Path,
    env: &[(String, String)],
    sandbox: Option<&CommandSandbox>,
    mut notes: Vec<String>,
) -> ToolOutput {
    let id = shells.next_id();
    let label = input.description.unwrap_or_else(|| input.command.clone());
    match BackgroundShell::start(id.clone(), &input.command, label, cwd, env, sandbox) {
        Ok(shell) => {
            shells.add(shell);
            notes.push(format!(
                "Started in the background as shell {id}, in {}. Read its output with \
                 BashOutput (bash_id \"{id}\") and stop it with TaskStop (task_id \
                 \"{id}\").",
                cwd.display()
            ));
            ToolOutput::text(notes.join("\n"))
        }
        Err(err) => {
            notes.push(cannot_start(cwd, &err));
            ToolOutput::error(notes.join("\n"))
        }
    }
}

/// The timeout to use, in milliseconds, with a note when the one asked for could not be.
fn effective_timeout(requested: Option<u64>, notes: &mut Vec<String>) -> u64 {
    match requested {
        None => DEFAULT_TIMEOUT_MS,
        Some(0) => {
            notes.push(format!(
                "A timeout of 0 ms is not possible; used the default {DEFAULT_TIMEOUT_MS} ms."
            ));
            DEFAULT_TIMEOUT_MS
        }
        Some(ms) if ms > MAX_TIMEOUT_MS => {
            notes.push(format!(
                "The timeout of {ms} ms is over the maximum of {MAX_TIMEOUT_MS} ms; used \
                 {MAX_TIMEOUT_MS} ms."
            ));
            MAX_TIMEOUT_MS
        }
        Some(ms) => ms,
    }
}

fn cannot_start(cwd: &Path, err: &io::Error) -> String {
    format!(
        "Could not start {} in {}: {err}",
        super::process::shell_program().display(),
        cwd.display()
    )
}

/// How a foreground command ended.
#[derive(Debug)]
enum Ending {
    Exited(ExitStatus),
    WaitFailed(io::Error),
    TimedOut,
    Cancelled,
}

/// A foreground command's end and everything it printed.
#[derive(Debug)]
struct Run {
    ending: Ending,
    stdout: Captured,
    stderr: Captured,
    /// A process the command left behind still held its output open when we stopped reading.
    output_left_open: bool,
}

/// Reads the command's output until it ends, times out or is cancelled; in the last two
/// cases its whole process group is killed.
async fn wait_for(mut child: Child, timeout: Duration, cancel: &CancellationToken) -> Run {
    let group = ProcessGroup::led_by(&child);
    let mut kill_on_drop = KillOnDrop::new(group);
    let kill = || {
        if let Some(group) = group {
            group.kill();
        }
    };
    let (stdout_pipe, stderr_pipe) = (child.stdout.take(), child.stderr.take());
    let mut stdout = CappedBuffer::default();
    let mut stderr = CappedBuffer::default();
    let deadline = Instant::now() + timeout;
    let mut stopped: Option<Ending> = None;
    let mut status: Option<io::Result<ExitStatus>> = None;
    let mut pumps_done = false;
    // Set once the end is near: stop reading then even if the output is still open.
    let mut give_up_at: Option<Instant> = None;
    {
        let pumps = async {
            tokio::join!(
                pump(stdout_pipe, |bytes| stdout.push(bytes)),
                pump(stderr_pipe, |bytes| stderr.push(bytes)),
            )
        };
        tokio::pin!(pumps);
        while !(pumps_done && status.is_some()) {
            tokio::select! {
                () = cancel.cancelled(), if stopped.is_none() => {
                    kill();
                    stopped = Some(Ending::Cancelled);
                    give_up_at = Some(Instant::now() + DRAIN_AFTER_KILL);
                }
                () = tokio::time::sleep_until(deadline), if stopped.is_none() => {
                    kill();
                    stopped = Some(Ending::TimedOut);
                    give_up_at = Some(Instant::now() + DRAIN_AFTER_KILL);
                }
                _ = &mut pumps, if !pumps_done => pumps_done = true,
                waited = child.wait(), if status.is_none() => {
                    status = Some(waited);
                    if give_up_at.is_none() {
                        give_up_at = Some(Instant::now() + LINGER_AFTER_EXIT);
                    }
                }
                () = tokio::time::sleep_until(give_up_at.unwrap_or(deadline)),
                    if give_up_at.is_some() => break,
            }
        }
    }
    // The command is over: a stopped one's group is already killed, and what a finished one
    // deliberately left running in the background may go on.
    kill_on_drop.disarm();
    let ending = match (stopped, status) {
        (Some(stopped), _) => stopped,
        (None, Some(Ok(status))) => Ending::Exited(status),
        (None, Some(Err(err))) => Ending::WaitFailed(err),
        // The loop only ends early once a deadline is set, which needs an exit or a stop.
        (None, None) => Ending::WaitFailed(io::Error::other("the command's exit was not seen")),
    };
    Run {
        ending,
        stdout: stdout.take(),
        stderr: stderr.take(),
        output_left_open: !pumps_done,
    }
}

/// The tool result: notes, how the command ended if not well, then its output.
fn report(run: Run, timeout_ms: u64, mut lines: Vec<String>) -> ToolOutput {
    let (failure, is_error) = match &run.ending {
        Ending::Exited(status) => {
            let failure = describe_failure(*status);
            let is_error = failure.is_some();
            (failure, is_error)
        }
        Ending::WaitFailed(err) => (Some(format!("Waiting for the command failed: {err}")), true),
        Ending::TimedOut => (
            Some(format!(
                "Command timed out after {timeout_ms} ms; it and every process it started were \
                 killed."
            )),
            true,
        ),
        Ending::Cancelled => (
            Some(
                "Command was interrupted; it and every process it started were killed.".to_string(),
            ),
            true,
        ),
    };
    let body = cut_middle(
        &join_streams(&run.stdout.text(), &run.stderr.text()),
        run.stdout.dropped.add(run.stderr.dropped),
    );
    // An interrupted command's output comes first, then the note, as the user saw it.
    if matches!(run.ending, Ending::Cancelled) {
        if body.is_empty() {
            lines.extend(failure);
            lines.push("(no output)".to_string());
        } else {
            lines.push(body);
            lines.extend(failure);
        }
        return ToolOutput::error(lines.join("\n"));
    }
    let stopped = matches!(run.ending, Ending::TimedOut);
    if let Some(failure) = failure {
        lines.push(if stopped && !body.is_empty() {
            format!("{failure} Output until then:")
        } else {
            failure
        });
    }
    lines.push(if body.is_empty() {
        "(no output)".to_string()
    } else {
        body
    });
    if run.output_left_open && matches!(run.ending, Ending::Exited(_)) {
        lines.push(
            "(The command left a process running in the background that still holds its \
             output open; what it prints from now on is not captured. Use run_in_background: \
             true for long-running processes.)"
                .to_string(),
        );
    }
    let text = lines.join("\n");
    if is_error {
        ToolOutput::error(text)
    } else {
        ToolOutput::text(text)
    }
}
