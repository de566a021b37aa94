//! The environment of every process cairn starts: cairn's own, minus cairn's credentials.
//!
//! A command the model runs (`printenv`, `env`, `cat /proc/self/environ`) must not be able to
//! print the API key cairn talks to the model with, and neither must a hook or a `!command`.
//! Every place that spawns a process builds its environment with [`child_environment`], so the
//! rule of what counts as a credential lives here, once.

use std::ffi::{OsStr, OsString};
use std::sync::{PoisonError, RwLock};

/// Variables that hold a credential cairn (or a provider it talks to) authenticates with.
const CREDENTIAL_VARIABLES: &[&str] = &[
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "CLAUDE_CODE_OAUTH_TOKEN",
    "OPENAI_API_KEY",
];

/// Names declared with [`declare_credential_variables`]: a provider's `apiKeyEnv` setting.
static DECLARED: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Adds variable names that hold credentials for the rest of the process's life, for
/// providers whose settings name the variable their key is in (`apiKeyEnv`). Child
/// processes started afterwards do not get them.
pub fn declare_credential_variables(names: impl IntoIterator<Item = String>) {
    let mut declared = DECLARED.write().unwrap_or_else(PoisonError::into_inner);
    for name in names {
        if !declared.contains(&name) {
            declared.push(name);
        }
    }
}

/// Whether the variable `name` holds one of cairn's credentials: `ANTHROPIC_API_KEY`,
/// `ANTHROPIC_AUTH_TOKEN`, any other `ANTHROPIC_*` name ending in `_KEY` or `_TOKEN`,
/// `CLAUDE_CODE_OAUTH_TOKEN`, `OPENAI_API_KEY`, and the names declared with
/// [`declare_credential_variables`]. `ANTHROPIC_BASE_URL` and `ANTHROPIC_MODEL` are not
/// secrets and stay.
///
/// ```
/// use cairn_protocol::is_credential_variable;
/// use std::ffi::OsStr;
///
/// assert!(is_credential_variable(OsStr::new("ANTHROPIC_API_KEY")));
/// assert!(is_credential_variable(OsStr::new("ANTHROPIC_VERTEX_TOKEN")));
/// assert!(!is_credential_variable(OsStr::new("ANTHROPIC_BASE_URL")));
/// ```
pub fn is_credential_variable(name: &OsStr) -> bool {
    // A name that is not UTF-8 is none of ours.
    let Some(name) = name.to_str() else {
        return false;
    };
    CREDENTIAL_VARIABLES.contains(&name)
        || (name.starts_with("ANTHROPIC_") && (name.ends_with("_KEY") || name.ends_with("_TOKEN")))
        || DECLARED
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .any(|declared| declared == name)
}

/// cairn's own environment without its credentials: what a child process is given, before
/// the variables the user configured for it (settings' `env`) are added. Use it with
/// `env_clear()`:
///
/// ```
/// let mut command = std::process::Command::new("printenv");
/// command
///     .env_clear()
///     .envs(cairn_protocol::child_environment());
/// ```
pub fn child_environment() -> Vec<(OsString, OsString)> {
    std::env::vars_os()
        .filter(|(name, _)| !is_credential_variable(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_recognised_by_name_and_form() {
        let secret = [
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_FOUNDRY_API_KEY",
            "ANTHROPIC_BEDROCK_TOKEN",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "OPENAI_API_KEY",
        ];
        let kept = [
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_MODEL",
            "ANTHROPIC_KEYRING",
            "MY_API_KEY",
            "PATH",
            "anthropic_api_key",
        ];
        let judged = |names: &[&str]| -> Vec<bool> {
            names
                .iter()
                .map(|name| is_credential_variable(OsStr::new(name)))
                .collect()
        };
        assert_eq!(judged(&secret), vec![true; secret.len()]);
        assert_eq!(judged(&kept), vec![false; kept.len()]);
    }

    #[test]
    fn declared_provider_variables_are_credentials_too() {
        let name = OsStr::new("CAIRN_TEST_PROVIDER_SECRET");
        assert!(!is_credential_variable(name));
        declare_credential_variables(["CAIRN_TEST_PROVIDER_SECRET".to_string()]);
        assert!(is_credential_variable(name));
    }
}
