//! Credentials that can change while cairn runs: a [`CredentialSource`] is asked for the key
//! before a request and asked again, for a fresh one, after the API refuses it (401).
//!
//! [`KeyHelper`] is the source behind Claude Code's `apiKeyHelper` setting: a shell command
//! whose standard output is the key. It runs when a request first needs the key, its key is
//! kept until `CLAUDE_CODE_API_KEY_HELPER_TTL_MS` passes (by default until the API refuses
//! it), and it runs again after a 401. Its key is never shown: errors name the setting and
//! quote only what the command wrote to its standard error.

use std::fmt;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::io::AsyncReadExt;

use crate::ModelError;

/// The setting that names the key helper, as Claude Code spells it; errors name it.
pub const API_KEY_HELPER_SETTING: &str = "apiKeyHelper";

/// How long a helper's key is kept, in milliseconds (Claude Code's variable). Unset: until
/// the API refuses it.
pub const API_KEY_HELPER_TTL_VAR: &str = "CLAUDE_CODE_API_KEY_HELPER_TTL_MS";

/// The longest a helper may take before it is stopped and the request fails.
const HELPER_TIMEOUT: Duration = Duration::from_secs(60);

/// The most of a failing helper's standard error quoted in the error.
const MAX_QUOTED_STDERR: usize = 300;

/// Whether a key may come from what the source keeps or must be fetched anew.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// The kept key, while it is still good; fetched when there is none.
    Kept,
    /// A new key: the API refused the kept one.
    Fresh,
}

/// Where a client gets a key that may change while it runs. The client asks before each
/// request ([`Freshness::Kept`]) and once more after a 401 ([`Freshness::Fresh`]), then sends
/// the request again with the new key.
#[async_trait]
pub trait CredentialSource: Send + Sync + fmt::Debug {
    /// The key to send.
    async fn key(&self, freshness: Freshness) -> Result<String, ModelError>;

    /// What the user configured, for messages: `apiKeyHelper`.
    fn setting(&self) -> &'static str;
}

/// `apiKeyHelper`: a command run with `sh -c` in the project directory, given cairn's
/// environment without its credentials, whose first line of output is the key.
///
/// ```
/// use cairn_llm::credential::KeyHelper;
///
/// let helper = KeyHelper::new("vault read -field=key secret/anthropic", "/project".into(), None);
/// assert_eq!(format!("{helper:?}"), "KeyHelper { command: \"vault read -field=key secret/anthropic\", ttl: None, .. }");
/// ```
pub struct KeyHelper {
    command: String,
    cwd: PathBuf,
    ttl: Option<Duration>,
    kept: tokio::sync::Mutex<Option<(String, Instant)>>,
}

impl KeyHelper {
    /// A helper running `command` in `cwd`, its key kept for `ttl` (`None`: until refused).
    pub fn new(command: impl Into<String>, cwd: PathBuf, ttl: Option<Duration>) -> KeyHelper {
        KeyHelper {
            command: command.into(),
            cwd,
            ttl,
            kept: tokio::sync::Mutex::new(None),
        }
    }

    /// The time to keep a key, from `CLAUDE_CODE_API_KEY_HELPER_TTL_MS`'s text (`None` when
    /// unset: until the API refuses it).
    pub fn ttl_from(text: Option<&str>) -> Result<Option<Duration>, ModelError> {
        let Some(text) = text.map(str::trim).filter(|text| !text.is_empty()) else {
            return Ok(None);
        };
        text.parse::<u64>()
            .map(|ms| Some(Duration::from_millis(ms)))
            .map_err(|_| ModelError::InvalidSetting {
                variable: API_KEY_HELPER_TTL_VAR,
                value: text.to_string(),
                expected: "a whole number of milliseconds, such as 300000",
            })
    }

    /// Runs the command once and returns the key it printed.
    async fn run(&self) -> Result<String, ModelError> {
        let failed = |problem: String| ModelError::CredentialHelper {
            setting: API_KEY_HELPER_SETTING,
            problem,
        };
        let mut child = tokio::process::Command::new("sh")
            .arg("-c")
            .arg(&self.command)
            .current_dir(&self.cwd)
            .env_clear()
            .envs(cairn_protocol::child_environment())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|error| failed(format!("could not start `sh`: {error}")))?;
        let mut stdout = child.stdout.take();
        let mut stderr = child.stderr.take();
        let finished = tokio::time::timeout(HELPER_TIMEOUT, async {
            let mut out = Vec::new();
            let mut err = Vec::new();
            let read_out = async {
                if let Some(pipe) = stdout.as_mut() {
                    let _ = pipe.read_to_end(&mut out).await;
                }
            };
            let read_err = async {
                if let Some(pipe) = stderr.as_mut() {
                    let _ = pipe.read_to_end(&mut err).await;
                }
            };
            let ((), (), status) = tokio::join!(read_out, read_err, child.wait());
            (status, out, err)
        })
        .await;
        let (status, out, err) = finished.map_err(|_| {
            failed(format!(
                "printed no key within {} s and was stopped",
                HELPER_TIMEOUT.as_secs()
            ))
        })?;
        let status = status.map_err(|error| failed(format!("could not be waited for: {error}")))?;
        if !status.success() {
            let code = status.code().map_or_else(
                || "was killed by a signal".to_string(),
                |code| format!("exited with status {code}"),
            );
            return Err(failed(format!("{code}{}", quoted_stderr(&err))));
        }
        let key = String::from_utf8_lossy(&out)
            .lines()
            .map(str::trim)
            .find(|line| !line.is_empty())
            .map(str::to_owned);
        key.ok_or_else(|| failed(format!("printed no key{}", quoted_stderr(&err))))
    }
}

