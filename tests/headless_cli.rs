//! The real `cairn` binary in headless mode against the scripted model server on 127.0.0.1:
//! every output format is parsed back as JSON, exit codes and stderr reasons are checked.

use std::path::Path;
use std::process::Output;

use cairn::llm::scripted::ScriptedServer;
use serde_json::{Value, json};

#[path = "support/llm.rs"]
mod llm;
#[path = "support/trust.rs"]
mod trust;

struct Run {
    out: Output,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn code(&self) -> i32 {
        self.out.status.code().unwrap_or(-1)
    }
}

/// The `cairn` binary started in `project` with an empty environment but PATH, and HOME,
/// its config and its data under `home`, so nothing touches the real home. The project is
/// trusted (as by a person who answered the trust question once).
fn cairn_command(project: &Path, home: &Path) -> tokio::process::Command {
    trust::trust_folder(home, project);
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CAIRN_DATA_DIR", home.join("data"));
    cmd
}

/// Run `cairn` with `args` in a temp project, pointed at `server` (Anthropic format unless
/// `openai`), with a temp HOME and data dir so nothing touches the real home.
async fn cairn(server: Option<&ScriptedServer>, openai: bool, args: &[&str], stdin: &str) -> Run {
    cairn_with(server, openai, args, stdin, &[]).await
}

