//! `/permissions`: the rules the permission gate applies, grouped by kind, each with the
//! settings file (or flag) it came from; and adding or removing a rule while the session runs.

use std::path::Path;

use cairn_config::rules_file;
use cairn_policy::PermissionGate;
use cairn_policy::rules::{Rule, RuleKind, RuleOrigin};

/// What `/permissions <arguments>` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action<'a> {
    List,
    /// Add a rule of this kind, kept in the project's local settings.
    Add(RuleKind, &'a str),
    /// Remove a rule wherever it came from.
    Remove(&'a str),
    /// Arguments that are none of the above.
    Usage,
}

/// How to use the command, for a wrong call.
pub const USAGE: &str = "Usage: /permissions (list the rules) · /permissions allow|ask|deny \
                         <rule> (add one, saved to .claude/settings.local.json) · \
                         /permissions remove <rule>";

pub fn parse(arguments: &str) -> Action<'_> {
    let arguments = arguments.trim();
    if arguments.is_empty() || arguments == "list" {
        return Action::List;
    }
    let (verb, rule) = match arguments.split_once(char::is_whitespace) {
        Some((verb, rule)) => (verb, rule.trim()),
        None => (arguments, ""),
    };
    if rule.is_empty() {
        return Action::Usage;
    }
    match verb {
        "allow" | "add" => Action::Add(RuleKind::Allow, rule),
        "ask" => Action::Add(RuleKind::Ask, rule),
        "deny" => Action::Add(RuleKind::Deny, rule),
        "remove" | "rm" | "delete" => Action::Remove(rule),
        _ => Action::Usage,
    }
}

/// Adds a rule to the gate and to `<cwd>/.claude/settings.local.json`; what to tell the user,
/// or why nothing changed.
pub fn add(
    gate: &PermissionGate,
    cwd: &Path,
    kind: RuleKind,
    text: &str,
) -> Result<String, String> {
    let path = rules_file::local_settings_path(cwd);
    let origin = RuleOrigin::new(path.display().to_string(), cwd);
    // Parsed before anything is saved: a malformed rule changes nothing. (Named after the
    // command, not the file: the file is not what is wrong.)
    Rule::parse(kind, text, RuleOrigin::new("/permissions", cwd)).map_err(|err| err.to_string())?;
    let saved = rules_file::save_rules(cwd, kind.as_str(), [text]);
    let added = gate
        .add_rule(kind, text, origin)
        .map_err(|err| err.to_string())?;
    if !added {
        return Ok(format!(
            "The {} rule {text} is in force already.",
            kind.as_str()
        ));
    }
    match saved {
        Ok(path) => Ok(format!(
            "Added the {} rule {text}, saved to {}",
            kind.as_str(),
            path.display()
        )),
        Err(err) => Ok(format!(
            "Added the {} rule {text} for this session only. {err}",
            kind.as_str()
        )),
    }
}

/// Removes a rule from the gate and from each settings file it was in.
pub fn remove(gate: &PermissionGate, text: &str) -> Result<String, String> {
    let removed = gate.remove_rule(text);
    if removed.is_empty() {
        return Err(format!(
            "No rule {text} is in force; /permissions lists the rules."
        ));
    }
    let mut report = Vec::new();
    for rule in removed {
        let source = &rule.origin.source;
        let kind = rule.kind.as_str();
        if source.ends_with(".json") && Path::new(source).is_absolute() {
            match rules_file::remove_rule(Path::new(source), &rule.text) {
                Ok(true) => report.push(format!("Removed the {kind} rule {text} from {source}")),
                Ok(false) => report.push(format!(
                    "Removed the {kind} rule {text} for this session ({source} no longer has it)"
                )),
                Err(err) => report.push(format!(
                    "Removed the {kind} rule {text} for this session only. {err}"
                )),
            }
        } else {
            report.push(format!(
                "Removed the {kind} rule {text} for this session (it came from {source})"
            ));
        }
    }
    Ok(report.join("\n"))
}

