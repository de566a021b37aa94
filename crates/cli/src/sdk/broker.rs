//! The SDK host as the one who answers: permission questions become `can_use_tool` control
//! requests, and the hooks it registered become `hook_callback` requests.

use std::sync::{Arc, OnceLock};

use cairn_core::SessionInput;
use cairn_policy::hooks::{CallbackFuture, HookCallback};
use cairn_protocol::{
    BoxFuture, EventSender, Op, PermissionAnswer, PermissionBroker, PermissionMode,
    PermissionQuestion,
};
use serde_json::{Value, json};

use super::control::Channel;

/// Asks the SDK host whether a call may run (`--permission-prompt-tool stdio`).
#[derive(Debug)]
pub struct HostBroker {
    channel: Arc<Channel>,
    /// The session's input, once it started: a denial with `interrupt` stops the turn, and
    /// an answer's `setMode` changes the mode.
    input: Arc<OnceLock<SessionInput>>,
}

impl HostBroker {
    pub fn new(channel: Arc<Channel>, input: Arc<OnceLock<SessionInput>>) -> Self {
        HostBroker { channel, input }
    }

    fn send(&self, op: Op) {
        if let Some(input) = self.input.get() {
            let _ = input.send(op);
        }
    }

    /// The answer the host gave, as the gate takes it. An answer that cannot be read is a
    /// refusal that says why, never an allowance.
    fn read_answer(&self, question: &PermissionQuestion, answer: &Value) -> PermissionAnswer {
        match answer.get("behavior").and_then(Value::as_str) {
            Some("allow") => {
                let input = match answer.get("updatedInput") {
                    Some(input @ Value::Object(_)) => input.clone(),
                    _ => question.input.clone(),
                };
                let mut rules = Vec::new();
                let mut mode = None;
                for update in answer
                    .get("updatedPermissions")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    match update.get("type").and_then(Value::as_str) {
                        Some("addRules")
                            if update.get("behavior").and_then(Value::as_str) == Some("allow") =>
                        {
                            rules.extend(added_rules(update));
                        }
                        Some("setMode") => {
                            // Set with the answer, so the call itself runs under it.
                            mode = update
                                .get("mode")
                                .and_then(Value::as_str)
                                .and_then(|mode| mode.parse::<PermissionMode>().ok())
                                .or(mode);
                        }
                        _ => {}
                    }
                }
                PermissionAnswer::AllowWith {
                    updated_input: Some(input),
                    rules,
                    mode,
                }
            }
            Some("deny") => {
                if answer.get("interrupt").and_then(Value::as_bool) == Some(true) {
                    self.send(Op::Interrupt);
                }
                PermissionAnswer::Deny {
                    message: answer
                        .get("message")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                }
            }
            _ => PermissionAnswer::Deny {
                message: Some(format!(
                    "(cairn could not read the SDK host's can_use_tool answer {answer}: \
                     expected \"behavior\": \"allow\" or \"deny\")"
                )),
            },
        }
    }
}

/// The rules of an `addRules` update, in Claude Code's rule syntax.
fn added_rules(update: &Value) -> Vec<String> {
    update
        .get("rules")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|rule| {
            let tool = rule.get("toolName")?.as_str()?;
            Some(match rule.get("ruleContent").and_then(Value::as_str) {
                Some(content) => format!("{tool}({content})"),
                None => tool.to_owned(),
            })
        })
        .collect()
}

/// The gate's suggested rule as the SDKs' `permission_suggestions`.
fn suggestions(rule: Option<&str>) -> Value {
    let Some(rule) = rule else {
        return json!([]);
    };
    let (tool, content) = match rule.split_once('(') {
        Some((tool, rest)) => (tool, rest.strip_suffix(')')),
        None => (rule, None),
    };
    let mut entry = json!({"toolName": tool});
    if let Some(content) = content {
        entry["ruleContent"] = json!(content);
    }
    json!([{"type": "addRules", "rules": [entry], "behavior": "allow", "destination": "session"}])
}

impl PermissionBroker for HostBroker {
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        _events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        Box::pin(async move {
            let request = json!({
                "subtype": "can_use_tool",
                "tool_name": question.tool,
                "input": question.input,
                "tool_use_id": question.tool_use_id,
                "permission_suggestions": suggestions(question.suggested_rule.as_deref()),
                "blocked_path": null,
                "decision_reason": question.reason,
                "agent_id": null,
            });
            match self.channel.request(request).await {
                Ok(answer) => Some(self.read_answer(&question, &answer)),
                Err(error) => Some(PermissionAnswer::Deny {
                    message: Some(format!("(cairn could not ask the SDK host: {error})")),
                }),
            }
        })
    }

    fn can_ask(&self) -> bool {
        true
    }
}

/// Answers the hooks the host registered in `initialize` with `hook_callback` requests.
#[derive(Debug)]
pub struct HostHooks {
    channel: Arc<Channel>,
}

impl HostHooks {
    pub fn new(channel: Arc<Channel>) -> Self {
        HostHooks { channel }
    }
}

impl HookCallback for HostHooks {
    fn call<'a>(
        &'a self,
        callback_id: &'a str,
        input: &'a Value,
        tool_use_id: Option<&'a str>,
    ) -> CallbackFuture<'a> {
        Box::pin(async move {
            self.channel
                .request(json!({
                    "subtype": "hook_callback",
                    "callback_id": callback_id,
                    "input": input,
                    "tool_use_id": tool_use_id,
                }))
                .await
                .map_err(|error| error.to_string())
        })
    }
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;

    #[test]
    fn suggested_rules_become_add_rules_updates_and_back() {
        let suggested = suggestions(Some("Bash(npm test:*)"));
        assert_eq!(
            suggested,
            json!([{"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "npm test:*"}],
                    "behavior": "allow", "destination": "session"}])
        );
        assert_eq!(
            added_rules(&suggested[0]),
            vec!["Bash(npm test:*)".to_owned()]
        );
        assert_eq!(
            added_rules(&suggestions(Some("Write"))[0]),
            vec!["Write".to_owned()]
        );
    }
}

/// Carries JSON-RPC to the host's in-process MCP servers in `mcp_message` requests.
#[derive(Debug)]
pub struct HostMcp {
    channel: Arc<Channel>,
}

impl HostMcp {
    pub fn new(channel: Arc<Channel>) -> Self {
        HostMcp { channel }
    }
}

impl cairn_mcp::SdkMcpChannel for HostMcp {
    fn exchange(&self, server: &str, message: Value) -> cairn_mcp::ExchangeFuture {
        let channel = self.channel.clone();
        let request = json!({"subtype": "mcp_message", "server_name": server, "message": message});
        Box::pin(async move {
            let answer = channel
                .request(request)
                .await
                .map_err(|error| error.to_string())?;
            answer
                .get("mcp_response")
                .cloned()
                .ok_or_else(|| format!("the mcp_message answer has no \"mcp_response\": {answer}"))
        })
    }
}
