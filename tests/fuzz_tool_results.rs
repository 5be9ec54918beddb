//! Fuzz targets for tool-result content blocks: random turns of several results (text, images,
//! documents, errors) serialised for both wire formats. Properties: the serde form reads back to
//! the same wire form, every image reaches each API exactly once and in order, and the OpenAI
//! messages keep the order the API demands (all tool messages, then at most one user message).

#[path = "support/fuzz.rs"]
mod fuzz;

use cairn::llm::{
    ContentBlock, Message, ModelRequest, Role, ToolResultBlock, ToolResultContent, anthropic,
    openai,
};
use proptest::prelude::*;
use serde_json::{Value, json};

fn block() -> impl Strategy<Value = ToolResultBlock> {
    let media = prop::sample::select(vec!["image/png", "image/jpeg", "image/gif", "image/webp"]);
    prop_oneof![
        3 => ".{0,40}".prop_map(|text| ToolResultBlock::Text { text }),
        2 => (media, "[A-Za-z0-9+/]{0,5}").prop_map(|(m, d)| {
            // Pad to a multiple of four, as real base64 is.
            let pad = (4 - d.len() % 4) % 4;
            ToolResultBlock::image(m, format!("{d}{}", "=".repeat(pad.min(2))))
        }),
        1 => (".{0,10}", prop::option::of("[a-z]{1,8}\\.pdf")).prop_map(|(d, title)| {
            ToolResultBlock::Document {
                media_type: "application/pdf".into(),
                data: d,
                title,
            }
        }),
    ]
}

/// A user turn: results `(blocks, is_error)` and the person's text after them.
fn turn() -> impl Strategy<Value = (Vec<(Vec<ToolResultBlock>, bool)>, Option<String>)> {
    (
        prop::collection::vec((prop::collection::vec(block(), 0..4), any::<bool>()), 1..4),
        prop::option::of("[a-z ]{1,20}"),
    )
}

fn request(results: &[(Vec<ToolResultBlock>, bool)], text: &Option<String>) -> ModelRequest {
    let ids: Vec<String> = (0..results.len()).map(|i| format!("c{i}")).collect();
    let calls = ids
        .iter()
        .map(|id| ContentBlock::ToolUse {
            id: id.clone(),
            name: "Snap".into(),
            input: json!({}),
        })
        .collect();
    let mut user: Vec<ContentBlock> = results
        .iter()
        .zip(&ids)
        .map(|((blocks, is_error), id)| ContentBlock::ToolResult {
            tool_use_id: id.clone(),
            content: ToolResultContent(blocks.clone()),
            is_error: *is_error,
        })
        .collect();
    if let Some(t) = text {
        user.push(ContentBlock::Text { text: t.clone() });
    }
    ModelRequest {
        model: "m".into(),
        system: String::new(),
        messages: vec![
            Message::user_text("go"),
            Message {
                role: Role::Assistant,
                content: calls,
            },
            Message {
                role: Role::User,
                content: user,
            },
        ],
        tools: Vec::new(),
        max_tokens: 16,
        thinking_budget: None,
        reasoning_effort: None,
        server_tools: Vec::new(),
    }
}

fn image_urls(results: &[(Vec<ToolResultBlock>, bool)]) -> Vec<String> {
    results
        .iter()
        .flat_map(|(blocks, _)| blocks.iter())
        .filter_map(|b| match b {
            ToolResultBlock::Image { media_type, data } => {
                Some(format!("data:{media_type};base64,{data}"))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn fuzz_tool_result_wire_forms() {
    fuzz::fuzz("tool_result_wire_forms", turn(), |(results, text)| {
        let req = request(&results, &text);

        // Anthropic: each result's content reads back to the same wire form and blocks.
        let body = anthropic::request_body(&req);
        let last = &body["messages"][2]["content"];
        for (i, (blocks, _)) in results.iter().enumerate() {
            let wire = &last[i]["content"];
            let back: ToolResultContent = serde_json::from_value(wire.clone())
                .map_err(|e| TestCaseError::fail(format!("{e}: {wire}")))?;
            prop_assert_eq!(&serde_json::to_value(&back).unwrap(), wire);
            let original = ToolResultContent(blocks.clone());
            prop_assert_eq!(back.text(), original.text());
            let attachments = |c: &ToolResultContent| -> Vec<ToolResultBlock> {
                c.blocks()
                    .iter()
                    .filter(|b| !matches!(b, ToolResultBlock::Text { .. }))
                    .cloned()
                    .collect()
            };
            prop_assert_eq!(attachments(&back), attachments(&original));
        }

        // OpenAI: user, assistant, one tool message per result in order, then at most one
        // user message carrying every image once, in order, and the person's text last.
        let body = openai::request_body(&req);
        let messages = body["messages"].as_array().unwrap();
        let rest = &messages[2..];
        prop_assert!(rest.len() >= results.len());
        for (i, m) in rest[..results.len()].iter().enumerate() {
            prop_assert_eq!(&m["role"], "tool");
            prop_assert_eq!(&m["tool_call_id"], &format!("c{i}"));
            let (blocks, is_error) = &results[i];
            let content = m["content"].as_str().unwrap_or_default();
            if blocks
                .iter()
                .all(|b| matches!(b, ToolResultBlock::Text { .. }))
            {
                let text = ToolResultContent(blocks.clone()).text().into_owned();
                let expected = if *is_error && !text.starts_with("Error") {
                    format!("Error: {text}")
                } else {
                    text
                };
                prop_assert_eq!(content, expected.as_str());
            }
        }
        let after = &rest[results.len()..];
        let urls = image_urls(&results);
        prop_assert!(after.len() <= 1, "{after:?}");
        match after.first() {
            None => prop_assert!(urls.is_empty() && text.is_none()),
            Some(user) => {
                prop_assert_eq!(&user["role"], "user");
                match &user["content"] {
                    Value::String(s) => {
                        prop_assert!(urls.is_empty());
                        prop_assert_eq!(Some(s.as_str()), text.as_deref());
                    }
                    Value::Array(parts) => {
                        let sent: Vec<String> = parts
                            .iter()
                            .filter_map(|p| p["image_url"]["url"].as_str().map(String::from))
                            .collect();
                        prop_assert_eq!(&sent, &urls);
                        if let Some(t) = &text {
                            prop_assert_eq!(&parts.last().unwrap()["text"], t.as_str());
                        }
                    }
                    other => prop_assert!(false, "user content {other}"),
                }
            }
        }
        Ok(())
    });
}
