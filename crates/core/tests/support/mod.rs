//! What the engine tests share: a model client that answers from a script.

#![allow(
    dead_code,
    reason = "each test file uses a different part of the support"
)]
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a test should fail loudly"
)]

pub mod gated;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use cairn_llm::{ModelClient, ModelError, ModelEvent, ModelRequest, ModelResponse};
use cairn_protocol::{ContentBlock, StopReason, Usage};
use tokio_util::sync::CancellationToken;

/// What the scripted client does for one request.
pub enum Step {
    Respond(ModelResponse),
    /// Streams one delta, then waits until cancelled.
    Hang,
}

#[derive(Default)]
pub struct ScriptedClient {
    pub steps: Mutex<VecDeque<Step>>,
    pub requests: Mutex<Vec<ModelRequest>>,
}

impl ScriptedClient {
    pub fn new(steps: Vec<Step>) -> Arc<Self> {
        Arc::new(ScriptedClient {
            steps: Mutex::new(steps.into()),
            requests: Mutex::default(),
        })
    }
}

#[async_trait]
impl ModelClient for ScriptedClient {
    async fn stream(
        &self,
        request: &ModelRequest,
        on_event: &mut (dyn FnMut(ModelEvent) + Send),
        cancel: &CancellationToken,
    ) -> Result<ModelResponse, ModelError> {
        self.requests.lock().unwrap().push(request.clone());
        let step = self
            .steps
            .lock()
            .unwrap()
            .pop_front()
            .expect("a scripted step");
        match step {
            Step::Respond(response) => {
                for block in &response.content {
                    if let ContentBlock::Text { text } = block {
                        on_event(ModelEvent::TextDelta(text.clone()));
                    }
                }
                Ok(response)
            }
            Step::Hang => {
                on_event(ModelEvent::TextDelta("partial".into()));
                cancel.cancelled().await;
                Err(ModelError::Cancelled)
            }
        }
    }
}

pub fn response(content: Vec<ContentBlock>, stop_reason: StopReason) -> ModelResponse {
    ModelResponse {
        id: "msg_1".into(),
        model: "claude-sonnet-4-5".into(),
        content,
        stop_reason: Some(stop_reason),
        usage: Usage {
            input_tokens: 100,
            output_tokens: 10,
            ..Usage::default()
        },
        malformed_tool_inputs: Vec::new(),
    }
}
