//! Reading a session file back: the header, the history and the session's state.
//!
//! What is tolerated and what is refused:
//!
//! - a last line that is not valid JSON (a crash mid-write) is skipped with a warning;
//! - a line anywhere that is JSON cut short, or holds NUL bytes, is skipped with a warning
//!   too: that is a torn write from an earlier crash, which ends up in the middle of the file
//!   once the session is resumed and appended to;
//! - any other bad line (complete JSON of the wrong shape, or garbage in the middle) is damage
//!   no crash explains; it is skipped too, with a warning naming the file, line, column and
//!   what was wrong, so that the user knows part of the conversation is missing. Refusing
//!   the whole file would strand every turn around the damage;
//! - if what is left starts with the assistant (the first prompt's line was lost), a short
//!   user message says so ahead of it, since the API takes only a user message first;
//! - entry types this build does not know are skipped with a warning;
//! - a file whose header has a newer format version is refused ([`SessionError::NewerFormat`]).

use std::fs;
use std::path::{Path, PathBuf};

use cairn_protocol::{Message, TodoItem, Usage};

use crate::decode::{
    Decoded, decode_current, decode_header, error_message, is_crash_artefact, is_syntax_error,
};
use crate::history::History;
use crate::migrate::upgrade_line;
use crate::{
    CompactionEntry, Entry, LoadWarning, LoadWarningKind, PermissionEntry, SessionError,
    SessionHeader,
};

/// A session as read from its file: what resuming it needs.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSession {
    /// The session file read.
    pub path: PathBuf,
    /// Its first line.
    pub header: SessionHeader,
    /// The `user`, `assistant` and `tool_results` messages in order, from the last compaction
    /// boundary on, repaired so that the API accepts them (see [`load_file`]).
    pub messages: Vec<Message>,
    /// The latest todo list (empty if there never was one).
    pub todos: Vec<TodoItem>,
    /// The model in use: the header's, or the last `model_change`.
    pub model: String,
    /// Summed over every assistant entry of the file, compacted ones included.
    pub usage: Usage,
    /// The cost in USD, summed like `usage`; requests to models of unknown prices count 0.
    pub cost_usd: f64,
    /// Every permission decision, in order.
    pub permissions: Vec<PermissionEntry>,
    /// The last compaction boundary, if the history was compacted.
    pub last_compaction: Option<CompactionEntry>,
    /// How many leading messages of `messages` requests last showed collapsed (the last
    /// `collapse` entry after the last compaction boundary), for the context pipeline to show
    /// the same view; `None` if none was.
    pub collapsed_through: Option<u64>,
    /// The plan the user approved last (the last `plan` entry), compacted or not.
    pub approved_plan: Option<String>,
    /// When the last answer came (the last `assistant` entry's timestamp, Unix milliseconds):
    /// how long ago the session's prompt cache was last used.
    pub last_answer_at: Option<u64>,
    /// The message that was appended to `messages` to answer tool calls left without a result.
    /// Write it to the file (`Entry::tool_results(repair)`) so that the file agrees.
    pub repair: Option<Message>,
    /// What was skipped or repaired, in line order.
    pub warnings: Vec<LoadWarning>,
}

/// Reads a session file. The store's [`crate::SessionStore::load`] finds the file from a
/// project and an id; this reads any path.
pub fn load_file(path: &Path) -> Result<LoadedSession, SessionError> {
    let bytes = read_file(path)?;
    load_bytes(path, &bytes)
}

/// [`load_file`] of `bytes`, the content of the file at `path` (named in warnings).
pub(crate) fn load_bytes(path: &Path, bytes: &[u8]) -> Result<LoadedSession, SessionError> {
    let mut history = History::new(path.to_owned());
    let mut todos = Vec::new();
    let mut model = None;
    let mut usage = Usage::default();
    let mut cost_usd = 0.0;
    let mut permissions = Vec::new();
    let mut last_compaction = None;
    let mut collapsed_through = None;
    let mut approved_plan = None;
    let mut last_answer_at = None;
    let (header, mut warnings) = scan_lines(path, bytes, |line| {
        let Decoded::Entry(entry) = line.decoded else {
            return;
        };
        match entry {
            Entry::User(entry) => history.push_user(entry.message),
            Entry::Assistant(entry) => {
                usage += entry.usage;
                cost_usd += entry.cost_usd;
                last_answer_at = Some(entry.timestamp);
                history.push_assistant(entry.message, line.number);
            }
            Entry::ToolResults(entry) => history.push_tool_results(entry.message, line.number),
            Entry::Permission(entry) => permissions.push(entry),
            Entry::Todos(entry) => todos = entry.todos,
            Entry::Compaction(entry) => {
                history.restart_from_summary(&entry.summary, &entry.opening);
                last_compaction = Some(entry);
                collapsed_through = None;
            }
            Entry::Collapse(entry) => collapsed_through = Some(entry.collapsed_through),
            Entry::Plan(entry) => approved_plan = Some(entry.plan),
            Entry::ModelChange(entry) => model = Some(entry.model),
            // Not part of the conversation: the model never saw the error, and a sub-agent's
            // work reached it only as its `Agent` call's result.
            Entry::TurnFailed(_) | Entry::SubAgent(_) => {}
        }
    })?;
    let (messages, repair, history_warnings) = history.finish();
    warnings.extend(history_warnings);
    warnings.sort_by_key(|warning| warning.line);
    Ok(LoadedSession {
        path: path.to_owned(),
        model: model.unwrap_or_else(|| header.model.clone()),
        header,
        messages,
        todos,
        usage,
        cost_usd,
        permissions,
        last_compaction,
        collapsed_through,
        approved_plan,
        last_answer_at,
        repair,
        warnings,
    })
}

