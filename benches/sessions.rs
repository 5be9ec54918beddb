//! Sessions that last: reading back and rebuilding a long session's transcript, which is what
//! `--continue` / `--resume` do before the first request; and the whole of it end to end, the
//! release binary resuming that session with `-p` against `cairn mock-server` on 127.0.0.1
//! (start, load, the first request carrying the 2,001 messages, a one-line answer, the
//! transcript appended, exit), beside the same one-turn `-p` without a session to resume.
//! Run: `cargo bench --bench sessions`.

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
    let messages = resume::load(&path).unwrap().messages;
    let request = cairn::llm::ModelRequest {
        model: "claude-sonnet-4-5".into(),
        system: "You are cairn.".into(),
        messages,
        tools: Vec::new(),
        max_tokens: 8192,
        thinking_budget: None,
        reasoning_effort: None,
        server_tools: Vec::new(),
    };
    group.bench_function(
        "its first request's body (Anthropic), built and serialised",
        |b| b.iter(|| cairn::llm::anthropic::request_json(black_box(&request))),
    );
    group.bench_function("list the sessions of a project (1 long)", |b| {
        b.iter(|| resume::list(black_box(dir.path())))
    });
    group.finish();
}

/// `cairn mock-server` answering every request with one line, and its port.
fn mock_server() -> (std::process::Child, u16) {
    use std::io::BufRead;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["mock-server", "--port", "0", "--script"])
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/assets/bench/one-turn.json"
        ))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let port = lines
        .find_map(|line| {
            let line = line.ok()?;
            let at = line.find("127.0.0.1:")? + "127.0.0.1:".len();
            let digits: String = line[at..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().ok()
        })
        .expect("the mock server names its port");
    (child, port)
}

fn bench_resume_end_to_end(c: &mut Criterion) {
    let data = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project_data = cairn::host::project_data_dir(data.path(), project.path());
    std::fs::create_dir_all(&project_data).unwrap();
    // The transcript is `long.jsonl`: session id "long".
    long_session(&project_data, 1000);
    let (mut server, port) = mock_server();
    let run = |args: &[&str]| {
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(args)
            .current_dir(project.path())
            .env("CAIRN_DATA_DIR", data.path())
            .env("HOME", data.path())
            .env("ANTHROPIC_BASE_URL", format!("http://127.0.0.1:{port}"))
            .env("ANTHROPIC_API_KEY", "bench")
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
    };
    let mut group = c.benchmark_group("resume end to end");
    group.sample_size(20);
    group.bench_function("cairn -p next, no session to resume", |b| {
        b.iter(|| run(&["-p", "next"]))
    });
    group.bench_function("cairn -p next --resume <a 2,001-message session>", |b| {
        b.iter(|| run(&["-p", "next", "--resume", "long"]))
    });
    group.finish();
    let _ = server.kill();
}

criterion_group!(benches, bench_resume, bench_resume_end_to_end);
criterion_main!(benches);
