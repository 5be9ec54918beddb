//! What scripts and gateways see of headless cairn (issue 26 §5), with the real binary against
//! the scripted model server on 127.0.0.1: stream-json's `system/init` line (MCP servers,
//! slash commands, skills, agents, output style, the key's source, MCP tools), the headers of
//! model requests (custom headers for OpenAI-compatible servers, `User-Agent`,
//! `ANTHROPIC_API_KEY` over `apiKeyHelper`), and `--continue` finding a transcript written
//! with spaces in its JSON.

#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/trust.rs"]
mod trust;

use std::path::Path;
use std::time::Duration;

use cairn::llm::scripted::{Script, ScriptedServer};
use serde_json::{Value, json};

fn scripted(script: Value) -> ScriptedServer {
    ScriptedServer::start(Script::from_json(&script.to_string()).unwrap()).unwrap()
}

/// `cairn` in `project` (trusted) with `home` as HOME, an empty environment but PATH.
fn cairn(project: &Path, home: &Path) -> tokio::process::Command {
    trust::trust_folder(home, project);
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
    cmd.current_dir(project)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CAIRN_DATA_DIR", home.join("data"))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    cmd
}

async fn output(cmd: &mut tokio::process::Command) -> std::process::Output {
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("cairn did not finish")
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn write(root: &Path, files: &[(&str, &str)]) {
    for (path, content) in files {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, content).unwrap();
    }
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .unwrap_or_else(|| panic!("not an array: {v}"))
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_json_init_says_what_claude_codes_does() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        project.path(),
        &[
            (
                ".claude/commands/hello.md",
                "---\ndescription: Say hi\n---\nHi\n",
            ),
            (
                ".claude/skills/deploy/SKILL.md",
                "---\nname: deploy\ndescription: Deploy it\n---\nSteps\n",
            ),
            (
                ".claude/agents/reviewer.md",
                "---\nname: reviewer\ndescription: Reviews code\n---\nReview.\n",
            ),
        ],
    );
    let everything = mcp_servers::servers_dir().map(|d| d.join("server-everything/dist/index.js"));
    let mut servers = json!({"ghost": {"command": "/nonexistent/cairn-ghost"}});
    if let Some(ev) = &everything {
        servers["ev"] = json!({"command": "node", "args": [ev]});
    }
    let config = json!({ "mcpServers": servers }).to_string();
    let server = scripted(json!({"turns": [{"text": "ok"}]}));
    let out = output(
        cairn(project.path(), home.path())
            .args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
            .args(["--mcp-config", &config])
            // These runs are about what servers offer, not start-up or deferral (request_cost.rs
            // covers those): the old ways, waiting for the servers and offering their tools whole.
            .env("MCP_CONNECTION_NONBLOCKING", "0")
            .env("ENABLE_TOOL_SEARCH", "auto:10")
            .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key"),
    )
    .await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let init: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["subtype"], "init");
    assert_eq!(init["apiKeySource"], "ANTHROPIC_API_KEY");
    assert_eq!(init["output_style"], "default");
    let slash = strings(&init["slash_commands"]);
    assert!(
        slash.contains(&"init") && slash.contains(&"hello") && slash.contains(&"deploy"),
        "{slash:?}"
    );
    assert_eq!(strings(&init["skills"]), ["deploy"]);
    let agents = strings(&init["agents"]);
    assert!(
        agents.contains(&"reviewer") && agents.contains(&"general-purpose"),
        "{agents:?}"
    );
    let servers = init["mcp_servers"].as_array().unwrap();
    assert!(
        servers.contains(&json!({"name": "ghost", "status": "failed", "source": "cli"})),
        "{servers:?}"
    );
    if everything.is_some() {
        assert!(
            servers.contains(&json!({"name": "ev", "status": "connected", "source": "cli"})),
            "{servers:?}"
        );
        let tools = strings(&init["tools"]);
        assert!(
            tools.contains(&"mcp__ev__echo") && tools.contains(&"Read"),
            "{tools:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_requests_carry_custom_headers_and_the_user_agent() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let server = scripted(json!({"turns": [{"text": "ok"}]}));
    let out = output(
        cairn(project.path(), home.path())
            .args(["-p", "hi"])
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .env("OPENAI_API_KEY", "test-key")
            .env(
                "OPENAI_CUSTOM_HEADERS",
                "HTTP-Referer: https://example.org/app\nnot a header",
            ),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OPENAI_CUSTOM_HEADERS line 2: not `Name: Value`; ignored"),
        "{stderr}"
    );
    let requests = server.requests();
    let r = &requests[0];
    assert_eq!(r.header("http-referer"), Some("https://example.org/app"));
    assert_eq!(r.header("authorization"), Some("Bearer test-key"));
    let agent = format!("cairn/{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(r.header("user-agent"), Some(agent.as_str()));

    // The settings' `env` is the settings equivalent of the variable.
    write(
        home.path(),
        &[(
            ".claude/settings.json",
            r#"{"env": {"OPENAI_CUSTOM_HEADERS": "X-Title: cairn-test"}}"#,
        )],
    );
    let server = scripted(json!({"turns": [{"text": "ok"}]}));
    output(
        cairn(project.path(), home.path())
            .args(["-p", "hi"])
            .env("OPENAI_BASE_URL", server.openai_base_url())
            .env("OPENAI_API_KEY", "test-key"),
    )
    .await;
    assert_eq!(server.requests()[0].header("x-title"), Some("cairn-test"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_api_key_wins_over_the_key_helper_for_x_api_key() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    write(
        home.path(),
        &[(
            ".claude/settings.json",
            r#"{"apiKeyHelper": "echo helper-key"}"#,
        )],
    );
    let server = scripted(json!({"turns": [{"text": "ok"}]}));
    let out = output(
        cairn(project.path(), home.path())
            .args(["-p", "hi", "--output-format", "stream-json", "--verbose"])
            .env("ANTHROPIC_BASE_URL", server.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "env-key"),
    )
    .await;
    let r = &server.requests()[0];
    assert_eq!(r.header("x-api-key"), Some("env-key"));
    assert_eq!(r.header("authorization"), Some("Bearer helper-key"));
    let agent = format!("cairn/{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(r.header("user-agent"), Some(agent.as_str()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let init: Value = serde_json::from_str(stdout.lines().next().unwrap()).unwrap();
    assert_eq!(init["apiKeySource"], "ANTHROPIC_API_KEY");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_finds_a_transcript_with_spaced_json() {
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let first = scripted(json!({"turns": [{"text": "first answer"}]}));
    output(
        cairn(project.path(), home.path())
            .args(["-p", "FIRST-PROMPT"])
            .env("ANTHROPIC_BASE_URL", first.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key"),
    )
    .await;
    // Rewrite every transcript line with spaces after its keys' colons and commas.
    let mut rewritten = 0;
    let projects = home.path().join("data/projects");
    for dir in std::fs::read_dir(&projects).unwrap().flatten() {
        for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let p = f.path();
            if p.extension().is_some_and(|e| e == "jsonl") {
                let text = std::fs::read_to_string(&p).unwrap();
                let spaced: Vec<String> = text
                    .lines()
                    .map(|l| {
                        let v: Value = serde_json::from_str(l).unwrap();
                        let pretty = serde_json::to_string_pretty(&v).unwrap();
                        pretty.lines().map(str::trim).collect::<Vec<_>>().join(" ")
                    })
                    .collect();
                assert!(spaced.iter().any(|l| l.starts_with("{ \"")), "{spaced:?}");
                std::fs::write(&p, spaced.join("\n") + "\n").unwrap();
                rewritten += 1;
            }
        }
    }
    assert_eq!(rewritten, 1);
    let second = scripted(json!({"turns": [{"text": "second answer"}]}));
    output(
        cairn(project.path(), home.path())
            .args(["-p", "SECOND-PROMPT", "--continue"])
            .env("ANTHROPIC_BASE_URL", second.anthropic_base_url())
            .env("ANTHROPIC_API_KEY", "test-key"),
    )
    .await;
    let messages = second.requests()[0].body["messages"].to_string();
    assert!(
        messages.contains("FIRST-PROMPT") && messages.contains("SECOND-PROMPT"),
        "{messages}"
    );
}