/// Every entry of a session file as written, with no history building or repair: for
/// exporting or showing a transcript. Lines are tolerated or refused as by [`load_file`].
pub fn read_entries(path: &Path) -> Result<SessionEntries, SessionError> {
    let bytes = read_file(path)?;
    let mut entries = Vec::new();
    let (header, warnings) = scan_lines(path, &bytes, |line| {
        if let Decoded::Entry(entry) = line.decoded {
            entries.push(entry);
        }
    })?;
    Ok(SessionEntries {
        header,
        entries,
        warnings,
    })
}

/// A session file's entries, from [`read_entries`].
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntries {
    /// The file's first line.
    pub header: SessionHeader,
    /// In file order; unknown entry types are left out (and warned about).
    pub entries: Vec<Entry>,
    /// What was skipped or repaired while reading, for the user.
    pub warnings: Vec<LoadWarning>,
}

pub(crate) fn read_file(path: &Path) -> Result<Vec<u8>, SessionError> {
    fs::read(path).map_err(|source| SessionError::Read {
        path: path.to_owned(),
        source,
    })
}

/// One entry line that decoded.
pub(crate) struct ScannedLine<'a> {
    /// 1-based.
    pub(crate) number: usize,
    /// The line in the current format (upgraded if the file is older).
    pub(crate) current: &'a [u8],
    pub(crate) decoded: Decoded,
}

/// Reads the header, then hands every entry line that decodes to `visit`, applying the
/// module's rules for bad lines. Returns the header and the warnings about skipped lines.
pub(crate) fn scan_lines(
    path: &Path,
    bytes: &[u8],
    mut visit: impl FnMut(ScannedLine<'_>),
) -> Result<(SessionHeader, Vec<LoadWarning>), SessionError> {
    let lines: Vec<&[u8]> = bytes.split(|&byte| byte == b'\n').collect();
    let header = match lines.first() {
        Some(first) if !is_blank(first) => decode_header(path, first)?,
        _ => {
            return Err(SessionError::InvalidHeader {
                path: path.to_owned(),
                reason: "the line is empty".to_owned(),
            });
        }
    };
    let last = lines.iter().rposition(|line| !is_blank(line)).unwrap_or(0);
    let mut warnings = Vec::new();
    for (index, &raw) in lines.iter().enumerate().skip(1) {
        if is_blank(raw) {
            continue;
        }
        let number = index + 1;
        let decoded = upgrade_line(header.format_version, raw)
            .and_then(|current| decode_current(&current).map(|decoded| (current, decoded)));
        match decoded {
            Ok((current, decoded)) => {
                if let Decoded::Unknown(entry_type) = &decoded {
                    warnings.push(LoadWarning {
                        path: path.to_owned(),
                        line: number,
                        kind: LoadWarningKind::UnknownEntryType {
                            entry_type: entry_type.clone(),
                        },
                    });
                }
                visit(ScannedLine {
                    number,
                    current: &current,
                    decoded,
                });
            }
            Err(error)
                if is_crash_artefact(&error, raw) || (index == last && is_syntax_error(&error)) =>
            {
                warnings.push(LoadWarning {
                    path: path.to_owned(),
                    line: number,
                    kind: LoadWarningKind::TornLine,
                });
            }
            Err(error) => warnings.push(LoadWarning {
                path: path.to_owned(),
                line: number,
                kind: LoadWarningKind::DamagedLine {
                    column: error.column(),
                    message: error_message(&error),
                },
            }),
        }
    }
    Ok((header, warnings))
}

fn is_blank(line: &[u8]) -> bool {
    line.iter().all(u8::is_ascii_whitespace)
}
