//! Decoding single lines of a session file, and telling a crash artefact from corruption.

use std::path::Path;

use serde::Deserialize;
use serde::de::IgnoredAny;
use serde_json::error::Category;

use crate::migrate::upgrade_line;
use crate::{Entry, FORMAT_VERSION, SessionError, SessionHeader};

/// A decoded entry line.
#[derive(Debug)]
pub(crate) enum Decoded {
    Entry(Entry),
    /// Valid JSON with a `type` this build does not know.
    Unknown(String),
}

/// Reads the first line: checks that it is a header and that its version is one this build
/// reads, before decoding the rest of it (a newer header may have another shape).
pub(crate) fn decode_header(path: &Path, line: &[u8]) -> Result<SessionHeader, SessionError> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(rename = "type", default)]
        kind: Option<String>,
        #[serde(default)]
        format_version: Option<u32>,
    }
    let invalid = |reason: String| SessionError::InvalidHeader {
        path: path.to_owned(),
        reason,
    };
    let probe: Probe =
        serde_json::from_slice(line).map_err(|error| invalid(error_message(&error)))?;
    match probe.kind.as_deref() {
        Some("header") => {}
        Some(other) => {
            return Err(invalid(format!("its type is `{other}`, expected `header`")));
        }
        None => return Err(invalid("it has no `type`".to_owned())),
    }
    match probe.format_version {
        None => Err(invalid("missing field `format_version`".to_owned())),
        Some(0) => Err(invalid("format version 0 does not exist".to_owned())),
        Some(found) if found > FORMAT_VERSION => Err(SessionError::NewerFormat {
            path: path.to_owned(),
            found,
            supported: FORMAT_VERSION,
        }),
        Some(found) => upgrade_line(found, line)
            .and_then(|current| serde_json::from_slice::<SessionHeader>(&current))
            .map(|header| SessionHeader {
                // The version the file is written in, not the one it was upgraded to.
                format_version: found,
                ..header
            })
            .map_err(|error| invalid(error_message(&error))),
    }
}

/// Decodes one entry line of a file written in `version` (already checked to be readable).
#[cfg(test)]
pub(crate) fn decode_entry(version: u32, line: &[u8]) -> Result<Decoded, serde_json::Error> {
    let line = upgrade_line(version, line)?;
    decode_current(&line)
}

/// Decodes one entry line in the current format.
pub(crate) fn decode_current(line: &[u8]) -> Result<Decoded, serde_json::Error> {
    #[derive(Deserialize)]
    struct TypeProbe {
        #[serde(rename = "type")]
        kind: String,
    }
    let kind = match entry_type(line) {
        Some(kind) => kind.to_owned(),
        None => serde_json::from_slice::<TypeProbe>(line)?.kind,
    };
    // Each entry is read straight into its own struct; an internally tagged enum would
    // buffer the whole line first, which doubles the cost of loading a long session.
    let entry = match kind.as_str() {
        "user" => Entry::User(serde_json::from_slice(line)?),
        "assistant" => Entry::Assistant(serde_json::from_slice(line)?),
        "tool_results" => Entry::ToolResults(serde_json::from_slice(line)?),
        "permission" => Entry::Permission(serde_json::from_slice(line)?),
        "todos" => Entry::Todos(serde_json::from_slice(line)?),
        "compaction" => Entry::Compaction(serde_json::from_slice(line)?),
        "model_change" => Entry::ModelChange(serde_json::from_slice(line)?),
        "turn_failed" => Entry::TurnFailed(serde_json::from_slice(line)?),
        "collapse" => Entry::Collapse(serde_json::from_slice(line)?),
        "sub_agent" => Entry::SubAgent(serde_json::from_slice(line)?),
        "plan" => Entry::Plan(serde_json::from_slice(line)?),
        "header" => {
            return Err(serde::de::Error::custom(
                "a second header in the middle of the file",
            ));
        }
        _ => {
            serde_json::from_slice::<IgnoredAny>(line)?;
            return Ok(Decoded::Unknown(kind));
        }
    };
    Ok(Decoded::Entry(entry))
}

/// The entry's type read from the line's start, where cairn always writes it
/// (`{"type":"user",…`); `None` for any other shape, which then goes through a full parse.
pub(crate) fn entry_type(line: &[u8]) -> Option<&str> {
    let rest = line.strip_prefix(b"{\"type\":\"")?;
    let end = rest.iter().position(|&byte| byte == b'"')?;
    let kind = &rest[..end];
    if kind.contains(&b'\\') {
        return None;
    }
    std::str::from_utf8(kind).ok()
}

/// Whether a line that failed to decode is what a crash leaves behind rather than damage:
/// JSON that stops early (a write cut short), or NUL bytes (blocks a power loss left
/// unwritten; cairn never writes a raw NUL, serde escapes it).
pub(crate) fn is_crash_artefact(error: &serde_json::Error, line: &[u8]) -> bool {
    error.classify() == Category::Eof || line.contains(&0)
}

/// Whether the line failed as JSON at all (as opposed to valid JSON of the wrong shape).
pub(crate) fn is_syntax_error(error: &serde_json::Error) -> bool {
    matches!(error.classify(), Category::Syntax | Category::Eof)
}

/// serde_json's message without its " at line 1 column N" suffix: positions inside one line
/// are reported separately, with the file's line number.
pub(crate) fn error_message(error: &serde_json::Error) -> String {
    let mut message = error.to_string();
    if let Some(at) = message.rfind(" at line ") {
        message.truncate(at);
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn entry_type_reads_the_leading_type_field() {
        assert_eq!(
            entry_type(br#"{"type":"user","timestamp":1}"#),
            Some("user")
        );
        assert_eq!(entry_type(br#"{"timestamp":1,"type":"user"}"#), None);
        assert_eq!(entry_type(br#"{"type":"us"#), None);
        assert_eq!(entry_type(br#"{"type":"a\"b","x":1}"#), None);
    }

    #[test]
    fn entries_with_fields_in_another_order_still_decode() {
        let line = br#"{"model":"m2","timestamp":5,"type":"model_change"}"#;
        let decoded = decode_entry(FORMAT_VERSION, line).map(|decoded| match decoded {
            Decoded::Entry(entry) => Some(entry),
            Decoded::Unknown(_) => None,
        });
        assert_eq!(
            decoded.ok().flatten(),
            Some(Entry::ModelChange(crate::ModelChangeEntry {
                timestamp: 5,
                model: "m2".to_owned()
            }))
        );
    }

    #[test]
    fn torn_lines_of_unknown_types_are_torn_not_unknown() {
        let torn = br#"{"type":"future","x":"abc"#;
        let error = decode_entry(FORMAT_VERSION, torn).err();
        assert_eq!(
            error.map(|error| is_crash_artefact(&error, torn)),
            Some(true)
        );
    }
}
