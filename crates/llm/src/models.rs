//! Model names: the short aliases a user types and the ids the API expects.

/// The model used when none is chosen.
pub const DEFAULT_MODEL: &str = "claude-sonnet-4-5";

/// Short names and the model ids they stand for.
pub const ALIASES: &[(&str, &str)] = &[
    ("opus", "claude-opus-4-5"),
    ("sonnet", "claude-sonnet-4-5"),
    ("haiku", "claude-haiku-4-5"),
];

/// The choice that depends on the permission mode: opus while planning, sonnet otherwise.
pub const OPUS_PLAN: &str = "opusplan";

/// The alias for [`DEFAULT_MODEL`] (Claude Code's `default`).
const DEFAULT_ALIAS: &str = "default";

/// The model choice `name` stands for: an alias (`opus`, `sonnet`, `haiku`, `default`, in any
/// case) becomes its model id; `opusplan` stays a choice, resolved per request by
/// [`model_for_mode`]; anything else is taken to be an id already and returned trimmed.
///
/// ```
/// use cairn_llm::models::resolve_model;
///
/// assert_eq!(resolve_model("opus"), "claude-opus-4-5");
/// assert_eq!(resolve_model("default"), "claude-sonnet-4-5");
/// assert_eq!(resolve_model("OpusPlan"), "opusplan");
/// assert_eq!(resolve_model("claude-3-5-haiku-20241022"), "claude-3-5-haiku-20241022");
/// ```
pub fn resolve_model(name: &str) -> String {
    let name = name.trim();
    if name.eq_ignore_ascii_case(OPUS_PLAN) {
        return OPUS_PLAN.to_string();
    }
    if name.eq_ignore_ascii_case(DEFAULT_ALIAS) {
        return DEFAULT_MODEL.to_string();
    }
    ALIASES
        .iter()
        .find(|(alias, _)| alias.eq_ignore_ascii_case(name))
        .map_or(name, |(_, id)| id)
        .to_string()
}

/// The model id a request goes to, for a session whose model choice is `choice` while the
/// permission mode is `mode`: `opusplan` is opus in plan mode and sonnet otherwise; any other
/// choice is resolved as [`resolve_model`] does.
///
/// ```
/// use cairn_llm::models::model_for_mode;
/// use cairn_protocol::PermissionMode;
///
/// assert_eq!(model_for_mode("opusplan", PermissionMode::Plan), "claude-opus-4-5");
/// assert_eq!(model_for_mode("opusplan", PermissionMode::AcceptEdits), "claude-sonnet-4-5");
/// assert_eq!(model_for_mode("haiku", PermissionMode::Plan), "claude-haiku-4-5");
/// ```
pub fn model_for_mode(choice: &str, mode: cairn_protocol::PermissionMode) -> String {
    let choice = resolve_model(choice);
    if choice != OPUS_PLAN {
        return choice;
    }
    match mode {
        cairn_protocol::PermissionMode::Plan => resolve_model("opus"),
        cairn_protocol::PermissionMode::Default
        | cairn_protocol::PermissionMode::AcceptEdits
        | cairn_protocol::PermissionMode::BypassPermissions
        | cairn_protocol::PermissionMode::DontAsk => resolve_model("sonnet"),
    }
}

/// A model's name as people say it (`Opus 4.5` for `claude-opus-4-5-20251101`), for the
/// status line; a name that is not a Claude model id is shown as it is.
///
/// ```
/// use cairn_llm::models::display_name;
///
/// assert_eq!(display_name("claude-sonnet-4-5-20250929"), "Sonnet 4.5");
/// assert_eq!(display_name("opus"), "Opus 4.5");
/// assert_eq!(display_name("claude-3-5-haiku-20241022"), "Haiku 3.5");
/// assert_eq!(display_name("my-proxy-model"), "my-proxy-model");
/// ```
pub fn display_name(model: &str) -> String {
    let id = model_for_mode(model, cairn_protocol::PermissionMode::Default);
    let Some(rest) = id.strip_prefix("claude-") else {
        return model.trim().to_string();
    };
    let mut family = None;
    let mut version = Vec::new();
    for part in rest.split('-') {
        match part.parse::<u32>() {
            // A date (20250929) ends the name.
            Ok(_) if part.len() >= 8 => break,
            Ok(_) => version.push(part),
            Err(_) if family.is_none() => family = Some(part),
            Err(_) => break,
        }
    }
    let Some(family) = family else {
        return model.trim().to_string();
    };
    let mut letters = family.chars();
    let family: String = letters
        .next()
        .map(|first| first.to_uppercase().chain(letters).collect())
        .unwrap_or_default();
    if version.is_empty() {
        family
    } else {
        format!("{family} {}", version.join("."))
    }
}

/// The context window of Claude models, in tokens.
const CLAUDE_CONTEXT_WINDOW: u64 = 200_000;
/// The window of the 1M-token variants (`sonnet[1m]`, `claude-sonnet-4-5-1m`).
const CLAUDE_LONG_CONTEXT_WINDOW: u64 = 1_000_000;

/// The suffixes that name a model's 1M-token variant, as Claude Code spells them.
const LONG_CONTEXT_SUFFIXES: &[&str] = &["[1m]", "-1m"];

