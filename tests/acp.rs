//! `cairn acp` against a real client: the official TypeScript SDK's (`@agentclientprotocol/sdk`,
//! installed by `.ci/run` into `target/acp-client`) drives the real binary through
//! `tests/acp/client.mjs` — initialize, a new session, a prompt with an image and an embedded
//! file in which the scripted model reads, edits (the client allows it once) and runs `echo`,
//! a prompt cancelled while its command runs, and a fresh connection loading the session.
//! Skipped with a loud message when node or the SDK is missing, except under `CI`.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

#[path = "support/llm.rs"]
mod llm;

/// Where `.ci/run` installs the SDK: `<target>/acp-client` (or `$CAIRN_ACP_CLIENT`).
fn sdk_dir() -> Option<PathBuf> {
    let candidates = [
        std::env::var_os("CAIRN_ACP_CLIENT").map(PathBuf::from),
        std::env::var_os("CARGO_TARGET_DIR").map(|t| PathBuf::from(t).join("acp-client")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/acp-client")),
    ];
    candidates.into_iter().flatten().find(|d| {
        d.join("node_modules/@agentclientprotocol/sdk/package.json")
            .is_file()
    })
}

/// The SDK's folder and node, or None after saying loudly why; under `CI` a missing one fails.
fn node_and_sdk() -> Option<PathBuf> {
    let node = std::process::Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let missing = match (node, sdk_dir()) {
        (true, Some(dir)) => return Some(dir),
        (false, _) => "node is not installed",
        (true, None) => {
            "the ACP TypeScript SDK is not installed: run `npm ci --prefix target/acp-client` \
             with tests/acp/package.json (as .ci/run does)"
        }
    };
    if std::env::var_os("CI").is_some() {
        panic!("{missing}");
    }
    eprintln!("\n!!!!!!!!!! SKIPPED: {missing} !!!!!!!!!!\n");
    None
}

/// Run the client script (copied next to the SDK so its import resolves) against the binary,
/// with HOME and the data dir in `home`, pointed at `server`; its JSON report.
async fn run_client(sdk: &Path, home: &Path, project: &Path, base_url: &str) -> Value {
    let script = sdk.join(format!("client-{}.mjs", std::process::id()));
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/acp/client.mjs"),
        &script,
    )
    .unwrap();
    let out = tokio::process::Command::new("node")
        .arg(&script)
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .env("CAIRN_DATA_DIR", home.join("data"))
        .env("ANTHROPIC_BASE_URL", base_url)
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("CAIRN_RETRY_BASE_MS", "10")
        .env("CAIRN_BIN", env!("CARGO_BIN_EXE_cairn"))
        .env("ACP_PROJECT", project)
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(std::time::Duration::from_secs(120), out)
        .await
        .expect("the client finishes within 120 s")
        .unwrap();
    let _ = std::fs::remove_file(&script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "client failed\nstdout: {stdout}\nstderr: {stderr}"
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("report is not JSON ({e}): {stdout}\nstderr: {stderr}"))
}

