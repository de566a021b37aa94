//! The broker of a face that asks through the event stream: the interactive UI (and an SDK
//! host that answers with `PermissionAnswer` operations).
//!
//! A question is emitted as [`AgentEvent::PermissionRequested`] through the asking agent's
//! sender, so its address says which agent asks; the answer arrives as
//! `Op::PermissionAnswer` and the engine hands it to [`PermissionBroker::answer`]. Requests
//! are keyed by an id made here, so answers that arrive late or twice are ignored, and a
//! question whose turn was interrupted is forgotten.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cairn_protocol::{
    AgentEvent, BoxFuture, EventSender, PermissionAnswer, PermissionBroker, PermissionQuestion,
};
use tokio::sync::oneshot;

type Pending = Mutex<HashMap<String, oneshot::Sender<PermissionAnswer>>>;

/// Outstanding permission questions of one face.
#[derive(Debug, Default)]
pub struct AskThroughEvents {
    next_id: AtomicU64,
    pending: Arc<Pending>,
}

/// Forgets its question when the asking future is dropped unanswered.
struct Withdraw {
    pending: Arc<Pending>,
    id: String,
}

impl Drop for Withdraw {
    fn drop(&mut self) {
        lock(&self.pending).remove(&self.id);
    }
}

fn lock(
    pending: &Pending,
) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<PermissionAnswer>>> {
    pending
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl PermissionBroker for AskThroughEvents {
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        let id = format!("perm_{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let (sender, receiver) = oneshot::channel();
        lock(&self.pending).insert(id.clone(), sender);
        let guard = Withdraw {
            pending: self.pending.clone(),
            id: id.clone(),
        };
        events.emit(AgentEvent::PermissionRequested {
            request_id: id,
            tool_use_id: question.tool_use_id,
            tool: question.tool,
            input: question.input,
            reason: question.reason,
            suggested_rule: question.suggested_rule,
        });
        Box::pin(async move {
            let answer = receiver.await.ok();
            drop(guard);
            answer
        })
    }

    fn can_ask(&self) -> bool {
        true
    }

    fn answer(&self, request_id: &str, answer: PermissionAnswer) -> bool {
        match lock(&self.pending).remove(request_id) {
            Some(sender) => sender.send(answer).is_ok(),
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use cairn_protocol::CollectedEvents;

    use super::*;

    fn question() -> PermissionQuestion {
        PermissionQuestion {
            tool_use_id: "toolu_1".into(),
            tool: "Bash".into(),
            input: serde_json::json!({"command": "make"}),
            reason: "it runs make".into(),
            suggested_rule: None,
        }
    }

    fn request_id(events: &CollectedEvents) -> String {
        match events.take().pop().map(|envelope| envelope.event) {
            Some(AgentEvent::PermissionRequested { request_id, .. }) => request_id,
            other => panic!("expected a question, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn an_answer_reaches_its_question_once() {
        let broker = AskThroughEvents::default();
        let collected = Arc::new(CollectedEvents::default());
        let events = EventSender::new(collected.clone());
        let asking = broker.ask(question(), &events);
        let id = request_id(&collected);
        assert!(broker.answer(&id, PermissionAnswer::AllowOnce));
        assert!(
            !broker.answer(&id, PermissionAnswer::AllowOnce),
            "no second delivery"
        );
        assert_eq!(asking.await, Some(PermissionAnswer::AllowOnce));
        assert!(!broker.answer("perm_unknown", PermissionAnswer::AllowOnce));
    }

    #[tokio::test]
    async fn a_dropped_question_is_forgotten() {
        let broker = AskThroughEvents::default();
        let collected = Arc::new(CollectedEvents::default());
        let events = EventSender::new(collected.clone());
        drop(broker.ask(question(), &events));
        let id = request_id(&collected);
        assert!(!broker.answer(&id, PermissionAnswer::AllowOnce));
    }
}
