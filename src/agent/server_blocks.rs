//! What people see of the blocks a provider ran itself in the model's answer: a web search
//! (`server_tool_use` named `web_search`, then its `web_search_tool_result`) becomes a search
//! cell — the query, then the results as links — through the same tool-call events as
//! cairn's own tools. Other server blocks show nothing; all of them stay in the history as
//! received (the core keeps the block itself).

use serde_json::{Value, json};

use crate::protocol::Event;
use crate::session::context::EventSender;
use crate::tools::web_search::links_display;
use crate::tools::web_search::provider::{hits_of, is_block};

/// Tell the client about one server block.
pub(super) fn show(block: &Value, events: &EventSender) {
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
        events.send(Event::ToolCallStarted {
            call_id: s("id").to_string(),
            title: format!("{tool} \"{query}\" (by the provider)"),
            tool,
            input: block.get("input").cloned().unwrap_or(json!({})),
        });
    } else if is_block(block, "web_search_tool_result") {
        let call_id = s("tool_use_id").to_string();
        let (is_error, display) = match hits_of(block) {
            Ok(hits) => (false, links_display("", &hits)),
            Err(e) => (true, crate::protocol::Display::Text { text: e }),
        };
        events.send(Event::ToolCallFinished {
            call_id,
            is_error,
            display,
            outcome: None,
        });
    }
}
