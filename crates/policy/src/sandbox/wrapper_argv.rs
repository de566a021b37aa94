//! The wrapper's command line: written by [`wrap_command`], read back by [`parse_wrapper_argv`].
//!
//! `cairn __sandbox [--write PATH]... [--deny-read PATH]... [--protect ROOT]... [--no-network]
//! -- PROGRAM [ARG]...`
//! with one path per flag, so that any path (even one starting with `--`) survives the trip.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use super::{NetworkAccess, SandboxError, SandboxPolicy};

/// The hidden subcommand under which cairn runs as the sandbox wrapper; the CLI hands everything
/// after it to [`run_wrapper`](super::run_wrapper).
pub const WRAPPER_SUBCOMMAND: &str = "__sandbox";

const WRITE_FLAG: &str = "--write";
const DENY_READ_FLAG: &str = "--deny-read";
const PROTECT_FLAG: &str = "--protect";
const NO_NETWORK_FLAG: &str = "--no-network";
const END_OF_OPTIONS: &str = "--";

/// The wrapper's usage line, for error messages.
pub(crate) const USAGE: &str = "cairn __sandbox [--write PATH]... [--deny-read PATH]... \
                                [--protect ROOT]... [--no-network] -- PROGRAM [ARG]...";

/// The program and arguments that run `program args` under `policy`, through the wrapper
/// `cairn_exe` (the caller's [`std::env::current_exe`]).
///
/// ```
/// use std::ffi::{OsStr, OsString};
/// use std::path::{Path, PathBuf};
/// use cairn_policy::sandbox::{NetworkAccess, SandboxPolicy, wrap_command};
///
/// let policy = SandboxPolicy {
///     writable: vec![PathBuf::from("/work")],
///     deny_read: vec![],
///     network: NetworkAccess::Denied,
///     protected_roots: vec![],
/// };
/// let (program, args) =
///     wrap_command(Path::new("/bin/cairn"), &policy, OsStr::new("sh"), &["-c".into(), "make".into()]);
/// assert_eq!(program, PathBuf::from("/bin/cairn"));
/// assert_eq!(
///     args,
///     ["__sandbox", "--write", "/work", "--no-network", "--", "sh", "-c", "make"].map(OsString::from)
/// );
/// ```
pub fn wrap_command(
    cairn_exe: &Path,
    policy: &SandboxPolicy,
    program: &OsStr,
    args: &[OsString],
) -> (PathBuf, Vec<OsString>) {
    let mut argv: Vec<OsString> = vec![WRAPPER_SUBCOMMAND.into()];
    for path in &policy.writable {
        argv.push(WRITE_FLAG.into());
        argv.push(path.into());
    }
    for path in &policy.deny_read {
        argv.push(DENY_READ_FLAG.into());
        argv.push(path.into());
    }
    for root in &policy.protected_roots {
        argv.push(PROTECT_FLAG.into());
        argv.push(root.into());
    }
    match policy.network {
        NetworkAccess::Allowed => {}
        NetworkAccess::Denied => argv.push(NO_NETWORK_FLAG.into()),
    }
    argv.push(END_OF_OPTIONS.into());
    argv.push(program.to_owned());
    argv.extend(args.iter().cloned());
    (cairn_exe.to_path_buf(), argv)
}

/// A parsed wrapper command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct WrapperArgv {
    pub(crate) policy: SandboxPolicy,
    pub(crate) program: OsString,
    pub(crate) args: Vec<OsString>,
}

/// Reads the wrapper's arguments (everything after [`WRAPPER_SUBCOMMAND`]).
pub(crate) fn parse_wrapper_argv(argv: Vec<OsString>) -> Result<WrapperArgv, SandboxError> {
    let invalid = |message: String| SandboxError::InvalidArguments { message };
    let mut policy = SandboxPolicy {
        writable: Vec::new(),
        deny_read: Vec::new(),
        network: NetworkAccess::Allowed,
        protected_roots: vec![],
    };
    let mut argv = argv.into_iter();
    loop {
        let Some(arg) = argv.next() else {
            return Err(invalid(format!(
                "missing `{END_OF_OPTIONS}` before the program to run"
            )));
        };
        match arg.to_str() {
            Some(WRITE_FLAG) => policy.writable.push(flag_value(&mut argv, WRITE_FLAG)?),
            Some(DENY_READ_FLAG) => policy
                .deny_read
                .push(flag_value(&mut argv, DENY_READ_FLAG)?),
            Some(PROTECT_FLAG) => policy
                .protected_roots
                .push(flag_value(&mut argv, PROTECT_FLAG)?),
            Some(NO_NETWORK_FLAG) => policy.network = NetworkAccess::Denied,
            Some(END_OF_OPTIONS) => break,
            _ => {
                return Err(invalid(format!(
                    "unexpected argument `{}`",
                    arg.to_string_lossy()
                )));
            }
        }
    }
    let program = argv
        .next()
        .ok_or_else(|| invalid(format!("no program after `{END_OF_OPTIONS}`")))?;
    Ok(WrapperArgv {
        policy,
        program,
        args: argv.collect(),
    })
}

fn flag_value(
    argv: &mut impl Iterator<Item = OsString>,
    flag: &str,
) -> Result<PathBuf, SandboxError> {
    argv.next()
        .map(PathBuf::from)
        .ok_or_else(|| SandboxError::InvalidArguments {
            message: format!("`{flag}` needs a path"),
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn parsing_reads_back_what_wrap_command_wrote() {
        let policy = SandboxPolicy {
            writable: vec![PathBuf::from("/w"), PathBuf::from("--odd dir")],
            deny_read: vec![PathBuf::from("/home/me/.ssh")],
            network: NetworkAccess::Denied,
            protected_roots: vec![PathBuf::from("/w")],
        };
        let (_, argv) = wrap_command(
            Path::new("/bin/cairn"),
            &policy,
            OsStr::new("sh"),
            &os(&["-c", "echo -- --write"]),
        );
        assert_eq!(
            parse_wrapper_argv(argv[1..].to_vec()).ok(),
            Some(WrapperArgv {
                policy,
                program: "sh".into(),
                args: os(&["-c", "echo -- --write"]),
            })
        );
    }

    #[test]
    fn an_empty_policy_allows_the_network() {
        assert_eq!(
            parse_wrapper_argv(os(&["--", "true"])).ok(),
            Some(WrapperArgv {
                policy: SandboxPolicy {
                    writable: vec![],
                    deny_read: vec![],
                    network: NetworkAccess::Allowed,
                    protected_roots: vec![],
                },
                program: "true".into(),
                args: vec![],
            })
        );
    }

    #[test]
    fn malformed_command_lines_say_what_is_wrong() {
        let message = |argv: &[&str]| match parse_wrapper_argv(os(argv)) {
            Err(SandboxError::InvalidArguments { message }) => message,
            other => format!("unexpected: {other:?}"),
        };
        assert_eq!(message(&["--write"]), "`--write` needs a path");
        assert_eq!(
            message(&["--write", "/w", "sh"]),
            "unexpected argument `sh`"
        );
        assert_eq!(
            message(&["--no-network"]),
            "missing `--` before the program to run"
        );
        assert_eq!(message(&["--"]), "no program after `--`");
    }
}
