//! `/memory`: an instruction file opened in the user's editor. cairn reads instruction files
//! again when they change, so what the user writes applies from the next message on.

use std::path::{Path, PathBuf};
use std::process::Command;

use crossterm::event::{DisableBracketedPaste, EnableBracketedPaste};
use ratatui::Terminal;

use super::inline_backend::InlineBackend;

/// The file `/memory <which>` edits: `project` (the default) is `./CLAUDE.md`, `user` is
/// `~/.claude/CLAUDE.md`, `local` is `./CLAUDE.local.md`.
pub fn target(which: &str, cwd: &Path, home: &Path) -> Result<PathBuf, String> {
    match which.trim() {
        "" | "project" => Ok(cwd.join("CLAUDE.md")),
        "user" => Ok(home.join(".claude").join("CLAUDE.md")),
        "local" => Ok(cwd.join("CLAUDE.local.md")),
        other => Err(format!(
            "Unknown memory file {other:?}: use /memory project (./CLAUDE.md), /memory user \
             (~/.claude/CLAUDE.md) or /memory local (./CLAUDE.local.md)."
        )),
    }
}

/// The editor command: `$VISUAL`, else `$EDITOR`, else `vi`. It is run by the shell, so it
/// may carry arguments (`code --wait`).
fn editor_command() -> String {
    ["VISUAL", "EDITOR"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .find(|value| !value.trim().is_empty())
        .unwrap_or_else(|| "vi".to_string())
}

/// Hands the terminal to the editor on `path` and takes it back: the viewport is cleared,
/// raw mode and bracketed paste are off while the editor runs, and everything is redrawn
/// after. The caller has stopped reading keys. Returns what to tell the user.
pub async fn edit(terminal: &mut Terminal<InlineBackend>, path: &Path) -> Result<String, String> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|err| format!("Cannot create {}: {err}", dir.display()))?;
    }
    let editor = editor_command();
    let before = std::fs::read(path).ok();
    let terminal_error = |err: std::io::Error| format!("Terminal error around the editor: {err}");
    terminal.clear().map_err(terminal_error)?;
    terminal.show_cursor().map_err(terminal_error)?;
    let _ = crossterm::execute!(std::io::stdout(), DisableBracketedPaste);
    let _ = crossterm::terminal::disable_raw_mode();

    let command = format!("{editor} \"$1\"");
    let target = path.to_path_buf();
    let status = tokio::task::spawn_blocking(move || {
        Command::new("sh")
            .arg("-c")
            .arg(command)
            .arg("sh")
            .arg(target)
            .env_clear()
            .envs(cairn_protocol::child_environment())
            .status()
    })
    .await;

    let _ = crossterm::terminal::enable_raw_mode();
    let _ = crossterm::execute!(std::io::stdout(), EnableBracketedPaste);
    // Dropping the key stream left a wake-up in crossterm's reader; take it before new reads.
    let _ = crossterm::event::poll(std::time::Duration::ZERO);
    terminal.clear().map_err(terminal_error)?;

    let status = match status {
        Ok(Ok(status)) => status,
        Ok(Err(err)) => return Err(format!("Could not start the editor ({editor}): {err}")),
        Err(err) => {
            return Err(format!(
                "The editor ({editor}) could not be waited for: {err}"
            ));
        }
    };
    if !status.success() {
        let code = status
            .code()
            .map_or_else(|| "a signal".to_string(), |code| format!("status {code}"));
        return Err(format!(
            "The editor `{editor}` ended with {code}; {} is as it was unless it saved. Set \
             $EDITOR (or $VISUAL) to the editor you use.",
            path.display()
        ));
    }
    let after = std::fs::read(path).ok();
    Ok(match (before == after, after) {
        (_, None) => format!("{} was not saved.", path.display()),
        (true, Some(_)) => format!("{} is unchanged.", path.display()),
        (false, Some(text)) => {
            let lines = String::from_utf8_lossy(&text).lines().count();
            let plural = if lines == 1 { "" } else { "s" };
            format!(
                "Saved {} ({lines} line{plural}); cairn follows it from the next message.",
                path.display(),
            )
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_the_three_memory_files() {
        let cwd = Path::new("/w");
        let home = Path::new("/h");
        assert_eq!(target("", cwd, home).unwrap(), Path::new("/w/CLAUDE.md"));
        assert_eq!(
            target("user", cwd, home).unwrap(),
            Path::new("/h/.claude/CLAUDE.md")
        );
        assert_eq!(
            target(" local ", cwd, home).unwrap(),
            Path::new("/w/CLAUDE.local.md")
        );
        let error = target("team", cwd, home).unwrap_err();
        assert!(
            error.contains("\"team\"") && error.contains("/memory user"),
            "{error}"
        );
    }
}
