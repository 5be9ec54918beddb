//! The LSP tool against real language servers (pyright and typescript-language-server from npm,
//! clangd from Debian; `.ci/run` installs them, pinned) through the real core: the scripted model calls the tool, the gate
//! and the executor run as in a session, and the tests read what the model was sent. Without a
//! server a language's tests say so loudly and pass, unless `CI` is set, where they fail.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use cairn::config::load_settings;
use cairn::llm::Provider;
use cairn::lsp::LspManager;
use cairn::lsp::tool::LspTool;
use cairn::permissions::PermissionGate;
use cairn::protocol::{Decision, Display, EditedFile, LspState, PermissionRequest, TurnEnd};
use serde_json::{Value, json};

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, gate_with_settings, tool_results};

/// The PATH the servers are looked up on: the npm-installed ones first.
fn server_path() -> String {
    let candidates = [
        std::env::var_os("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("lsp-servers")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/lsp-servers")),
    ];
    let mut dirs: Vec<PathBuf> = candidates
        .into_iter()
        .flatten()
        .map(|d| d.join("node_modules/.bin"))
        .collect();
    dirs.extend(std::env::split_paths(
        &std::env::var("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs)
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The manager with the built-in servers found on [`server_path`], or None (after saying
/// loudly why) when `program` is not among them; under `CI` a missing server fails the test.
fn manager_with(program: &str, dir: &Path) -> Option<Arc<LspManager>> {
    let path = server_path();
    let found = std::env::split_paths(&path).any(|d| d.join(program).is_file());
    if !found {
        let msg = format!(
            "`{program}` is not installed: `npm ci --prefix target/lsp-servers` with \
             tests/lsp-servers/package.json, and `apt-get install clangd` (as .ci/run does)"
        );
        if std::env::var_os("CI").is_some() {
            panic!("{msg}");
        }
        eprintln!("\n!!!!!!!!!! SKIPPED: {msg} !!!!!!!!!!\n");
        return None;
    }
    let (specs, problems) = cairn::lsp::spec::resolve(&[], Some(&path), dir, &BTreeMap::new());
    assert!(problems.is_empty(), "{problems:?}");
    Some(Arc::new(LspManager::new(specs, dir.join(".data/lsp"))))
}

/// A project in a temp dir with `files`, and its settings file when given.
fn project(files: &[(&str, &str)], settings: Option<Value>) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).unwrap();
    }
    if let Some(s) = settings {
        std::fs::create_dir_all(dir.join(".claude")).unwrap();
        std::fs::write(dir.join(".claude/settings.json"), s.to_string()).unwrap();
    }
    (tmp, dir)
}

fn gate(dir: &Path) -> PermissionGate {
    let home = dir.join(".home");
    std::fs::create_dir_all(&home).unwrap();
    let home = home.to_string_lossy().into_owned();
    let env = move |k: &str| (k == "HOME").then(|| home.clone());
    let settings = load_settings(dir, None, &env, cairn::config::Trust::Trusted);
    assert!(
        settings.diagnostics.is_empty(),
        "{:?}",
        settings.diagnostics
    );
    gate_with_settings(dir, &settings)
}

/// Run one prompt in which the model makes each of `turns`' calls in turn (every permission
/// request allowed), then ends; return the agent for reading its requests.
async fn run(dir: &Path, manager: Arc<LspManager>, turns: Vec<Vec<Value>>) -> Agent {
    let mut script_turns: Vec<Value> = turns
        .into_iter()
        .map(|calls| json!({ "tool_calls": calls }))
        .collect();
    script_turns.push(json!({"text": "done"}));
    let mut agent = Agent::start(&json!({ "turns": script_turns }), lsp_setup(dir, manager));
    agent.submit("look");
    let events = agent.run_turn().await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    agent
}

/// A session in `dir` whose one extra tool is the LSP tool over `manager`.
fn lsp_setup(dir: &Path, manager: Arc<LspManager>) -> Setup {
    let mut setup = Setup::in_dir(dir, Provider::Anthropic);
    setup.transcript = false;
    let gate = gate(dir);
    setup.tools = vec![Arc::new(LspTool::new(manager, gate.read_guard()))];
    setup.gate = gate;
    setup
}

fn lsp(id: &str, input: Value) -> Value {
    json!({"id": id, "name": "LSP", "input": input})
}

const PY_LIB: &str = "def greet(name: str) -> str:\n    \"\"\"Say hello to someone.\"\"\"\n    \
                      return \"hello \" + name\n\n\nclass Greeter:\n    def run(self) -> str:\n        \
                      return greet(\"world\")\n";
const PY_APP: &str = "from lib import greet\n\n\ndef main() -> None:\n    print(greet(\"you\"))\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_definition_references_hover_symbols_and_callers_come_from_pyright() {
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], None);
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let calls = vec![
        lsp(
            "c1",
            json!({"operation": "goToDefinition", "filePath": "app.py", "line": 5, "character": 11}),
        ),
        lsp(
            "c2",
            json!({"operation": "findReferences", "filePath": "lib.py", "line": 1, "character": 5}),
        ),
        lsp(
            "c3",
            json!({"operation": "hover", "filePath": "lib.py", "line": 1, "character": 5}),
        ),
        lsp(
            "c4",
            json!({"operation": "documentSymbol", "filePath": "lib.py"}),
        ),
        lsp(
            "c5",
            json!({"operation": "incomingCalls", "filePath": "lib.py", "line": 1, "character": 5}),
        ),
        lsp(
            "c6",
            json!({"operation": "outgoingCalls", "filePath": "lib.py", "line": 7, "character": 9}),
        ),
    ];
    let agent = run(&dir, Arc::clone(&manager), vec![calls]).await;
    let results = tool_results(&agent.request_body(1));
    let texts: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert!(results.iter().all(|(_, err)| !err), "{texts:#?}");
    assert_eq!(
        texts[0],
        "Found 1 definition in 1 file:\n\nlib.py:\n  1:5: def greet(name: str) -> str:"
    );
    assert!(
        texts[1].starts_with("Found 4 references in 2 files:"),
        "{}",
        texts[1]
    );
    for line in [
        "lib.py:\n  1:5: def greet(name: str) -> str:\n  8:16: return greet(\"world\")",
        "app.py:\n  1:17: from lib import greet\n  5:11: print(greet(\"you\"))",
    ] {
        assert!(texts[1].contains(line), "{line} in {}", texts[1]);
    }
    assert!(
        texts[2].contains("def greet(name: str) -> str")
            && texts[2].contains("Say hello to someone."),
        "{}",
        texts[2]
    );
    assert!(texts[3].starts_with("Symbols in lib.py:\n"), "{}", texts[3]);
    for line in ["Function greet", "Class Greeter", "\n  Method run"] {
        assert!(texts[3].contains(line), "{line} in {}", texts[3]);
    }
    assert!(
        texts[4].starts_with("Found 2 callers of greet:"),
        "{}",
        texts[4]
    );
    assert!(
        texts[4].contains("main — app.py:4:5 (calls at 5:11)"),
        "{}",
        texts[4]
    );
    assert!(
        texts[4].contains("run — lib.py:7:9 (calls at 8:16)"),
        "{}",
        texts[4]
    );
    assert!(
        texts[5].contains("greet — lib.py:1:5 (called at 8:16)"),
        "{}",
        texts[5]
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_location_in_a_denied_path_is_withheld_and_said_so() {
    let settings = json!({"permissions": {"deny": ["Read(./lib.py)"]}});
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], Some(settings));
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let calls = vec![
        lsp(
            "c1",
            json!({"operation": "goToDefinition", "filePath": "app.py", "line": 5, "character": 11}),
        ),
        lsp(
            "c2",
            json!({"operation": "hover", "filePath": "lib.py", "line": 1, "character": 5}),
        ),
    ];
    let agent = run(&dir, Arc::clone(&manager), vec![calls]).await;
    let results = tool_results(&agent.request_body(1));
    assert_eq!(
        results[0].0,
        "No definition found.\n\n(1 result in paths that permission rules deny reading was withheld.)"
    );
    // Asking about the denied file itself is refused before any server sees it.
    assert!(results[1].1, "{results:?}");
    assert!(results[1].0.contains("Read(./lib.py)"), "{results:?}");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_that_breaks_a_type_is_reported_with_its_line_and_the_fix_brings_nothing_new() {
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], None);
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let symbols = |id: &str| {
        lsp(
            id,
            json!({"operation": "documentSymbol", "filePath": "app.py"}),
        )
    };
    let edit = |id: &str, from: &str, to: &str| {
        json!({"id": id, "name": "Edit", "input": {
            "file_path": dir.join("app.py"), "old_string": from, "new_string": to}})
    };
    let turns = vec![
        vec![
            json!({"id": "r1", "name": "Read", "input": {"file_path": dir.join("app.py")}}),
            lsp(
                "c1",
                json!({"operation": "hover", "filePath": "app.py", "line": 5, "character": 11}),
            ),
        ],
        vec![edit("e1", "greet(\"you\")", "greet(42)")],
        vec![symbols("c2")],
        vec![edit("e2", "greet(42)", "greet(\"you\")")],
        vec![symbols("c3")],
    ];
    let agent = run(&dir, Arc::clone(&manager), turns).await;
    // Queued by the time the next call's result goes out, at the latest.
    let after = agent.request_body(3).to_string();
    assert!(
        after.contains("New diagnostics in app.py after your edit (from pyright):\\n  line 5:17 error: Argument of type"),
        "{after}"
    );
    assert!(after.contains("reportArgumentType"), "{after}");
    // The fix: the server saw it (no diagnostics left for the file), and the model was told
    // nothing new after it — the LSP call waits for the check, so a reminder would be here.
    let (server, _) = manager.running_for(&dir.join("app.py"), &dir).unwrap();
    let uri = async_lsp::lsp_types::Url::from_file_path(dir.join("app.py")).unwrap();
    let left = server.state.diagnostics(&uri).unwrap().diagnostics;
    assert!(left.is_empty(), "{left:?}");
    let fixed = agent.request_body(5);
    let last = fixed["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .to_string();
    assert!(last.contains("Symbols in app.py"), "{last}");
    assert!(!last.contains("diagnostics"), "{last}");
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_killed_mid_session_is_started_again_by_the_next_call() {
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], None);
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let definition = |id: &str| {
        lsp(
            id,
            json!({"operation": "goToDefinition", "filePath": "app.py", "line": 5, "character": 11}),
        )
    };
    let script = json!({"turns": [
        {"tool_calls": [definition("c1")]}, {"text": "first"},
        {"tool_calls": [definition("c2")]}, {"text": "second"},
    ]});
    let mut agent = Agent::start(&script, lsp_setup(&dir, Arc::clone(&manager)));
    agent.prompt("where is greet?").await;

    let (server, _) = manager.running_for(&dir.join("app.py"), &dir).unwrap();
    let pid = server.pid().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-s", "KILL", "--", &format!("-{pid}")])
        .status()
        .unwrap();
    assert!(killed.success());
    // The transport notices the exit.
    for _ in 0..100 {
        if server.is_dead() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(server.is_dead());

    let events = agent.prompt("and now?").await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);
    let results = tool_results(&agent.request_body(3));
    let expected = "Found 1 definition in 1 file:\n\nlib.py:\n  1:5: def greet(name: str) -> str:";
    assert_eq!(results.last().unwrap(), &(expected.to_string(), false));
    let (again, _) = manager.running_for(&dir.join("app.py"), &dir).unwrap();
    assert_ne!(again.pid(), Some(pid));
    manager.shutdown().await;
}

