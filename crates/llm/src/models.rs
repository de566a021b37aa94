//! Model names: the short aliases a user types and the ids the API expects.

/// The model used when none is chosen.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// Short names and the model ids they stand for.
pub const ALIASES: &[(&str, &str)] = &[
    ("opus", "claude-opus-4-5"),
    ("sonnet", "claude-sonnet-4-5"),
    ("haiku", "claude-haiku-4-5"),
];

/// The API model id for `name`: an alias (`opus`, `sonnet`, `haiku`, in any case) becomes its
/// model id; anything else is taken to be an id already and returned trimmed.
///
/// ```
/// use cairn_llm::models::resolve_model;
///
/// assert_eq!(resolve_model("opus"), "claude-opus-4-5");
/// assert_eq!(resolve_model("claude-3-5-haiku-20241022"), "claude-3-5-haiku-20241022");
/// ```
pub fn resolve_model(name: &str) -> String {
    let name = name.trim();
    ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, id)| id)
        .to_string()
}

/// The context window of Claude models, in tokens.
const CLAUDE_CONTEXT_WINDOW: u64 = 200_000;

/// How many tokens `model`'s context window holds, for the status line's "% context": every
/// Claude model takes 200K; another name (a proxy's model) is unknown.
///
/// ```
/// use cairn_llm::models::context_window;
///
/// assert_eq!(context_window("claude-opus-4-5"), Some(200_000));
/// assert_eq!(context_window("my-proxy-model"), None);
/// ```
pub fn context_window(model: &str) -> Option<u64> {
    resolve_model(model)
        .starts_with("claude-")
        .then_some(CLAUDE_CONTEXT_WINDOW)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn aliases_resolve() {
        assert_eq!(resolve_model("opus"), "claude-opus-4-5");
        assert_eq!(resolve_model("Sonnet"), "claude-sonnet-4-5");
        assert_eq!(resolve_model(" haiku "), "claude-haiku-4-5");
        assert_eq!(resolve_model(DEFAULT_MODEL), DEFAULT_MODEL);
    }

    #[test]
    fn context_windows_follow_the_model() {
        assert_eq!(context_window("sonnet"), Some(200_000));
        assert_eq!(context_window("claude-3-5-haiku-20241022"), Some(200_000));
        assert_eq!(context_window("gpt-4o"), None);
    }

    #[test]
    fn ids_pass_through() {
        assert_eq!(
            resolve_model("claude-sonnet-4-5-20250929"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(resolve_model("my-proxy-model"), "my-proxy-model");
    }
}
