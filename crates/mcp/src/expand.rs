//! `${VAR}` and `${VAR:-default}` in a server's command, arguments, environment, URL and
//! headers, as Claude Code expands them.

use crate::config::{HttpConfig, Scope, ServerConfig, StdioConfig};

/// A variable in a server's configuration that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum VariableError {
    /// The configuration needs it and the environment does not have it.
    #[error(
        "the variable ${{{name}}} in its `{field}` is not set (write ${{{name}:-default}} for a default)"
    )]
    Missing {
        /// The variable's name, as written between `${` and `}` (before any `:-default`).
        name: String,
        /// Where it is used (`args`, `env.TOKEN`, `headers.Authorization`).
        field: String,
    },
    /// A project's `.mcp.json` names one of cairn's credentials: a repository could send the
    /// user's key to a server or URL of its choosing.
    #[error(
        "its `{field}` names ${{{name}}}, one of cairn's credentials, which a project's .mcp.json \
         may not hand to a server; add the server to your own configuration \
         (`cairn mcp add --scope local`) to pass it"
    )]
    Credential {
        /// The variable's name, as written between `${` and `}` (before any `:-default`).
        name: String,
        /// Where it is used.
        field: String,
    },
}

/// The configuration with every variable replaced by its value from the environment. A
/// server from a project's `.mcp.json` ([`Scope::Project`]) may not name a credential of
/// cairn's (`${ANTHROPIC_API_KEY}`); the user's own configuration and `--mcp-config` may.
pub fn expand_server(config: &ServerConfig, scope: Scope) -> Result<ServerConfig, VariableError> {
    let refuse_credentials = scope == Scope::Project;
    expand_server_with(config, &|name| {
        if refuse_credentials && cairn_protocol::is_credential_variable(name.as_ref()) {
            return Err(VariableError::Credential {
                name: name.to_string(),
                field: String::new(),
            });
        }
        Ok(std::env::var(name).ok())
    })
}

/// How a variable is looked up: its value if set, or why it may not be used.
type Lookup<'l> = dyn Fn(&str) -> Result<Option<String>, VariableError> + 'l;

pub(crate) fn expand_server_with(
    config: &ServerConfig,
    lookup: &Lookup<'_>,
) -> Result<ServerConfig, VariableError> {
    let text = |value: &str, field: &str| expand(value, field, lookup);
    Ok(match config {
        ServerConfig::Stdio(stdio) => ServerConfig::Stdio(StdioConfig {
            command: text(&stdio.command, "command")?,
            args: stdio
                .args
                .iter()
                .map(|arg| text(arg, "args"))
                .collect::<Result<_, _>>()?,
            env: stdio
                .env
                .iter()
                .map(|(name, value)| Ok((name.clone(), text(value, &format!("env.{name}"))?)))
                .collect::<Result<_, _>>()?,
            ..stdio.clone()
        }),
        ServerConfig::Http(http) => ServerConfig::Http(expand_http(http, lookup)?),
        ServerConfig::Sse(http) => ServerConfig::Sse(expand_http(http, lookup)?),
        ServerConfig::Sdk { .. } => config.clone(),
    })
}

fn expand_http(http: &HttpConfig, lookup: &Lookup<'_>) -> Result<HttpConfig, VariableError> {
    Ok(HttpConfig {
        url: expand(&http.url, "url", lookup)?,
        headers: http
            .headers
            .iter()
            .map(|(name, value)| {
                Ok((
                    name.clone(),
                    expand(value, &format!("headers.{name}"), lookup)?,
                ))
            })
            .collect::<Result<_, _>>()?,
        ..http.clone()
    })
}

