//! Claude Code plugins end to end with the real binary: a local marketplace (the fixture in
//! `tests/fixtures/plugins/marketplace`, whose `demo-kit` has every kind of part) added,
//! installed, listed, used through `-p` against the scripted model (a namespaced command, the
//! plugin's skill, its UserPromptSubmit hook, its MCP server), disabled and uninstalled — with
//! Claude Code's files checked at each step — and a project that turns the plugin on itself
//! getting no hooks or servers from it until the folder is trusted.

use std::path::{Path, PathBuf};
use std::process::Output;

use cairn::llm::scripted::ScriptedServer;
use serde_json::{Value, json};

#[path = "support/llm.rs"]
mod llm;
#[path = "support/mcp_servers.rs"]
mod mcp_servers;
#[path = "support/trust.rs"]
mod trust;

const ID: &str = "demo-kit@cairn-fixtures";
const ECHO: &str = "mcp__plugin_demo-kit_everything__echo";

fn marketplace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins/marketplace")
}

/// The server-everything script, or a path that does not exist (its server then fails to
/// start, which only the MCP assertions care about).
fn everything_js() -> Option<PathBuf> {
    mcp_servers::servers_dir().map(|d| d.join("server-everything/dist/index.js"))
}

struct Env {
    home: tempfile::TempDir,
    project: tempfile::TempDir,
}

impl Env {
    fn new() -> Env {
        let env = Env {
            home: tempfile::tempdir().unwrap(),
            project: tempfile::tempdir().unwrap(),
        };
        std::fs::create_dir_all(env.project.path().join(".git")).unwrap();
        env
    }
    fn claude(&self) -> PathBuf {
        self.home.path().join(".claude")
    }
    fn json(&self, rel: &str) -> Value {
        let text = std::fs::read_to_string(self.claude().join(rel)).unwrap();
        serde_json::from_str(&text).unwrap()
    }

    /// `cairn ARGS` in the project, with HOME the temp home and `server` as the model.
    async fn cairn(&self, args: &[&str], server: Option<&ScriptedServer>) -> Output {
        let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.current_dir(self.project.path())
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.home.path())
            .env("XDG_CONFIG_HOME", self.home.path().join(".config"))
            .env("CAIRN_DATA_DIR", self.home.path().join("data"))
            .env("ANTHROPIC_API_KEY", "test-key")
            .env(
                "CAIRN_EVERYTHING_JS",
                everything_js().unwrap_or_else(|| "/nonexistent.js".into()),
            )
            .args(args)
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        if let Some(s) = server {
            cmd.env("ANTHROPIC_BASE_URL", s.anthropic_base_url());
        }
        tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
            .await
            .expect("cairn did not finish")
            .unwrap()
    }

    /// `cairn ARGS` against `server`, which must succeed; its stderr.
    async fn run(&self, args: &[&str], server: &ScriptedServer) -> String {
        let out = self.cairn(args, Some(server)).await;
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(out.status.success(), "cairn {args:?}: {stderr}");
        stderr
    }

    /// `cairn ARGS`, which must succeed; its stdout.
    async fn ok(&self, args: &[&str]) -> String {
        let out = self.cairn(args, None).await;
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "cairn {args:?}: {stdout}{stderr}");
        stdout
    }

    fn user_settings(&self, value: Value) {
        std::fs::create_dir_all(self.claude()).unwrap();
        std::fs::write(self.claude().join("settings.json"), value.to_string()).unwrap();
    }
}