/// The updates of one kind (`tool_call`, `agent_message_chunk`, ...), in order.
fn of_kind<'a>(updates: &'a Value, kind: &str) -> Vec<&'a Value> {
    updates
        .as_array()
        .unwrap()
        .iter()
        .map(|n| &n["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

fn text_of(updates: &Value, kind: &str) -> String {
    of_kind(updates, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_editor_prompts_edits_with_permission_cancels_and_loads_the_session() {
    let Some(sdk) = node_and_sdk() else { return };
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let project = project.path().canonicalize().unwrap();
    std::fs::write(project.join("notes.txt"), "alpha\nbeta\n").unwrap();
    let call = |id: &str, name: &str, input: Value| json!({"id": id, "name": name, "input": input});
    let server = llm::scripted(&json!({"turns": [
        {"text": "Reading.", "tool_calls": [call("r1", "Read", json!({"file_path": "notes.txt"}))]},
        {"tool_calls": [call("e1", "Edit",
            json!({"file_path": "notes.txt", "old_string": "alpha", "new_string": "gamma"}))]},
        {"tool_calls": [call("b1", "Bash",
            json!({"command": "echo hello-acp", "description": "say hello"}))]},
        {"text": "All done."},
        {"tool_calls": [call("s1", "Bash",
            json!({"command": "sleep 30", "description": "wait"}))]},
        {"text": "never reached"},
    ]}));
    let report = run_client(&sdk, home.path(), &project, &server.anthropic_base_url()).await;
    let first = &report["first"];

    // initialize: what cairn can do.
    let caps = &first["init"]["agentCapabilities"];
    assert_eq!(caps["loadSession"], true, "{caps}");
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    assert_eq!(caps["mcpCapabilities"]["sse"], true);
    // session/new: cairn's permission modes.
    let modes = &first["session"]["modes"];
    assert_eq!(modes["currentModeId"], "default");
    let ids: Vec<&str> = modes["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["id"].as_str())
        .collect();
    assert!(
        ids.starts_with(&["default", "acceptEdits", "plan"]),
        "{ids:?}"
    );

    // The prompt: the file changed on disk, after one question with cairn's scopes.
    assert_eq!(first["edit"]["stopReason"], "end_turn", "{first}");
    assert_eq!(
        std::fs::read_to_string(project.join("notes.txt")).unwrap(),
        "gamma\nbeta\n"
    );
    let asked = first["firstPermissions"].as_array().unwrap();
    assert_eq!(asked.len(), 1, "only the edit asks: {asked:?}");
    let options: Vec<(&str, &str)> = asked[0]["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(options[0], ("allow-once", "allow_once"), "{options:?}");
    assert!(
        options.contains(&("allow-session", "allow_always")),
        "{options:?}"
    );
    assert!(
        options.contains(&("reject-once", "reject_once")),
        "{options:?}"
    );
    assert!(
        options.contains(&("reject-session", "reject_always")),
        "{options:?}"
    );
    let proposal = &asked[0]["toolCall"];
    assert_eq!(proposal["toolCallId"], "e1");
    assert_eq!(proposal["content"][0]["type"], "diff", "{proposal}");
    assert_eq!(proposal["content"][0]["oldText"], "alpha\nbeta\n");
    assert_eq!(proposal["content"][0]["newText"], "gamma\nbeta\n");

    // The calls streamed with their kinds, and finished with a diff and the command's output.
    let updates = &first["firstUpdates"];
    // `pending` is the protocol's default status, left off the wire.
    let calls: Vec<(&str, &str, &str)> = of_kind(updates, "tool_call")
        .iter()
        .map(|c| {
            (
                c["toolCallId"].as_str().unwrap(),
                c["kind"].as_str().unwrap(),
                c["status"].as_str().unwrap_or("pending"),
            )
        })
        .collect();
    assert_eq!(
        calls,
        [
            ("r1", "read", "pending"),
            ("e1", "edit", "pending"),
            ("b1", "execute", "pending")
        ]
    );
    let read = of_kind(updates, "tool_call")[0];
    assert_eq!(
        read["locations"][0]["path"],
        project.join("notes.txt").display().to_string()
    );
    let finished = |id: &str| -> Value {
        of_kind(updates, "tool_call_update")
            .into_iter()
            .rfind(|u| u["toolCallId"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("no update of {id}: {updates}"))
    };
    let edit = finished("e1");
    assert_eq!(edit["status"], "completed");
    assert_eq!(edit["content"][0]["type"], "diff");
    assert_eq!(edit["content"][0]["newText"], "gamma\nbeta\n");
    let bash = finished("b1");
    assert_eq!(bash["status"], "completed");
    let output = bash["content"][0]["content"]["text"].as_str().unwrap();
    assert!(output.contains("hello-acp"), "{output}");
    assert_eq!(finished("r1")["status"], "completed");
    assert!(text_of(updates, "agent_message_chunk").contains("All done."));
    let commands = of_kind(updates, "available_commands_update");
    assert!(!commands.is_empty(), "slash commands are announced");

    // The model got the image and the embedded file in the user turn.
    let request = server.requests()[0].body.to_string();
    assert!(request.contains("SPEC-MARKER: greet people"), "{request}");
    assert!(request.contains("<context source=\\\"file://"), "{request}");
    assert!(
        request.contains("\"media_type\":\"image/png\""),
        "{request}"
    );

    // Each `cairn acp` ended by itself when the client closed its stdin.
    assert_eq!(first["exitCode"], 0, "{first}");
    assert_eq!(report["second"]["exitCode"], 0);

    // The cancelled prompt answered `cancelled` long before its command would have ended.
    assert_eq!(first["cancelled"]["stopReason"], "cancelled", "{first}");
    assert!(first["cancelledMs"].as_u64().unwrap() < 20_000);

    // A fresh connection loads the session: the history came before the answer.
    let second = &report["second"];
    assert!(second["loaded"].is_object(), "{second}");
    let replayed = &second["replayed"];
    assert!(
        text_of(replayed, "user_message_chunk").contains("change alpha to gamma"),
        "{replayed}"
    );
    assert!(text_of(replayed, "agent_message_chunk").contains("All done."));
    let titles: Vec<&str> = of_kind(replayed, "tool_call")
        .iter()
        .filter_map(|c| c["title"].as_str())
        .collect();
    assert!(titles.iter().any(|t| t.starts_with("Edit")), "{titles:?}");
    assert!(
        titles.iter().any(|t| t.contains("echo hello-acp")),
        "{titles:?}"
    );
}
