//! Session ids: UUIDs, checked before they become part of a path.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The id of one session, which also names its file (`<id>.jsonl`).
///
/// Ids are UUIDs. One given by a user (`--resume <id>`) goes through [`SessionId::parse`], so a
/// value such as `../../etc/passwd` never reaches the file system.
///
/// ```
/// use cairn_session::SessionId;
///
/// let id = SessionId::parse("3F2B8C1E-9A4D-4C6B-8E2F-1A2B3C4D5E6F").unwrap();
/// assert_eq!(id.to_string(), "3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f");
/// assert!(SessionId::parse("../secrets").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct SessionId(uuid::Uuid);

impl SessionId {
    /// A new random id.
    pub fn new() -> Self {
        SessionId(uuid::Uuid::new_v4())
    }

    /// Reads an id given by a user or found in a file name. Only UUIDs are accepted; anything
    /// else (a path, a name, an empty string) is refused with [`InvalidSessionId`].
    pub fn parse(text: &str) -> Result<Self, InvalidSessionId> {
        // `Uuid` also accepts the braced and `urn:uuid:` forms; they are harmless because the
        // file name is always written from the parsed value, never from the text.
        uuid::Uuid::try_parse(text.trim())
            .map(SessionId)
            .map_err(|_| InvalidSessionId {
                given: text.to_owned(),
            })
    }
}

impl Default for SessionId {
    fn default() -> Self {
        SessionId::new()
    }
}

impl fmt::Display for SessionId {
    /// The lowercase hyphenated form, as in file names.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.hyphenated().fmt(f)
    }
}

impl FromStr for SessionId {
    type Err = InvalidSessionId;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        SessionId::parse(text)
    }
}

/// A session id that is not a UUID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{given:?} is not a session id: session ids are UUIDs such as \
     3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f (`cairn --resume` without an id lists them)"
)]
pub struct InvalidSessionId {
    /// The text as it was given.
    pub given: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn path_like_ids_are_refused() {
        for given in [
            "",
            "..",
            "../x",
            "a/b",
            "a\\b",
            "3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f/..",
        ] {
            assert_eq!(
                SessionId::parse(given),
                Err(InvalidSessionId {
                    given: given.to_owned()
                })
            );
        }
    }

    #[test]
    fn display_is_lowercase_hyphenated() {
        let id = SessionId::parse("{3F2B8C1E-9A4D-4C6B-8E2F-1A2B3C4D5E6F}");
        assert_eq!(
            id.map(|id| id.to_string()),
            Ok("3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f".to_owned())
        );
    }
}
