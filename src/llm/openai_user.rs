//! One user turn of the canonical conversation as chat-completions messages: a `tool` message
//! per tool result, then at most one `user` message with the person's text and every image the
//! tool results returned.
//!
//! Chat completions accept images only in `user` messages, and the tool messages must directly
//! follow the assistant message that made the calls, so a turn with images becomes: all tool
//! messages (each saying in text that its image follows), then one `user` message whose parts
//! are, per call, a label and its `image_url` parts (`data:` URLs), then the person's text. A
//! turn without images maps exactly as before: tool messages with plain string content, then a
//! plain-string user message when there is text. Documents cannot be attached on this API; the
//! tool message says so instead.

use serde_json::{Value, json};

use super::types::{ContentBlock, Message, ToolResultBlock, ToolResultContent};

/// Append the chat messages for a user `message` to `messages`.
pub(super) fn push_user_turn(messages: &mut Vec<Value>, message: &Message) {
    let mut text = String::new();
    let mut image_parts: Vec<Value> = Vec::new();
    for block in &message.content {
        match block {
            ContentBlock::ToolResult {
                tool_use_id,
                content,
                is_error,
            } => {
                messages.push(json!({
                    "role": "tool",
                    "tool_call_id": tool_use_id,
                    "content": tool_message_text(content, *is_error),
                }));
                push_images(&mut image_parts, tool_use_id, content);
            }
            ContentBlock::Text { text: t } => {
                if !text.is_empty() {
                    text.push_str("\n\n");
                }
                text.push_str(t);
            }
            ContentBlock::Image { source } => {
                image_parts.push(image_url(&source.media_type, &source.data))
            }
            _ => {}
        }
    }
    if image_parts.is_empty() {
        if !text.is_empty() {
            messages.push(json!({"role": "user", "content": text}));
        }
        return;
    }
    if !text.is_empty() {
        image_parts.push(json!({"type": "text", "text": text}));
    }
    messages.push(json!({"role": "user", "content": image_parts}));
}

/// The text of a result's tool message: its text blocks, then a line per attachment. Chat
/// completions have no error flag, so an error says so in the text unless it already does.
fn tool_message_text(content: &ToolResultContent, is_error: bool) -> String {
    let mut out = content.text().into_owned();
    // Notes follow the text after a blank line, one per line.
    let mut first_note = true;
    for block in content.blocks() {
        let note = match block {
            // The core strips references for this format; the text lists the schemas.
            ToolResultBlock::Text { .. } | ToolResultBlock::ToolReference { .. } => continue,
            ToolResultBlock::Image { media_type, .. } => format!(
                "[image: {media_type}, {} bytes, sent in the next message]",
                block.decoded_len()
            ),
            ToolResultBlock::Document {
                media_type, title, ..
            } => {
                let title = title.as_deref().map_or(String::new(), |t| format!("{t}, "));
                format!(
                    "[document: {title}{media_type}, {} bytes, not sent: this API cannot \
                     take document attachments]",
                    block.decoded_len()
                )
            }
        };
        if !out.is_empty() {
            out.push_str(if first_note { "\n\n" } else { "\n" });
        }
        first_note = false;
        out.push_str(&note);
    }
    if is_error && !out.starts_with("Error") {
        out.insert_str(0, "Error: ");
    }
    out
}

/// The `image_url` parts for the images of one result, after a label naming the call.
fn push_images(parts: &mut Vec<Value>, tool_use_id: &str, content: &ToolResultContent) {
    let mut labelled = false;
    for block in content.blocks() {
        if let ToolResultBlock::Image { media_type, data } = block {
            if !labelled {
                parts.push(json!({
                    "type": "text",
                    "text": format!("Images returned by tool call {tool_use_id}:"),
                }));
                labelled = true;
            }
            parts.push(image_url(media_type, data));
        }
    }
}

/// One `image_url` part with the image inline as a data URL.
fn image_url(media_type: &str, data: &str) -> Value {
    json!({
        "type": "image_url",
        "image_url": {"url": format!("data:{media_type};base64,{data}")},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Role;

    fn result(id: &str, blocks: Vec<ToolResultBlock>, is_error: bool) -> ContentBlock {
        ContentBlock::ToolResult {
            tool_use_id: id.into(),
            content: ToolResultContent(blocks),
            is_error,
        }
    }

    fn text(t: &str) -> ToolResultBlock {
        ToolResultBlock::Text { text: t.into() }
    }

    fn map(content: Vec<ContentBlock>) -> Vec<Value> {
        let mut out = Vec::new();
        push_user_turn(
            &mut out,
            &Message {
                role: Role::User,
                content,
            },
        );
        out
    }

    #[test]
    fn text_only_results_map_as_plain_strings() {
        let out = map(vec![
            result("c1", vec![text("one")], false),
            result("c2", vec![text("bad")], true),
            ContentBlock::Text { text: "go".into() },
        ]);
        assert_eq!(
            out,
            vec![
                json!({"role": "tool", "tool_call_id": "c1", "content": "one"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "Error: bad"}),
                json!({"role": "user", "content": "go"}),
            ]
        );
    }

    #[test]
    fn images_of_several_results_follow_all_tool_messages_in_one_user_message() {
        let out = map(vec![
            result(
                "c1",
                vec![ToolResultBlock::image("image/png", "AAAA")],
                false,
            ),
            result("c2", vec![text("plain")], false),
            result(
                "c3",
                vec![
                    text("two shots"),
                    ToolResultBlock::image("image/jpeg", "AAA="),
                    ToolResultBlock::image("image/gif", "AA=="),
                ],
                false,
            ),
            ContentBlock::Text {
                text: "and?".into(),
            },
        ]);
        assert_eq!(
            out,
            vec![
                json!({"role": "tool", "tool_call_id": "c1",
                       "content": "[image: image/png, 3 bytes, sent in the next message]"}),
                json!({"role": "tool", "tool_call_id": "c2", "content": "plain"}),
                json!({"role": "tool", "tool_call_id": "c3", "content":
                    "two shots\n\n[image: image/jpeg, 2 bytes, sent in the next message]\n\
                     [image: image/gif, 1 bytes, sent in the next message]"}),
                json!({"role": "user", "content": [
                    {"type": "text", "text": "Images returned by tool call c1:"},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA"}},
                    {"type": "text", "text": "Images returned by tool call c3:"},
                    {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAA="}},
                    {"type": "image_url", "image_url": {"url": "data:image/gif;base64,AA=="}},
                    {"type": "text", "text": "and?"},
                ]}),
            ]
        );
    }

    #[test]
    fn documents_are_named_but_not_sent() {
        let out = map(vec![result(
            "c1",
            vec![ToolResultBlock::Document {
                media_type: "application/pdf".into(),
                data: "JVBERi0=".into(),
                title: Some("r.pdf".into()),
            }],
            true,
        )]);
        assert_eq!(
            out,
            vec![json!({"role": "tool", "tool_call_id": "c1", "content":
                "Error: [document: r.pdf, application/pdf, 5 bytes, not sent: this API cannot \
                 take document attachments]"})]
        );
    }
}
