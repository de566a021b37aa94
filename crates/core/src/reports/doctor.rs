//! `/doctor` and `cairn doctor`: checks of the installation and the environment, each passed or failed with why.

use std::path::{Path, PathBuf};

use cairn_config::SettingsLoader;
use cairn_context::output_style::OutputStyle;
use cairn_policy::sandbox::{SandboxSupport, detect_support};

/// What `/doctor` needs to know about this session.
#[derive(Debug)]
pub struct DoctorFacts<'a> {
    /// cairn's version.
    pub version: &'a str,
    /// The home directory, whose settings files are checked.
    pub home: &'a Path,
    /// The project directory, whose settings files are checked.
    pub cwd: &'a Path,
    /// The environment variable the credential came from (never its value).
    pub credential_variable: &'a str,
}

/// One line of the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Passed, failed, or a note.
    pub outcome: Outcome,
    /// What was checked.
    pub what: String,
    /// What was found.
    pub detail: String,
}

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// All is well.
    Passed,
    /// Something is broken: `cairn doctor` exits 1.
    Failed,
    /// Nothing is broken, but the user should know (settings cairn reads and ignores).
    Noted,
}

impl Check {
    fn passed(what: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            outcome: Outcome::Passed,
            what: what.into(),
            detail: detail.into(),
        }
    }

    fn failed(what: impl Into<String>, detail: impl Into<String>) -> Check {
        Check {
            outcome: Outcome::Failed,
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// One MCP server's state, as `/doctor` checks it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpHealth {
    /// Connected, offering this many tools.
    Connected {
        /// Its tool count.
        tools: usize,
    },
    /// Still starting when the report was written.
    Starting,
    /// It did not start, or stopped: the reason, with its stderr's tail.
    Failed(String),
    /// A project server (`.mcp.json`) the settings have not approved.
    NeedsApproval,
    /// A project server of a folder the user has not trusted yet.
    NotTrusted,
    /// Turned off by the user (`/mcp disable`).
    Disabled,
}

/// A check a server: passed when connected, failed when it did not start (so `cairn doctor`
/// exits 1), a note when it waits for approval or trust, is turned off, or still starts.
pub fn mcp_checks(servers: &[(String, McpHealth)]) -> Vec<Check> {
    servers
        .iter()
        .map(|(name, health)| {
            let what = format!("MCP server {name}");
            let noted = |detail: String| Check {
                outcome: Outcome::Noted,
                what: what.clone(),
                detail,
            };
            match health {
                McpHealth::Connected { tools } => {
                    Check::passed(what.clone(), format!("connected, {tools} tools"))
                }
                McpHealth::Failed(reason) => {
                    Check::failed(what.clone(), format!("failed: {reason}"))
                }
                McpHealth::Starting => noted("still starting".into()),
                McpHealth::NeedsApproval => noted(
                    "needs approval: add it to enabledMcpjsonServers (or set \
                     enableAllProjectMcpServers) in .claude/settings.local.json"
                        .into(),
                ),
                McpHealth::NotTrusted => noted(
                    "not started: this folder is not trusted yet (start cairn here to answer)"
                        .into(),
                ),
                McpHealth::Disabled => noted(format!("disabled (/mcp enable {name} turns it on)")),
            }
        })
        .collect()
}

/// Runs every check; blocking work (file reads, a PATH walk) is small enough to do inline.
pub fn run_checks(inputs: &DoctorFacts<'_>) -> Vec<Check> {
    let mut checks = Vec::new();
    checks.push(match std::env::current_exe() {
        Ok(path) => Check::passed(
            format!("cairn {}", inputs.version),
            path.display().to_string(),
        ),
        Err(err) => Check::failed(
            format!("cairn {}", inputs.version),
            format!("cannot find the binary: {err}"),
        ),
    });
    checks.push(credential_check(inputs.credential_variable));
    checks.extend(settings_checks(inputs.home, inputs.cwd));
    checks.push(sandbox_check(detect_support()));
    // git is the one program cairn runs from PATH; Grep and Glob search in-process.
    let path = std::env::var_os("PATH").unwrap_or_default();
    checks.push(match find_on_path("git", &path) {
        Some(found) => Check::passed("git", found.display().to_string()),
        None => Check::failed("git", "not found on PATH; needed for git context and diffs"),
    });
    checks
}

/// The report as text, one `✓`/`✗` line a check.
pub fn render(checks: &[Check]) -> String {
    let mut text = String::from("Doctor:");
    for check in checks {
        let mark = match check.outcome {
            Outcome::Passed => "✓",
            Outcome::Failed => "✗",
            Outcome::Noted => "!",
        };
        text.push_str(&format!("\n  {mark} {}: {}", check.what, check.detail));
    }
    text
}

fn credential_check(variable: &str) -> Check {
    if variable == cairn_llm::credential::API_KEY_HELPER_SETTING {
        return Check::passed(
            "credentials",
            "from the apiKeyHelper command in the settings (run when a request needs the key)",
        );
    }
    // A local OpenAI-compatible server (`ollama/…`) that takes no key.
    if variable == "none" {
        return Check::passed("credentials", "none needed by this model's provider");
    }
    let set = std::env::var_os(variable).is_some_and(|value| !value.is_empty());
    if set {
        Check::passed("credentials", format!("{variable} is set"))
    } else {
        Check::failed(
            "credentials",
            format!("{variable} is not set; export ANTHROPIC_API_KEY or ANTHROPIC_AUTH_TOKEN"),
        )
    }
}

/// One check for each settings file that exists, and one for the merged result.
fn settings_checks(home: &Path, cwd: &Path) -> Vec<Check> {
    let loader = SettingsLoader::new(home, cwd);
    let mut checks: Vec<Check> = loader
        .files()
        .iter()
        .filter_map(|source| {
            let path = source.path()?;
            if !path.is_file() {
                return None;
            }
            let name = source.to_string();
            Some(match std::fs::read_to_string(path) {
                Ok(text) => match serde_json::from_str::<serde_json::Value>(&text) {
                    Ok(_) => Check::passed("settings", format!("{name} parses")),
                    Err(err) => Check::failed("settings", format!("{name}: {err}")),
                },
                Err(err) => Check::failed("settings", format!("{name}: cannot read: {err}")),
            })
        })
        .collect();
    let loaded = match loader.load() {
        Ok(loaded) => loaded,
        Err(err) => {
            checks.push(Check::failed("settings", err.to_string()));
            return checks;
        }
    };
    let warnings: Vec<String> = loaded.warnings().iter().map(ToString::to_string).collect();
    checks.push(if warnings.is_empty() {
        Check::passed("settings", "merged without problems")
    } else {
        Check::failed("settings", warnings.join("; "))
    });
    let unsupported: Vec<String> = loaded
        .unsupported_keys()
        .iter()
        .map(ToString::to_string)
        .collect();
    if !unsupported.is_empty() {
        checks.push(Check {
            outcome: Outcome::Noted,
            what: "unsupported settings".to_owned(),
            detail: format!(
                "cairn reads but does not act on: {}",
                unsupported.join(", ")
            ),
        });
    }
    if let Some(name) = &loaded.settings().output_style {
        checks.push(match OutputStyle::find(name, cwd, Some(home)) {
            Ok(Some(style)) => Check::passed("output style", style.name),
            Ok(None) => Check::passed("output style", "default"),
            Err(problem) => Check::failed("output style", problem.to_string()),
        });
    }
    checks
}

fn sandbox_check(support: SandboxSupport) -> Check {
    match support {
        SandboxSupport::Full { abi } => {
            Check::passed("sandbox", format!("Landlock ABI {abi}, full support"))
        }
        SandboxSupport::Partial { abi, missing } => {
            Check::passed("sandbox", format!("Landlock ABI {abi}, partial: {missing}"))
        }
        SandboxSupport::Unsupported { reason } => Check::failed("sandbox", reason),
    }
}

/// The first executable file called `name` in the directories of `path`.
fn find_on_path(name: &str, path: &std::ffi::OsStr) -> Option<PathBuf> {
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        path.metadata()
            .is_ok_and(|meta| meta.is_file() && meta.permissions().mode() & 0o111 != 0)
    }
    #[cfg(not(unix))]
    {
        path.is_file()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "a test should fail loudly")]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn a_broken_settings_file_fails_with_its_name() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        std::fs::write(cwd.path().join(".claude/settings.json"), "{ nope").unwrap();
        let checks = settings_checks(home.path(), cwd.path());
        assert_eq!(checks.len(), 2, "{checks:?}");
        assert!(
            checks.iter().all(|check| check.outcome == Outcome::Failed),
            "{checks:?}"
        );
        assert!(checks[0].detail.contains("settings.json"), "{checks:?}");
    }

    #[test]
    fn checks_cover_the_installation_and_git_but_not_rg() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        let inputs = DoctorFacts {
            version: "9.9.9",
            home: home.path(),
            cwd: cwd.path(),
            credential_variable: "CAIRN_DOCTOR_TEST_UNSET_VARIABLE",
        };
        let checks = run_checks(&inputs);
        let names: Vec<&str> = checks.iter().map(|check| check.what.as_str()).collect();
        assert_eq!(
            names,
            ["cairn 9.9.9", "credentials", "settings", "sandbox", "git"],
            "Grep and Glob are in-process: nothing needs rg on PATH"
        );
    }

    /// Settings cairn reads but does not act on are listed once, each with its file; an
    /// output style that is nowhere is a failed check naming it.
    #[test]
    fn unsupported_settings_and_a_missing_output_style_are_reported() {
        let home = tempfile::tempdir().unwrap();
        let cwd = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(cwd.path().join(".claude")).unwrap();
        let file = cwd.path().join(".claude/settings.json");
        std::fs::write(
            &file,
            r#"{"spinnerTipsEnabled": false, "alwaysThinkingEnabled": true, "outputStyle": "Pirate", "apiKeyHelper": "pass show anthropic"}"#,
        )
        .unwrap();
        let checks = settings_checks(home.path(), cwd.path());
        assert_eq!(
            checks[1..],
            [
                Check::passed("settings", "merged without problems"),
                Check {
                    outcome: Outcome::Noted,
                    what: "unsupported settings".into(),
                    detail: format!(
                        "cairn reads but does not act on: spinnerTipsEnabled (in {0})",
                        file.display()
                    ),
                },
                Check::failed(
                    "output style",
                    "the output style \"Pirate\" (outputStyle in the settings) was not found \
                     in .claude/output-styles/ or ~/.claude/output-styles/, and is not one of \
                     default, Explanatory, Learning: cairn's default style is used"
                ),
            ]
        );
        assert_eq!(
            credential_check("apiKeyHelper"),
            Check::passed(
                "credentials",
                "from the apiKeyHelper command in the settings (run when a request needs the key)"
            )
        );
    }

    #[test]
    fn renders_marks() {
        let text = render(&[
            Check::passed("git", "/usr/bin/git"),
            Check::failed("rg", "not found"),
        ]);
        assert_eq!(text, "Doctor:\n  ✓ git: /usr/bin/git\n  ✗ rg: not found");
    }
}
