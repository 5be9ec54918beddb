//! Hooks with real shell scripts, and settings layers read from real files in temp dirs.

use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::config::layers::{Layer, SettingsPaths};
use cairn::config::settings::load_settings_from;
use cairn::config::{LoadedSettings, load_settings, render_config};
use cairn::hooks::{HookCall, Hooks};
use cairn::permissions::{GateConfig, GateOutcome, PermissionGate};
use cairn::protocol::{Event, PermissionMode};
use cairn::session::context::SessionContext;
use cairn::tools::ToolOutput;
use serde_json::{Value, json};
use tokio::sync::mpsc::UnboundedReceiver;

#[path = "support/probe.rs"]
mod probe;

#[path = "support/workspace.rs"]
mod workspace;

use probe::{Probe, check_with_hooks};
use workspace::Homes;

type Ws = Homes;

/// The workspace of these tests: a project with `src/main.rs`.
fn ws() -> Ws {
    let ws = Homes::new();
    ws.write("proj/src/main.rs", "fn main() {}");
    ws
}

impl Homes {
    fn settings(&self) -> LoadedSettings {
        load_settings(&self.proj, None, &self.env(), cairn::config::Trust::Trusted)
    }

    fn gate(&self, mode: PermissionMode) -> Guard {
        let settings = self.settings();
        assert!(
            settings.diagnostics.is_empty(),
            "{:?}",
            settings.diagnostics
        );
        gate_over(self, &settings, mode)
    }

    fn session(&self) -> (Arc<SessionContext>, UnboundedReceiver<Event>) {
        self.session_as("sess-9")
    }

    /// Project settings with these hooks.
    fn hooks(&self, hooks: Value) {
        self.write(
            "proj/.claude/settings.json",
            json!({ "hooks": hooks, "permissions": { "deny": ["Read(./secret.txt)"] } })
                .to_string(),
        );
    }
}

fn pre(matcher: &str, command: &str) -> Value {
    json!({ "PreToolUse": [ { "matcher": matcher, "hooks": [ { "type": "command", "command": command } ] } ] })
}

/// A gate and the hooks of the same settings, as a session has them.
struct Guard {
    gate: PermissionGate,
    hooks: Hooks,
}

/// The verdict on a probe named `tool` (read-only if it is `Read`) with `input`, in which `$P`
/// stands for the project dir, after the PreToolUse hooks; and the input a hook rewrote.
async fn check_rewritten(
    guard: &Guard,
    session: &SessionContext,
    tool: &'static str,
    input: Value,
) -> (GateOutcome, Option<Value>) {
    let probe = Probe {
        name: tool,
        read_only: tool == "Read",
    };
    let proj = session.project_dir.to_string_lossy();
    let input = serde_json::from_str::<Value>(&input.to_string().replace("$P", &proj)).unwrap();
    check_with_hooks(
        &guard.gate,
        &guard.hooks,
        session,
        &probe,
        &input,
        "toolu_1",
    )
    .await
}

async fn check(
    guard: &Guard,
    session: &SessionContext,
    tool: &'static str,
    input: Value,
) -> GateOutcome {
    check_rewritten(guard, session, tool, input).await.0
}

fn notices(rx: &mut UnboundedReceiver<Event>) -> Vec<String> {
    let mut out = vec![];
    while let Ok(e) = rx.try_recv() {
        if let Event::Notice { message } = e {
            out.push(message);
        }
    }
    out
}

#[tokio::test]
async fn pre_tool_use_exit_2_blocks_with_stderr_and_matcher_selects() {
    let ws = ws();
    ws.hooks(pre("Edit|Write", "echo 'no edits today' >&2; exit 2"));
    let gate = ws.gate(PermissionMode::BypassPermissions);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Write", json!({ "write": ["$P/src/main.rs"] })).await;
    assert_eq!(
        o,
        GateOutcome::Deny {
            message: "A PreToolUse hook denied this call: no edits today".into()
        }
    );
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    assert_eq!(o, GateOutcome::Allow);
}

fn decision(d: &str, extra: Value) -> String {
    let mut out = json!({ "hookSpecificOutput": { "hookEventName": "PreToolUse", "permissionDecision": d, "permissionDecisionReason": format!("hook says {d}") } });
    if let (Value::Object(o), Value::Object(e)) = (&mut out["hookSpecificOutput"], extra) {
        o.extend(e);
    }
    format!("echo '{out}'")
}

