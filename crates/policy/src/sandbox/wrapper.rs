//! The wrapper process: confine itself with Landlock, then become the command.

use std::ffi::OsString;
use std::io;

use super::wrapper_argv::{USAGE, parse_wrapper_argv};

/// Why the wrapper did not run the command. It printed nothing: print this on stderr and exit
/// with [`exit_code`](SandboxError::exit_code).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The wrapper's own command line is malformed (a bug in the caller of `wrap_command`).
    #[error("cairn __sandbox: {message}; usage: {USAGE}")]
    InvalidArguments {
        /// What is wrong with the arguments.
        message: String,
    },
    /// Landlock would not confine the command, so it was not run (the wrapper fails closed).
    #[error(
        "the sandbox refused to run `{program}`: {reason}. Running it would leave it unconfined; \
         run it without the sandbox only if the user agrees"
    )]
    NotEnforced {
        /// The program that was to run.
        program: String,
        /// Why Landlock could not confine it.
        reason: String,
    },
    /// Building or applying the Landlock ruleset failed, so the command was not run.
    #[error("the sandbox refused to run `{program}`: could not set up Landlock: {detail}")]
    Setup {
        /// The program that was to run.
        program: String,
        /// What failed, as the kernel or the Landlock library reported it.
        detail: String,
    },
    /// The sandbox was in place but the program could not be executed.
    #[error("cannot run `{program}` in the sandbox: {source}")]
    Exec {
        /// The program that could not be executed.
        program: String,
        /// Why `exec` failed (not found, not executable…).
        source: io::Error,
    },
}

impl SandboxError {
    /// The exit status to end the wrapper with, following `env(1)` and `timeout(1)`: 127 when
    /// the program was not found, 126 when it could not be executed, 125 for the wrapper's own
    /// failures.
    pub fn exit_code(&self) -> i32 {
        match self {
            SandboxError::InvalidArguments { .. }
            | SandboxError::NotEnforced { .. }
            | SandboxError::Setup { .. } => 125,
            SandboxError::Exec { source, .. } => match source.kind() {
                io::ErrorKind::NotFound => 127,
                _ => 126,
            },
        }
    }
}

/// How much of the ruleset the kernel enforces, as Landlock reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(
    not(target_os = "linux"),
    allow(
        dead_code,
        reason = "only Linux enforces anything; elsewhere every command is refused"
    )
)]
pub(crate) enum Enforcement {
    Full,
    Partial,
    NotEnforced { reason: String },
}

/// What the wrapper does once the ruleset is (or is not) in place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Run,
    /// Run, after printing this warning once on stderr.
    RunWithWarning(String),
    /// Do not run: nothing is enforced.
    Refuse {
        reason: String,
    },
}

/// Fails closed when nothing is enforced; otherwise runs, warning about every `notes` entry.
///
/// `Partial` alone does not warn: the ruleset asks for rights newer than most kernels have
/// (UDP rules, for one), so Landlock reports `Partial` almost everywhere. The `notes` name the
/// gaps that matter to the user.
pub(crate) fn decide(enforcement: Enforcement, notes: &[String]) -> Verdict {
    match enforcement {
        Enforcement::NotEnforced { reason } => Verdict::Refuse { reason },
        Enforcement::Full | Enforcement::Partial if notes.is_empty() => Verdict::Run,
        Enforcement::Full | Enforcement::Partial => Verdict::RunWithWarning(format!(
            "cairn sandbox: warning: partly confined: {}",
            notes.join("; ")
        )),
    }
}

/// The wrapper's main: reads its argv (everything after `__sandbox`), confines the current
/// process with Landlock, then replaces it with the program. Returns only on failure, without
/// having run the program; the caller prints the error and exits with its
/// [`exit_code`](SandboxError::exit_code).
///
/// Call it first thing in `main`, before starting threads: Landlock confines the calling
/// thread, which then executes the program (other threads end at `exec`).
///
/// When the kernel enforces only part of the policy, one warning line starting with
/// `cairn sandbox: warning:` goes to stderr before the program starts.
///
/// ```no_run
/// use cairn_policy::sandbox::{WRAPPER_SUBCOMMAND, run_wrapper};
///
/// let mut args = std::env::args_os().skip(1);
/// if args.next().is_some_and(|first| first == WRAPPER_SUBCOMMAND) {
///     let error = run_wrapper(args.collect());
///     eprintln!("{error}");
///     std::process::exit(error.exit_code());
/// }
/// ```
pub fn run_wrapper(args: Vec<OsString>) -> SandboxError {
    let argv = match parse_wrapper_argv(args) {
        Ok(argv) => argv,
        Err(error) => return error,
    };
    let program = argv.program.to_string_lossy().into_owned();
    if let Err(error) = confine(&argv.policy, &program) {
        return error;
    }
    exec(argv.program, argv.args, program)
}

