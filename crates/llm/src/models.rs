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
    fn ids_pass_through() {
        assert_eq!(
            resolve_model("claude-sonnet-4-5-20250929"),
            "claude-sonnet-4-5-20250929"
        );
        assert_eq!(resolve_model("my-proxy-model"), "my-proxy-model");
    }
}
