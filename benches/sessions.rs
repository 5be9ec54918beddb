//! Sessions that last: reading back and rebuilding a long session's transcript, which is what
//! `--continue` / `--resume` do before the first request. Run: `cargo bench --bench sessions`.

use std::hint::black_box;

use cairn::llm::{ContentBlock, Message, Role, ToolResultContent};
use cairn::protocol::Usage;
use cairn::session::resume;
use cairn::session::transcript::{Record, Transcript};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

/// A transcript of `pairs` tool rounds (2 * `pairs` messages): each an assistant message with
/// some text and a Read call, then its 2 KB result; with the records a real session writes.
fn long_session(dir: &std::path::Path, pairs: usize) -> std::path::PathBuf {
    let path = dir.join("long.jsonl");
    let mut t = Transcript::at(path.clone(), "long").with_header(dir, Some("main".into()));
    t.append(&Message::user_text("refactor the parser module"));
    let result = "    let x = parse(input)?; // a line of source code\n".repeat(40);
    for i in 0..pairs {
        let blocks = vec![
            ContentBlock::Text {
                text: format!("Looking at part {i} of the parser next."),
            },
            ContentBlock::ToolUse {
                id: format!("call-{i}"),
                name: "Read".into(),
                input: json!({"file_path": format!("src/parser/part{i}.rs")}),
            },
        ];
        t.record(&Record::Partial {
            blocks: blocks.clone(),
        });
        t.append(&Message {
            role: Role::Assistant,
            content: blocks,
        });
        t.record(&Record::Usage {
            model: "claude-sonnet-4-5".into(),
            usage: Usage {
                input_tokens: 1200,
                output_tokens: 80,
                ..Usage::default()
            },
        });
        t.append(&Message {
            role: Role::User,
            content: vec![ContentBlock::ToolResult {
                tool_use_id: format!("call-{i}"),
                content: ToolResultContent::from(result.clone()),
                is_error: false,
            }],
        });
    }
    path
}

fn bench_resume(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let path = long_session(dir.path(), 1000);
    let size = std::fs::metadata(&path).unwrap().len();
    let mut group = c.benchmark_group("resume");
    group.sample_size(20);
    group.bench_function(
        format!("load a 2,001-message session ({} MiB)", size >> 20),
        |b| b.iter(|| resume::load(black_box(&path)).unwrap()),
    );
    group.bench_function("list the sessions of a project (1 long)", |b| {
        b.iter(|| resume::list(black_box(dir.path())))
    });
    group.finish();
}

criterion_group!(benches, bench_resume);
criterion_main!(benches);
