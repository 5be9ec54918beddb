//! The session's small, fast model, for tools that want a model's short answer of their own
//! (WebFetch reads a page with it): the session's client and the model id chosen when the
//! session opened (Anthropic's haiku alias or `ANTHROPIC_SMALL_FAST_MODEL`; for other providers
//! the `smallModel` setting, else the session's model).

use std::sync::Arc;

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::llm::{ContentBlock, Message, ModelClient, ModelRequest, StreamEvent};

/// A model a tool may ask.
#[derive(Clone)]
pub struct SmallModel {
    pub client: Arc<dyn ModelClient>,
    pub model: String,
}

impl std::fmt::Debug for SmallModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SmallModel")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl SmallModel {
    /// One request, no tools: `system` and `prompt` in, the answer's text out (an error is a
    /// sentence). One attempt: a caller has a fallback.
    pub async fn ask(
        &self,
        system: &str,
        prompt: String,
        max_tokens: u32,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let request = ModelRequest {
            model: self.model.clone(),
            system: system.into(),
            messages: vec![Message::user_text(prompt)],
            tools: Vec::new(),
            max_tokens,
            thinking_budget: None,
            reasoning_effort: None,
            server_tools: Vec::new(),
        };
        let answer = async {
            let mut stream = self
                .client
                .send(&request)
                .await
                .map_err(|e| e.to_string())?;
            let mut text = String::new();
            while let Some(event) = stream.next().await {
                match event.map_err(|e| e.to_string())? {
                    StreamEvent::BlockComplete(ContentBlock::Text { text: t }) => text.push_str(&t),
                    StreamEvent::Restart(_) => text.clear(),
                    _ => {}
                }
            }
            Ok::<String, String>(text)
        };
        tokio::select! {
            r = answer => r,
            _ = cancel.cancelled() => Err("interrupted".into()),
        }
    }
}