fn body(server: &ScriptedServer, n: usize) -> String {
    server.requests()[n].body.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_local_marketplace_plugin_installs_works_turns_off_and_uninstalls() {
    let env = Env::new();
    trust::trust_folder(env.home.path(), env.project.path());
    env.user_settings(json!({
        "toolSearch": "always",
        "permissions": {"allow": ["Skill(demo-kit:greeting)", "mcp__plugin_demo-kit_everything"]}
    }));
    let market = marketplace();
    let added = env
        .ok(&["plugin", "marketplace", "add", market.to_str().unwrap()])
        .await;
    assert!(
        added.starts_with("Added marketplace cairn-fixtures (2 plugins)"),
        "{added}"
    );
    let known = env.json("plugins/known_marketplaces.json");
    let real = market.canonicalize().unwrap().display().to_string();
    assert_eq!(
        known["cairn-fixtures"]["source"],
        json!({"source": "directory", "path": real})
    );
    assert_eq!(known["cairn-fixtures"]["installLocation"], real);

    // A plugin that lives in a git repository needs the network: refused, nothing written.
    let remote = env
        .cairn(&["plugin", "install", "remote-kit@cairn-fixtures"], None)
        .await;
    assert!(!remote.status.success());
    let err = String::from_utf8_lossy(&remote.stderr);
    assert!(
        err.contains("comes from a github source: installing it needs the network"),
        "{err}"
    );

    let installed = env.ok(&["plugin", "install", ID]).await;
    assert!(
        installed.starts_with(&format!("Installed {ID} v1.0.0 (user scope)")),
        "{installed}"
    );
    let cache = env
        .claude()
        .join("plugins/cache/cairn-fixtures/demo-kit/1.0.0");
    // Dotfiles are copied too (Claude Code once skipped them and lost `.mcp.json`).
    assert!(cache.join(".mcp.json").is_file() && cache.join(".lsp.json").is_file());
    let registry = env.json("plugins/installed_plugins.json");
    assert_eq!(registry["version"], 2);
    let entry = &registry["plugins"][ID][0];
    assert_eq!(entry["scope"], "user");
    assert_eq!(entry["version"], "1.0.0");
    assert_eq!(entry["installPath"], cache.display().to_string());
    let settings = env.json("settings.json");
    assert_eq!(settings["enabledPlugins"][ID], true);
    assert_eq!(settings["toolSearch"], "always", "other keys are kept");

    let list = env.ok(&["plugin", "list"]).await;
    for part in [
        "demo-kit@cairn-fixtures v1.0.0 (enabled in",
        "commands: /demo-kit:hello, /demo-kit:tools:count",
        "skills: demo-kit:greeting",
        "agents: demo-kit:reviewer",
        "hooks: UserPromptSubmit",
        "MCP servers: plugin:demo-kit:everything",
        "language servers: plugin:demo-kit:fake",
    ] {
        assert!(list.contains(part), "{part:?} missing from:\n{list}");
    }

    // The namespaced command reaches the model with its root filled in, with the hook's line;
    // the plugin's MCP server answers; its skill loads.
    let mcp = everything_js().is_some();
    let mut turns = Vec::new();
    if mcp {
        turns.push(json!({"tool_calls": [{"id": "ts", "name": "ToolSearch",
            "input": {"query": format!("select:{ECHO}")}}]}));
        turns.push(json!({"tool_calls": [{"id": "e", "name": ECHO,
            "input": {"message": "from the plugin"}}]}));
    }
    turns.push(json!({"tool_calls": [{"id": "s", "name": "Skill",
        "input": {"skill": "demo-kit:greeting"}}]}));
    turns.push(json!({"text": "Hello Ada!"}));
    let server = llm::scripted(&json!({ "turns": turns }));
    let out = env
        .cairn(&["-p", "/demo-kit:hello Ada"], Some(&server))
        .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Hello Ada!");
    let first = body(&server, 0);
    let root = cache.display().to_string();
    assert!(
        first.contains(&format!(
            "HELLO-BODY-MARKER: greet Ada. The kit lives in {root}."
        )),
        "{first}"
    );
    assert!(first.contains("PLUGIN-HOOK-MARKER from 1.0.0"), "{first}");
    assert!(
        first.contains("demo-kit:greeting: How the demo kit greets people"),
        "{first}"
    );
    assert!(first.contains("demo-kit:reviewer"), "{first}");
    // A plugin's agent may not define MCP servers (as in Claude Code): said, never started.
    assert!(
        stderr.contains(
            "reviewer.md: the demo-kit:reviewer agent's own MCP servers (`sneaky`) do not \
             start: a plugin's agents cannot define MCP servers"
        ),
        "{stderr}"
    );
    let n = server.requests().len();
    if mcp {
        let echoed = body(&server, 2);
        assert!(echoed.contains("Echo: from the plugin"), "{echoed}");
    }
    let last = body(&server, n - 1);
    assert!(
        last.contains(&format!(
            "GREETING-BODY-MARKER: greet warmly, using {root}/scripts."
        )),
        "{last}"
    );

    // Off: gone from the session, listed as disabled, the files say so.
    let off = env.ok(&["plugin", "disable", ID]).await;
    assert!(off.starts_with(&format!("Disabled {ID} in ")), "{off}");
    assert_eq!(env.json("settings.json")["enabledPlugins"][ID], false);
    let list = env.ok(&["plugin", "list"]).await;
    assert!(list.contains(&format!("{ID} (disabled)")), "{list}");
    assert!(!list.contains("/demo-kit:hello"), "{list}");
    let server = llm::scripted(&json!({"turns": [{"text": "plain"}]}));
    let out = env.cairn(&["-p", "say hi"], Some(&server)).await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = body(&server, 0);
    assert!(!first.contains("PLUGIN-HOOK-MARKER"), "{first}");
    assert!(!first.contains("demo-kit:greeting"), "{first}");

    let gone = env.ok(&["plugin", "uninstall", ID]).await;
    assert!(gone.starts_with(&format!("Uninstalled {ID}")), "{gone}");
    let registry = env.json("plugins/installed_plugins.json");
    assert_eq!(registry["plugins"], json!({}));
    assert!(
        env.json("settings.json")["enabledPlugins"]
            .get(ID)
            .is_none()
    );
    assert!(!cache.exists());
    let list = env.ok(&["plugin", "list"]).await;
    assert_eq!(list.trim(), "No plugins loaded.");
}

/// A repository's `.claude/settings.json` turns the plugin on (it was installed for that
/// project). Untrusted, the plugin's commands work as the project's own would, but its hook
/// does not run and its servers do not start; the person is told. Trusted, they do.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plugin_an_untrusted_project_turns_on_runs_no_hooks_or_servers() {
    let env = Env::new();
    let market = marketplace();
    env.ok(&["plugin", "marketplace", "add", market.to_str().unwrap()])
        .await;
    let installed = env
        .ok(&["plugin", "install", ID, "--scope", "project"])
        .await;
    assert!(installed.contains("(project scope)"), "{installed}");
    let shared = env.project.path().join(".claude/settings.json");
    let text = std::fs::read_to_string(&shared).unwrap();
    assert!(text.contains(&format!("\"{ID}\": true")), "{text}");
    let project = env.project.path().canonicalize().unwrap();
    let entry = &env.json("plugins/installed_plugins.json")["plugins"][ID][0];
    assert_eq!(entry["scope"], "project");
    assert_eq!(entry["projectPath"], project.display().to_string());

    let server = llm::scripted(&json!({"turns": [{"text": "ok"}]}));
    let stderr = env.run(&["-p", "/demo-kit:hello Bo"], &server).await;
    assert!(
        stderr.contains(
            "plugins the project's settings turn on run nothing until you trust this folder: \
             demo-kit@cairn-fixtures (hooks: UserPromptSubmit, MCP servers: \
             plugin:demo-kit:everything, language servers: plugin:demo-kit:fake)"
        ),
        "{stderr}"
    );
    let first = body(&server, 0);
    assert!(first.contains("HELLO-BODY-MARKER: greet Bo."), "{first}");
    assert!(!first.contains("PLUGIN-HOOK-MARKER"), "{first}");

    trust::trust_folder(env.home.path(), env.project.path());
    let server = llm::scripted(&json!({"turns": [{"text": "ok"}]}));
    let stderr = env.run(&["-p", "/demo-kit:hello Bo"], &server).await;
    assert!(!stderr.contains("run nothing until you trust"), "{stderr}");
    assert!(body(&server, 0).contains("PLUGIN-HOOK-MARKER"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plugin_dir_loads_a_plugin_for_one_run_and_remote_marketplaces_are_refused() {
    let env = Env::new();
    trust::trust_folder(env.home.path(), env.project.path());
    let dir = marketplace().join("plugins/demo-kit");
    let server = llm::scripted(&json!({"turns": [{"text": "ok"}]}));
    let out = env
        .cairn(
            &[
                "--plugin-dir",
                dir.to_str().unwrap(),
                "-p",
                "/demo-kit:tools:count 3 apples",
            ],
            Some(&server),
        )
        .await;
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let first = body(&server, 0);
    assert!(first.contains("COUNT-BODY-MARKER 3 apples"), "{first}");
    assert!(
        first.contains("PLUGIN-HOOK-MARKER from demo-kit"),
        "{first}"
    );
    // Nothing was recorded: the flag is for one run.
    assert!(!env.claude().join("plugins").exists());

    for remote in ["anthropics/claude-plugins", "https://example.com/m.git"] {
        let out = env
            .cairn(&["plugin", "marketplace", "add", remote], None)
            .await;
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains(&format!(
                "{remote} is a remote marketplace: adding it needs the network"
            )),
            "{err}"
        );
    }
    assert!(
        !env.claude()
            .join("plugins/known_marketplaces.json")
            .exists()
    );
}
