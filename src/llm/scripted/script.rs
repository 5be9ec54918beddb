//! The script a [`super::ScriptedServer`] plays: turns of text, thinking and tool calls, with
//! faults on demand. Parsing is validation: unknown fields are refused, and a fault must say
//! exactly one thing to do, so a typo in a test script fails loudly instead of being ignored.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::chaos::Chaos;

/// Why a script could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("could not read the script {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("invalid script: {0}")]
    Json(#[from] serde_json::Error),
    #[error("invalid script: {0}")]
    Invalid(String),
}

/// A whole script: the model's answers, one per request, chosen by how many assistant
/// messages the request already holds.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    pub turns: Vec<Turn>,
    /// Random faults on every request (see [`Chaos`]); a turn's own faults go first.
    #[serde(default)]
    pub chaos: Option<Chaos>,
    /// Other conversations on the same server (a sub-agent's): a request whose system prompt
    /// contains `system_contains` is answered from these turns instead.
    #[serde(default)]
    pub by_system: Vec<SideScript>,
    /// The text answered past the last turn (default [`super::NO_MORE_TURNS`]); the demo says
    /// what to do next.
    #[serde(default)]
    pub after_last: Option<String>,
}

/// The turns of a conversation told apart by its system prompt.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideScript {
    pub system_contains: String,
    pub turns: Vec<Turn>,
}

impl Script {
    pub fn new(turns: Vec<Turn>) -> Script {
        Script {
            turns,
            chaos: None,
            by_system: Vec::new(),
            after_last: None,
        }
    }

    /// The turns for a request with this system prompt, and which conversation they are
    /// (0: the main one).
    pub fn turns_for(&self, system: &str) -> (usize, &[Turn]) {
        self.by_system
            .iter()
            .enumerate()
            .find(|(_, side)| {
                !side.system_contains.is_empty() && system.contains(&side.system_contains)
            })
            .map_or((0, &self.turns[..]), |(i, side)| (i + 1, &side.turns[..]))
    }

    /// This script with chaos mode on.
    pub fn with_chaos(mut self, chaos: Chaos) -> Script {
        self.chaos = Some(chaos);
        self
    }

    /// Parse and check a script; the error names the bad field and where it is.
    pub fn from_json(text: &str) -> Result<Script, ScriptError> {
        let script: Script = serde_json::from_str(text)?;
        if let Some(chaos) = &script.chaos {
            chaos.check().map_err(ScriptError::Invalid)?;
        }
        let all = script
            .turns
            .iter()
            .chain(script.by_system.iter().flat_map(|s| &s.turns));
        for (i, turn) in all.enumerate() {
            if turn.chunk_chars == 0 {
                return Err(ScriptError::Invalid(format!(
                    "turns[{i}].chunk_chars must be at least 1"
                )));
            }
            for (j, call) in turn.tool_calls.iter().enumerate() {
                // A string: a freeform tool's raw input (Codex's `exec`, on `/v1/responses`).
                if !call.input.is_object() && !call.input.is_string() {
                    return Err(ScriptError::Invalid(format!(
                        "turns[{i}].tool_calls[{j}].input must be a JSON object, or a string \
                         (a freeform tool's input)"
                    )));
                }
            }
        }
        Ok(script)
    }

    pub fn from_file(path: &Path) -> Result<Script, ScriptError> {
        let text = std::fs::read_to_string(path).map_err(|source| ScriptError::Read {
            path: path.display().to_string(),
            source,
        })?;
        Script::from_json(&text)
    }
}

/// One answer of the model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Turn {
    pub thinking: Option<String>,
    /// Blocks the provider made itself (`server_tool_use`, `web_search_tool_result`), sent
    /// whole, before the text, in the Anthropic format only.
    pub server_blocks: Vec<Value>,
    pub text: Option<String>,
    pub tool_calls: Vec<ToolCall>,
    /// Default: `tool_use` when there are tool calls, else `end_turn`.
    pub stop_reason: Option<ScriptStopReason>,
    /// Default: input ~ request bytes / 4, output ~ generated characters / 4.
    pub usage: Option<ScriptUsage>,
    /// Text, thinking and tool-input JSON are streamed in deltas of this many characters.
    pub chunk_chars: usize,
    /// Pause before each event, in milliseconds.
    pub delay_ms: u64,
    pub faults: Vec<Fault>,
}

impl Default for Turn {
    fn default() -> Self {
        Turn {
            thinking: None,
            server_blocks: Vec::new(),
            text: None,
            tool_calls: Vec::new(),
            stop_reason: None,
            usage: None,
            chunk_chars: 8,
            delay_ms: 0,
            faults: Vec::new(),
        }
    }
}

