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
    let out = output_from_result(
        "ev",
        &json!({"content": [
            {"type": "text", "text": "hello"},
            {"type": "image", "mimeType": "image/png", "data": "iVBORw0KGgo="},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "inside"}},
            {"type": "resource", "resource": {"uri": "file:///b.bin", "mimeType": "application/zip", "blob": "AAAA"}},
            {"type": "resource_link", "uri": "file:///c", "name": "c", "description": "a file"},
            {"type": "weird"}
        ]}),
    );
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
    assert!(
        text.contains("[Resource from ev at file:///a.txt] inside"),
        "{text}"
    );
    assert!(
        text.contains(
            "[Resource from ev at file:///b.bin] [binary content (application/zip, 3 bytes) not shown]"
        ),
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
        "ev",
        &json!({"content": [], "structuredContent": {"sum": 3}, "isError": true}),
    );
    assert!(out.is_error);
    assert!(out.content.text().contains("\"sum\": 3"));
    let out = output_from_result("ev", &json!({}));
    assert_eq!(out.content.text(), "(no content)");
    // People are shown a bounded copy of a long text; the model's content is whole here
    // (the executor spills it).
    let long = "y".repeat(1_000_000);
    let out = output_from_result("ev", &json!({"content": [{"type": "text", "text": long}]}));
    assert_eq!(out.content.text().len(), 1_000_000);
    let Display::Text { text } = &out.display else {
        panic!("{:?}", out.display);
    };
    assert!(text.chars().count() <= MAX_DISPLAY_CHARS, "{}", text.len());
    // A bad image (unknown type) becomes a text note, not a block the API would refuse.
    let out = output_from_result(
        "ev",
        &json!({"content": [{"type": "image", "mimeType": "image/x-evil", "data": "AAAA"}]}),
    );
    assert!(out.content.is_text_only());
}

/// A tool of server `server` as the server lists it (wire JSON).
fn listed(server: &str, tool: Value) -> McpTool {
    let config = super::super::config::ServerConfig {
        name: server.into(),
        scope: super::super::config::Scope::Cli,
        source: "test".into(),
        transport: super::super::config::Transport::Stdio {
            command: "true".into(),
            args: vec![],
            env: vec![],
        },
    };
    let options = super::super::server::McpOptions::from_env(".".into(), &|_| None);
    let changed = Arc::new(tokio::sync::watch::channel(0).0);
    let server = Server::new(config, options, changed, Arc::new(|_: &Arc<Server>| {}));
    let remote: rmcp::model::Tool = serde_json::from_value(tool).unwrap();
    McpTool::new(server, &remote, false, 100)
}

#[test]
fn annotations_never_make_a_tool_read_only_for_the_gate() {
    let schema = json!({"type": "object"});
    let hinted = listed(
        "safe",
        json!({"name": "wipe", "inputSchema": schema, "annotations": {"readOnlyHint": true}}),
    );
    let input = hinted.parse(&json!({})).unwrap();
    assert!(
        !hinted.is_read_only(&input),
        "readOnlyHint is a claim, not a permission"
    );
    assert!(
        hinted.is_concurrency_safe(&input),
        "it may still run beside others"
    );
    assert!(!hinted.is_destructive(&input));
    let both = listed(
        "safe",
        json!({"name": "w", "inputSchema": schema,
               "annotations": {"readOnlyHint": true, "destructiveHint": true}}),
    );
    let input = both.parse(&json!({})).unwrap();
    assert!(!both.is_read_only(&input) && !both.is_concurrency_safe(&input));
    assert!(both.is_destructive(&input));
    let plain = listed("safe", json!({"name": "x", "inputSchema": schema}));
    let input = plain.parse(&json!({})).unwrap();
    assert!(!plain.is_read_only(&input) && !plain.is_concurrency_safe(&input));
}

#[test]
fn a_tool_carries_its_server_and_tool_apart() {
    let tool = listed(
        "my server",
        json!({"name": "evil__wipe", "inputSchema": {"type": "object"}}),
    );
    assert_eq!(tool.name(), "mcp__my_server__evil__wipe");
    assert_eq!(
        tool.mcp_name(),
        Some(McpName {
            server: "my_server",
            tool: "evil__wipe"
        })
    );
    assert_eq!(tool.kind(), ToolKind::Mcp);
}
