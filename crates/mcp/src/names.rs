//! The names MCP tools go by in cairn: `mcp__<server>__<tool>`, as Claude Code names them, so
//! permission rules and hooks written for it match.

use sha2::{Digest, Sha256};

/// The longest tool name the model providers accept.
pub const MAX_TOOL_NAME: usize = 64;

/// What a server or tool name becomes: every character outside `[A-Za-z0-9_-]` is `_`.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The name the model calls a server's tool by. A name past [`MAX_TOOL_NAME`] is cut and ends
/// in a short hash of the whole, so two long names stay apart.
pub fn tool_name(server: &str, tool: &str) -> String {
    let full = format!("mcp__{}__{}", sanitize(server), sanitize(tool));
    if full.len() <= MAX_TOOL_NAME {
        return full;
    }
    let digest = Sha256::digest(full.as_bytes());
    let hash: String = digest[..4]
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect();
    // The name is ASCII, so any byte index is a character boundary.
    format!("{}_{hash}", &full[..MAX_TOOL_NAME - 1 - hash.len()])
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn names_are_sanitised_and_bounded() {
        assert_eq!(tool_name("test", "echo"), "mcp__test__echo");
        assert_eq!(
            tool_name("my server", "get.issue"),
            "mcp__my_server__get_issue"
        );
        assert_eq!(tool_name("gh-1", "naïve"), "mcp__gh-1__na_ve");
        let long_a = tool_name("server", &"a".repeat(80));
        let long_b = tool_name("server", &format!("{}b", "a".repeat(79)));
        assert_eq!(long_a.len(), MAX_TOOL_NAME);
        assert_eq!(long_b.len(), MAX_TOOL_NAME);
        assert_ne!(long_a, long_b);
        assert!(long_a.starts_with("mcp__server__aaaa"), "{long_a}");
    }
}