#[cfg(target_os = "linux")]
fn confine(policy: &super::SandboxPolicy, program: &str) -> Result<(), SandboxError> {
    // Mounts first: Landlock forbids mounting once it is in place.
    let mounted = super::mounts::mount_protected_read_only(&policy.protected_roots);
    let mut confinement =
        super::landlock_rules::confine_current_thread(policy).map_err(|detail| {
            SandboxError::Setup {
                program: program.to_owned(),
                detail,
            }
        })?;
    if let Err(reason) = mounted {
        confinement.notes.push(format!(
            "the project's protected files (.claude/, .git/config, .git/hooks/) stay writable: \
             {reason}"
        ));
    }
    carry_out(decide(confinement.enforcement, &confinement.notes), program)
}

#[cfg(not(target_os = "linux"))]
fn confine(_policy: &super::SandboxPolicy, program: &str) -> Result<(), SandboxError> {
    let enforcement = Enforcement::NotEnforced {
        reason: "Landlock is Linux-only".to_owned(),
    };
    carry_out(decide(enforcement, &[]), program)
}

fn carry_out(verdict: Verdict, program: &str) -> Result<(), SandboxError> {
    match verdict {
        Verdict::Run => Ok(()),
        Verdict::RunWithWarning(warning) => {
            warn(&warning);
            Ok(())
        }
        Verdict::Refuse { reason } => Err(SandboxError::NotEnforced {
            program: program.to_owned(),
            reason,
        }),
    }
}

/// Writes the wrapper's one warning. The wrapper is a process of its own whose stderr is the
/// command's, so this is where the user (and the model) will see it.
fn warn(warning: &str) {
    use std::io::Write;
    // A warning that cannot be written must not stop the command.
    let _ = writeln!(io::stderr().lock(), "{warning}");
}

/// Replaces the process with `program`; returns only the error if that fails.
#[cfg(unix)]
fn exec(program: OsString, args: Vec<OsString>, name: String) -> SandboxError {
    use std::os::unix::process::CommandExt;
    let source = std::process::Command::new(program).args(args).exec();
    SandboxError::Exec {
        program: name,
        source,
    }
}

/// Not reached: `confine` refuses on every platform but Linux.
#[cfg(not(unix))]
fn exec(_program: OsString, _args: Vec<OsString>, name: String) -> SandboxError {
    SandboxError::NotEnforced {
        program: name,
        reason: "Landlock is Linux-only".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn nothing_enforced_refuses_to_run() {
        assert_eq!(
            decide(
                Enforcement::NotEnforced {
                    reason: "no Landlock".to_owned()
                },
                &["ignored".to_owned()]
            ),
            Verdict::Refuse {
                reason: "no Landlock".to_owned()
            }
        );
    }

    #[test]
    fn enforced_without_gaps_runs_silently_even_when_landlock_says_partial() {
        assert_eq!(decide(Enforcement::Full, &[]), Verdict::Run);
        assert_eq!(decide(Enforcement::Partial, &[]), Verdict::Run);
    }

    #[test]
    fn gaps_are_warned_about_in_one_line() {
        assert_eq!(
            decide(
                Enforcement::Partial,
                &["network stays open".to_owned(), "truncate".to_owned()]
            ),
            Verdict::RunWithWarning(
                "cairn sandbox: warning: partly confined: network stays open; truncate".to_owned()
            )
        );
    }

    #[test]
    fn exit_codes_follow_env() {
        let exec = |kind| SandboxError::Exec {
            program: "x".to_owned(),
            source: io::Error::from(kind),
        };
        assert_eq!(exec(io::ErrorKind::NotFound).exit_code(), 127);
        assert_eq!(exec(io::ErrorKind::PermissionDenied).exit_code(), 126);
        let refused = SandboxError::NotEnforced {
            program: "x".to_owned(),
            reason: "r".to_owned(),
        };
        assert_eq!(refused.exit_code(), 125);
    }
}