impl Turn {
    /// A turn that only answers `text`.
    pub fn text(text: impl Into<String>) -> Turn {
        Turn {
            text: Some(text.into()),
            ..Turn::default()
        }
    }

    /// A turn that calls one tool.
    pub fn tool_call(id: impl Into<String>, name: impl Into<String>, input: Value) -> Turn {
        Turn {
            tool_calls: vec![ToolCall {
                id: Some(id.into()),
                name: name.into(),
                input,
            }],
            ..Turn::default()
        }
    }

    /// This turn with `fault` added.
    pub fn with_fault(mut self, kind: FaultKind, times: u32) -> Turn {
        self.faults.push(Fault { kind, times });
        self
    }

    pub(crate) fn stop_reason(&self) -> ScriptStopReason {
        self.stop_reason.unwrap_or(if self.tool_calls.is_empty() {
            ScriptStopReason::EndTurn
        } else {
            ScriptStopReason::ToolUse
        })
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolCall {
    /// Default: `toolu_<turn>_<index>`.
    #[serde(default)]
    pub id: Option<String>,
    pub name: String,
    #[serde(default = "empty_object")]
    pub input: Value,
}

fn empty_object() -> Value {
    Value::Object(Default::default())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ScriptStopReason {
    EndTurn,
    ToolUse,
    MaxTokens,
}

impl ScriptStopReason {
    pub(crate) fn anthropic(self) -> &'static str {
        match self {
            ScriptStopReason::EndTurn => "end_turn",
            ScriptStopReason::ToolUse => "tool_use",
            ScriptStopReason::MaxTokens => "max_tokens",
        }
    }

    pub(crate) fn openai(self) -> &'static str {
        match self {
            ScriptStopReason::EndTurn => "stop",
            ScriptStopReason::ToolUse => "tool_calls",
            ScriptStopReason::MaxTokens => "length",
        }
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScriptUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub cache_read_input_tokens: u64,
    pub cache_creation_input_tokens: u64,
}

/// Something to go wrong, for the first `times` requests of a turn.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "FaultSpec")]
pub struct Fault {
    pub kind: FaultKind,
    pub times: u32,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FaultKind {
    /// Answer with this HTTP status instead of a stream. `body` defaults to the wire format's
    /// error JSON for the status; `retry_after` (seconds) becomes a `retry-after` header.
    Status {
        status: u16,
        body: Option<String>,
        retry_after: Option<u64>,
    },
    /// Close the connection after this many SSE events.
    DropAfterEvents(usize),
    /// Replace the event at this index (0-based) with one whose data is not JSON.
    MalformedEventAt(usize),
    /// Cut the JSON of the event at this index (0-based) in half, keeping its `event:` line
    /// and the blank line that ends it: the event arrives whole, its data does not decode.
    CutEventAt(usize),
    /// Send tool-call input that is not valid JSON (the object without its closing brace).
    InvalidToolJson,
    /// After the first event, send an in-stream error of this type (e.g. `overloaded_error`)
    /// and end the response.
    StreamError(String),
    /// End the stream cleanly without its final event (`message_stop` / `data: [DONE]`).
    Truncate,
    /// Leave the tool calls unclosed: Anthropic drops their `content_block_stop`s (the message
    /// still ends with `message_stop`); OpenAI ends after the arguments, with no finish chunk,
    /// usage or `[DONE]`.
    UnclosedToolUse,
    /// After the first event, send keep-alives forever, one every this many milliseconds:
    /// `ping` events and SSE comments (Anthropic), comments and empty chunks (OpenAI).
    KeepAliveForever(u64),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultSpec {
    status: Option<u16>,
    body: Option<Value>,
    retry_after: Option<u64>,
    drop_after_events: Option<usize>,
    malformed_event_at: Option<usize>,
    cut_event_at: Option<usize>,
    invalid_tool_json: Option<bool>,
    stream_error: Option<String>,
    truncate: Option<bool>,
    unclosed_tool_use: Option<bool>,
    keep_alive_forever_ms: Option<u64>,
    #[serde(default = "one")]
    times: u32,
}

fn one() -> u32 {
    1
}

impl TryFrom<FaultSpec> for Fault {
    type Error = String;

    fn try_from(spec: FaultSpec) -> Result<Fault, String> {
        let mut kinds = Vec::new();
        if let Some(status) = spec.status {
            let body = spec.body.map(|b| match b {
                Value::String(s) => s,
                other => other.to_string(),
            });
            kinds.push((
                "status",
                FaultKind::Status {
                    status,
                    body,
                    retry_after: spec.retry_after,
                },
            ));
        } else if spec.body.is_some() || spec.retry_after.is_some() {
            return Err("a fault's `body` and `retry_after` need a `status`".into());
        }
        if let Some(n) = spec.drop_after_events {
            kinds.push(("drop_after_events", FaultKind::DropAfterEvents(n)));
        }
        if let Some(n) = spec.malformed_event_at {
            kinds.push(("malformed_event_at", FaultKind::MalformedEventAt(n)));
        }
        if let Some(n) = spec.cut_event_at {
            kinds.push(("cut_event_at", FaultKind::CutEventAt(n)));
        }
        if spec.invalid_tool_json == Some(true) {
            kinds.push(("invalid_tool_json", FaultKind::InvalidToolJson));
        }
        if let Some(kind) = spec.stream_error {
            kinds.push(("stream_error", FaultKind::StreamError(kind)));
        }
        if spec.truncate == Some(true) {
            kinds.push(("truncate", FaultKind::Truncate));
        }
        if spec.unclosed_tool_use == Some(true) {
            kinds.push(("unclosed_tool_use", FaultKind::UnclosedToolUse));
        }
        if let Some(ms) = spec.keep_alive_forever_ms {
            kinds.push((
                "keep_alive_forever_ms",
                FaultKind::KeepAliveForever(ms.max(1)),
            ));
        }
        if kinds.len() != 1 {
            let given: Vec<&str> = kinds.iter().map(|(name, _)| *name).collect();
            return Err(format!(
                "a fault needs exactly one of `status`, `drop_after_events`, \
                 `malformed_event_at`, `cut_event_at`, `invalid_tool_json`, `stream_error`, \
                 `truncate`, \
                 `unclosed_tool_use`, `keep_alive_forever_ms` (given: {})",
                if given.is_empty() {
                    "none".to_string()
                } else {
                    given.join(", ")
                }
            ));
        }
        let Some((_, kind)) = kinds.pop() else {
            return Err("a fault needs a kind".into());
        };
        Ok(Fault {
            kind,
            times: spec.times,
        })
    }
}

/// The fault for attempt `attempt` (0-based) of a turn: faults apply in order, each to
/// `times` consecutive attempts; after them the turn plays normally.
pub(crate) fn fault_for_attempt(faults: &[Fault], attempt: u32) -> Option<&FaultKind> {
    let mut remaining = attempt;
    for fault in faults {
        if remaining < fault.times {
            return Some(&fault.kind);
        }
        remaining -= fault.times;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_documented_example() {
        let script = Script::from_json(
            r#"{"turns": [
              {"thinking": "hmm", "text": "Hello", "tool_calls": [{"id": "toolu_1", "name": "Read",
                "input": {"file_path": "src/main.rs"}}],
               "stop_reason": "tool_use",
               "usage": {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 0},
               "chunk_chars": 8, "delay_ms": 0,
               "faults": [ {"status": 529, "body": {"type": "error"}, "retry_after": 1, "times": 1},
                           {"drop_after_events": 3, "times": 1},
                           {"malformed_event_at": 2},
                           {"invalid_tool_json": true, "times": 2} ]},
              {"text": "done"}
            ]}"#,
        )
        .unwrap();
        let faults = &script.turns[0].faults;
        assert_eq!(
            faults[0].kind,
            FaultKind::Status {
                status: 529,
                body: Some(r#"{"type":"error"}"#.into()),
                retry_after: Some(1)
            }
        );
        assert_eq!(faults[2].times, 1);
        let kinds: Vec<Option<&FaultKind>> = (0..7).map(|a| fault_for_attempt(faults, a)).collect();
        assert_eq!(kinds[1], Some(&FaultKind::DropAfterEvents(3)));
        assert_eq!(kinds[2], Some(&FaultKind::MalformedEventAt(2)));
        assert_eq!(kinds[3], Some(&FaultKind::InvalidToolJson));
        assert_eq!(kinds[4], Some(&FaultKind::InvalidToolJson));
        assert_eq!(kinds[5], None);
        assert_eq!(script.turns[1].stop_reason(), ScriptStopReason::EndTurn);
        assert_eq!(script.turns[1].chunk_chars, 8);
    }

    #[test]
    fn errors_name_the_bad_field() {
        let err = Script::from_json(r#"{"turns": [{"txt": "hi"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("invalid script: unknown field `txt`"),
            "{err}"
        );
        let err = Script::from_json(
            r#"{"turns": [{"faults": [{"status": 500, "drop_after_events": 1}]}]}"#,
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("a fault needs exactly one of")
                && err.contains("(given: status, drop_after_events)"),
            "{err}"
        );
        let err = Script::from_json(r#"{"turns": [{"chunk_chars": 0}]}"#)
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid script: turns[0].chunk_chars must be at least 1"
        );
        let err = Script::from_json(r#"{"turns": [{"stop_reason": "halt"}]}"#)
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown variant `halt`"), "{err}");
    }
}
