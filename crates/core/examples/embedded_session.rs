//! A program that runs a cairn session inside itself: its own tool, its own permission
//! broker, the engine and its governance from `cairn-core`, and a model server.
//!
//! The model here is cairn's scripted server (so the example runs anywhere, without a key):
//! it answers the first request with a call of the program's `Remember` tool and the second
//! with text. A real program points [`AnthropicConfig`] (or an OpenAI-compatible client) at
//! a real endpoint instead.
//!
//! Run it with `cargo run -p cairn-core --example embedded_session`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use cairn_context::StandardPipeline;
use cairn_core::assembly::Turn;
use cairn_core::{EndReason, EngineConfig, Governance, SessionHost, SessionParts, StartSource};
use cairn_llm::{AnthropicClient, AnthropicConfig};
use cairn_policy::hooks::{HookCommon, HookConfig, HookRunner};
use cairn_policy::rules::RuleSet;
use cairn_policy::{PermissionGate, PermissionMode};
use cairn_protocol::{
    AgentEvent, BoxFuture, ContentBlock, EventSender, PermissionAnswer, PermissionBroker,
    PermissionQuestion, SystemPrompt,
};
use cairn_test_support::{Reply, ScriptedServer};
use cairn_tools::{
    Access, Concurrency, Destructiveness, Safety, Tool, ToolContext, ToolOutput, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

/// The program's own tool: keeps a note in the program's memory.
struct Remember {
    notes: Arc<Mutex<Vec<String>>>,
}

/// What the model passes to `Remember`.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    /// The note to keep.
    text: String,
}

#[async_trait::async_trait]
impl Tool for Remember {
    type Input = Note;

    fn name(&self) -> &'static str {
        "Remember"
    }

    fn description(&self) -> String {
        "Keeps a short note for the program that runs this session.".into()
    }

    /// It changes the program's state, so the permission gate asks before it runs.
    fn safety(&self, _: &Note, _: &ToolContext) -> Safety {
        Safety {
            access: Access::Writes,
            destructive: Destructiveness::Harmless,
            concurrency: Concurrency::Exclusive,
        }
    }

    fn touched_paths(&self, _: &Note, _: &ToolContext) -> Vec<PathBuf> {
        Vec::new()
    }

    async fn run(&self, note: Note, _: &ToolContext, _: &CancellationToken) -> ToolOutput {
        let mut notes = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        notes.push(note.text);
        ToolOutput::text(format!("Kept. {} notes so far.", notes.len()))
    }
}

/// The program's own broker: it answers every question itself, allowing `Remember` and
/// nothing else, and keeps the questions it was asked.
#[derive(Default)]
struct ProgramBroker {
    asked: Mutex<Vec<String>>,
}

impl PermissionBroker for ProgramBroker {
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        _events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        let answer = if question.tool == "Remember" {
            PermissionAnswer::AllowOnce
        } else {
            PermissionAnswer::Deny {
                message: Some("This program allows only Remember.".into()),
            }
        };
        self.asked
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(question.tool);
        Box::pin(std::future::ready(Some(answer)))
    }

    fn can_ask(&self) -> bool {
        true
    }
}

/// What the session did.
#[derive(Debug)]
pub struct Outcome {
    /// The model's final answer.
    pub answer: String,
    /// The notes the tool kept.
    pub notes: Vec<String>,
    /// The tools the broker was asked about.
    pub asked: Vec<String>,
    /// How many requests the model server received.
    pub requests: usize,
}

/// Runs one turn of a session in `workspace` against a scripted model server.
pub async fn run(workspace: &Path) -> Result<Outcome, Box<dyn std::error::Error>> {
    let server = ScriptedServer::start();
    server.push(Reply::tool_use(
        "toolu_1",
        "Remember",
        serde_json::json!({"text": "the build uses make"}),
    ));
    server.push(Reply::text("I noted that the build uses make."));
    let url = server.url();
    let client = AnthropicClient::new(AnthropicConfig::from_vars(|name| match name {
        "ANTHROPIC_API_KEY" => Some("sk-example".into()),
        "ANTHROPIC_BASE_URL" => Some(url.clone()),
        _ => None,
    })?)?;

    // Governance: a gate in the default mode (a change is asked about) and no hooks.
    let gate = PermissionGate::new(
        PermissionMode::Default,
        RuleSet::default(),
        vec![workspace.to_path_buf()],
        workspace.to_path_buf(),
        workspace.to_path_buf(),
    );
    let governance = Governance::new(
        Arc::new(gate),
        Arc::new(HookRunner::new(
            HookConfig::default(),
            workspace.to_path_buf(),
        )),
        HookCommon::default(),
    );

    let notes = Arc::new(Mutex::new(Vec::new()));
    let context = ToolContext::new(workspace.to_path_buf());
    let tool_state = context.session.clone();
    let mut tools = ToolRegistry::new(context);
    tools.register(Remember {
        notes: notes.clone(),
    });
    let broker = Arc::new(ProgramBroker::default());
    let host = SessionHost::new(
        SessionParts {
            client: Arc::new(client),
            tools: Arc::new(tools),
            config: EngineConfig {
                model: "claude-sonnet-4-5".into(),
                system_prompt: Arc::new(SystemPrompt {
                    static_part: "You help the program keep notes.".into(),
                    dynamic_part: String::new(),
                }),
                max_requests: Some(10),
                max_output_tokens: 1000,
                pipeline: Arc::new(StandardPipeline::new(workspace.join("tool-results"))),
                governance,
                recall: None,
            },
            history: Vec::new(),
            log: None,
            tool_state,
            agents: None,
        },
        broker.clone(),
    );

    let mut session = host.start(StartSource::Startup).await;
    session
        .input()
        .submit(Turn::message(vec![ContentBlock::text(
            "Remember that the build uses make.",
        )]))?;
    let mut answer = String::new();
    while let Some(envelope) = session.next_event().await {
        if let AgentEvent::TurnFinished(summary) = envelope.event {
            answer = summary.result;
            break;
        }
    }
    session.end(EndReason::Other).await;
    let notes = notes.lock().unwrap_or_else(|p| p.into_inner()).clone();
    let asked = broker
        .asked
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .clone();
    Ok(Outcome {
        answer,
        notes,
        asked,
        requests: server.requests().len(),
    })
}

#[allow(
    dead_code,
    reason = "the test includes this file and calls `run` itself"
)]
#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let workspace = std::env::temp_dir().join(format!("cairn-example-{}", std::process::id()));
    std::fs::create_dir_all(&workspace)?;
    let outcome = run(&workspace).await;
    std::fs::remove_dir_all(&workspace)?;
    let outcome = outcome?;
    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "answer: {}", outcome.answer)?;
    writeln!(stdout, "notes kept: {:?}", outcome.notes)?;
    writeln!(stdout, "the broker was asked about: {:?}", outcome.asked)?;
    Ok(())
}
