//! Hot paths of the file tools: an Edit of one line in a 10 MiB file (read, match, diff,
//! atomic write with fsync) and a Read of a 2,000-line file.

use std::hint::black_box;
use std::sync::Arc;

use cairn::session::context::SessionContext;
use cairn::tools::edit::EditTool;
use cairn::tools::read::ReadTool;
use cairn::tools::{DynTool, ProgressSender, ToolContext};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn ctx(session: &Arc<SessionContext>) -> ToolContext {
    ToolContext {
        called_as: None,
        session: session.clone(),
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
        progress: ProgressSender::new("bench".into(), session.events.clone()),
        preview: None,
        content_override: None,
        answers: None,
        deferred: Default::default(),
    }
}

/// The executor's steps: parse, validate, preview, call with that preview.
async fn run(tool: &dyn DynTool, ctx: &mut ToolContext, input: &Value) -> String {
    let parsed = tool.parse(input).expect("parse");
    tool.validate(&parsed, ctx).await.expect("validate");
    ctx.preview = tool.preview(&parsed, ctx).await.expect("preview");
    let out = tool.call(parsed, ctx).await.expect("call");
    ctx.preview = None;
    out.content.into_text()
}

fn bench_edit_10mib(c: &mut Criterion) {
    // The binary tunes the allocator first thing; measure what it does.
    cairn::host::tune_allocator();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("big.txt");
    // 10 MiB of 64-byte lines, just under the streaming threshold.
    let line_count = (10 * 1024 * 1024) / 64 - 1;
    let text: String = (0..line_count)
        .map(|i| format!("{:<63}\n", format!("line {i} of a large generated file")))
        .collect();
    std::fs::write(&path, &text).expect("write");
    let session = SessionContext::for_dir(tmp.path());
    let mut cx = ctx(&session);
    let file = path.display().to_string();
    // Edit needs the lines it changes to have been read.
    rt.block_on(run(
        &ReadTool,
        &mut cx,
        &json!({"file_path": file, "offset": 81_900, "limit": 50}),
    ));
    let target = format!("{:<63}", "line 81920 of a large generated file");
    let changed = format!("{:<63}", "line 81920 was edited by the benchmark");
    let forward = json!({"file_path": file, "old_string": target, "new_string": changed});
    let back = json!({"file_path": file, "old_string": changed, "new_string": target});
    let edit = EditTool::default();
    let mut flip = false;
    c.bench_function("edit one line in a 10 MiB file", |b| {
        b.iter(|| {
            flip = !flip;
            let input = if flip { &forward } else { &back };
            black_box(rt.block_on(run(&edit, &mut cx, input)));
        })
    });
}

fn bench_read_2000_lines(c: &mut Criterion) {
    // These 2,000 lines are ~44,000 tokens, over Read's default limit of 25,000: raise it so
    // the bench measures a read that passes, with the closer token count (the dearer path of
    // the limit check) included. Runs first, before any Read fixes the limits, and before any
    // other thread exists.
    // SAFETY: single-threaded at this point; nothing reads the environment concurrently.
    unsafe { std::env::set_var("CAIRN_FILE_READ_MAX_OUTPUT_TOKENS", "100000") };
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let path = tmp.path().join("src.rs");
    let text: String = (0..2000)
        .map(|i| format!("    let value_{i} = compute({i}, \"some text\"); // comment\n"))
        .collect();
    std::fs::write(&path, &text).expect("write");
    let input = json!({"file_path": path.display().to_string()});
    c.bench_function("read a 2,000-line file", |b| {
        b.iter_batched(
            // A fresh session each time, so the unchanged-file shortcut never answers.
            || {
                let session = SessionContext::for_dir(tmp.path());
                ctx(&session)
            },
            |mut cx| black_box(rt.block_on(run(&ReadTool, &mut cx, &input))),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench_read_2000_lines, bench_edit_10mib);
criterion_main!(benches);
