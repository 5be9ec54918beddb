//! `cairn acp` against a real client: the official TypeScript SDK's (`@agentclientprotocol/sdk`,
//! installed by `.ci/run` into `target/acp-client`) drives the real binary through
//! `tests/acp/client.mjs` — initialize (the client offers terminals), a new session, a prompt
//! with an image and an embedded file in which the scripted model reads, edits (the client
//! allows it once) and runs `echo` in the client's terminal, a prompt cancelled while its
//! command runs there, and a fresh connection that lists, loads, closes and resumes the
//! session and is told why `authenticate` has nothing to offer.
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
            json!({"command": "echo hello-acp key=${ANTHROPIC_API_KEY:-none}",
                "description": "say hello"}))]},
        {"tool_calls": [call("t1", "Bash",
            json!({"command": "sleep 5", "timeout": 300, "description": "too slow"}))]},
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
    // The edit asks, and so does the command (its expansion is not read-only): the gate is the
    // same for a command that runs in the client's terminal.
    let asked_ids: Vec<&str> = asked
        .iter()
        .filter_map(|q| q["toolCall"]["toolCallId"].as_str())
        .collect();
    assert_eq!(asked_ids, ["e1", "b1", "t1"], "{asked:?}");
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
            ("b1", "execute", "pending"),
            ("t1", "execute", "pending")
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
    // Each call went pending → in_progress (when it started running) → completed.
    for id in ["r1", "e1", "b1"] {
        let mut statuses: Vec<&str> = updates
            .as_array()
            .unwrap()
            .iter()
            .map(|n| &n["update"])
            .filter(|u| u["toolCallId"] == id)
            .filter_map(|u| match u["sessionUpdate"].as_str() {
                Some("tool_call") => Some(u["status"].as_str().unwrap_or("pending")),
                _ => u["status"].as_str(),
            })
            .collect();
        statuses.dedup();
        assert_eq!(statuses, ["pending", "in_progress", "completed"], "{id}");
    }

    // The command ran in the client's terminal: created in the project with the session's
    // shell, waited for, read, released; the call showed the terminal live and at its end.
    let all_terminals = first["firstTerminals"].as_array().unwrap();
    let of_terminal = |id: &str| -> Vec<&str> {
        all_terminals
            .iter()
            .filter(|t| t["terminalId"] == id)
            .filter_map(|t| t["method"].as_str())
            .collect()
    };
    let created = &all_terminals[0];
    let terminal_id = created["terminalId"].as_str().unwrap();
    assert_eq!(
        of_terminal(terminal_id),
        ["create", "wait_for_exit", "output", "release"],
        "{all_terminals:?}"
    );
    assert_eq!(created["params"]["cwd"], project.display().to_string());
    assert_eq!(created["params"]["args"][0], "-c");
    let script = created["params"]["args"][1].as_str().unwrap();
    assert!(
        script.starts_with("unset ANTHROPIC_API_KEY") && script.contains("echo hello-acp"),
        "{script}"
    );
    let shown = |u: &Value| u["content"][0]["type"] == "terminal";
    let live = of_kind(updates, "tool_call_update")
        .into_iter()
        .find(|u| u["toolCallId"] == "b1" && shown(u))
        .unwrap_or_else(|| panic!("no terminal in b1's updates: {updates}"));
    assert_eq!(live["status"], "in_progress");
    assert_eq!(live["content"][0]["terminalId"], terminal_id);
    let bash = finished("b1");
    assert_eq!(bash["status"], "completed");
    assert_eq!(bash["content"][0]["terminalId"], terminal_id, "{bash}");
    // The model got the terminal's output; the provider's key was unset in the terminal's
    // shell as it is for a local command.
    let after_bash = server.requests()[3].body.to_string();
    assert!(after_bash.contains("hello-acp key=none"), "{after_bash}");
    assert_eq!(finished("r1")["status"], "completed");
    // The call's timeout holds in the client's terminal: killed, read, released; the model
    // is told as for a local command.
    let slow = all_terminals
        .iter()
        .find(|t| t["method"] == "create" && t["terminalId"] != terminal_id)
        .unwrap_or_else(|| panic!("no terminal for t1: {all_terminals:?}"));
    let slow_id = slow["terminalId"].as_str().unwrap();
    assert!(
        slow["params"]["args"][1]
            .as_str()
            .unwrap()
            .contains("sleep 5")
    );
    let slow_methods = of_terminal(slow_id);
    assert_eq!(slow_methods[0], "create");
    assert_eq!(
        slow_methods[slow_methods.len() - 3..],
        ["kill", "output", "release"]
    );
    assert_eq!(finished("t1")["status"], "failed");
    let after_slow = server.requests()[4].body.to_string();
    assert!(
        after_slow.contains("Command timed out after 0.3 s"),
        "{after_slow}"
    );
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

    // The cancelled prompt answered `cancelled` long before its command would have ended;
    // the command's terminal was killed and released.
    assert_eq!(first["cancelled"]["stopReason"], "cancelled", "{first}");
    assert!(first["cancelledMs"].as_u64().unwrap() < 20_000);
    let second_terminals = first["secondTerminals"].as_array().unwrap();
    let sleeping = second_terminals[0]["terminalId"].as_str().unwrap();
    assert_eq!(second_terminals[0]["method"], "create");
    assert!(
        second_terminals[0]["params"]["args"][1]
            .as_str()
            .unwrap()
            .contains("sleep 30")
    );
    for method in ["kill", "release"] {
        assert!(
            second_terminals
                .iter()
                .any(|t| t["method"] == method && t["terminalId"] == sleeping),
            "{method}: {second_terminals:?}"
        );
    }

    // A fresh connection: what cairn offers besides sessions, and no authentication.
    let second = &report["second"];
    let caps = &second["init"]["agentCapabilities"]["sessionCapabilities"];
    for method in ["list", "resume", "close"] {
        assert!(caps[method].is_object(), "{method}: {caps}");
    }
    let methods = &second["init"]["authMethods"];
    assert!(
        methods.is_null() || methods.as_array().is_some_and(Vec::is_empty),
        "{methods}"
    );
    let refusal = second["authenticate"].as_str().unwrap();
    assert!(refusal.contains("ANTHROPIC_API_KEY"), "{refusal}");
    // Without credentials, a new session is refused with ACP's auth_required code, and the
    // error says where credentials go.
    let refused = &report["third"]["refused"];
    assert_eq!(refused["code"], -32000, "{refused}");
    assert!(
        refused["data"]
            .as_str()
            .unwrap_or_default()
            .contains("ANTHROPIC_API_KEY"),
        "{refused}"
    );
    assert_eq!(report["third"]["exitCode"], 0);

    // session/list: the project's sessions, this one with its first prompt as the title.
    let session_id = first["session"]["sessionId"].as_str().unwrap();
    let listed = second["listed"]["sessions"].as_array().unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["sessionId"], session_id);
    assert_eq!(listed[0]["cwd"], project.display().to_string());
    assert!(
        listed[0]["title"]
            .as_str()
            .unwrap()
            .starts_with("Please change alpha to gamma"),
        "{listed:?}"
    );
    assert!(listed[0]["updatedAt"].as_str().unwrap().ends_with('Z'));
    // Without a folder: those of the connection's open sessions (the loaded one).
    let open = second["listedOpen"]["sessions"].as_array().unwrap();
    assert_eq!(open[0]["sessionId"], session_id, "{open:?}");

    // session/close: the session is gone from the connection; session/resume brings it back
    // without replaying its history.
    assert!(second["closed"].is_object(), "{second}");
    let refused = second["afterClose"].as_str().unwrap();
    assert!(refused.contains("no session"), "{refused}");
    assert_eq!(second["resumed"]["modes"]["currentModeId"], "default");
    let after_resume = &second["afterResume"];
    assert!(
        of_kind(after_resume, "user_message_chunk").is_empty(),
        "{after_resume}"
    );
    assert!(
        of_kind(after_resume, "tool_call").is_empty(),
        "{after_resume}"
    );
    assert!(
        !of_kind(after_resume, "available_commands_update").is_empty(),
        "{after_resume}"
    );

    // session/load: the history came before the answer.
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
