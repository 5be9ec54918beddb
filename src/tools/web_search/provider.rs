//! Search through the model provider's own server-side tool, as Claude Code does with the
//! Anthropic API: a side request to the session's model with `web_search_20250305` (its
//! `max_uses` and the domain lists) and the query; the `web_search_tool_result` blocks it
//! returns are the hits, its text the short cited answer.

use std::sync::Arc;

use async_trait::async_trait;
use futures::StreamExt;
use serde_json::{Value, json};

use crate::protocol::Event;
use tokio_util::sync::CancellationToken;

use crate::llm::{ContentBlock, Message, ModelClient, ModelRequest, StreamEvent};
use crate::session::search::{SearchAnswer, SearchBackend, SearchHit, SearchQuery};

/// Searches the server may run for one query.
const MAX_USES: u32 = 5;
/// Tokens for the short answer.
const MAX_TOKENS: u32 = 2048;

/// The provider's search, through a side request to `model`.
pub struct ProviderSearch {
    client: Arc<dyn ModelClient>,
    model: String,
}

impl std::fmt::Debug for ProviderSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSearch")
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl ProviderSearch {
    pub fn new(client: Arc<dyn ModelClient>, model: String) -> ProviderSearch {
        ProviderSearch { client, model }
    }

    /// The side request for `query`.
    pub fn request(&self, query: &SearchQuery) -> ModelRequest {
        let mut tool = json!({"type": "web_search_20250305", "name": "web_search",
            "max_uses": MAX_USES});
        if !query.allowed_domains.is_empty() {
            tool["allowed_domains"] = json!(query.allowed_domains);
        }
        if !query.blocked_domains.is_empty() {
            tool["blocked_domains"] = json!(query.blocked_domains);
        }
        ModelRequest {
            model: self.model.clone(),
            system: "You are an assistant for performing a web search tool use. Search the \
                     web for the query, then answer it briefly, citing your sources."
                .into(),
            messages: vec![Message::user_text(format!(
                "Perform a web search for the query: {}",
                query.query
            ))],
            tools: Vec::new(),
            max_tokens: MAX_TOKENS,
            thinking_budget: None,
            reasoning_effort: None,
            server_tools: vec![tool],
        }
    }
}

/// The hits of one `web_search_tool_result` block, or the error it reports.
pub fn hits_of(block: &Value) -> Result<Vec<SearchHit>, String> {
    let content = block.get("content").unwrap_or(&Value::Null);
    if let Some(code) = content.get("error_code").and_then(Value::as_str) {
        return Err(format!("the web search failed: {code}"));
    }
    Ok(content
        .as_array()
        .into_iter()
        .flatten()
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("web_search_result"))
        .filter_map(|r| {
            let s = |k: &str| r.get(k).and_then(Value::as_str).map(str::to_string);
            Some(SearchHit {
                url: s("url")?,
                title: s("title").unwrap_or_default(),
                snippet: String::new(),
                page_age: s("page_age"),
            })
        })
        .collect())
}

/// Whether `block` is a server block of type `kind`.
pub fn is_block(block: &Value, kind: &str) -> bool {
    block.get("type").and_then(Value::as_str) == Some(kind)
}

#[async_trait]
impl SearchBackend for ProviderSearch {
    fn name(&self) -> &str {
        "the provider's web search"
    }

    async fn search(
        &self,
        query: &SearchQuery,
        cancel: &CancellationToken,
    ) -> Result<SearchAnswer, String> {
        let request = self.request(query);
        let mut stream = tokio::select! {
            r = self.client.send(&request) => r.map_err(|e| format!("the web search request failed: {e}"))?,
            _ = cancel.cancelled() => return Err("Interrupted by the user.".into()),
        };
        let mut answer = SearchAnswer::default();
        let mut text = String::new();
        let mut failure = None;
        loop {
            let event = tokio::select! {
                e = stream.next() => e,
                _ = cancel.cancelled() => return Err("Interrupted by the user.".into()),
            };
            match event {
                None => break,
                Some(Err(e)) => return Err(format!("the web search broke off: {e}")),
                Some(Ok(StreamEvent::BlockComplete(ContentBlock::Server(block))))
                    if is_block(&block, "web_search_tool_result") =>
                {
                    match hits_of(&block) {
                        Ok(hits) => answer.hits.extend(hits),
                        Err(e) => failure = Some(e),
                    }
                }
                Some(Ok(StreamEvent::BlockComplete(ContentBlock::Text { text: t }))) => {
                    text.push_str(&t);
                }
                Some(Ok(_)) => {}
            }
        }
        if answer.hits.is_empty()
            && let Some(e) = failure
        {
            return Err(e);
        }
        answer.answer = Some(text).filter(|t| !t.trim().is_empty());
        Ok(answer)
    }
}

/// What the client is told of one block the provider ran itself: a web search is a search
/// cell (the same tool-call events as cairn's own tools); other server blocks show nothing.
pub fn block_event(block: &Value) -> Option<Event> {
    let s = |k: &str| block.get(k).and_then(Value::as_str).unwrap_or("");
    if is_block(block, "server_tool_use") {
        let query = block
            .pointer("/input/query")
            .and_then(Value::as_str)
            .unwrap_or("");
        let tool = if s("name") == "web_search" {
            "WebSearch".to_string()
        } else {
            s("name").to_string()
        };
        Some(Event::ToolCallStarted {
            call_id: s("id").to_string(),
            title: format!("{tool} \"{query}\" (by the provider)"),
            tool,
            input: block.get("input").cloned().unwrap_or(json!({})),
            kind: crate::protocol::CallKind::Fetch,
        })
    } else if is_block(block, "web_search_tool_result") {
        let call_id = s("tool_use_id").to_string();
        let (is_error, display) = match hits_of(block) {
            Ok(hits) => (false, super::links_display("", &hits)),
            Err(e) => (true, crate::protocol::Display::Text { text: e }),
        };
        Some(Event::ToolCallFinished {
            call_id,
            is_error,
            display,
            outcome: None,
        })
    } else {
        None
    }
}