/// As [`cairn`], with extra files (path, content) written into the project first; a path
/// ending in `.sh` is made executable.
async fn cairn_with(
    server: Option<&ScriptedServer>,
    openai: bool,
    args: &[&str],
    stdin: &str,
    files: &[(&str, &str)],
) -> Run {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    std::fs::write(project.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
    for (path, content) in files {
        let full = project.path().join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(
            &full,
            content.replace("$PROJECT", &project.path().display().to_string()),
        )
        .unwrap();
        if path.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    let mut cmd = cairn_command(project.path(), home.path());
    cmd.args(args)
        .env("CAIRN_RETRY_BASE_MS", "10")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(s) = server {
        if openai {
            cmd.env("OPENAI_BASE_URL", s.openai_base_url())
                .env("OPENAI_API_KEY", "test-key");
        } else {
            cmd.env("ANTHROPIC_BASE_URL", s.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "test-key");
        }
    }
    let mut child = cmd.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut pipe = child.stdin.take().unwrap();
        pipe.write_all(stdin.as_bytes()).await.unwrap();
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("cairn did not finish")
        .unwrap();
    Run { out }
}

async fn server(script: Value) -> ScriptedServer {
    llm::scripted(&script)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_output_prints_the_answer() {
    for openai in [false, true] {
        let s = server(json!({"turns": [{"text": "The answer is 42."}]})).await;
        let run = cairn(Some(&s), openai, &["-p", "what is it?"], "").await;
        assert_eq!(run.code(), 0, "stderr: {}", run.stderr());
        assert_eq!(run.stdout(), "The answer is 42.\n");
        let body = &s.requests()[0].body;
        let sent = body.to_string();
        assert!(sent.contains("what is it?"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_prompt_can_come_from_stdin() {
    let s = server(json!({"turns": [{"text": "piped ok"}]})).await;
    let run = cairn(Some(&s), false, &["-p"], "summarise this please").await;
    assert_eq!(run.code(), 0, "stderr: {}", run.stderr());
    assert_eq!(run.stdout(), "piped ok\n");
    assert!(
        s.requests()[0]
            .body
            .to_string()
            .contains("summarise this please")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_output_is_one_result_object() {
    let s = server(
        json!({"turns": [{"text": "done", "usage": {"input_tokens": 10, "output_tokens": 3}}]}),
    )
    .await;
    let run = cairn(Some(&s), false, &["-p", "x", "--output-format", "json"], "").await;
    assert_eq!(run.code(), 0, "stderr: {}", run.stderr());
    let v: Value = serde_json::from_str(run.stdout().trim()).unwrap();
    assert_eq!(v["type"], "result");
    assert_eq!(v["subtype"], "success");
    assert_eq!(v["is_error"], false);
    assert_eq!(v["result"], "done");
    assert_eq!(v["num_turns"], 1);
    assert_eq!(v["usage"]["output_tokens"], 3);
    assert!(v["session_id"].as_str().is_some_and(|s| s.len() == 36));
    assert!(v["duration_ms"].is_u64());
    assert!(v["total_cost_usd"].is_number());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_has_init_assistant_user_and_result_lines() {
    let s = server(json!({"turns": [
        {"text": "Reading.", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"text": "It lists alpha and beta."}]}))
    .await;
    let run = cairn(
        Some(&s),
        false,
        &[
            "-p",
            "read notes",
            "--output-format",
            "stream-json",
            "--verbose",
        ],
        "",
    )
    .await;
    assert_eq!(run.code(), 0, "stderr: {}", run.stderr());
    let lines: Vec<Value> = run
        .stdout()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<String> = lines
        .iter()
        .map(|l| {
            format!(
                "{}{}",
                l["type"].as_str().unwrap(),
                l["subtype"]
                    .as_str()
                    .map(|s| format!("/{s}"))
                    .unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "system/init",
            "assistant",
            "user",
            "assistant",
            "result/success"
        ]
    );
    assert!(
        lines[0]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "Read")
    );
    assert_eq!(lines[2]["message"]["content"][0]["type"], "tool_result");
    let read_result = lines[2]["message"]["content"][0]["content"]
        .as_str()
        .unwrap();
    assert!(read_result.contains("alpha"), "{read_result}");
    assert_eq!(lines[4]["result"], "It lists alpha and beta.");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_turns_exits_non_zero_with_the_reason() {
    let call = |id: &str| json!({"tool_calls": [{"id": id, "name": "Read", "input": {"file_path": "notes.txt"}}]});
    let s = server(json!({"turns": [call("a"), call("b"), call("c")]})).await;
    let run = cairn(
        Some(&s),
        false,
        &["-p", "loop", "--max-turns", "1", "--output-format", "json"],
        "",
    )
    .await;
    assert_eq!(run.code(), 1);
    assert!(run.stderr().contains("--max-turns"), "{}", run.stderr());
    let v: Value = serde_json::from_str(run.stdout().trim()).unwrap();
    assert_eq!(v["subtype"], "error_max_turns");
    assert_eq!(v["is_error"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_auth_failure_says_what_to_fix() {
    let s = server(json!({"turns": [{"text": "x",
        "faults": [{"status": 401, "body": "{\"type\":\"error\",\"error\":{\"type\":\"authentication_error\",\"message\":\"invalid x-api-key\"}}", "times": 9}]}]}))
    .await;
    let run = cairn(Some(&s), false, &["-p", "hi"], "").await;
    assert_eq!(run.code(), 1);
    assert!(run.stderr().contains("401"), "{}", run.stderr());
    assert!(
        run.stderr()
            .contains("credentials were refused; check ANTHROPIC_API_KEY"),
        "{}",
        run.stderr()
    );
    assert_eq!(s.requests().len(), 1, "401 is not retried");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_refuses_writes_without_a_permission_flag() {
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "w", "name": "Write", "input": {"file_path": "new.txt", "content": "hi\n"}}]},
        {"text": "could not write"}]}))
    .await;
    let run = cairn(Some(&s), false, &["-p", "write it"], "").await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let body = s.requests()[1].body.to_string();
    assert!(
        body.contains("permission-mode"),
        "the refusal names the flag: {body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credentials_fail_unless_the_demo_is_asked_for() {
    // A script must not take demo output for a real answer.
    let run = cairn(None, false, &["-p", "show me", "--max-turns", "1"], "").await;
    assert_eq!(run.code(), 1);
    assert!(run.stdout().is_empty(), "{}", run.stdout());
    assert!(
        run.stderr()
            .contains("no model credentials: set ANTHROPIC_API_KEY"),
        "{}",
        run.stderr()
    );
    assert!(run.stderr().contains("pass --demo"), "{}", run.stderr());
    // The demo works in a scratch copy, and still names what the person's settings hold that
    // cairn does not read.
    let run = cairn_with(
        None,
        false,
        &["-p", "show me", "--max-turns", "1", "--demo"],
        "",
        &[(".claude/settings.json", r#"{"modle": "opus"}"#)],
    )
    .await;
    assert!(run.stderr().contains("DEMO"), "{}", run.stderr());
    assert!(run.stderr().contains("127.0.0.1"), "{}", run.stderr());
    assert!(
        run.stderr().contains("unknown setting `modle`"),
        "{}",
        run.stderr()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_and_bad_flags() {
    let run = cairn(None, false, &["--version"], "").await;
    assert_eq!(run.code(), 0);
    assert!(run.stdout().starts_with("cairn "));
    let run = cairn(
        None,
        false,
        &["-p", "x", "--demo", "--permission-mode", "yolo"],
        "",
    )
    .await;
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr().contains("unknown permission mode"),
        "{}",
        run.stderr()
    );
}

const HOOKS: &str = r#"{"hooks": {
  "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "$PROJECT/.claude/prompt.sh"}]}],
  "Stop": [{"hooks": [{"type": "command", "command": "$PROJECT/.claude/stop.sh"}]}]
}}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_and_stop_hooks_steer_the_loop() {
    // The prompt hook adds context; the stop hook sends the model back once, then lets it stop.
    let prompt_hook = "#!/bin/sh\necho 'the deploy freeze is on'\n";
    let stop_hook = "#!/bin/sh\nif grep -q '\"stop_hook_active\":true' ; then exit 0; fi\n\
                     echo 'run the tests before stopping' >&2\nexit 2\n";
    let s = server(json!({"turns": [{"text": "first"}, {"text": "tests ran"}]})).await;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "ship it"],
        "",
        &[
            (".claude/settings.json", HOOKS),
            (".claude/prompt.sh", prompt_hook),
            (".claude/stop.sh", stop_hook),
        ],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert_eq!(run.stdout(), "tests ran\n");
    let requests = s.requests();
    assert_eq!(requests.len(), 2);
    let first = requests[0].body.to_string();
    assert!(first.contains("the deploy freeze is on"), "{first}");
    let second = requests[1].body.to_string();
    assert!(second.contains("run the tests before stopping"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_hook_can_block_the_prompt() {
    let prompt_hook = "#!/bin/sh\necho 'no prompts on Fridays' >&2\nexit 2\n";
    let s = server(json!({"turns": [{"text": "never"}]})).await;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "hello"],
        "",
        &[
            (".claude/settings.json", HOOKS),
            (".claude/prompt.sh", prompt_hook),
            (".claude/stop.sh", "#!/bin/sh\nexit 0\n"),
        ],
    )
    .await;
    assert_eq!(run.code(), 1);
    assert!(
        run.stderr().contains("no prompts on Fridays"),
        "{}",
        run.stderr()
    );
    assert!(
        s.requests().is_empty(),
        "the blocked prompt never reached the model"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allowed_tools_lets_a_command_run_headless() {
    let bash = json!({"tool_calls": [{"id": "b", "name": "Bash",
        "input": {"command": "mkdir -p build/out", "description": "make a directory"}}]});
    for (flags, should_run) in [
        (vec![], false),
        (vec!["--allowedTools", "Bash(mkdir *)"], true),
        (
            vec![
                "--allowedTools",
                "Bash(mkdir *)",
                "--disallowedTools",
                "Bash(mkdir -p *)",
            ],
            false,
        ),
    ] {
        let s = server(json!({"turns": [bash.clone(), {"text": "ok"}]})).await;
        let mut args = vec!["-p", "go"];
        args.extend(flags.iter().copied());
        let run = cairn(Some(&s), false, &args, "").await;
        assert_eq!(run.code(), 0, "{}", run.stderr());
        let result = s.requests()[1].body.to_string();
        let ran = !result.contains("\"is_error\":true");
        assert_eq!(ran, should_run, "{flags:?}: {result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_deny_removes_the_tool_and_settings_json_applies() {
    let s = server(json!({"turns": [{"text": "ok"}]})).await;
    let run = cairn(
        Some(&s),
        false,
        &[
            "-p",
            "x",
            "--output-format",
            "stream-json",
            "--settings",
            r#"{"permissions": {"deny": ["WebFetch"]}}"#,
            "--disallowedTools",
            "Grep",
        ],
        "",
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let init: Value = serde_json::from_str(run.stdout().lines().next().unwrap()).unwrap();
    let tools: Vec<&str> = init["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"Read"), "{tools:?}");
    assert!(!tools.contains(&"WebFetch"), "{tools:?}");
    assert!(!tools.contains(&"Grep"), "{tools:?}");
    let offered = s.requests()[0].body["tools"].to_string();
    assert!(
        !offered.contains("\"WebFetch\""),
        "not offered to the model either"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_writes_headless() {
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "w", "name": "Write", "input": {"file_path": "new.txt", "content": "x\n"}}]},
        {"text": "ok"}]}))
    .await;
    let run = cairn(
        Some(&s),
        false,
        &["-p", "x", "--permission-mode", "plan"],
        "",
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let result = s.requests()[1].body.to_string();
    assert!(result.contains("plan"), "{result}");
    assert!(result.contains("\"is_error\":true"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn config_prints_the_merged_settings_with_origins() {
    let run = cairn_with(
        None,
        false,
        &["config"],
        "",
        &[(
            ".claude/settings.json",
            r#"{"model": "from-project", "permissions": {"allow": ["Bash(npm test *)"]}}"#,
        )],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let out = run.stdout();
    assert!(out.contains("from-project"), "{out}");
    assert!(out.contains("Bash(npm test *)"), "{out}");
    assert!(out.contains(".claude/settings.json"), "{out}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_env_reaches_commands_and_hooks() {
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "e", "name": "Bash", "input": {"command": "printenv GREETING"}}]},
        {"text": "ok"}]}))
    .await;
    let settings = r#"{"env": {"GREETING": "hola from settings"},
        "hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command",
            "command": "echo hook saw $GREETING"}]}]}}"#;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "x", "--allowedTools", "Bash(printenv *)"],
        "",
        &[(".claude/settings.json", settings)],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let first = s.requests()[0].body.to_string();
    assert!(first.contains("hook saw hola from settings"), "{first}");
    let second = s.requests()[1].body.to_string();
    assert!(second.contains("hola from settings"), "{second}");
    assert!(!second.contains("\"is_error\":true"), "{second}");
}

/// A working directory whose name is not UTF-8 (byte 0xff): every output format must work
/// (it used to panic building stream-json's `system/init`), and hooks get a readable payload.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_working_dir_that_is_not_utf8_works_in_every_format() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;

    let home = tempfile::tempdir().unwrap();
    let base = tempfile::tempdir().unwrap();
    let project = base.path().join(OsStr::from_bytes(b"proj-\xff-dir"));
    std::fs::create_dir_all(project.join(".claude")).unwrap();
    std::fs::write(project.join("notes.txt"), "alpha\nbeta\n").unwrap();
    // A hook on every prompt: its stdin JSON carries the cwd.
    std::fs::write(
        project.join(".claude/settings.json"),
        json!({"hooks": {"UserPromptSubmit": [{"hooks": [
            {"type": "command", "command": "cat > hook-input.json"}]}]}})
        .to_string(),
    )
    .unwrap();
    for format in ["text", "json", "stream-json"] {
        let s = server(json!({"turns": [
            {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "It lists alpha and beta."}]}))
        .await;
        let mut args = vec!["-p", "read notes", "--output-format", format];
        if format == "stream-json" {
            args.push("--verbose");
        }
        let out = cairn_command(&project, home.path())
            .args(&args)
            .env("ANTHROPIC_BASE_URL", s.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .stdin(std::process::Stdio::null())
            .output();
        let out = tokio::time::timeout(std::time::Duration::from_secs(30), out)
            .await
            .expect("cairn did not finish")
            .unwrap();
        let run = Run { out };
        assert_eq!(run.code(), 0, "{format}: stderr: {}", run.stderr());
        let stdout = run.stdout();
        match format {
            "text" => assert_eq!(stdout, "It lists alpha and beta.\n"),
            "json" => {
                let v: Value = serde_json::from_str(stdout.trim()).unwrap();
                assert_eq!(v["result"], "It lists alpha and beta.");
            }
            _ => {
                let lines: Vec<Value> = stdout
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                assert_eq!(lines[0]["subtype"], "init");
                let cwd = lines[0]["cwd"].as_str().unwrap();
                assert!(cwd.ends_with("proj-\u{FFFD}-dir"), "{cwd}");
                let read = lines[2]["message"]["content"][0]["content"]
                    .as_str()
                    .unwrap();
                assert!(read.contains("alpha"), "{read}");
            }
        }
        let hook: Value =
            serde_json::from_slice(&std::fs::read(project.join("hook-input.json")).unwrap())
                .unwrap();
        assert_eq!(hook["hook_event_name"], "UserPromptSubmit");
        assert!(hook["cwd"].as_str().unwrap().contains("proj-"), "{hook}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_settings_with_a_deny_stop_headless_before_any_request() {
    let rm = json!({"tool_calls": [{"id": "r", "name": "Bash",
        "input": {"command": "rm notes.txt", "description": "remove"}}]});
    // A syntax error, and a UTF-8 byte order mark with a good file (which must still apply).
    let broken = "{\n  \"permissions\": {\n    \"deny\": [\"Bash(rm *)\"],\n  }\n}\n";
    let s = server(json!({"turns": [rm.clone(), {"text": "ok"}]})).await;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "clean up", "--allowedTools", "Bash"],
        "",
        &[(".claude/settings.json", broken)],
    )
    .await;
    assert_eq!(run.code(), 1, "{}", run.stderr());
    let err = run.stderr();
    assert!(
        err.contains(".claude/settings.json:4:3: invalid JSON: trailing comma"),
        "{err}"
    );
    assert!(err.contains("Fix or remove the file"), "{err}");
    assert!(s.requests().is_empty(), "no request may be sent");

    // `cairn config` still lists the problem (and exits 0: it only reports).
    let run = cairn_with(
        None,
        false,
        &["config"],
        "",
        &[(".claude/settings.json", broken)],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    assert!(
        run.stdout()
            .contains(".claude/settings.json:4:3: invalid JSON: trailing comma"),
        "{}",
        run.stdout()
    );

    // The same deny in a file that starts with a BOM applies: rm is refused, the run goes on.
    let s = server(json!({"turns": [rm, {"text": "ok"}]})).await;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "clean up", "--allowedTools", "Bash"],
        "",
        &[(
            ".claude/settings.json",
            "\u{feff}{\"permissions\": {\"deny\": [\"Bash(rm *)\"]}}",
        )],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let result = s.requests()[1].body.to_string();
    assert!(result.contains("Bash(rm *)"), "{result}");
    assert!(result.contains("\"is_error\":true"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_read_token_limit_follows_the_environment() {
    for var in [
        "CAIRN_FILE_READ_MAX_OUTPUT_TOKENS",
        "CLAUDE_CODE_FILE_READ_MAX_OUTPUT_TOKENS",
    ] {
        let s = server(json!({"turns": [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "notes.txt"}}]},
            {"text": "done"}]}))
        .await;
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        let mut cmd = cairn_command(project.path(), home.path());
        cmd.args(["-p", "read notes.txt"])
            .env(var, "5")
            .env("ANTHROPIC_BASE_URL", s.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .stdin(std::process::Stdio::null());
        let out = cmd.output().await.unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = s.requests()[1].body.to_string();
        assert!(
            body.contains("exceeds the maximum allowed tokens (5)"),
            "{var}: {body}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_mentions_attach_files_images_and_directories_on_both_wire_formats() {
    let mut png = std::io::Cursor::new(Vec::new());
    image::DynamicImage::new_rgb8(8, 6)
        .write_to(&mut png, image::ImageFormat::Png)
        .unwrap();
    for openai in [false, true] {
        let s = server(json!({"turns": [{"text": "seen"}]})).await;
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        std::fs::write(project.path().join("notes.txt"), "alpha\nbeta\n").unwrap();
        std::fs::write(project.path().join("shot.png"), png.get_ref()).unwrap();
        std::fs::create_dir(project.path().join("docs")).unwrap();
        std::fs::write(project.path().join("docs/a.md"), "# a\n").unwrap();
        let mut cmd = cairn_command(project.path(), home.path());
        let prompt = "compare @notes.txt, @shot.png and @docs with @nobody";
        cmd.args(["-p", prompt]).stdin(std::process::Stdio::null());
        if openai {
            cmd.env("OPENAI_BASE_URL", s.openai_base_url())
                .env("OPENAI_API_KEY", "test-key");
        } else {
            cmd.env("ANTHROPIC_BASE_URL", s.anthropic_base_url())
                .env("ANTHROPIC_API_KEY", "test-key");
        }
        let out = cmd.output().await.unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let body = s.requests()[0].body.clone();
        let messages = body["messages"].as_array().unwrap();
        let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
        let text = user.to_string();
        assert!(text.contains(prompt), "{text}");
        assert!(text.contains("Attached with @notes.txt:"), "{text}");
        assert!(text.contains("     1\\talpha"), "{text}");
        assert!(
            text.contains("Attached with @docs:") && text.contains("a.md"),
            "{text}"
        );
        assert!(!text.contains("@nobody:"), "{text}");
        let parts = user["content"].as_array().unwrap();
        let image = parts
            .iter()
            .find(|p| p["type"] == if openai { "image_url" } else { "image" })
            .unwrap_or_else(|| panic!("no image part: {text}"));
        if openai {
            let url = image["image_url"]["url"].as_str().unwrap();
            assert!(url.starts_with("data:image/png;base64,"), "{url}");
        } else {
            assert_eq!(image["source"]["type"], "base64");
            assert_eq!(image["source"]["media_type"], "image/png");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_at_mention_a_deny_rule_covers_is_not_read() {
    let s = server(json!({"turns": [{"text": "ok"}]})).await;
    let settings = r#"{"permissions": {"deny": ["Read(./secret.txt)"]}}"#;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "what is in @secret.txt"],
        "",
        &[
            ("secret.txt", "hunter2\n"),
            (".claude/settings.json", settings),
        ],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let body = s.requests()[0].body.to_string();
    assert!(!body.contains("hunter2"), "{body}");
    assert!(!body.contains("Attached with"), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_questions_are_refused_with_a_way_forward() {
    let questions = json!([{"question": "Which?", "header": "Pick",
        "options": [{"label": "A", "description": ""}, {"label": "B", "description": ""}]}]);
    let s = server(json!({"turns": [
        {"tool_calls": [{"id": "q", "name": "AskUserQuestion", "input": {"questions": questions}}]},
        {"text": "chose A"}]}))
    .await;
    let run = cairn(Some(&s), false, &["-p", "decide"], "").await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let body = s.requests()[1].body.to_string();
    assert!(
        body.contains("No one can answer questions in non-interactive mode"),
        "{body}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn memory_files_and_their_imports_reach_the_system_prompt() {
    let s = server(json!({"turns": [{"text": "d'accord"}, {"text": "encore"}]})).await;
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "hello"],
        "",
        &[
            (".git/HEAD", "ref: refs/heads/main\n"),
            (
                "CLAUDE.md",
                "Always answer in French.\nStyle: @docs/style.md\n",
            ),
            ("docs/style.md", "Use tabs, never spaces.\n"),
            ("AGENTS.md", "Run `make check` before finishing.\n"),
        ],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let system = s.requests()[0].body["system"].to_string();
    for needle in [
        "# Memory",
        "Always answer in French.",
        "Use tabs, never spaces.",
        "Run `make check` before finishing.",
    ] {
        assert!(system.contains(needle), "{needle}: {system}");
    }
    let claude = system.find("Always answer").unwrap();
    assert!(claude < system.find("Use tabs").unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_init_asks_the_model_for_a_claude_md() {
    let s = server(json!({"turns": [{"text": "written"}]})).await;
    let run = cairn(Some(&s), false, &["-p", "/init"], "").await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let body = s.requests()[0].body["messages"].to_string();
    assert!(
        body.contains("create a CLAUDE.md file in the project root"),
        "{body}"
    );
    assert!(!body.contains("\"/init\""), "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn custom_slash_commands_expand_before_the_first_request() {
    let s = server(json!({"turns": [{"text": "hello Ada"}]})).await;
    let command = "---\ndescription: Greet someone\nargument-hint: <name>\n---\nGreet $1 warmly, mentioning @notes.txt.\n";
    let run = cairn_with(
        Some(&s),
        false,
        &["-p", "/greet Ada"],
        "",
        &[(".claude/commands/greet.md", command)],
    )
    .await;
    assert_eq!(run.code(), 0, "{}", run.stderr());
    let body = s.requests()[0].body["messages"].to_string();
    assert!(body.contains("Greet Ada warmly"), "{body}");
    // The command's @file reference is attached like any other.
    assert!(body.contains("Attached with @notes.txt"), "{body}");
}

/// Headless sessions record `/rewind` checkpoints unless `CAIRN_CHECKPOINTS=off`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_are_recorded_unless_turned_off() {
    for (setting, expect) in [(None, true), (Some("off"), false), (Some("on"), true)] {
        let s = server(json!({"turns": [{"text": "done"}]})).await;
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let mut cmd = cairn_command(project.path(), home.path());
        cmd.args(["-p", "hi"])
            .env("ANTHROPIC_BASE_URL", s.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key")
            .stdin(std::process::Stdio::null());
        if let Some(value) = setting {
            cmd.env("CAIRN_CHECKPOINTS", value);
        }
        let out = cmd.output().await.unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        // <data>/projects/<project>/<session>/rewind holds the store.
        let stores = walkdir(&home.path().join("data"))
            .into_iter()
            .filter(|p| p.ends_with("rewind") && p.join("checkpoints").is_dir())
            .count();
        assert_eq!(
            stores == 1,
            expect,
            "CAIRN_CHECKPOINTS={setting:?}: {stores} stores"
        );
    }
}

/// Every directory under `dir`.
fn walkdir(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(walkdir(&path));
            out.push(path);
        }
    }
    out
}

/// Issue 22: a background sub-agent's command must not outlive `cairn -p`. The sub-agent
/// starts `sleep 2; touch marker`; the main agent ends its turn while the sleep runs; after
/// `-p` has exited, and well past the sleep, the marker must not exist.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_background_agents_command_ends_with_headless_cairn() {
    for _ in 0..3 {
        let outside = tempfile::tempdir().unwrap();
        let marker = outside.path().join("marker");
        let command = format!("sleep 2; touch '{}'", marker.display());
        let s = server(json!({
            "turns": [
                {"tool_calls": [{"id": "a1", "name": "Agent", "input": {
                    "description": "touch later", "prompt": "run it",
                    "subagent_type": "worker", "run_in_background": true}}]},
                // Answer only once the sub-agent's command is surely running (the delay is
                // per event: six events, 0.6 s in all, well short of the sleep).
                {"text": "Started it.", "delay_ms": 100, "chunk_chars": 100}
            ],
            "by_system": [{"system_contains": "WORKER-ROLE", "turns": [
                {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": command}}]},
                {"text": "touched"}
            ]}]
        }))
        .await;
        let agent = "---\ndescription: runs commands\ntools: Bash\n---\nWORKER-ROLE\n";
        let run = cairn_with(
            Some(&s),
            false,
            &["-p", "go", "--allowedTools", "Bash"],
            "",
            &[(".claude/agents/worker.md", agent)],
        )
        .await;
        assert_eq!(run.code(), 0, "stderr: {}", run.stderr());
        assert_eq!(run.stdout(), "Started it.\n");
        // The sub-agent did start its command before cairn exited.
        let asked = s
            .requests()
            .iter()
            .filter(|r| r.body.to_string().contains("WORKER-ROLE"))
            .count();
        assert!(asked >= 1, "the sub-agent never asked the model");
        // It was still running when the answer was done: the case under test.
        assert!(
            run.stderr()
                .contains("cairn: stopped 1 background agent(s) still running"),
            "{}",
            run.stderr()
        );
        tokio::time::sleep(std::time::Duration::from_millis(2600)).await;
        assert!(
            !marker.exists(),
            "the background agent's command outlived cairn -p (stderr: {})",
            run.stderr()
        );
    }
}
