//! ToolSearch over 500 synthetic deferred tools (issue 11: under 1 ms): a keyword query, a
//! required-word query and a `select:` of three names, each answered from the session's
//! catalog as the tool does. Run: `cargo bench --bench tool_search`.

use std::hint::black_box;

use cairn::tools::tool_search::{DeferredTools, Entry};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// 500 tools over 20 servers, named and described like real MCP tools.
fn catalog() -> DeferredTools {
    let verbs = [
        "create", "list", "get", "update", "delete", "search", "send", "read", "write", "sync",
    ];
    let things = [
        "issue",
        "pull_request",
        "message",
        "channel",
        "file",
        "page",
        "record",
        "ticket",
        "comment",
        "branch",
        "user",
        "event",
        "invoice",
        "dashboard",
        "query",
        "document",
        "label",
        "milestone",
        "webhook",
        "report",
        "project",
        "task",
        "note",
        "calendar",
        "alert",
    ];
    let mut entries = Vec::new();
    for server in 0..20 {
        for (i, thing) in things.iter().enumerate() {
            let verb = verbs[(i + server) % verbs.len()];
            let name = format!("mcp__server{server}__{verb}_{thing}");
            let description = format!(
                "{} a {} in the service behind server {server}. Returns the {} as JSON, with \
                 its id, title, status and the time it was last changed.",
                verb.to_uppercase(),
                thing.replace('_', " "),
                thing.replace('_', " ")
            );
            let schema = json!({"type": "object", "properties": {
                "id": {"type": "string"}, "title": {"type": "string"},
                "limit": {"type": "integer"}}});
            entries.push(Entry::new(name, description, schema));
        }
    }
    assert_eq!(entries.len(), 500);
    let tools = DeferredTools::default();
    tools.publish(entries);
    tools
}

fn bench(c: &mut Criterion) {
    let tools = catalog();
    let mut group = c.benchmark_group("ToolSearch over 500 deferred tools");
    group.bench_function("keyword query \"create pull request\"", |b| {
        b.iter(|| tools.find(black_box("create pull request"), 5))
    });
    group.bench_function("required word \"+server7 send message\"", |b| {
        b.iter(|| tools.find(black_box("+server7 send message"), 5))
    });
    group.bench_function("select: three names", |b| {
        b.iter(|| {
            tools.find(
                black_box(
                    "select:mcp__server3__get_file,mcp__server19__sync_alert,mcp__server0__list_issue",
                ),
                5,
            )
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
