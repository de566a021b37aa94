//! [`PermissionMode`]: how much the agent may do without asking, one type for the settings
//! files, the command line, the permission gate and every face.

use std::fmt;
use std::str::FromStr;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};

/// How much the agent may do without asking: the level the permission gate grants a call
/// before it asks or refuses. Names are Claude Code's, in
/// settings files (`permissions.defaultMode`), on the command line (`--permission-mode`) and
/// in hook input (`permission_mode`).
///
/// ```
/// use cairn_protocol::PermissionMode;
///
/// let mode: PermissionMode = "acceptEdits".parse().unwrap();
/// assert_eq!(mode, PermissionMode::AcceptEdits);
/// assert_eq!(mode.to_string(), "acceptEdits");
/// assert_eq!(
///     "acceptEdit".parse::<PermissionMode>().unwrap_err().to_string(),
///     "unknown mode \"acceptEdit\" (expected one of default, acceptEdits, plan, \
///      bypassPermissions, dontAsk)"
/// );
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PermissionMode {
    /// Read-only calls run; edits and commands ask, unless a rule allows them.
    Default,
    /// File edits inside the workspace run unasked too; commands still ask.
    AcceptEdits,
    /// Read and plan only: everything else is refused, so that the model presents a plan.
    Plan,
    /// Nothing asks (for sandboxes and containers); only deny rules refuse.
    BypassPermissions,
    /// Never ask: what no rule allows is refused.
    DontAsk,
}

impl PermissionMode {
    /// Every mode, in the order they are listed to users.
    pub const ALL: [PermissionMode; 5] = [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
        PermissionMode::BypassPermissions,
        PermissionMode::DontAsk,
    ];

    /// The name used in settings files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionMode::Default => "default",
            PermissionMode::AcceptEdits => "acceptEdits",
            PermissionMode::Plan => "plan",
            PermissionMode::BypassPermissions => "bypassPermissions",
            PermissionMode::DontAsk => "dontAsk",
        }
    }
}

impl fmt::Display for PermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A permission mode name that is not one of [`PermissionMode::ALL`]; its message lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownPermissionMode(pub String);

impl fmt::Display for UnknownPermissionMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown mode {:?} (expected one of {})",
            self.0,
            mode_names()
        )
    }
}

impl std::error::Error for UnknownPermissionMode {}

fn mode_names() -> String {
    PermissionMode::ALL.map(PermissionMode::as_str).join(", ")
}

impl FromStr for PermissionMode {
    type Err = UnknownPermissionMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        PermissionMode::ALL
            .into_iter()
            .find(|mode| mode.as_str() == name)
            .ok_or_else(|| UnknownPermissionMode(name.to_owned()))
    }
}

impl Serialize for PermissionMode {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for PermissionMode {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ModeVisitor;
        impl Visitor<'_> for ModeVisitor {
            type Value = PermissionMode;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "a permission mode, one of {}", mode_names())
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<PermissionMode, E> {
                name.parse().map_err(E::custom)
            }
        }
        deserializer.deserialize_str(ModeVisitor)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn permission_modes_round_trip_by_name() {
        for mode in PermissionMode::ALL {
            assert_eq!(mode.as_str().parse::<PermissionMode>(), Ok(mode));
            assert_eq!(serde_json::to_value(mode).unwrap(), json!(mode.as_str()));
            assert_eq!(
                serde_json::from_value::<PermissionMode>(json!(mode.as_str())).unwrap(),
                mode
            );
        }
        assert_eq!(
            "acceptEdit"
                .parse::<PermissionMode>()
                .unwrap_err()
                .to_string(),
            "unknown mode \"acceptEdit\" (expected one of default, acceptEdits, plan, \
             bypassPermissions, dontAsk)"
        );
    }

    #[test]
    fn a_wrong_mode_in_json_names_the_modes() {
        let error = serde_json::from_value::<PermissionMode>(json!("auto")).unwrap_err();
        assert_eq!(
            error.to_string(),
            "unknown mode \"auto\" (expected one of default, acceptEdits, plan, \
             bypassPermissions, dontAsk)"
        );
    }
}