#[tokio::test]
async fn pre_tool_use_json_decisions_never_override_deny_rules() {
    let ws = ws();
    std::fs::write(ws.proj.join("secret.txt"), "s").unwrap();
    ws.hooks(pre("*", &decision("allow", json!({}))));
    let gate = ws.gate(PermissionMode::Default);
    let (s, _rx) = ws.session();
    // Would ask without the hook; the hook allows.
    let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
    assert_eq!(o, GateOutcome::Allow);
    // A deny rule wins over the hook's allow.
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/secret.txt"] })).await;
    assert!(
        matches!(o, GateOutcome::Deny { ref message } if message.contains("`Read(./secret.txt)`")),
        "{o:?}"
    );

    ws.hooks(pre("", &decision("ask", json!({}))));
    let gate = ws.gate(PermissionMode::Default);
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    let GateOutcome::Ask(req) = o else {
        panic!("{o:?}")
    };
    assert_eq!(req.reason, "a PreToolUse hook asks: hook says ask");

    ws.hooks(pre("Read", &decision("deny", json!({}))));
    let gate = ws.gate(PermissionMode::BypassPermissions);
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    assert_eq!(
        o,
        GateOutcome::Deny {
            message: "A PreToolUse hook denied this call: hook says deny".into()
        }
    );
}

#[tokio::test]
async fn pre_tool_use_updated_input_is_checked_and_returned() {
    let ws = ws();
    std::fs::write(ws.proj.join("secret.txt"), "s").unwrap();
    let main = ws.proj.join("src/main.rs");
    ws.hooks(pre(
        "Read",
        &decision("allow", json!({ "updatedInput": { "read": [main] } })),
    ));
    let gate = ws.gate(PermissionMode::Default);
    let (s, _rx) = ws.session();
    let o = check_rewritten(&gate, &s, "Read", json!({ "read": ["/etc/hostname"] })).await;
    assert_eq!(o, (GateOutcome::Allow, Some(json!({ "read": [main] }))));
    // Rewritten onto a denied path: denied.
    let secret = ws.proj.join("secret.txt");
    ws.hooks(pre(
        "Read",
        &decision("allow", json!({ "updatedInput": { "read": [secret] } })),
    ));
    let gate = ws.gate(PermissionMode::Default);
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    assert!(matches!(o, GateOutcome::Deny { .. }), "{o:?}");
}

#[tokio::test]
async fn hooks_get_stdin_json_and_project_dir_env_and_run_once() {
    let ws = ws();
    let cmd = "cat > \"$CLAUDE_PROJECT_DIR/stdin.json\"; echo \"$CAIRN_PROJECT_DIR\" >> \"$CLAUDE_PROJECT_DIR/env.txt\"";
    ws.hooks(json!({ "PreToolUse": [
        { "matcher": "Read", "hooks": [ { "type": "command", "command": cmd } ] },
        { "matcher": "*", "hooks": [ { "type": "command", "command": cmd } ] } ] }));
    let gate = ws.gate(PermissionMode::AcceptEdits);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    assert_eq!(o, GateOutcome::Allow);
    let stdin: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.proj.join("stdin.json")).unwrap())
            .unwrap();
    assert_eq!(stdin["hook_event_name"], "PreToolUse");
    assert_eq!(stdin["tool_name"], "Read");
    assert_eq!(stdin["tool_use_id"], "toolu_1");
    assert_eq!(stdin["session_id"], "sess-9");
    assert_eq!(stdin["permission_mode"], "acceptEdits");
    assert_eq!(stdin["cwd"], ws.proj.to_string_lossy().as_ref());
    assert_eq!(
        stdin["tool_input"]["read"][0],
        ws.proj.join("src/main.rs").to_string_lossy().as_ref()
    );
    let env = std::fs::read_to_string(ws.proj.join("env.txt")).unwrap();
    assert_eq!(
        env,
        format!("{}\n", ws.proj.display()),
        "the same command runs once"
    );
}

