//! Sessions from the command line's point of view: which transcript a run writes to (new,
//! continued, resumed or forked), and `cairn sessions`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use cairn_protocol::Message;
use cairn_session::{
    CleanupScope, Entry, NewSession, SessionError, SessionId, SessionLog, SessionStore,
    SessionSummary,
};

use crate::args::{Args, UsageError};

/// Sessions untouched for longer than this are removed at start-up, unless settings say
/// otherwise (`cleanupPeriodDays`).
const DEFAULT_CLEANUP_DAYS: u32 = 30;

/// The transcript a run appends to, and the history it starts from.
#[derive(Debug)]
pub struct OpenedSession {
    pub id: SessionId,
    pub log: SessionLog,
    /// The conversation so far (empty for a new session).
    pub history: Vec<Message>,
    /// How many leading messages of `history` the context pipeline last showed collapsed.
    pub collapsed_through: Option<u64>,
    /// The plan the user approved last (the session's last `plan` entry).
    pub approved_plan: Option<String>,
    /// When the resumed session's last answer came, in Unix milliseconds.
    pub last_answer_at: Option<u64>,
    /// The session's own directory, for spilled tool results.
    pub dir: PathBuf,
    pub transcript_path: PathBuf,
}

/// `~/.cairn`, or `$CAIRN_HOME`.
pub fn cairn_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("CAIRN_HOME") {
        Some(home) => Ok(PathBuf::from(home)),
        None => Ok(std::env::home_dir()
            .context("cannot find the home directory: set HOME or CAIRN_HOME")?
            .join(".cairn")),
    }
}

/// Opens the session the flags ask for. Problems with the session file itself (an
/// unwritable `~/.cairn`, a full disk) are warnings: the run goes on in memory. A session
/// that cannot be found or read is an error, since continuing without it would lose it.
pub fn open_session(args: &Args, cwd: &Path, model: &str) -> anyhow::Result<OpenedSession> {
    let store = SessionStore::new(cairn_home()?);
    let chosen_id = match &args.session_id {
        Some(text) => Some(
            SessionId::parse(text).map_err(|err| usage_error(format!("--session-id: {err}")))?,
        ),
        None => None,
    };
    let resume_from = if args.continue_session {
        Some(
            store
                .latest(cwd)?
                .with_context(|| format!("no session to continue in {}", cwd.display()))?,
        )
    } else if let Some(resume) = &args.resume {
        if resume.is_empty() {
            return Err(usage_error(
                "--resume needs a session id in -p mode (list them with `cairn sessions`)".into(),
            ));
        }
        Some(SessionId::parse(resume).map_err(|err| usage_error(format!("--resume: {err}")))?)
    } else {
        None
    };

    let Some(from) = resume_from else {
        if args.fork_session {
            return Err(usage_error(
                "--fork-session goes with --continue or --resume".into(),
            ));
        }
        let id = chosen_id.unwrap_or_else(SessionId::new);
        // The file appears with the first message: a session left before anything was said
        // leaves nothing behind.
        let log = store.start(
            cwd,
            &id,
            NewSession {
                model: model.to_string(),
                git_branch: current_branch(cwd),
            },
        );
        return Ok(finish(&store, cwd, id, log, Vec::new()));
    };

    let mut loaded = store.load(cwd, &from)?;
    for warning in &loaded.warnings {
        eprintln!("warning: {warning}");
    }
    // A fork's copy is written with its first message, like a new session's file.
    let fork = |id: SessionId| {
        let log = store
            .start_fork(cwd, &from, &id)
            .unwrap_or_else(|error| SessionLog::new(Err(error)));
        (id, log)
    };
    let (id, mut log) = if args.fork_session {
        fork(chosen_id.unwrap_or_else(SessionId::new))
    } else {
        if chosen_id.is_some_and(|chosen| chosen != from) {
            return Err(usage_error(
                "--session-id names a new session; add --fork-session to resume into it".into(),
            ));
        }
        match store.open_append(cwd, &from) {
            // Another cairn is writing it: appending too would interleave two conversations
            // in one file, so this run carries on in a copy instead.
            // The copy ends with the last turn that ended: a prompt the other cairn is still
            // answering stays in its session, not in two.
            Err(SessionError::Locked { .. }) => {
                let id = SessionId::new();
                eprintln!(
                    "note: session {from} is in use by another cairn; continuing in a new session \
                     {id} forked from its last finished turn"
                );
                match store.start_fork_of_settled(cwd, &from, &id) {
                    Ok((log, settled)) => {
                        loaded = settled;
                        (id, log)
                    }
                    Err(error) => (id, SessionLog::new(Err(error))),
                }
            }
            opened => (from, SessionLog::new(opened)),
        }
    };
    if let Some(repair) = &loaded.repair {
        log.append_to_history(&Entry::tool_results(repair.clone()));
    }
    let mut opened = finish(&store, cwd, id, log, loaded.messages);
    opened.collapsed_through = loaded.collapsed_through;
    opened.approved_plan = loaded.approved_plan;
    opened.last_answer_at = loaded.last_answer_at;
    Ok(opened)
}