/// The rules in force, deny first (it wins), then ask, then allow, then this session's.
pub fn render(gate: &PermissionGate, mode: &str) -> String {
    let mut text = format!("Permission mode: {mode}");
    let rule_set = gate.rules();
    let rules = rule_set.rules();
    let session = gate.session_rules();
    for kind in [RuleKind::Deny, RuleKind::Ask, RuleKind::Allow] {
        let of_kind: Vec<_> = rules.iter().filter(|rule| rule.kind == kind).collect();
        let extra = if kind == RuleKind::Allow {
            session.len()
        } else {
            0
        };
        if of_kind.is_empty() && extra == 0 {
            text.push_str(&format!("\n{}: none", title(kind)));
            continue;
        }
        text.push_str(&format!("\n{}:", title(kind)));
        for rule in of_kind {
            text.push_str(&format!("\n  {}  ({})", rule.text, rule.origin.source));
        }
        if kind == RuleKind::Allow {
            for rule in &session {
                text.push_str(&format!("\n  {rule}  (this session)"));
            }
        }
    }
    text.push_str(
        "\nChange them with /permissions allow|ask|deny <rule> or /permissions remove <rule>.",
    );
    text
}

fn title(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Allow => "Allow",
        RuleKind::Ask => "Ask",
        RuleKind::Deny => "Deny",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_policy::PermissionMode;
    use cairn_policy::rules::RuleSet;
    use pretty_assertions::assert_eq;

    #[test]
    fn parses_what_the_user_asks() {
        assert_eq!(parse(""), Action::List);
        assert_eq!(parse(" list "), Action::List);
        assert_eq!(
            parse("allow Bash(npm test:*)"),
            Action::Add(RuleKind::Allow, "Bash(npm test:*)")
        );
        assert_eq!(
            parse("deny  Read(./.env) "),
            Action::Add(RuleKind::Deny, "Read(./.env)")
        );
        assert_eq!(
            parse("ask WebFetch"),
            Action::Add(RuleKind::Ask, "WebFetch")
        );
        assert_eq!(parse("remove Edit"), Action::Remove("Edit"));
        assert_eq!(parse("allow"), Action::Usage);
        assert_eq!(parse("frobnicate Edit"), Action::Usage);
    }

    #[test]
    fn added_rules_are_saved_and_removed_ones_leave_their_file() {
        let cwd = tempfile::tempdir().unwrap();
        let cwd = cwd.path();
        let project = cwd.join(".claude/settings.json");
        std::fs::create_dir_all(cwd.join(".claude")).unwrap();
        std::fs::write(&project, r#"{"permissions": {"allow": ["Read", "Edit"]}}"#).unwrap();
        let (rules, _) = RuleSet::new([
            (
                RuleKind::Allow,
                "Edit".to_string(),
                RuleOrigin::new(project.display().to_string(), cwd),
            ),
            (
                RuleKind::Allow,
                "Bash(ls:*)".to_string(),
                RuleOrigin::new("--allowedTools", cwd),
            ),
        ]);
        let gate = PermissionGate::new(
            PermissionMode::Default,
            rules,
            vec![cwd.to_path_buf()],
            cwd.to_path_buf(),
            cwd.to_path_buf(),
        );

        let said = add(&gate, cwd, RuleKind::Deny, "Bash(git push:*)").unwrap();
        assert!(said.contains("settings.local.json"), "{said}");
        let local = std::fs::read_to_string(cwd.join(".claude/settings.local.json")).unwrap();
        assert!(local.contains("Bash(git push:*)"), "{local}");
        assert!(render(&gate, "default").contains("Bash(git push:*)"));
        let said = add(&gate, cwd, RuleKind::Deny, "Bash(git push:*)").unwrap();
        assert!(said.contains("in force already"), "{said}");
        let listed = render(&gate, "default");
        assert_eq!(listed.matches("Bash(git push:*)").count(), 1, "{listed}");
        let error = add(&gate, cwd, RuleKind::Allow, "Bash(").unwrap_err();
        assert!(error.starts_with("/permissions: "), "{error}");
        assert!(error.contains("Bash("), "{error}");

        let said = remove(&gate, "Edit").unwrap();
        assert!(said.contains("settings.json"), "{said}");
        let kept = std::fs::read_to_string(&project).unwrap();
        assert!(kept.contains("Read") && !kept.contains("Edit"), "{kept}");
        let said = remove(&gate, "Bash(ls:*)").unwrap();
        assert!(said.contains("--allowedTools"), "{said}");
        let said = remove(&gate, "Bash(git push:*)").unwrap();
        assert!(said.contains("settings.local.json"), "{said}");
        assert!(remove(&gate, "Edit").is_err(), "nothing left to remove");
        assert!(gate.rules().is_empty());
    }
}