const C_HEADER: &str = "struct point { int x; int y; };\nint norm(struct point p);\n";
const C_MAIN: &str = "#include \"point.h\"\n\nint norm(struct point p) { return p.x * p.x + p.y * p.y; }\n\nint main(void) {\n    struct point p = {1, 2};\n    return norm(p);\n}\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn c_definition_references_hover_and_symbols_come_from_clangd() {
    let (_tmp, dir) = project(
        &[
            ("point.h", C_HEADER),
            ("main.c", C_MAIN),
            ("compile_flags.txt", "-std=c11\n"),
        ],
        None,
    );
    let Some(manager) = manager_with("clangd", &dir) else {
        return;
    };
    let calls = vec![
        lsp(
            "c1",
            json!({"operation": "goToDefinition", "filePath": "main.c", "line": 6, "character": 12}),
        ),
        lsp(
            "c2",
            json!({"operation": "findReferences", "filePath": "main.c", "line": 7, "character": 12}),
        ),
        lsp(
            "c3",
            json!({"operation": "hover", "filePath": "main.c", "line": 7, "character": 12}),
        ),
        lsp(
            "c4",
            json!({"operation": "documentSymbol", "filePath": "main.c"}),
        ),
    ];
    let agent = run(&dir, Arc::clone(&manager), vec![calls]).await;
    let results = tool_results(&agent.request_body(1));
    let texts: Vec<&str> = results.iter().map(|(t, _)| t.as_str()).collect();
    assert!(results.iter().all(|(_, err)| !err), "{texts:#?}");
    assert_eq!(
        texts[0],
        "Found 1 definition in 1 file:\n\npoint.h:\n  1:8: struct point { int x; int y; };"
    );
    // clangd without a project index finds the references in the file's own translation unit.
    assert_eq!(
        texts[1],
        "Found 2 references in 1 file:\n\nmain.c:\n  3:5: int norm(struct point p) { return p.x \
         * p.x + p.y * p.y; }\n  7:12: return norm(p);"
    );
    assert!(
        texts[2].contains("int norm(struct point p)"),
        "{}",
        texts[2]
    );
    assert!(texts[3].starts_with("Symbols in main.c:\n"), "{}", texts[3]);
    for line in ["Function norm", "Function main"] {
        assert!(texts[3].contains(line), "{line} in {}", texts[3]);
    }
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_type_without_a_server_is_an_error_that_says_how_to_configure_one() {
    let (_tmp, dir) = project(&[("notes.xyz", "hello\n")], None);
    let manager = Arc::new(LspManager::new(Vec::new(), dir.join(".data/lsp")));
    let calls = vec![lsp(
        "c1",
        json!({"operation": "hover", "filePath": "notes.xyz", "line": 1, "character": 1}),
    )];
    let agent = run(&dir, manager, vec![calls]).await;
    let results = tool_results(&agent.request_body(1));
    assert!(results[0].1);
    assert_eq!(
        results[0].0,
        format!(
            "No language server is configured for .xyz files ({}). Install one of the built-in \
             servers on PATH (pyright-langserver, pylsp, typescript-language-server, clangd, \
             rust-analyzer, gopls), or declare one in settings: \"lspServers\": {{\"name\": \
             {{\"command\": \"...\", \"args\": [...], \"extensionToLanguage\": {{\".xyz\": \
             \"language-id\"}}}}}}. Use Grep and Read for this file meanwhile.",
            dir.join("notes.xyz").display()
        )
    );
}

