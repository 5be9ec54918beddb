//! The LSP tool against a warm clangd (issue 24's targets): what a `goToDefinition` call costs
//! over the server's own answer (target ≤ 5 ms), how soon after clangd publishes diagnostics
//! for an edit the model's reminder is queued (target ≤ 300 ms), and what looking up the
//! built-in servers costs a session's start (servers themselves start on first use).
//! Run: `cargo bench --bench lsp` (needs `clangd` on PATH; says so and measures nothing
//! without it).

use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_lsp::lsp_types::request::GotoDefinition;
use async_lsp::lsp_types::{
    GotoDefinitionParams, Position, TextDocumentIdentifier, TextDocumentPositionParams, Url,
};
use cairn::lsp::LspManager;
use cairn::lsp::tool::LspTool;
use cairn::permissions::ReadGuard;
use cairn::session::context::SessionContext;
use cairn::tools::edit::EditTool;
use cairn::tools::read::ReadTool;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

#[path = "support/tools.rs"]
mod tools;
use cairn::tools::ToolContext;
use tools::{ctx, run};

const HEADER: &str = "struct point { int x; int y; };\nint norm(struct point p);\n";
const MAIN: &str = "#include \"point.h\"\n\nint norm(struct point p) { return p.x * p.x + p.y * p.y; }\n\nint main(void) {\n    struct point p = {1, 2};\n    return norm(p);\n}\n";

fn manager(dir: &Path) -> Arc<LspManager> {
    let path = std::env::var("PATH").unwrap_or_default();
    let (specs, _) = cairn::lsp::spec::resolve(&[], Some(&path), dir, &BTreeMap::new());
    Arc::new(LspManager::new(specs, dir.join(".data/lsp")))
}

fn bench_lsp(c: &mut Criterion) {
    if which("clangd").is_none() {
        eprintln!("clangd is not on PATH: nothing measured (apt-get install clangd)");
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().canonicalize().expect("canonical");
    std::fs::create_dir_all(dir.join(".git")).expect("git");
    std::fs::write(dir.join("point.h"), HEADER).expect("write");
    std::fs::write(dir.join("main.c"), MAIN).expect("write");
    let main_c = dir.join("main.c");
    let session = SessionContext::for_dir(&dir);
    let mut cx = ctx(&session);
    let manager = manager(&dir);
    let tool = LspTool::new(Arc::clone(&manager), ReadGuard::none());
    let input =
        json!({"operation": "goToDefinition", "filePath": "main.c", "line": 7, "character": 12});

    // Warm: the server started, the file open and indexed, one answer given.
    let first = rt.block_on(run(&tool, &mut cx, &input));
    assert!(first.starts_with("Found 1 definition"), "{first}");
    let (server, _) = rt
        .block_on(manager.server_for(&main_c, &dir))
        .expect("server");
    let params = GotoDefinitionParams {
        text_document_position_params: TextDocumentPositionParams {
            text_document: TextDocumentIdentifier {
                uri: Url::from_file_path(&main_c).expect("uri"),
            },
            position: Position::new(6, 11),
        },
        work_done_progress_params: Default::default(),
        partial_result_params: Default::default(),
    };

    let mut group = c.benchmark_group("lsp");
    group.bench_function("goToDefinition: clangd's own answer", |b| {
        b.iter(|| {
            black_box(
                rt.block_on(server.request::<GotoDefinition>(params.clone()))
                    .expect("answer"),
            )
        })
    });
    group.bench_function("goToDefinition: the LSP tool call", |b| {
        b.iter(|| black_box(rt.block_on(run(&tool, &mut cx, &input))))
    });
    group.bench_function("resolve the built-in servers on PATH", |b| {
        let path = std::env::var("PATH").unwrap_or_default();
        b.iter(|| {
            black_box(cairn::lsp::spec::resolve(
                &[],
                Some(&path),
                &dir,
                &BTreeMap::new(),
            ))
        })
    });
    group.finish();

    diagnostics_latency(&rt, &manager, &session, &mut cx, &main_c);
    rt.block_on(manager.shutdown());
}

/// Edits that break and then fix a call, each followed by the after-edit check: the time from
/// clangd's `publishDiagnostics` arriving to the reminder being queued for the model.
fn diagnostics_latency(
    rt: &tokio::runtime::Runtime,
    manager: &LspManager,
    session: &Arc<SessionContext>,
    cx: &mut ToolContext,
    main_c: &Path,
) {
    let file = main_c.display().to_string();
    rt.block_on(run(&ReadTool, cx, &json!({"file_path": file})));
    let uri = Url::from_file_path(main_c).expect("uri");
    let (server, _) = manager
        .running_for(main_c, main_c.parent().expect("dir"))
        .expect("running");
    let edit = EditTool::default();
    let mut lags = Vec::new();
    for i in 0..40 {
        let (from, to) = if i % 2 == 0 {
            ("return norm(p);", "return norm(3);")
        } else {
            ("return norm(3);", "return norm(p);")
        };
        rt.block_on(run(
            &edit,
            cx,
            &json!({"file_path": file, "old_string": from, "new_string": to}),
        ));
        rt.block_on(manager.settle_checks());
        let queued = Instant::now();
        let reminders = session.take_reminders();
        if i % 2 == 0 {
            assert!(
                reminders.iter().any(|r| r.contains("New diagnostics")),
                "{reminders:?}"
            );
            let published = server.state.diagnostics(&uri).expect("published");
            lags.push(queued.saturating_duration_since(published.received));
        }
    }
    lags.sort();
    let at = |q: f64| lags[((lags.len() - 1) as f64 * q) as usize];
    println!(
        "lsp/diagnostics: publish → reminder queued over {} breaking edits: median {:?}, p95 {:?}, max {:?}",
        lags.len(),
        at(0.5),
        at(0.95),
        lags.last().copied().unwrap_or(Duration::ZERO)
    );
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

criterion_group!(benches, bench_lsp);
criterion_main!(benches);