#[tokio::test]
async fn a_hanging_hook_is_killed_and_a_failing_one_reported() {
    let ws = ws();
    ws.hooks(json!({ "PreToolUse": [ { "matcher": "", "hooks": [
        { "type": "command", "command": "sleep 30; echo late", "timeout": 1 },
        { "type": "command", "command": "echo broken >&2; exit 1" } ] } ] }));
    let gate = ws.gate(PermissionMode::Default);
    let (s, mut rx) = ws.session();
    let start = Instant::now();
    let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(o, GateOutcome::Allow, "failures do not block");
    let mut n = notices(&mut rx);
    n.sort();
    assert_eq!(
        n,
        vec![
            "PreToolUse hook `echo broken >&2; exit 1` failed (exit 1): broken; the call gets \
             the usual permission checks"
                .to_string(),
            "PreToolUse hook `sleep 30; echo late` timed out and was killed; the call gets the \
             usual permission checks"
                .to_string(),
        ]
    );
}

#[tokio::test]
async fn post_tool_use_feedback_and_context_reach_the_model() {
    let ws = ws();
    ws.hooks(json!({ "PostToolUse": [ { "matcher": "Edit", "hooks": [
        { "type": "command", "command": "echo 'run cargo fmt' >&2; exit 2" },
        { "type": "command", "command": "echo '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"lint: ok\"}}'" } ] } ] }));
    let gate = ws.gate(PermissionMode::AcceptEdits);
    let (s, _rx) = ws.session();
    let input = json!({ "write": [ws.proj.join("src/main.rs")] });
    assert_eq!(
        check(&gate, &s, "Edit", input.clone()).await,
        GateOutcome::Allow
    );
    let mut out = ToolOutput::text("edited");
    let call = HookCall {
        tool: "Edit",
        call_id: "c",
        input: &input,
    };
    let mode = gate.gate.mode();
    gate.hooks.post_tool_use(call, &s, mode, &mut out).await;
    assert_eq!(
        out.content.text(),
        "edited\n\nPostToolUse hook feedback:\nrun cargo fmt\n\nlint: ok"
    );
}

#[tokio::test]
async fn prompt_stop_and_session_start_hooks() {
    let ws = ws();
    ws.hooks(json!({
        "UserPromptSubmit": [ { "hooks": [ { "type": "command", "command": "grep -q password && { echo 'no secrets' >&2; exit 2; }; echo 'branch: main'" } ] } ],
        "Stop": [ { "hooks": [ { "type": "command", "command": "echo '{\"decision\":\"block\",\"reason\":\"tests still fail\"}'" } ] } ],
        "SessionStart": [ { "matcher": "startup", "hooks": [ { "type": "command", "command": "echo started" } ] } ],
        "SessionEnd": [ { "hooks": [ { "type": "command", "command": "cat > \"$CAIRN_PROJECT_DIR/end.json\"" } ] } ]
    }));
    let hooks = ws.gate(PermissionMode::Default).hooks;
    let mode = PermissionMode::Default;
    let (s, _rx) = ws.session();
    let v = hooks.user_prompt_submit(&s, mode, "fix the bug").await;
    assert_eq!(
        (v.blocked, v.additional_context),
        (None, vec!["branch: main".to_string()])
    );
    let v = hooks.user_prompt_submit(&s, mode, "my password is x").await;
    assert_eq!(v.blocked.as_deref(), Some("no secrets"));
    let v = hooks.stop(&s, mode, false).await;
    assert_eq!(v.blocked.as_deref(), Some("tests still fail"));
    assert_eq!(
        hooks
            .session_start(&s, mode, "startup")
            .await
            .additional_context,
        vec!["started"]
    );
    assert!(
        hooks
            .session_start(&s, mode, "resume")
            .await
            .additional_context
            .is_empty()
    );
    hooks.session_end(&s, mode, "exit").await;
    let end: Value =
        serde_json::from_str(&std::fs::read_to_string(ws.proj.join("end.json")).unwrap()).unwrap();
    assert_eq!(
        (end["hook_event_name"].as_str(), end["reason"].as_str()),
        (Some("SessionEnd"), Some("exit"))
    );
}

