//! The commands tools and hooks start do not inherit the model-provider credentials cairn was
//! started with, unless the settings' `env` names one. Real subprocesses, with a real
//! environment: this file holds one test so that setting cairn's own environment is safe.

use std::time::Duration;

use cairn::config::hooks::{HookCommand, HookEvent, HookGroup, HooksConfig};
use cairn::config::layers::{Layer, Origin};
use cairn::hooks::HookRunner;
use cairn::tools::bash::process;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const PROBE: &str = "echo \"a=${ANTHROPIC_API_KEY-unset} o=${OPENAI_API_KEY-unset} \
                     x=${UNRELATED_VAR-unset}\"";

#[tokio::test]
async fn bash_and_hooks_do_not_see_provider_credentials() {
    // SAFETY: this test binary has this one test, so no other thread reads the environment
    // while it is changed.
    unsafe {
        std::env::set_var("ANTHROPIC_API_KEY", "sk-ant-secret");
        std::env::set_var("OPENAI_API_KEY", "sk-openai-secret");
        std::env::set_var("UNRELATED_VAR", "kept");
        std::env::remove_var("CAIRN_TOOL_CREDENTIALS");
    }
    let dir = tempfile::tempdir().unwrap();

    // The Bash tool's spawn, without and with the settings' env naming a credential.
    let run = |env: Vec<(String, String)>| {
        let dir = dir.path().to_path_buf();
        async move {
            let child = process::spawn("bash", PROBE, &dir, &env).unwrap();
            let out = process::run_foreground(
                child,
                Duration::from_secs(60),
                &CancellationToken::new(),
                |_| {},
            )
            .await;
            String::from_utf8_lossy(&out.stdout).trim().to_string()
        }
    };
    assert_eq!(run(Vec::new()).await, "a=unset o=unset x=kept");
    let opted_in = vec![("OPENAI_API_KEY".to_string(), "sk-for-tools".to_string())];
    assert_eq!(run(opted_in).await, "a=unset o=sk-for-tools x=kept");

    // A hook.
    let config = HooksConfig {
        groups: vec![HookGroup {
            event: HookEvent::Stop,
            matcher: String::new(),
            commands: vec![HookCommand {
                command: PROBE.to_string(),
                timeout: Duration::from_secs(60),
            }],
            origin: Origin {
                layer: Layer::User,
                source: "test".into(),
            },
        }],
    };
    let runner = HookRunner::with_env(config, dir.path().to_path_buf(), Vec::new());
    let runs = runner.run(HookEvent::Stop, None, &json!({})).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].stdout.trim(), "a=unset o=unset x=kept");
}
