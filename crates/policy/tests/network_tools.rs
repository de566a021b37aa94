//! WebFetch and WebSearch reach the network: they change nothing here, yet every mode short
//! of `bypassPermissions` asks before them unless a rule allows them, plan mode included.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

mod security_support;

use cairn_policy::rules::RuleKind;
use cairn_policy::{Asking, CallInfo, PermissionMode, Verdict};
use cairn_protocol::DecisionSource;
use pretty_assertions::assert_eq;
use serde_json::json;

fn fetch_verdict(mode: PermissionMode, rules: &[(RuleKind, &str)], asking: Asking) -> Verdict {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let gate = security_support::gate_over(&workspace, &workspace, mode, rules, asking);
    gate.check(&CallInfo {
        tool: "WebFetch",
        input: &json!({"url": "https://docs.rs/serde", "prompt": "What is it?"}),
        paths: &[],
        read_only: true,
        destructive: false,
        asking,
    })
}

#[test]
fn a_fetch_asks_in_every_mode_but_bypass_and_offers_its_domain_rule() {
    for mode in [
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
    ] {
        assert_eq!(
            fetch_verdict(mode, &[], Asking::Interactive),
            Verdict::Ask {
                reason: "WebFetch reaches the network.".into(),
                suggested_rule: Some("WebFetch(domain:docs.rs)".into()),
            },
            "{mode:?}"
        );
    }
    assert_eq!(
        fetch_verdict(PermissionMode::BypassPermissions, &[], Asking::Interactive),
        Verdict::Allow {
            source: DecisionSource::Mode,
            rule: None
        }
    );
}

#[test]
fn a_domain_rule_allows_the_fetch_even_where_nobody_can_be_asked() {
    assert_eq!(
        fetch_verdict(
            PermissionMode::Default,
            &[(RuleKind::Allow, "WebFetch(domain:docs.rs)")],
            Asking::NonInteractive
        ),
        Verdict::Allow {
            source: DecisionSource::Rule,
            rule: Some("WebFetch(domain:docs.rs)".into())
        }
    );
    let refused = fetch_verdict(PermissionMode::Default, &[], Asking::NonInteractive);
    let Verdict::Deny { reason, .. } = refused else {
        panic!("{refused:?}")
    };
    assert!(
        reason.starts_with("WebFetch reaches the network.")
            && reason.contains("`WebFetch(domain:docs.rs)`"),
        "{reason}"
    );
}
