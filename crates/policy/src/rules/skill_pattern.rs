//! The specifier of a Skill rule: `Skill(changelog)`, `Skill(review:*)`.

/// The skills a Skill rule names, as Claude Code reads them: `Skill(changelog)` is that skill
/// exactly, `Skill(review:*)` every skill whose name starts with `review` (`review`,
/// `review-pr`). A leading `/` is dropped, as the Skill tool drops it from the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum SkillPattern {
    Exact(String),
    Prefix(String),
}

impl SkillPattern {
    /// Reads a Skill specifier.
    pub(crate) fn parse(spec: &str) -> Result<SkillPattern, String> {
        let spec = spec.trim().trim_start_matches('/');
        let (pattern, name): (fn(String) -> SkillPattern, &str) = match spec.strip_suffix(":*") {
            Some(prefix) => (SkillPattern::Prefix, prefix),
            None => (SkillPattern::Exact, spec),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | ':' | '.'))
        {
            return Err(format!(
                "`{spec}` is not a skill name; write a skill's name, as in `Skill(changelog)`, \
                 or a prefix, as in `Skill(review:*)`"
            ));
        }
        Ok(pattern(name.to_owned()))
    }

    /// Whether the skill a call names (a leading `/` dropped) is one of the pattern's.
    pub(crate) fn matches(&self, skill: &str) -> bool {
        let skill = skill.trim().trim_start_matches('/');
        match self {
            SkillPattern::Exact(name) => skill == name,
            SkillPattern::Prefix(prefix) => skill.starts_with(prefix.as_str()),
        }
    }
}

/// The skill a `Skill` call names: its `skill` (or `command`) field.
pub(crate) fn skill_of_input(input: &serde_json::Value) -> Option<String> {
    ["skill", "command"]
        .iter()
        .find_map(|field| input.get(field).and_then(serde_json::Value::as_str))
        .map(|name| name.trim().trim_start_matches('/').to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_exact_and_a_colon_star_is_a_prefix() {
        let exact = SkillPattern::parse("changelog").unwrap();
        assert!(exact.matches("changelog"));
        assert!(exact.matches("/changelog"));
        assert!(!exact.matches("changelog-old"));
        let prefix = SkillPattern::parse("/review:*").unwrap();
        assert_eq!(prefix, SkillPattern::Prefix("review".into()));
        assert!(prefix.matches("review"));
        assert!(prefix.matches("review-pr"));
        assert!(!prefix.matches("pre-review"));
        assert!(SkillPattern::parse("a b").is_err());
        assert!(SkillPattern::parse(":*").is_err());
    }

    #[test]
    fn the_call_names_its_skill_in_skill_or_command() {
        let skill = |input| skill_of_input(&input);
        assert_eq!(
            skill(serde_json::json!({"skill": "/changelog"})),
            Some("changelog".into())
        );
        assert_eq!(
            skill(serde_json::json!({"command": "review-pr"})),
            Some("review-pr".into())
        );
        assert_eq!(skill(serde_json::json!({})), None);
    }
}
