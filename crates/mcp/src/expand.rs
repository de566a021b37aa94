//! `${VAR}` and `${VAR:-default}` in a server's command, arguments, environment, URL and
//! headers, as Claude Code expands them.

use crate::config::{HttpConfig, ServerConfig, StdioConfig};

/// A variable a server's configuration needs and the environment does not have.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the variable ${{{name}}} in its `{field}` is not set (write ${{{name}:-default}} for a default)"
)]
pub struct MissingVariable {
    /// The variable.
    pub name: String,
    /// Where it is used (`args`, `env.TOKEN`, `headers.Authorization`).
    pub field: String,
}

/// The configuration with every variable replaced by its value from the environment.
pub fn expand_server(config: &ServerConfig) -> Result<ServerConfig, MissingVariable> {
    expand_server_with(config, &|name| std::env::var(name).ok())
}

pub(crate) fn expand_server_with(
    config: &ServerConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<ServerConfig, MissingVariable> {
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

fn expand_http(
    http: &HttpConfig,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<HttpConfig, MissingVariable> {
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
fn expand(
    value: &str,
    field: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, MissingVariable> {
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
            match (lookup(name), default) {
                (Some(found), _) => out.push_str(&found),
                (None, Some(default)) => out.push_str(default),
                (None, None) => {
                    return Err(MissingVariable {
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

    fn lookup(name: &str) -> Option<String> {
        match name {
            "HOME" => Some("/home/me".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
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
            let expected = expected.map(String::from).map_err(|name| MissingVariable {
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
        let with_token = |name: &str| (name == "TOKEN").then(|| "t0k".to_string());
        let ServerConfig::Http(http) = expand_server_with(&config, &with_token).unwrap() else {
            panic!("not http");
        };
        assert_eq!(http.url, "https://example.com/mcp");
        assert_eq!(http.headers["Authorization"], "Bearer t0k");
    }
}
