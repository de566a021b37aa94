//! Who answers a permission question: the seam every face fills in its own way.
//!
//! The engine decides *whether* to ask (rules, mode, hooks); a [`PermissionBroker`] decides
//! *how*: the interactive UI shows a dialog and the answer comes back as an
//! [`Op::PermissionAnswer`](crate::Op::PermissionAnswer), `cairn -p` has nobody to ask, an SDK
//! host answers `can_use_tool` over stdio, and a sub-agent asks through its parent's broker.

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use crate::{EventSender, PermissionAnswer};

/// A future a trait object can return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One call that needs someone's approval.
#[derive(Debug, Clone, PartialEq)]
pub struct PermissionQuestion {
    /// The id of the `tool_use` block asking to run.
    pub tool_use_id: String,
    /// The tool's canonical name.
    pub tool: String,
    /// The call's arguments, as they will run (after any hook rewrote them).
    pub input: Value,
    /// Why it needs approval, in words for the user.
    pub reason: String,
    /// The rule "don't ask again" would add, when there is one to offer.
    pub suggested_rule: Option<String>,
}

/// Answers permission questions for one face.
pub trait PermissionBroker: Send + Sync {
    /// Asks whoever can answer whether the call may run. `events` is the asking agent's
    /// sender: a broker that asks through the event stream emits the question there, so the
    /// face knows which agent asks. `None` when nobody can answer. The engine drops the future
    /// when the turn is interrupted; a broker forgets the question then.
    fn ask<'a>(
        &'a self,
        question: PermissionQuestion,
        events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>>;

    /// Whether this broker can ever get an answer. The gate words its verdict from it: where
    /// nobody can answer, a call that would be asked about is refused at once with the way to
    /// allow it, instead of waiting for an answer that cannot come. There is no default, so
    /// every broker says which it is.
    fn can_ask(&self) -> bool;

    /// An answer that arrived as an operation; returns whether a question was waiting for it.
    /// Brokers that do not ask through events have nothing waiting.
    fn answer(&self, _request_id: &str, _answer: PermissionAnswer) -> bool {
        false
    }
}

/// The broker where nobody can answer (`cairn -p` without a host): every question is
/// refused as unanswered.
#[derive(Debug, Clone, Copy, Default)]
pub struct NobodyToAsk;

impl PermissionBroker for NobodyToAsk {
    fn ask<'a>(
        &'a self,
        _question: PermissionQuestion,
        _events: &'a EventSender,
    ) -> BoxFuture<'a, Option<PermissionAnswer>> {
        Box::pin(std::future::ready(None))
    }

    fn can_ask(&self) -> bool {
        false
    }
}
