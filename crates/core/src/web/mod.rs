//! The web tools: `WebFetch` reads a page and answers a question about it through a side
//! request to the small model; `WebSearch` asks the provider's server-side search.
//!
//! They live in the engine crate rather than with the other built-in tools because both end
//! in a model request (a [`cairn_llm::SideModel`]), which the tools crate cannot make, and
//! both read the session's permission rules to know which closed hosts a rule opens.

mod address;
mod cache;
mod fetch;
mod fetch_tool;
mod markdown;
mod search_tool;

use std::path::Path;
use std::sync::Arc;

use cairn_llm::SideModel;
use cairn_policy::PermissionGate;
use cairn_policy::rules::{CallFacts, RuleKind, RuleSet};
use cairn_tools::{CompositeExecutor, ToolExecutor};

pub use address::{ClosedAddress, closed_address};
pub use cache::{CACHE_TTL, CachedPage, PageCache};
pub use fetch::{FetchError, FetchLimits, Fetched, Fetcher, HostRule, Page, fetch_url, rule_host};
pub use fetch_tool::{WEB_FETCH_TOOL, WebFetchTool};
pub use markdown::{MAX_MARKDOWN_CHARS, cut_to_fit, page_markdown};
pub use search_tool::{WEB_SEARCH_TOOL, WebSearchTool};

/// Whether an allow rule in force names `host` with a domain (`WebFetch(domain:host)`, or
/// `domain:*.parent` for a subdomain): a bare `WebFetch` allows fetching but opens no closed
/// address. A deny rule for the host wins, as it does at the gate.
pub fn rules_name_host(rules: &RuleSet, host: &str) -> bool {
    let authority = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.to_string()
    };
    let input = serde_json::json!({ "url": format!("https://{authority}/") });
    let facts = CallFacts {
        tool: WEB_FETCH_TOOL,
        input: &input,
        paths: &[],
        bash_commands: None,
        home: Path::new("/"),
        cwd: Path::new("/"),
    };
    rules
        .evaluate(&facts)
        .is_some_and(|rule| rule.kind == RuleKind::Allow && rule.text.contains('('))
}

/// [`rules_name_host`] over a session's gate, its settings' rules and this session's "don't
/// ask again" answers, read at each fetch so that a rule added later counts.
pub fn gate_host_rule(gate: Arc<PermissionGate>) -> HostRule {
    Arc::new(move |host: &str| {
        let settings = gate.rules();
        let origin = cairn_policy::rules::RuleOrigin::new("this session", "/");
        let (session, _) = RuleSet::new(
            gate.session_rules()
                .into_iter()
                .map(|text| (RuleKind::Allow, text, origin.clone())),
        );
        rules_name_host(&settings, host) || rules_name_host(&session, host)
    })
}

/// `tools` with the web tools after them: `WebFetch` over the session's `gate` (for the
/// hosts its rules name) answering through `side`, and `WebSearch` where `side`'s provider
/// searches the web (elsewhere it is not offered at all).
pub fn with_web_tools(
    tools: Arc<dyn ToolExecutor>,
    gate: Arc<PermissionGate>,
    side: SideModel,
) -> Arc<dyn ToolExecutor> {
    let mut executors: Vec<Arc<dyn ToolExecutor>> = vec![
        tools,
        Arc::new(WebFetchTool::new(gate_host_rule(gate), side.clone())),
    ];
    if side.offers_web_search() {
        executors.push(Arc::new(WebSearchTool::new(side)));
    } else {
        executors.push(Arc::new(search_tool::WebSearchUnavailable));
    }
    Arc::new(CompositeExecutor::new(executors))
}

/// An error and its causes, joined by `: `.
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use cairn_policy::rules::RuleOrigin;

    use super::*;

    fn rules(texts: &[(RuleKind, &str)]) -> RuleSet {
        let origin = RuleOrigin::new("--allowedTools", "/p");
        let (rules, errors) = RuleSet::new(
            texts
                .iter()
                .map(|(kind, text)| (*kind, text.to_string(), origin.clone())),
        );
        assert!(errors.is_empty(), "{errors:?}");
        rules
    }

    #[test]
    fn only_a_domain_rule_names_a_host() {
        let named = rules(&[(RuleKind::Allow, "WebFetch(domain:127.0.0.1)")]);
        assert!(rules_name_host(&named, "127.0.0.1"));
        assert!(!rules_name_host(&named, "localhost"));
        let bare = rules(&[(RuleKind::Allow, "WebFetch")]);
        assert!(!rules_name_host(&bare, "127.0.0.1"));
        let sub = rules(&[(RuleKind::Allow, "WebFetch(domain:*.internal.example)")]);
        assert!(rules_name_host(&sub, "wiki.internal.example"));
        let denied = rules(&[
            (RuleKind::Allow, "WebFetch(domain:10.0.0.1)"),
            (RuleKind::Deny, "WebFetch(domain:10.0.0.1)"),
        ]);
        assert!(!rules_name_host(&denied, "10.0.0.1"));
    }
}