#[test]
fn layers_merge_with_origins() {
    let ws = ws();
    ws.write("home/.claude/settings.json", r#"{"model":"user-model","env":{"A":"user","B":"user"},"permissions":{"allow":["Read"],"deny":["Bash(curl *)"],"defaultMode":"plan"}}"#);
    ws.write(
        "home/.config/cairn/settings.json",
        r#"{"permissions":{"allow":["Bash(cargo *)"]}}"#,
    );
    ws.write("proj/.claude/settings.json", r#"{"model":"project-model","env":{"A":"project"},"permissions":{"deny":["WebFetch"],"additionalDirectories":["../docs"]}}"#);
    ws.write(
        "proj/.cairn/settings.local.json",
        r#"{"permissions":{"allow":["Bash(npm test *)"],"defaultMode":"acceptEdits"}}"#,
    );
    let s = load_settings(
        &ws.proj,
        Some(r#"{"model":"cli-model"}"#),
        &ws.env(),
        cairn::config::Trust::Trusted,
    );
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(s.model.as_deref(), Some("cli-model"));
    assert_eq!(s.origins["model"].layer, Layer::Cli);
    assert_eq!(s.default_mode, Some(PermissionMode::AcceptEdits));
    assert_eq!(s.origins["defaultMode"].layer, Layer::ProjectLocal);
    assert_eq!(s.env["A"], "project");
    assert_eq!(s.env["B"], "user");
    let texts = |l: &Vec<cairn::config::settings::SourcedRule>| {
        l.iter().map(|r| r.rule.text.clone()).collect::<Vec<_>>()
    };
    assert_eq!(
        texts(&s.permissions.allow),
        vec!["Bash(npm test *)", "Bash(cargo *)", "Read"]
    );
    assert_eq!(texts(&s.permissions.deny), vec!["WebFetch", "Bash(curl *)"]);
    assert_eq!(s.additional_directories, vec![ws.root.join("docs")]);
    let out = render_config(&s);
    assert!(
        out.contains("model: cli-model  (command line: --settings (inline JSON))"),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "  Bash(curl *)  (user: {})",
            ws.home.join(".claude/settings.json").display()
        )),
        "{out}"
    );
    assert!(
        out.contains(&format!(
            "  A=project  (project: {})",
            ws.proj.join(".claude/settings.json").display()
        )),
        "{out}"
    );
}

#[test]
fn status_line_and_output_style_come_from_the_highest_layer_and_are_shown_by_config() {
    let ws = ws();
    ws.write(
        "home/.claude/settings.json",
        r#"{"statusLine":{"type":"command","command":"~/.claude/statusline.sh"},"outputStyle":"Learning"}"#,
    );
    ws.write(
        "proj/.claude/settings.json",
        r#"{"statusLine":{"type":"command","command":"./bar.sh","padding":1},"outputStyle":7}"#,
    );
    let s = load_settings(&ws.proj, None, &ws.env(), cairn::config::Trust::Trusted);
    let line = s
        .appearance
        .status_line
        .as_ref()
        .map(|l| (l.command.as_str(), l.padding));
    assert_eq!(line, Some(("./bar.sh", 1)));
    assert_eq!(s.appearance.output_style.as_deref(), Some("Learning"));
    assert_eq!(s.diagnostics.len(), 1, "{:?}", s.diagnostics);
    assert!(s.broken.is_empty());
    let out = render_config(&s);
    let project = ws.proj.join(".claude/settings.json");
    assert!(
        out.contains(&format!(
            "statusLine: ./bar.sh  (project: {})",
            project.display()
        )),
        "{out}"
    );
    assert!(out.contains("outputStyle: Learning  (user: "), "{out}");
}

#[test]
fn broken_files_are_reported_with_file_and_line_and_skipped() {
    let ws = ws();
    ws.write(
        "proj/.claude/settings.json",
        "{\n  \"model\": \"m\",\n  \"permissions\": {\"allow\": [\"Read\",]}\n}\n",
    );
    ws.write(
        "proj/.claude/settings.local.json",
        "{\n  \"permissions\": {\n    \"allow\": [\"Bash(ls\", \"Edit\"],\n    \"deny\": \"WebFetch\",\n    \"defaultMode\": \"yolo\"\n  },\n  \"env\": {\"N\": {\"x\": 1}}\n}\n",
    );
    let s = load_settings(
        &ws.proj,
        Some("/nonexistent/settings.json"),
        &ws.env(),
        cairn::config::Trust::Trusted,
    );
    let local = ws
        .proj
        .join(".claude/settings.local.json")
        .display()
        .to_string();
    let shared = ws.proj.join(".claude/settings.json").display().to_string();
    assert_eq!(
        s.diagnostics,
        vec![
            "--settings /nonexistent/settings.json: no such file (and not inline JSON)".to_string(),
            format!("{shared}:3:36: invalid JSON: trailing comma; the file cannot be used"),
            format!("{local}:7: `env.N` must be a string; ignored"),
            format!(
                "{local}:5: `permissions.defaultMode` \"yolo\" is not one of default, acceptEdits, plan, bypassPermissions, dontAsk; ignored"
            ),
            format!(
                "{local}:3: permissions.allow: `Bash(ls`: missing `)` at the end; rule skipped"
            ),
            format!("{local}:4: `permissions.deny` must be a list of strings; ignored"),
        ]
    );
    assert_eq!(s.model, None, "the broken file is skipped whole");
    assert_eq!(
        s.permissions.allow.len(),
        1,
        "the good rule of the local file is kept"
    );
    assert!(render_config(&s).contains("problems:\n"));
    // The missing --settings file, the unparsable file and the deny list that is not a list
    // may each have held deny rules: the gate must fail closed on them.
    assert_eq!(
        s.broken,
        vec![
            "--settings /nonexistent/settings.json: no such file (and not inline JSON)".to_string(),
            format!("{shared}:3:36: invalid JSON: trailing comma; the file cannot be used"),
            format!("{local}:4: `permissions.deny` must be a list of strings; ignored"),
        ]
    );
}

#[test]
fn managed_layer_beats_everything_and_user_paths_follow_env() {
    let ws = ws();
    ws.write(
        "etc/managed-settings.json",
        r#"{"model":"managed","permissions":{"deny":["Bash(rm *)"]}}"#,
    );
    ws.write(
        "etc/managed-settings.d/10-extra.json",
        r#"{"permissions":{"deny":["WebFetch"]}}"#,
    );
    ws.write("xdg/cairn/settings.json", r#"{"env":{"X":"xdg"}}"#);
    ws.write(
        "claude-dir/settings.json",
        r#"{"env":{"X":"claude","Y":"claude"}}"#,
    );
    let root = ws.root.clone();
    let home = ws.home.clone();
    let env = move |k: &str| match k {
        "HOME" => Some(home.to_string_lossy().into_owned()),
        "XDG_CONFIG_HOME" => Some(root.join("xdg").to_string_lossy().into_owned()),
        "CLAUDE_CONFIG_DIR" => Some(root.join("claude-dir").to_string_lossy().into_owned()),
        _ => None,
    };
    let mut paths = SettingsPaths::standard(&ws.proj, &env);
    paths.managed = cairn::config::layers::managed_files(&ws.root.join("etc"));
    let s = load_settings_from(
        &paths,
        &ws.proj,
        Some(r#"{"model":"cli"}"#),
        &env,
        cairn::config::Trust::Trusted,
    );
    assert!(s.diagnostics.is_empty(), "{:?}", s.diagnostics);
    assert_eq!(s.model.as_deref(), Some("managed"));
    assert_eq!(
        (s.env["X"].as_str(), s.env["Y"].as_str()),
        ("xdg", "claude")
    );
    assert_eq!(s.permissions.deny.len(), 2);
}

#[test]
fn project_root_is_the_nearest_marked_ancestor() {
    let ws = ws();
    let sub = ws.proj.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    ws.write(
        "proj/.claude/settings.json",
        r#"{"permissions":{"deny":["Read(/src/**)"]}}"#,
    );
    let s = load_settings(&sub, None, &ws.env(), cairn::config::Trust::Trusted);
    assert_eq!(s.project_root, ws.proj);
    assert_eq!(s.permissions.deny.len(), 1);
}

/// A gate over whatever the settings are, problems included, and their hooks.
fn gate_over(ws: &Ws, settings: &LoadedSettings, mode: PermissionMode) -> Guard {
    let gate = PermissionGate::new(GateConfig {
        mode,
        ..ws.gate_config(settings)
    })
    .unwrap();
    Guard {
        gate,
        hooks: hooks_of(ws, settings),
    }
}

/// The hooks of `settings`, as a session in `proj/` runs them.
fn hooks_of(ws: &Ws, settings: &LoadedSettings) -> Hooks {
    let transcript = ws.data.join("t.jsonl");
    Hooks::new(
        settings.hooks.clone(),
        ws.proj.clone(),
        Vec::new(),
        transcript,
    )
}

#[tokio::test]
async fn broken_settings_refuse_every_call_that_is_not_read_only() {
    let ws = ws();
    ws.write("home/.claude/settings.json", "{\"model\": \"fine\"}");
    let file = ws.proj.join(".claude/settings.json");
    for (text, expect) in [
        (
            "{\n \"permissions\": {\"deny\": [\"Edit\"],}\n}",
            ":2:35: invalid JSON",
        ),
        (
            "{\n \"permissions\": {\n  \"deny\": \"Edit\"\n }\n}",
            ":3: `permissions.deny` must be a list",
        ),
        (
            "{\n \"permissions\": {\n  \"ask\": [\"Bash(rm\"]\n }\n}",
            ":3: permissions.ask: `Bash(rm`",
        ),
        (
            "{\"permissions\": [\"Edit\"]}",
            ":1: `permissions` must be an object",
        ),
        (
            "{\"hooks\": {\"PreToolUse\": {\"matcher\": \"Edit\"}}}",
            ":1: `hooks.PreToolUse` must be a list",
        ),
        ("[1]", ":1: settings must be a JSON object"),
    ] {
        ws.write("proj/.claude/settings.json", text);
        let settings = ws.settings();
        assert!(!settings.broken.is_empty(), "{text}");
        // Even bypassPermissions: the missing rules might have been the only guard.
        let gate = gate_over(&ws, &settings, PermissionMode::BypassPermissions);
        let (s, _rx) = ws.session();
        let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
        let GateOutcome::Deny { message } = &o else {
            panic!("{text}: {o:?}")
        };
        assert!(
            message.contains(&format!("{}{expect}", file.display())),
            "{text}: {message}"
        );
        assert!(message.contains("only read-only tools run"), "{message}");
        let o = check(&gate, &s, "Read", json!({ "read": ["$P/src/main.rs"] })).await;
        assert_eq!(o, GateOutcome::Allow, "{text}: reading still works");
    }

    // Invalid UTF-8 is broken too; a missing file is not.
    std::fs::write(&file, b"{\"model\": \"\xff\"}").unwrap();
    assert_eq!(ws.settings().broken.len(), 1);
    std::fs::remove_file(&file).unwrap();
    assert!(ws.settings().broken.is_empty());

    // A wrong type in a key that restricts nothing is a diagnostic, not a broken gate.
    ws.write(
        "proj/.claude/settings.json",
        "{\"model\": 5, \"env\": [], \"permissions\": {\"allow\": [\"Bash(ls\"], \"deny\": [\"Read(./secret.txt)\"]}}",
    );
    let settings = ws.settings();
    assert_eq!(settings.diagnostics.len(), 3, "{:?}", settings.diagnostics);
    assert!(settings.broken.is_empty(), "{:?}", settings.broken);
    let gate = gate_over(&ws, &settings, PermissionMode::BypassPermissions);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
    assert_eq!(o, GateOutcome::Allow);
}

#[tokio::test]
async fn a_byte_order_mark_is_accepted_and_its_deny_rules_apply() {
    let ws = ws();
    let text = json!({ "permissions": { "deny": ["Edit(src/**)"] } }).to_string();
    ws.write("proj/.claude/settings.json", format!("\u{feff}{text}"));
    let with_bom = ws.settings();
    ws.write("proj/.claude/settings.json", &text);
    let without = ws.settings();
    assert!(
        with_bom.diagnostics.is_empty(),
        "{:?}",
        with_bom.diagnostics
    );
    assert_eq!(render_config(&with_bom), render_config(&without));
    ws.write("proj/.claude/settings.json", format!("\u{feff}{text}"));
    let gate = ws.gate(PermissionMode::BypassPermissions);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
    assert!(
        matches!(o, GateOutcome::Deny { ref message } if message.contains("Edit(src/**)")),
        "{o:?}"
    );
}

#[tokio::test]
async fn a_failed_pre_tool_use_hook_never_approves() {
    let ws = ws();
    let allow = decision("allow", json!({}));
    for (failing, says) in [
        ("sleep 30", "timed out"),
        ("kill -9 $$", "killed by signal 9"),
        ("echo oops >&2; exit 1", "failed (exit 1): oops"),
        ("echo '{\"permissionDecision\": '", "printed invalid JSON"),
        (
            "echo '{\"permissionDecision\": \"yes\"}'",
            "is not allow, deny or ask",
        ),
    ] {
        // Another hook allows: the failed one might have denied, so nothing is approved.
        ws.hooks(json!({ "PreToolUse": [ { "matcher": "", "hooks": [
            { "type": "command", "command": failing, "timeout": 0.5 },
            { "type": "command", "command": allow } ] } ] }));
        let gate = ws.gate(PermissionMode::Default);
        let (s, mut rx) = ws.session();
        let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
        assert!(matches!(o, GateOutcome::Ask(_)), "{failing}: {o:?}");
        let n = notices(&mut rx);
        assert!(
            n.iter()
                .any(|m| m.contains(says) && m.contains("the usual permission checks")),
            "{failing}: {n:?}"
        );
        // Headless: the person cannot be asked, so the call is refused, not run.
        let settings = ws.settings();
        let headless = Guard {
            gate: PermissionGate::new(GateConfig {
                interactive: false,
                ..ws.gate_config(&settings)
            })
            .unwrap(),
            hooks: hooks_of(&ws, &settings),
        };
        let o = check(
            &headless,
            &s,
            "Edit",
            json!({ "write": ["$P/src/main.rs"] }),
        )
        .await;
        assert!(matches!(o, GateOutcome::Deny { .. }), "{failing}: {o:?}");
    }
}

#[tokio::test]
async fn a_deny_from_one_hook_wins_over_an_allow_from_another() {
    let ws = ws();
    ws.hooks(json!({ "PreToolUse": [
        { "matcher": "", "hooks": [ { "type": "command", "command": decision("allow", json!({})) } ] },
        { "matcher": "Edit", "hooks": [ { "type": "command", "command": decision("deny", json!({})) } ] },
        { "matcher": "*", "hooks": [ { "type": "command", "command": "exit 2" } ] } ] }));
    let gate = ws.gate(PermissionMode::BypassPermissions);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
    assert!(matches!(o, GateOutcome::Deny { .. }), "{o:?}");
}

#[tokio::test]
async fn hook_output_is_capped_and_an_overflowing_hook_fails_closed() {
    use cairn::config::hooks::{HookCommand, HookEvent, HookGroup, HooksConfig};
    use cairn::hooks::runner::OUTPUT_CAP;
    let ws = ws();
    // `yes` never stops by itself: only the cap (not the timeout) can end it here.
    for command in ["yes", "yes >&2", "head -c 3000000 /dev/zero; exit 0"] {
        let config = HooksConfig {
            groups: vec![HookGroup {
                event: HookEvent::PreToolUse,
                matcher: String::new(),
                commands: vec![HookCommand {
                    command: command.into(),
                    timeout: Duration::from_secs(120),
                }],
                origin: cairn::config::layers::Origin {
                    layer: Layer::Project,
                    source: "test".into(),
                },
            }],
        };
        let runner = cairn::hooks::HookRunner::new(config, ws.proj.clone());
        let runs = runner
            .run(HookEvent::PreToolUse, Some("Edit"), &json!({}))
            .await;
        let run = &runs[0];
        assert!(run.overflowed && !run.timed_out, "{command}");
        assert!(run.stdout.len() <= OUTPUT_CAP && run.stderr.len() <= OUTPUT_CAP);
        let failure = run.failure(HookEvent::PreToolUse).unwrap();
        assert!(failure.contains("printed more than 1 MiB"), "{failure}");
    }
    ws.hooks(json!({ "PreToolUse": [ { "matcher": "", "hooks": [
        { "type": "command", "command": format!("{}; yes", decision("allow", json!({}))) } ] } ] }));
    let gate = ws.gate(PermissionMode::Default);
    let (s, _rx) = ws.session();
    let o = check(&gate, &s, "Edit", json!({ "write": ["$P/src/main.rs"] })).await;
    assert!(matches!(o, GateOutcome::Ask(_)), "{o:?}");
}
