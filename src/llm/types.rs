//! Provider-neutral conversation types: messages, content blocks, tool specs, the request the
//! agent builds and the stream events a client yields.
//!
//! The Anthropic shape is the canonical one (its JSON is what the transcript stores); the OpenAI
//! client maps to and from it. Nothing here does I/O.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::Usage;

pub use super::tool_result::{ToolResultBlock, ToolResultContent};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: Vec<ContentBlock>,
}

impl Message {
    pub fn user_text(text: impl Into<String>) -> Message {
        Message {
            role: Role::User,
            content: vec![ContentBlock::Text { text: text.into() }],
        }
    }

    /// The concatenated text blocks of this message.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentBlock {
    Text {
        text: String,
    },
    Thinking {
        thinking: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
    },
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
    ToolResult {
        tool_use_id: String,
        /// A plain string on the wire when it is one text block (see [`ToolResultContent`]).
        content: ToolResultContent,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
    },
    /// An image the person attached to a prompt (Anthropic's shape: a base64 `source`).
    Image {
        source: ImageSource,
    },
    /// A block the provider ran or made itself (`server_tool_use`, `web_search_tool_result`,
    /// `redacted_thinking`, any type cairn does not know): kept exactly as received and sent
    /// back so in the next request; never a tool call of cairn's.
    #[serde(untagged)]
    Server(Value),
}

/// The data of an [`ContentBlock::Image`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageSource {
    /// Always `base64`.
    #[serde(rename = "type")]
    pub kind: String,
    pub media_type: String,
    pub data: String,
}

impl ContentBlock {
    /// An image block from base64 `data`.
    pub fn image(media_type: impl Into<String>, data: impl Into<String>) -> ContentBlock {
        ContentBlock::Image {
            source: ImageSource {
                kind: "base64".into(),
                media_type: media_type.into(),
                data: data.into(),
            },
        }
    }
}

/// A tool as offered to the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub input_schema: Value,
    /// Anthropic's `defer_loading`: the definition travels but stays out of the model's context
    /// until a `tool_reference` names it (other wire formats never see deferred tools).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub defer_loading: bool,
}

/// Everything one model request needs, independent of the wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelRequest {
    pub model: String,
    pub system: String,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolSpec>,
    pub max_tokens: u32,
    /// Extended-thinking budget, when enabled.
    pub thinking_budget: Option<u32>,
    /// How hard the model should reason (a sub-agent's `effort`): Anthropic gets extended
    /// thinking with [`Effort::thinking_budget`] (when `thinking_budget` is not set), an
    /// OpenAI-compatible server `reasoning_effort`.
    pub reasoning_effort: Option<Effort>,
    /// Tools the provider runs itself, as its API spells them (Anthropic's
    /// `{"type": "web_search_20250305", ...}`); wire formats without them leave them out.
    pub server_tools: Vec<Value>,
}

/// A reasoning effort level, as Claude Code's `effort` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    Low,
    Medium,
    High,
    XHigh,
    Max,
}

/// A thinking budget below this is refused by the Anthropic API.
const MIN_THINKING_BUDGET: u32 = 1_024;

impl Effort {
    /// The levels, as their names are written.
    pub const NAMES: &'static str = "low, medium, high, xhigh or max";

    pub fn parse(text: &str) -> Option<Effort> {
        Some(match text.trim().to_ascii_lowercase().as_str() {
            "low" => Effort::Low,
            "medium" => Effort::Medium,
            "high" => Effort::High,
            "xhigh" => Effort::XHigh,
            "max" => Effort::Max,
            _ => return None,
        })
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High => "high",
            Effort::XHigh => "xhigh",
            Effort::Max => "max",
        }
    }

    /// The extended-thinking budget for a request of `max_tokens`: the level's own, cut so a
    /// quarter of `max_tokens` is left for the answer (the API wants the budget below
    /// `max_tokens`); none when that leaves less than the API's minimum budget.
    pub fn thinking_budget(self, max_tokens: u32) -> Option<u32> {
        let level = match self {
            Effort::Low => 4_000,
            Effort::Medium => 10_000,
            Effort::High => 16_000,
            Effort::XHigh => 24_000,
            Effort::Max => 31_999,
        };
        let budget = level.min(max_tokens - max_tokens / 4);
        (budget >= MIN_THINKING_BUDGET).then_some(budget)
    }

    /// OpenAI's `reasoning_effort` (which stops at `high`).
    pub fn openai(self) -> &'static str {
        match self {
            Effort::Low => "low",
            Effort::Medium => "medium",
            Effort::High | Effort::XHigh | Effort::Max => "high",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
    StopSequence,
    /// Anything else the server said (kept verbatim for the error message).
    Other,
}

/// What a client yields while a response streams, already assembled across wire fragments.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// Text as it arrives (for display); the complete text also comes as a `BlockComplete`.
    TextDelta(String),
    ThinkingDelta(String),
    /// A content block has finished streaming: a text block, a thinking block with its
    /// signature, or a tool call whose input JSON parsed.
    BlockComplete(ContentBlock),
    /// A tool call whose input was not valid JSON. The agent answers it with an error result.
    InvalidToolUse {
        id: String,
        name: String,
        raw_input: String,
        error: String,
    },
    /// Usage so far (input at the start, output at the end; each replaces the previous).
    Usage(Usage),
    /// The message ended.
    Finished(StopReason),
    /// Only from [`super::retry::stream_with_retry`]: the attempt failed and will be made again
    /// after `notice.delay`. Everything yielded since the start or the previous `Restart` is
    /// void: the next attempt answers from scratch.
    Restart(super::retry::RetryNotice),
}
