use super::*;
use serde_json::json;

#[test]
fn names_are_normalised_like_claude_code() {
    assert_eq!(tool_name("my server", "get.sum"), "mcp__my_server__get_sum");
    assert_eq!(tool_name("fs-1", "read_file"), "mcp__fs-1__read_file");
    assert_eq!(tool_prefix("a/b"), "mcp__a_b__");
}

#[test]
fn results_become_blocks_of_each_kind() {
    let out = output_from_result(&json!({"content": [
        {"type": "text", "text": "hello"},
        {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
        {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
        {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": "AAAA"}},
        {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "a file"},
        {"type": "weird"}
    ]}));
    assert!(!out.is_error);
    let blocks = out.content.blocks();
    assert_eq!(blocks.len(), 6);
    assert_eq!(
        blocks[0],
        ToolResultBlock::Text {
            text: "hello".into()
        }
    );
    assert!(
        matches!(&blocks[1], ToolResultBlock::Image { .. }),
        "{:?}",
        blocks[1]
    );
    let text = out.content.text();
    assert!(text.contains("inside"));
    assert!(
        text.contains("[binary resource file:///b.bin (application/zip, 3 bytes) not shown]"),
        "{text}"
    );
    assert!(
        text.contains("[Resource link: c (file:///c): a file]"),
        "{text}"
    );
    assert!(
        text.contains("unsupported content type \"weird\""),
        "{text}"
    );
}

#[test]
fn structured_content_shows_when_there_is_no_text_and_is_error_carries() {
    let out = output_from_result(
        &json!({"content": [], "structuredContent": {"sum": 3}, "isError": true}),
    );
    assert!(out.is_error);
    assert!(out.content.text().contains("\"sum\": 3"));
    let out = output_from_result(&json!({}));
    assert_eq!(out.content.text(), "(no content)");
    // A bad image (unknown type) becomes a text note, not a block the API would refuse.
    let out = output_from_result(
        &json!({"content": [{"type": "image", "mimeType": "image/x-evil", "data": "AAAA"}]}),
    );
    assert!(out.content.is_text_only());
}