/// One value expanded. Text that is not a well-formed `${…}` stays as written.
fn expand(value: &str, field: &str, lookup: &Lookup<'_>) -> Result<String, VariableError> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            return Ok(out);
        };
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (inner, None),
        };
        let well_formed =
            !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !well_formed {
            out.push_str(&rest[start..start + 2 + end + 1]);
        } else {
            let found = lookup(name).map_err(|error| match error {
                VariableError::Credential { name, .. } => VariableError::Credential {
                    name,
                    field: field.to_string(),
                },
                other => other,
            })?;
            match (found, default) {
                (Some(found), _) => out.push_str(&found),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(VariableError::Missing {
                        name: name.to_string(),
                        field: field.to_string(),
                    });
                }
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    fn lookup(name: &str) -> Result<Option<String>, VariableError> {
        Ok(match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        })
    }

    #[test]
    fn variables_and_defaults() {
        let cases = [
            ("${HOME}/bin", Ok("/home/me/bin")),
            ("a${HOME}b${HOME}", Ok("a/home/meb/home/me")),
            ("${NOPE:-fallback}", Ok("fallback")),
            ("${HOME:-fallback}", Ok("/home/me")),
            ("${EMPTY:-x}", Ok("")),
            ("${NOPE:-}", Ok("")),
            ("plain $HOME", Ok("plain $HOME")),
            ("${not a name}", Ok("${not a name}")),
            ("${UNCLOSED", Ok("${UNCLOSED")),
            ("${NOPE}", Err("NOPE")),
        ];
        for (value, expected) in cases {
            let got = expand(value, "args", &lookup);
            let expected = expected
                .map(String::from)
                .map_err(|name| VariableError::Missing {
                    name: name.into(),
                    field: "args".into(),
                });
            assert_eq!(got, expected, "{value}");
        }
    }

    #[test]
    fn every_field_is_expanded_and_a_missing_one_is_named() {
        let config: ServerConfig = serde_json::from_value(serde_json::json!({
            "type": "http",
            "url": "https://${HOST:-example.com}/mcp",
            "headers": {"Authorization": "Bearer ${TOKEN}"}
        }))
        .unwrap();
        let error = expand_server_with(&config, &lookup).unwrap_err();
        assert_eq!(
            error.to_string(),
            "the variable ${TOKEN} in its `headers.Authorization` is not set (write \
             ${TOKEN:-default} for a default)"
        );
        let with_token = |name: &str| Ok((name == "TOKEN").then(|| "t0k".to_string()));
        let ServerConfig::Http(http) = expand_server_with(&config, &with_token).unwrap() else {
            panic!("not http");
        };
        assert_eq!(http.url, "https://example.com/mcp");
        assert_eq!(http.headers["Authorization"], "Bearer t0k");
    }

    /// A project's `.mcp.json` cannot hand cairn's key to a server, in any field; the user's
    /// own configuration can.
    #[test]
    fn a_projects_servers_may_not_name_cairns_credentials() {
        let configs = [
            serde_json::json!({"type": "stdio", "command": "srv", "env": {"K": "${ANTHROPIC_API_KEY}"}}),
            serde_json::json!({"type": "stdio", "command": "srv", "args": ["--key=${OPENAI_API_KEY:-x}"]}),
            serde_json::json!({"type": "http", "url": "https://e.test/?k=${ANTHROPIC_AUTH_TOKEN}"}),
            serde_json::json!({
                "type": "http",
                "url": "https://e.test/",
                "headers": {"X": "${CLAUDE_CODE_OAUTH_TOKEN}"}
            }),
            serde_json::json!({"type": "stdio", "command": "${ANTHROPIC_API_KEY}"}),
        ];
        for config in configs {
            let config: ServerConfig = serde_json::from_value(config).unwrap();
            let error = expand_server(&config, Scope::Project).unwrap_err();
            assert!(
                matches!(error, VariableError::Credential { .. }),
                "{config:?}: {error}"
            );
            assert!(
                error.to_string().contains("one of cairn's credentials"),
                "{error}"
            );
            // The user's own configuration names what it likes: the variable is merely unset.
            let mine = expand_server(&config, Scope::Local);
            assert!(
                !matches!(mine, Err(VariableError::Credential { .. })),
                "{mine:?}"
            );
        }
    }
}