/// A command line whose session flags do not go together: the run exits with status 2.
fn usage_error(message: String) -> anyhow::Error {
    anyhow::Error::new(UsageError(message))
}

fn finish(
    store: &SessionStore,
    cwd: &Path,
    id: SessionId,
    mut log: SessionLog,
    history: Vec<Message>,
) -> OpenedSession {
    if let Some(warning) = log.take_warning() {
        eprintln!("warning: {warning}; this session is kept in memory only");
    }
    let transcript_path = store.path(cwd, &id);
    OpenedSession {
        dir: store.session_dir(cwd, &id),
        id,
        log,
        history,
        collapsed_through: None,
        approved_plan: None,
        last_answer_at: None,
        transcript_path,
    }
}

/// Whether session `id` of the project in `cwd` has a transcript to resume: a session in
/// which nothing was said, or one kept in memory only, has none.
pub fn is_resumable(cwd: &Path, id: &str) -> bool {
    let (Ok(home), Ok(id)) = (cairn_home(), SessionId::parse(id)) else {
        return false;
    };
    SessionStore::new(home).path(cwd, &id).is_file()
}

/// The sessions `cairn --resume` (without an id) offers in `cwd`, newest first; an error
/// when there are none, since there is nothing to choose from.
pub fn sessions_to_resume(cwd: &Path) -> anyhow::Result<Vec<SessionSummary>> {
    let sessions = SessionStore::new(cairn_home()?).list(cwd)?;
    if sessions.is_empty() {
        anyhow::bail!(
            "No sessions to resume in {} (start one with `cairn`)",
            cwd.display()
        );
    }
    Ok(sessions)
}

/// Removes old sessions on a background thread; never `keep`, never blocking the run.
pub fn start_cleanup(days: Option<u32>, keep: SessionId) {
    let Ok(home) = cairn_home() else { return };
    let days = days.unwrap_or(DEFAULT_CLEANUP_DAYS);
    std::thread::spawn(move || {
        let store = SessionStore::new(home);
        let _ = store.cleanup(
            CleanupScope::AllProjects,
            Duration::from_secs(u64::from(days) * 86_400),
            &keep,
        );
    });
}

fn current_branch(cwd: &Path) -> Option<String> {
    let output = cairn_context::git::git_command(cwd)
        .args(["branch", "--show-current"])
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let branch = String::from_utf8_lossy(&output.stdout).trim().to_string();
    (output.status.success() && !branch.is_empty()).then_some(branch)
}

/// `cairn sessions`: this project's sessions, newest first.
pub fn run_sessions_command() -> ExitCode {
    let listed = (|| -> anyhow::Result<String> {
        let cwd = std::env::current_dir().context("cannot read the working directory")?;
        let store = SessionStore::new(cairn_home()?);
        let sessions = store.list(&cwd)?;
        if sessions.is_empty() {
            return Ok(format!("No sessions in {} yet.\n", cwd.display()));
        }
        let mut out = String::new();
        for session in sessions {
            // A session whose turns failed before any answer is not a conversation of N
            // messages; its error is what it comes to.
            let size = match &session.failure {
                Some(_) => format!("{:>13}", "failed"),
                None => format!("{:>4} messages", session.message_count),
            };
            out.push_str(&format!(
                "{}  {}  {size}  ${:.4}  {}\n",
                session.id,
                format_time(session.started_at),
                session.cost_usd,
                session.first_prompt
            ));
        }
        out.push_str("Resume one with `cairn -p --resume <id> \"…\"`, or the latest with `cairn -p -c \"…\"`.\n");
        Ok(out)
    })();
    match listed {
        Ok(text) => {
            let _ = std::io::stdout().lock().write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

/// Unix milliseconds as `YYYY-MM-DD HH:MM` UTC.
fn format_time(ms: u64) -> String {
    let seconds = ms / 1000;
    let days = seconds / 86_400;
    let day_seconds = seconds % 86_400;
    format!(
        "{} {:02}:{:02}",
        cairn_context::date_from_days(days as i64),
        day_seconds / 3600,
        day_seconds % 3600 / 60
    )
}
