//! The built-in demo: its script, the sample project it works on (a scratch copy, removed when
//! the session ends) and the scripted model server it talks to.

use std::path::PathBuf;

use anyhow::Context;

use crate::config::model::ModelPick;
use crate::llm::scripted::{Script, ScriptedServer};
use crate::llm::{ModelEndpoint, Provider};

/// The built-in demo script and the sample project it works on.
pub const DEMO_SCRIPT: &str = include_str!("../../assets/demo/tour.json");
const DEMO_FILES: &[(&str, &str)] = &[
    (
        "README.md",
        include_str!("../../assets/demo/workspace/README.md"),
    ),
    (
        "greet.py",
        include_str!("../../assets/demo/workspace/greet.py"),
    ),
];

/// The demo's scratch project; removed when the session ends.
pub struct DemoWorkspace(PathBuf);

impl Drop for DemoWorkspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running demo: the server and the scratch project (both end when this is dropped), the
/// endpoint that reaches the server.
pub(crate) struct Demo {
    pub server: ScriptedServer,
    /// Held to be dropped with the session (its `Drop` removes the scratch project).
    #[allow(dead_code)]
    pub workspace: DemoWorkspace,
    pub dir: PathBuf,
    pub endpoint: ModelEndpoint,
    pub pick: ModelPick,
}

impl Demo {
    /// Start the scripted server and write the sample project.
    pub fn start() -> anyhow::Result<Demo> {
        let script = Script::from_json(DEMO_SCRIPT).context("the demo script is broken")?;
        let server = ScriptedServer::start(script)
            .context("cannot start the demo model server on 127.0.0.1")?;
        let dir = demo_workspace()?;
        let endpoint = ModelEndpoint {
            provider: Provider::Anthropic,
            model: "cairn-demo".into(),
            base_url: server.anthropic_base_url(),
            api_key: Some("demo".into()),
            login: Default::default(),
        };
        let pick = ModelPick::plain(&endpoint.model);
        Ok(Demo {
            server,
            workspace: DemoWorkspace(dir.clone()),
            dir,
            endpoint,
            pick,
        })
    }

    /// What the person is told before the demo starts.
    pub fn notice(&self) -> String {
        format!(
            "Running the built-in DEMO (a scripted model on {}) in a scratch copy at {}. \
             Set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN, or apiKeyHelper in \
             settings), or OPENAI_API_KEY / OPENAI_BASE_URL, to use a real model.",
            self.server.addr(),
            self.dir.display()
        )
    }
}

/// Write the demo's sample project into a fresh scratch directory.
fn demo_workspace() -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join(format!(
        "cairn-demo-{}-{}",
        std::process::id(),
        chrono::Utc::now().timestamp_millis()
    ));
    std::fs::create_dir_all(&dir)
        .with_context(|| format!("cannot create the demo workspace {}", dir.display()))?;
    for (name, text) in DEMO_FILES {
        std::fs::write(dir.join(name), text)
            .with_context(|| format!("cannot write the demo file {name}"))?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_script_and_files_are_embedded() {
        assert!(DEMO_SCRIPT.contains("\"turns\""));
        assert!(
            DEMO_FILES
                .iter()
                .any(|(n, t)| *n == "greet.py" && t.contains("TODO"))
        );
    }

    #[test]
    fn a_prompt_after_the_tour_is_told_what_to_do_next() {
        let script = Script::from_json(DEMO_SCRIPT).expect("the demo script parses");
        let after = script.after_last.unwrap_or_default();
        assert!(after.starts_with("That was the whole demo"), "{after}");
        assert!(after.contains("/rewind") && after.contains("ANTHROPIC_API_KEY"));
    }
}
