//! MCP servers that live inside the program driving cairn (the Agent SDKs' in-process
//! servers, configured as `{"type": "sdk", "name": …}`): their JSON-RPC travels through that
//! program's control channel instead of a pipe or HTTP. [`SdkTransport`] is the rmcp
//! transport over an [`SdkMcpChannel`] the face fills in, so these servers go through the same
//! client, tool naming and gate as every other.

use std::borrow::Cow;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// What an [`SdkMcpChannel`] exchange returns: the server's JSON-RPC answer.
pub type ExchangeFuture = Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'static>>;

/// Carries one JSON-RPC message to an in-process server of the host and brings back its
/// answer (for a notification, an acknowledgement to ignore).
pub trait SdkMcpChannel: Send + Sync + std::fmt::Debug {
    /// Sends `message` to the host's server `server`; resolves to its JSON-RPC reply.
    fn exchange(&self, server: &str, message: Value) -> ExchangeFuture;
}

/// The message could not be encoded for the channel.
#[derive(Debug, thiserror::Error)]
#[error("cannot encode a message for the SDK server {server}: {message}")]
pub struct SdkTransportError {
    server: String,
    message: String,
}

/// An rmcp client transport to the host's in-process server `server`.
#[derive(Debug)]
pub struct SdkTransport {
    server: String,
    channel: Arc<dyn SdkMcpChannel>,
    replies: mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleClient>>,
    reply_sender: mpsc::UnboundedSender<RxJsonRpcMessage<RoleClient>>,
}

impl SdkTransport {
    /// A transport to the host's server `server` over `channel`.
    pub fn new(server: impl Into<String>, channel: Arc<dyn SdkMcpChannel>) -> SdkTransport {
        let (reply_sender, replies) = mpsc::unbounded_channel();
        SdkTransport {
            server: server.into(),
            channel,
            replies,
            reply_sender,
        }
    }
}

impl Transport<RoleClient> for SdkTransport {
    type Error = SdkTransportError;

    fn name() -> Cow<'static, str> {
        "sdk".into()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let encoded = serde_json::to_value(&item).map_err(|error| SdkTransportError {
            server: self.server.clone(),
            message: error.to_string(),
        });
        let server = self.server.clone();
        let channel = self.channel.clone();
        let replies = self.reply_sender.clone();
        async move {
            let message = encoded?;
            // Only a request waits for an answer; a notification's is an acknowledgement.
            let id = message
                .get("id")
                .filter(|_| message.get("method").is_some())
                .cloned();
            let answer = channel.exchange(&server, message).await;
            let Some(id) = id else {
                return Ok(());
            };
            let reply = match answer {
                Ok(reply) => reply,
                Err(error) => json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32603, "message": format!("the SDK host could not answer: {error}")}}),
            };
            let parsed = match serde_json::from_value(reply) {
                Ok(parsed) => Ok(parsed),
                Err(error) => serde_json::from_value(json!({"jsonrpc": "2.0", "id": id,
                    "error": {"code": -32603,
                              "message": format!("the SDK host's answer is not JSON-RPC: {error}")}})),
            };
            // An error reply always parses; were it not to, the request times out.
            if let Ok(parsed) = parsed {
                let _ = replies.send(parsed);
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<RxJsonRpcMessage<RoleClient>>> + Send {
        self.replies.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.replies.close();
        Ok(())
    }
}