/// A declared server running `sh -c script` for `.x` files, with a half-second start-up limit.
fn sh_server(dir: &Path, script: &str) -> Arc<LspManager> {
    let declared = vec![cairn::config::lsp_servers::LspServerSetting {
        name: "fake".into(),
        command: "sh".into(),
        args: vec!["-c".into(), script.into()],
        extension_to_language: [(".x".to_string(), "x".to_string())].into(),
        env: BTreeMap::new(),
        initialization_options: None,
        settings: None,
        startup_timeout_ms: Some(500),
        source: "test".into(),
    }];
    let path = std::env::var("PATH").unwrap_or_default();
    let (specs, problems) =
        cairn::lsp::spec::resolve(&declared, Some(&path), dir, &BTreeMap::new());
    assert!(problems.is_empty(), "{problems:?}");
    // Only the declared server covers `.x`.
    Arc::new(LspManager::new(specs, dir.join(".data/lsp")))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_never_answers_times_out_and_one_that_dies_is_retried_after_a_back_off() {
    let (_tmp, dir) = project(&[("a.x", "x\n")], None);
    let file = dir.join("a.x");

    let silent = sh_server(&dir, "sleep 30");
    let err = silent.server_for(&file, &dir).await.err().unwrap();
    assert!(
        err.0.starts_with(
            "language server `fake` did not answer `initialize` within 0.5 s (its log: "
        ),
        "{err}"
    );
    silent.shutdown().await;

    let dead = sh_server(&dir, "echo crashed >&2; exit 3");
    let err = dead.server_for(&file, &dir).await.err().unwrap();
    assert!(
        err.0
            .starts_with("language server `fake` failed to initialise"),
        "{err}"
    );
    // Its stderr went to its log.
    let log = std::fs::read_to_string(dir.join(".data/lsp/fake.log")).unwrap();
    assert!(log.contains("crashed"), "{log}");
    // Asked again at once: not started again before the back-off has passed.
    let again = dead.server_for(&file, &dir).await.err().unwrap();
    assert!(again.0.ends_with("(trying again in 1 s)"), "{again}");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    let later = dead.server_for(&file, &dir).await.err().unwrap();
    assert!(
        later
            .0
            .starts_with("language server `fake` failed to initialise"),
        "{later}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typescript_definition_implementation_and_workspace_symbols_wait_for_the_project() {
    let (_tmp, dir) = project(
        &[
            (
                "util.ts",
                "export function double(n: number): number {\n  return n * 2;\n}\n",
            ),
            (
                "main.ts",
                "import { double } from \"./util\";\n\nconsole.log(double(21));\n",
            ),
            (
                "shape.ts",
                "export interface Shape {\n  area(): number;\n}\n\nexport class Square implements Shape {\n  constructor(private side: number) {}\n  area(): number {\n    return this.side * this.side;\n  }\n}\n",
            ),
            (
                "tsconfig.json",
                "{\"compilerOptions\": {\"strict\": true}}\n",
            ),
        ],
        None,
    );
    let Some(manager) = manager_with("typescript-language-server", &dir) else {
        return;
    };
    let calls = vec![
        lsp(
            "c1",
            json!({"operation": "goToDefinition", "filePath": "main.ts", "line": 3, "character": 13}),
        ),
        lsp(
            "c2",
            json!({"operation": "goToImplementation", "filePath": "shape.ts", "line": 2, "character": 3}),
        ),
        lsp(
            "c3",
            json!({"operation": "workspaceSymbol", "filePath": "shape.ts", "query": "Square"}),
        ),
    ];
    let agent = run(&dir, Arc::clone(&manager), vec![calls]).await;
    let results = tool_results(&agent.request_body(1));
    assert_eq!(
        results[0].0,
        "Found 1 definition in 1 file:\n\nutil.ts:\n  1:17: export function double(n: number): number {"
    );
    assert_eq!(
        results[1].0,
        "Found 1 implementation in 1 file:\n\nshape.ts:\n  7:3: area(): number {"
    );
    assert_eq!(
        results[2].0.trim_end(),
        "Found 1 symbol matching \"Square\":\n  Class Square — shape.ts:5:1"
    );
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_status_lists_servers_their_state_and_diagnostics_and_a_restart_stops_one() {
    let (_tmp, dir) = project(&[("point.h", C_HEADER), ("main.c", C_MAIN)], None);
    let Some(manager) = manager_with("clangd", &dir) else {
        return;
    };
    let row = |name: &str| {
        manager
            .status()
            .into_iter()
            .find(|s| s.name == name)
            .unwrap()
    };
    let before = row("clangd");
    assert_eq!((before.root, before.state), (None, LspState::NotStarted));
    assert!(before.extensions.contains(&".c".to_string()));
    assert!(before.log.ends_with(".data/lsp/clangd.log"));

    // A call with a type error in the file: the server runs and holds its diagnostics.
    std::fs::write(dir.join("main.c"), C_MAIN.replace("norm(p);", "norm(3);")).unwrap();
    let calls = vec![lsp(
        "c1",
        json!({"operation": "documentSymbol", "filePath": "main.c"}),
    )];
    run(&dir, Arc::clone(&manager), vec![calls]).await;
    let running = row("clangd");
    assert_eq!(running.root.as_deref(), Some(dir.as_path()));
    assert!(
        matches!(running.state, LspState::Ready | LspState::Indexing),
        "{running:?}"
    );
    let mut files = Vec::new();
    for _ in 0..100 {
        files = manager.diagnostics();
        if !files.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(files.len(), 1, "{files:?}");
    assert_eq!(files[0].path, dir.join("main.c"));
    assert_eq!(files[0].server, "clangd");
    assert!(
        files[0].lines[0].starts_with("line 7:17 error: "),
        "{files:?}"
    );

    let said = manager.restart("clangd").await.unwrap();
    assert_eq!(
        said,
        "clangd stopped; the next call that needs it starts it afresh"
    );
    assert_eq!(row("clangd").state, LspState::NotStarted);
    assert!(manager.diagnostics().is_empty());
    let err = manager.restart("gopls-x").await.unwrap_err();
    assert!(
        err.starts_with("there is no language server called `gopls-x` (configured: "),
        "{err}"
    );
    manager.shutdown().await;
}

/// The files of a multi-file preview, by name, with their texts after.
fn previewed(req: &PermissionRequest) -> Vec<(String, String)> {
    match &req.preview {
        Some(Display::Diffs { files }) => files
            .iter()
            .map(|f| {
                let name = f.path.file_name().unwrap().to_string_lossy().into_owned();
                (name, f.after.clone())
            })
            .collect(),
        other => panic!("not a multi-file preview: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_across_files_is_reviewed_as_one_change_and_written_as_approved() {
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], None);
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let rename = |id: &str, to: &str| {
        lsp(
            id,
            json!({"operation": "rename", "filePath": "lib.py", "line": 1, "character": 5, "newName": to}),
        )
    };
    let script = json!({"turns": [
        {"tool_calls": [rename("r1", "welcome")]},
        {"tool_calls": [rename("r2", "salute")]},
        {"text": "done"},
    ]});
    let mut agent = Agent::start(&script, lsp_setup(&dir, Arc::clone(&manager)));
    agent.submit("rename");
    let mut asked = Vec::new();
    let events = agent
        .run_turn_answering(|req| {
            asked.push((req.title.clone(), previewed(req)));
            if asked.len() == 1 {
                return Decision::AllowOnce;
            }
            // The second rename: the person keeps app.py as it is (its hunks rejected).
            let files = match &req.preview {
                Some(Display::Diffs { files }) => files
                    .iter()
                    .map(|f| EditedFile {
                        path: f.path.clone(),
                        content: if f.path.ends_with("app.py") {
                            f.before.clone()
                        } else {
                            f.after.clone()
                        },
                    })
                    .collect(),
                _ => Vec::new(),
            };
            Decision::AllowEdited {
                content: String::new(),
                note: "The user rejected the change to app.py.".into(),
                grant: None,
                files,
            }
        })
        .await;
    assert_eq!(finished(&events).0, TurnEnd::Completed);

    // One question per rename, showing every file the server's edit touches.
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!(asked[0].0, "LSP rename lib.py:1:5 to welcome");
    let names: Vec<&str> = asked[0].1.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["app.py", "lib.py"]);
    assert_eq!(asked[0].1[0].1, PY_APP.replace("greet", "welcome"));

    let first = tool_results(&agent.request_body(1));
    assert_eq!(
        first[0].0,
        "Renamed to `welcome` in 2 files:\napp.py (+2 -2)\nlib.py (+2 -2)"
    );
    let second = tool_results(&agent.request_body(2));
    assert_eq!(
        second[1].0,
        "Renamed to `salute` in 1 file:\nlib.py (+2 -2)\nLeft unchanged at the user's choice: \
         app.py\n\nThe user rejected the change to app.py."
    );
    let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
    assert_eq!(read("lib.py"), PY_LIB.replace("greet", "salute"));
    assert_eq!(read("app.py"), PY_APP.replace("greet", "welcome"));
    manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rename_touching_a_denied_file_writes_nothing() {
    let settings = json!({"permissions": {"deny": ["Edit(./app.py)"]}});
    let (_tmp, dir) = project(&[("lib.py", PY_LIB), ("app.py", PY_APP)], Some(settings));
    let Some(manager) = manager_with("pyright-langserver", &dir) else {
        return;
    };
    let call = lsp(
        "r1",
        json!({"operation": "rename", "filePath": "lib.py", "line": 1, "character": 5, "newName": "welcome"}),
    );
    let agent = run(&dir, Arc::clone(&manager), vec![vec![call]]).await;
    let results = tool_results(&agent.request_body(1));
    assert!(results[0].1, "{results:?}");
    assert!(results[0].0.contains("Edit(./app.py)"), "{results:?}");
    assert_eq!(std::fs::read_to_string(dir.join("lib.py")).unwrap(), PY_LIB);
    assert_eq!(std::fs::read_to_string(dir.join("app.py")).unwrap(), PY_APP);
    manager.shutdown().await;
}