/// `": <stderr>"`, cut short, or nothing when the helper wrote nothing there.
fn quoted_stderr(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let text = text.trim();
    if text.is_empty() {
        return String::new();
    }
    let mut cut: String = text.chars().take(MAX_QUOTED_STDERR).collect();
    if cut.len() < text.len() {
        cut.push('…');
    }
    format!(" (its error output: {})", cut.replace('\n', " / "))
}

#[async_trait]
impl CredentialSource for KeyHelper {
    async fn key(&self, freshness: Freshness) -> Result<String, ModelError> {
        // Held while the command runs, so requests that need a key at once run it once.
        let mut kept = self.kept.lock().await;
        if freshness == Freshness::Kept
            && let Some((key, fetched)) = kept.as_ref()
            && self.ttl.is_none_or(|ttl| fetched.elapsed() < ttl)
        {
            return Ok(key.clone());
        }
        *kept = None;
        let key = self.run().await?;
        *kept = Some((key.clone(), Instant::now()));
        Ok(key)
    }

    fn setting(&self) -> &'static str {
        API_KEY_HELPER_SETTING
    }
}

impl fmt::Debug for KeyHelper {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyHelper")
            .field("command", &self.command)
            .field("ttl", &self.ttl)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    /// A helper that counts its runs in `dir/count` and prints `key-<n>`.
    fn counting(dir: &std::path::Path, ttl: Option<Duration>) -> KeyHelper {
        KeyHelper::new(
            "n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; echo key-$n",
            dir.to_path_buf(),
            ttl,
        )
    }

    #[tokio::test]
    async fn the_key_is_kept_until_a_fresh_one_is_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let helper = counting(dir.path(), None);
        assert_eq!(helper.key(Freshness::Kept).await.unwrap(), "key-1");
        assert_eq!(helper.key(Freshness::Kept).await.unwrap(), "key-1");
        assert_eq!(helper.key(Freshness::Fresh).await.unwrap(), "key-2");
        assert_eq!(helper.key(Freshness::Kept).await.unwrap(), "key-2");
    }

    #[tokio::test]
    async fn a_ttl_of_zero_runs_the_helper_for_every_request() {
        let dir = tempfile::tempdir().unwrap();
        let helper = counting(dir.path(), Some(Duration::ZERO));
        assert_eq!(helper.key(Freshness::Kept).await.unwrap(), "key-1");
        assert_eq!(helper.key(Freshness::Kept).await.unwrap(), "key-2");
    }

    #[tokio::test]
    async fn a_failing_helper_is_named_with_its_error_output_but_not_its_output() {
        let dir = tempfile::tempdir().unwrap();
        let helper = KeyHelper::new(
            "echo sk-SECRET; echo 'vault: not logged in' >&2; exit 3",
            dir.path().to_path_buf(),
            None,
        );
        let error = helper.key(Freshness::Kept).await.unwrap_err().to_string();
        assert_eq!(
            error,
            "the apiKeyHelper command failed: exited with status 3 (its error output: vault: \
             not logged in); check the apiKeyHelper setting"
        );
        let silent = KeyHelper::new("true", dir.path().to_path_buf(), None);
        assert_eq!(
            silent.key(Freshness::Kept).await.unwrap_err().to_string(),
            "the apiKeyHelper command failed: printed no key; check the apiKeyHelper setting"
        );
    }

    #[test]
    fn the_ttl_is_read_in_milliseconds() {
        assert_eq!(KeyHelper::ttl_from(None).unwrap(), None);
        assert_eq!(
            KeyHelper::ttl_from(Some("1500")).unwrap(),
            Some(Duration::from_millis(1500))
        );
        assert_eq!(
            KeyHelper::ttl_from(Some("5m")).unwrap_err().to_string(),
            "CLAUDE_CODE_API_KEY_HELPER_TTL_MS is `5m`: expected a whole number of \
             milliseconds, such as 300000"
        );
    }
}
