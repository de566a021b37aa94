//! The control protocol's channel: requests cairn sends the SDK host (`can_use_tool`,
//! `hook_callback`, `mcp_message`) matched with the host's responses, and cairn's responses
//! to the host's requests. Every line goes out through the [`wire`](crate::wire) types.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::sync::oneshot;

use crate::output::print_line;
use crate::wire::{ControlCancel, ControlOutcome, ControlRequest, ControlResponse, Line};

/// Why a request to the host got no answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AskError {
    /// The host answered with an `error` response.
    Refused(String),
    /// Standard input closed before the answer came.
    Gone,
}

impl std::fmt::Display for AskError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AskError::Refused(error) => write!(f, "the SDK host answered with an error: {error}"),
            AskError::Gone => f.write_str("the SDK host closed standard input before answering"),
        }
    }
}

/// The open requests to the host, and the writer of every control line.
#[derive(Debug, Default)]
pub struct Channel {
    pending: Mutex<HashMap<String, oneshot::Sender<Result<Value, AskError>>>>,
    next_id: AtomicU64,
    /// Standard input closed: nothing can be answered any more.
    closed: std::sync::atomic::AtomicBool,
}

impl Channel {
    /// Sends `request` (an object with its `subtype`) and waits for the host's answer. When
    /// the caller stops waiting (the turn was interrupted) the host is told with a
    /// `control_cancel_request`.
    pub async fn request(&self, request: Value) -> Result<Value, AskError> {
        let request_id = format!(
            "cairn_req_{}",
            self.next_id.fetch_add(1, Ordering::Relaxed) + 1
        );
        let (answer, answered) = oneshot::channel();
        if self.closed.load(Ordering::SeqCst) {
            return Err(AskError::Gone);
        }
        self.lock().insert(request_id.clone(), answer);
        let mut guard = CancelOnDrop {
            channel: self,
            request_id: Some(request_id.clone()),
        };
        print_line(&Line::ControlRequest(ControlRequest {
            request_id,
            request,
        }));
        let answer = answered.await.unwrap_or(Err(AskError::Gone));
        guard.request_id = None;
        answer
    }

    /// Hands the host's response to the request waiting for it; returns whether one was.
    pub fn answer(&self, outcome: ControlOutcome) -> bool {
        let (request_id, answer) = match outcome {
            ControlOutcome::Success {
                request_id,
                response,
            } => (request_id, Ok(response)),
            ControlOutcome::Error { request_id, error } => {
                (request_id, Err(AskError::Refused(error)))
            }
        };
        match self.lock().remove(&request_id) {
            Some(waiting) => waiting.send(answer).is_ok(),
            None => false,
        }
    }

    /// Standard input closed: every open request fails, and new ones fail at once.
    pub fn close(&self) {
        self.closed.store(true, Ordering::SeqCst);
        for (_, waiting) in self.lock().drain() {
            let _ = waiting.send(Err(AskError::Gone));
        }
    }

    fn lock(
        &self,
    ) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Result<Value, AskError>>>> {
        self.pending
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Answers the host's request `request_id` with `response`.
pub fn respond(request_id: &str, response: Result<Value, String>) {
    let response = match response {
        Ok(response) => ControlOutcome::Success {
            request_id: request_id.to_owned(),
            response,
        },
        Err(error) => ControlOutcome::Error {
            request_id: request_id.to_owned(),
            error,
        },
    };
    print_line(&Line::ControlResponse(ControlResponse { response }));
}

/// Withdraws a request whose asker stopped waiting.
struct CancelOnDrop<'a> {
    channel: &'a Channel,
    request_id: Option<String>,
}

impl Drop for CancelOnDrop<'_> {
    fn drop(&mut self) {
        let Some(request_id) = self.request_id.take() else {
            return;
        };
        if self.channel.lock().remove(&request_id).is_some() {
            print_line(&Line::ControlCancelRequest(ControlCancel { request_id }));
        }
    }
}