/// The Claude model id behind `model` and whether it names the 1M-token variant: the suffix
/// is taken off before the alias is resolved, so `opus[1m]` is `claude-opus-4-5`, long.
fn claude_model(model: &str) -> Option<(String, bool)> {
    let name = model.trim().to_ascii_lowercase();
    let (base, long) = LONG_CONTEXT_SUFFIXES
        .iter()
        .find_map(|suffix| name.strip_suffix(suffix))
        .map_or((name.as_str(), false), |base| (base, true));
    // `opusplan`'s two models share the window and the output ceiling.
    let id = model_for_mode(base, cairn_protocol::PermissionMode::Default);
    id.starts_with("claude-").then_some((id, long))
}

/// How many tokens `model`'s context window holds, for the status line's "% context" and
/// the context pipeline's thresholds: every Claude model takes 200K, an id that names the
/// 1M variant (a `[1m]` or `-1m` suffix) 1M; another name (a proxy's model) is unknown.
///
/// ```
/// use cairn_llm::models::context_window;
///
/// assert_eq!(context_window("claude-opus-4-5"), Some(200_000));
/// assert_eq!(context_window("sonnet[1m]"), Some(1_000_000));
/// assert_eq!(context_window("my-proxy-model"), None);
/// ```
pub fn context_window(model: &str) -> Option<u64> {
    claude_model(model).map(|(_, long)| {
        if long {
            CLAUDE_LONG_CONTEXT_WINDOW
        } else {
            CLAUDE_CONTEXT_WINDOW
        }
    })
}

/// The most output tokens one answer of `model` may hold (the API's `max_tokens` ceiling), by
/// model family; `None` for a name that is not a Claude model. The families, newest first, so
/// `claude-3-5-haiku` is not read as a Claude 4 Haiku.
const MAX_OUTPUT_TOKENS: &[(&str, u32)] = &[
    ("claude-opus-4-5", 64_000),
    ("claude-opus-4", 32_000),
    ("claude-sonnet-4", 64_000),
    ("claude-haiku-4", 64_000),
    ("claude-3-7-sonnet", 64_000),
    ("claude-3-5-", 8_192),
    ("claude-3-", 4_096),
];

/// The output ceiling of any other Claude model (a newer one this table does not know yet).
const DEFAULT_CLAUDE_MAX_OUTPUT: u32 = 32_000;

/// How many tokens one answer of `model` may hold at most.
///
/// ```
/// use cairn_llm::models::max_output_tokens;
///
/// assert_eq!(max_output_tokens("sonnet"), Some(64_000));
/// assert_eq!(max_output_tokens("claude-3-5-haiku-20241022"), Some(8_192));
/// assert_eq!(max_output_tokens("my-proxy-model"), None);
/// ```
pub fn max_output_tokens(model: &str) -> Option<u32> {
    let (id, _) = claude_model(model)?;
    Some(
        MAX_OUTPUT_TOKENS
            .iter()
            .find(|(family, _)| id.starts_with(family))
            .map_or(DEFAULT_CLAUDE_MAX_OUTPUT, |(_, tokens)| *tokens),
    )
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
    fn opusplan_follows_the_mode_and_default_is_the_default_model() {
        use cairn_protocol::PermissionMode;

        let by_mode: Vec<(PermissionMode, String)> = PermissionMode::ALL
            .iter()
            .map(|&mode| (mode, model_for_mode("opusplan", mode)))
            .collect();
        assert_eq!(
            by_mode,
            vec![
                (PermissionMode::Default, "claude-sonnet-4-5".to_string()),
                (PermissionMode::AcceptEdits, "claude-sonnet-4-5".to_string()),
                (PermissionMode::Plan, "claude-opus-4-5".to_string()),
                (
                    PermissionMode::BypassPermissions,
                    "claude-sonnet-4-5".to_string()
                ),
                (PermissionMode::DontAsk, "claude-sonnet-4-5".to_string()),
            ]
        );
        assert_eq!(resolve_model(" Default "), DEFAULT_MODEL);
        assert_eq!(
            model_for_mode("default", PermissionMode::Plan),
            DEFAULT_MODEL
        );
        assert_eq!(context_window("opusplan"), Some(200_000));
        assert_eq!(max_output_tokens("opusplan"), Some(64_000));
    }

    #[test]
    fn context_windows_follow_the_model() {
        assert_eq!(context_window("sonnet"), Some(200_000));
        assert_eq!(context_window("claude-3-5-haiku-20241022"), Some(200_000));
        assert_eq!(context_window("gpt-4o"), None);
    }

    #[test]
    fn long_context_variants_are_named_by_their_id() {
        assert_eq!(context_window("sonnet[1m]"), Some(1_000_000));
        assert_eq!(context_window("claude-sonnet-4-5[1M]"), Some(1_000_000));
        assert_eq!(context_window("claude-sonnet-4-5-1m"), Some(1_000_000));
        assert_eq!(context_window("claude-sonnet-4-5-20250929"), Some(200_000));
        assert_eq!(context_window("gpt-4o[1m]"), None);
    }

    #[test]
    fn max_output_follows_the_family() {
        assert_eq!(max_output_tokens("opus"), Some(64_000));
        assert_eq!(max_output_tokens("claude-opus-4-1-20250805"), Some(32_000));
        assert_eq!(max_output_tokens("claude-sonnet-4-20250514"), Some(64_000));
        assert_eq!(max_output_tokens("haiku[1m]"), Some(64_000));
        assert_eq!(max_output_tokens("claude-3-7-sonnet-latest"), Some(64_000));
        assert_eq!(max_output_tokens("claude-3-5-haiku-20241022"), Some(8_192));
        assert_eq!(max_output_tokens("claude-3-haiku-20240307"), Some(4_096));
        assert_eq!(max_output_tokens("claude-future-9"), Some(32_000));
        assert_eq!(max_output_tokens("gpt-4o"), None);
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
