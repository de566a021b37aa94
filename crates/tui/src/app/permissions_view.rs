//! `/permissions`: the rules the permission gate applies, grouped by kind, each with the
//! settings file (or flag) it came from.

use cairn_policy::PermissionGate;
use cairn_policy::rules::RuleKind;

/// The rules in force, deny first (it wins), then ask, then allow, then this session's.
pub fn render(gate: &PermissionGate, mode: &str) -> String {
    let mut text = format!("Permission mode: {mode}");
    let rules = gate.rules().rules();
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
    text
}

fn title(kind: RuleKind) -> &'static str {
    match kind {
        RuleKind::Allow => "Allow",
        RuleKind::Ask => "Ask",
        RuleKind::Deny => "Deny",
    }
}
