//! The request body sent to the Anthropic Messages API: the JSON text of a [`ModelRequest`] with
//! prompt-caching breakpoints, written straight from the messages.

use serde_json::{Value, json};

use crate::llm::types::{ContentBlock, Message, ModelRequest, Role};

/// The JSON body for `request`, with prompt-caching breakpoints, as sent (see
/// [`request_json`]).
pub fn request_body(request: &ModelRequest) -> Value {
    serde_json::from_str(&request_json(request)).unwrap_or(Value::Null)
}

/// The JSON text of the body for `request`, with prompt-caching breakpoints: on the system
/// prompt, on the last tool the model sees, and on the last block of the last user message.
///
/// Written straight from the messages rather than through a `serde_json::Value` tree: a
/// resumed 2,000-message session's body is 2 MiB, and building the tree first cost more than
/// writing it (every request of a long session pays this).
pub fn request_json(request: &ModelRequest) -> String {
    let ephemeral = || json!({"type": "ephemeral"});
    let marked = request.messages.iter().rposition(|m| m.role == Role::User);
    let system = (!request.system.is_empty()).then(|| {
        json!([{
            "type": "text",
            "text": request.system,
            "cache_control": ephemeral(),
        }])
    });
    // The breakpoint goes on the last tool the model sees: deferred ones stay out of the
    // prompt until referenced.
    let last_seen = request.tools.iter().rposition(|t| !t.defer_loading);
    let mut tools: Vec<Value> = request
        .tools
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut tool = json!({
                "name": t.name,
                "description": t.description,
                "input_schema": t.input_schema,
            });
            if t.defer_loading {
                tool["defer_loading"] = Value::Bool(true);
            }
            if Some(i) == last_seen {
                tool["cache_control"] = ephemeral();
            }
            tool
        })
        .collect();
    tools.extend(request.server_tools.iter().cloned());
    let body = Body {
        model: &request.model,
        max_tokens: request.max_tokens,
        stream: true,
        messages: Messages {
            messages: &request.messages,
            marked,
        },
        system,
        tools,
        thinking: request
            .thinking_budget
            .or_else(|| {
                request
                    .reasoning_effort
                    .and_then(|e| e.thinking_budget(request.max_tokens))
            })
            .map(|budget| json!({"type": "enabled", "budget_tokens": budget})),
    };
    // Serialising these types cannot fail: every map key is a string.
    serde_json::to_string(&body).unwrap_or_default()
}

/// The body's fields, in the order they are sent.
#[derive(serde::Serialize)]
struct Body<'a> {
    model: &'a str,
    max_tokens: u32,
    stream: bool,
    messages: Messages<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    system: Option<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Value>,
}

/// The messages, the one at `marked` with a cache breakpoint on its last block.
struct Messages<'a> {
    messages: &'a [Message],
    marked: Option<usize>,
}

impl serde::Serialize for Messages<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        #[derive(serde::Serialize)]
        struct Plain<'a> {
            role: Role,
            content: &'a [ContentBlock],
        }
        let mut seq = serializer.serialize_seq(Some(self.messages.len()))?;
        for (i, m) in self.messages.iter().enumerate() {
            if Some(i) != self.marked {
                seq.serialize_element(&Plain {
                    role: m.role,
                    content: &m.content,
                })?;
                continue;
            }
            let mut message = json!({"role": m.role, "content": m.content});
            if let Some(block) = message
                .get_mut("content")
                .and_then(Value::as_array_mut)
                .and_then(|blocks| blocks.last_mut())
                .and_then(Value::as_object_mut)
            {
                block.insert("cache_control".into(), json!({"type": "ephemeral"}));
            }
            seq.serialize_element(&message)?;
        }
        seq.end()
    }
}
