//! Hot paths of the permission gate: shell analysis, rule matching, and a whole check with a
//! realistic rule set. Run: `cargo bench --bench permissions`.

use std::hint::black_box;
use std::sync::Arc;

use cairn::config::load_settings;
use cairn::hooks::PreToolAnswer;
use cairn::permissions::{CallInfo, GateConfig, PermissionGate};
use cairn::protocol::PermissionMode;
use cairn::rules::{Rule, RuleContext, Target};
use cairn::session::context::{EventSender, SessionContext};
use cairn::shell;
use cairn::tools::DynTool;
use cairn::tools::bash::{BackgroundShells, BashTool};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

const LINE: &str = "cd src && timeout 60 cargo test --lib -- --nocapture 2>&1 | tee /dev/null; git status && git diff --stat | wc -l";

fn bench(c: &mut Criterion) {
    c.bench_function("shell::analyze compound line", |b| {
        b.iter(|| shell::analyze(black_box(LINE)))
    });
    let ctx = RuleContext {
        root: "/p".into(),
        cwd: "/p".into(),
        home: Some("/home/u".into()),
    };
    let rules: Vec<Rule> = (0..50)
        .map(|i| Rule::parse(&format!("Bash(tool{i} sub *)"), &ctx).unwrap())
        .chain((0..50).map(|i| Rule::parse(&format!("Read(./dir{i}/**)"), &ctx).unwrap()))
        .collect();
    c.bench_function("100 rules against one command and one path", |b| {
        b.iter(|| {
            rules.iter().any(|r| {
                r.matches_target(Target::Command(black_box("tool49 sub x")), true)
                    || r.matches_target(Target::Read(black_box("/p/dir49/a/b.rs".as_ref())), true)
            })
        })
    });

    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(proj.join(".git")).unwrap();
    std::fs::create_dir_all(proj.join(".claude")).unwrap();
    let allow: Vec<String> = (0..100).map(|i| format!("Bash(tool{i} *)")).collect();
    let deny: Vec<String> = (0..100).map(|i| format!("Read(./secret{i}/**)")).collect();
    std::fs::write(
        proj.join(".claude/settings.json"),
        json!({ "permissions": { "allow": allow, "deny": deny } }).to_string(),
    )
    .unwrap();
    let settings = load_settings(&proj, None, &|_| None, cairn::config::Trust::Trusted);
    let gate = PermissionGate::new(GateConfig {
        settings: &settings,
        cli_allow: vec![],
        cli_deny: vec![],
        mode: PermissionMode::Default,
        interactive: true,
        project_dir: proj.clone(),
        additional_dirs: vec![],
        session_data_dir: proj.join("data"),
        running_as_root: false,
        sandboxed: false,
    })
    .unwrap();
    let (events, _rx) = EventSender::channel();
    let session = Arc::new(SessionContext::new(
        "b".into(),
        proj.clone(),
        vec![],
        proj.join("data"),
        events,
    ));
    let input = json!({ "command": "tool99 build && ls -la | wc -l" });
    let bash = BashTool::new(Arc::new(BackgroundShells::new()));
    let parsed = bash.parse(&input).unwrap();
    let accesses = DynTool::accesses(&bash, &parsed, &session);
    c.bench_function("gate.check Bash with 200 rules", |b| {
        b.iter(|| {
            let info = CallInfo {
                call_id: "c",
                conversation: &session.conversation,
                tool: &bash,
                input: &parsed,
                raw_input: &input,
                title: "t",
                accesses: &accesses,
                preview: None,
            };
            gate.check(&info, &PreToolAnswer::default())
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
