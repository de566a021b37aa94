//! The interactive UI's question about the project's `.mcp.json` servers that no setting
//! approves or disables yet, asked after the trust dialog and before the session starts; the
//! answer goes to the project's `.claude/settings.local.json` (whole-file replace, every other
//! key kept), where Claude Code writes it, so the session that starts next runs the approved
//! servers in the background like any other. `-p` asks nobody: it skips them with a warning.

use std::path::Path;

use anyhow::Context;
use cairn_config::settings_edit::{SettingEdit, edit_setting};
use cairn_tui::{McpApproval, Theme, run_mcp_approval_dialog};
use serde_json::json;

use crate::args::Args;

/// Asks about each server of the project's `.mcp.json` waiting for approval, in name order;
/// "all future servers" answers the rest too. What cannot be asked or saved is a warning
/// (the server stays unapproved, and the session says so).
pub async fn ask_about_project_servers(args: &Args, theme: &Theme) {
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    // The settings or servers that do not read are the session's to report.
    let Ok(pending) = pending_servers(args, &cwd) else {
        return;
    };
    for (name, runs) in pending {
        let asked = name.clone();
        let shown = theme.clone();
        let answer =
            tokio::task::spawn_blocking(move || run_mcp_approval_dialog(&asked, &runs, &shown))
                .await;
        let outcome = match answer {
            Ok(Ok(answer)) => record(&cwd, &name, answer).map(|()| answer),
            Ok(Err(err)) => Err(anyhow::Error::new(err).context("cannot ask about it")),
            Err(err) => Err(anyhow::Error::new(err).context("the question stopped unexpectedly")),
        };
        match outcome {
            Ok(McpApproval::UseAll) => return,
            Ok(McpApproval::Use | McpApproval::Skip) => {}
            Err(err) => {
                crate::interactive::say_err(format_args!(
                    "warning: MCP server \"{name}\" from .mcp.json: {err:#}"
                ));
                return;
            }
        }
    }
}

/// The project's servers waiting for approval: each name and what it would run.
fn pending_servers(args: &Args, cwd: &Path) -> anyhow::Result<Vec<(String, String)>> {
    let home = std::env::home_dir().context("no home directory")?;
    let settings = crate::settings::load_settings(args, cwd)?;
    let configured = crate::mcp::configured(args, &settings, cwd, &home)?;
    Ok(configured
        .unapproved
        .iter()
        .map(|server| (server.name.clone(), crate::mcp::describe(server)))
        .collect())
}

/// Writes `answer` about the server `name` to `project`'s `.claude/settings.local.json`.
pub fn record(project: &Path, name: &str, answer: McpApproval) -> anyhow::Result<()> {
    let path = project.join(".claude").join("settings.local.json");
    let (key, edit) = match answer {
        McpApproval::UseAll => ("enableAllProjectMcpServers", SettingEdit::Set(json!(true))),
        McpApproval::Use => ("enabledMcpjsonServers", SettingEdit::Add(vec![json!(name)])),
        McpApproval::Skip => (
            "disabledMcpjsonServers",
            SettingEdit::Add(vec![json!(name)]),
        ),
    };
    edit_setting(&path, key, edit).context("cannot save the answer")?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use super::*;

    #[test]
    fn each_answer_is_written_beside_the_files_other_keys() {
        let project = tempfile::tempdir().unwrap();
        let path = project.path().join(".claude/settings.local.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, r#"{"permissions": {"allow": ["Read"]}}"#).unwrap();
        record(project.path(), "notes", McpApproval::Use).unwrap();
        record(project.path(), "db", McpApproval::Skip).unwrap();
        record(project.path(), "docs", McpApproval::Use).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(
            written,
            json!({
                "permissions": {"allow": ["Read"]},
                "enabledMcpjsonServers": ["notes", "docs"],
                "disabledMcpjsonServers": ["db"]
            })
        );
        record(project.path(), "web", McpApproval::UseAll).unwrap();
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(written["enableAllProjectMcpServers"], json!(true));
    }
}
