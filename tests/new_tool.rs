//! The worked example of docs/ARCHITECTURE.md ("Adding a tool"), compiled and run: a read-only
//! tool written outside `src/tools/` knows nothing of permissions, the TUI or the executor, yet
//! the model is offered its schema, a call inside the project runs without asking, and a
//! `Read(…)` deny rule in the settings refuses it for that path — the gate decided from the
//! tool's declared `Access`, not from its name.

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use cairn::config::load_settings;
use cairn::files::paths::expand_path;
use cairn::llm::Provider;
use cairn::permissions::PermissionGate;
use cairn::protocol::TurnEnd;
use cairn::session::context::SessionContext;
use cairn::tools::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

#[path = "support/agent.rs"]
mod agent;
#[path = "support/llm.rs"]
mod llm;

use agent::{Agent, Setup, finished, gate_with_settings, tool_results};

// ---- the tool, as docs/ARCHITECTURE.md shows it ----

pub struct LineCountTool;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineCountInput {
    /// The file to count, absolute or relative to the working directory.
    file_path: String,
}

#[async_trait]
impl Tool for LineCountTool {
    type Input = LineCountInput;
    fn info(&self) -> ToolInfo {
        // Who it is, and what every call is like: it only reads, and may run beside others.
        ToolInfo::new("LineCount", ToolKind::Read)
            .read_only()
            .concurrency_safe()
    }
    fn description(&self) -> String {
        "Counts the lines of a text file.".into()
    }
    fn title(&self, i: &LineCountInput, _: &SessionContext) -> String {
        format!("LineCount {}", i.file_path)
    }
    fn accesses(&self, i: &LineCountInput, ctx: &SessionContext) -> Vec<Access> {
        // What the gate checks (deny rules, working directories) before any I/O.
        expand_path(&i.file_path, &ctx.cwd())
            .map(Access::Read)
            .into_iter()
            .collect()
    }
    async fn call(&self, i: LineCountInput, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let path = expand_path(&i.file_path, &ctx.session.cwd())
            .map_err(|e| ToolError::new(e.to_string()))?;
        let text = tokio::fs::read_to_string(&path)
            .await
            .map_err(|e| ToolError::new(format!("Cannot read {}: {e}", path.display())))?;
        Ok(ToolOutput::text(format!("{} lines", text.lines().count())))
    }
}

// ---- the test ----

/// A default-mode, interactive gate over `dir` with the project's settings file applied.
fn gate_with_project_settings(dir: &Path) -> PermissionGate {
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_read_only_tool_is_offered_runs_and_obeys_read_deny_rules() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::create_dir_all(dir.join(".claude")).unwrap();
    std::fs::write(dir.join("notes.txt"), "a\nb\nc\n").unwrap();
    std::fs::write(dir.join("secret.txt"), "hidden\n").unwrap();
    std::fs::write(
        dir.join(".claude/settings.json"),
        json!({"permissions": {"deny": ["Read(./secret.txt)"]}}).to_string(),
    )
    .unwrap();

    for provider in [Provider::Anthropic, Provider::OpenAi] {
        let mut setup = Setup::in_dir(&dir, provider);
        setup.transcript = false;
        setup.gate = gate_with_project_settings(&dir);
        setup.tools = vec![Arc::new(LineCountTool)];
        let script = json!({"turns": [
            {"tool_calls": [
                {"id": "c1", "name": "LineCount", "input": {"file_path": "notes.txt"}},
                {"id": "c2", "name": "LineCount", "input": {"file_path": "secret.txt"}}]},
            {"text": "done"}]});
        let mut agent = Agent::start(&script, setup);
        agent.submit("count");
        // Nothing is asked: the read inside the project is allowed, the denied one refused.
        let events = agent
            .run_turn_answering(|req| panic!("{provider:?}: asked for {}", req.tool))
            .await;
        assert_eq!(finished(&events).0, TurnEnd::Completed, "{provider:?}");

        let offered = agent.request_body(0).to_string();
        assert!(offered.contains("\"LineCount\""), "{provider:?}: {offered}");
        assert!(
            offered.contains("The file to count"),
            "{provider:?}: the schema travels: {offered}"
        );

        let results = tool_results(&agent.request_body(1));
        assert_eq!(results.len(), 2, "{provider:?}: {results:?}");
        assert_eq!(results[0].0, "3 lines", "{provider:?}");
        assert!(
            results[1].0.contains("Read(./secret.txt)") && !results[1].0.contains("hidden"),
            "{provider:?}: {results:?}"
        );
        if provider == Provider::Anthropic {
            assert!(!results[0].1 && results[1].1, "{results:?}");
        }
    }
}
