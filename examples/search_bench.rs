//! A small driver for benchmarking the search and shell tools against `rg`, `fd` and a bare
//! `bash -c true` (see scripts/bench-search.sh). Runs one tool call the way the agent does and
//! prints its result, so `hyperfine` can compare whole processes.
//!
//! Usage:
//!   search_bench grep <pattern> <dir> [files|content]
//!   search_bench glob <pattern> <dir>
//!   search_bench bash-overhead <runs>

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cairn::session::context::{EventSender, SessionContext};
use cairn::tools::bash::{BackgroundShells, BashTool};
use cairn::tools::glob::GlobTool;
use cairn::tools::grep::GrepTool;
use cairn::tools::{DynTool, ProgressSender, ToolContext};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn context(dir: &Path) -> ToolContext {
    let (events, _rx) = EventSender::channel();
    let data = std::env::temp_dir().join("cairn-search-bench");
    let session = Arc::new(SessionContext::new(
        "bench".into(),
        dir.to_path_buf(),
        Vec::new(),
        data,
        events.clone(),
    ));
    ToolContext {
        called_as: None,
        session,
        call_id: "bench".into(),
        cancel: CancellationToken::new(),
        progress: ProgressSender::new("bench".into(), events),
        preview: None,
        content_override: None,
        answers: None,
        deferred: Default::default(),
        conflict: None,
    }
}

async fn call(tool: &dyn DynTool, input: Value, ctx: &ToolContext) -> anyhow::Result<String> {
    let parsed = tool.parse(&input)?;
    Ok(tool.call(parsed, ctx).await?.content.into_text())
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        ["grep", pattern, dir, rest @ ..] => {
            let mode = match rest.first() {
                Some(&"content") => "content",
                _ => "files_with_matches",
            };
            let ctx = context(Path::new(dir));
            let input = json!({"pattern": pattern, "output_mode": mode, "head_limit": 0});
            println!("{}", call(&GrepTool, input, &ctx).await?);
        }
        ["glob", pattern, dir] => {
            let ctx = context(Path::new(dir));
            println!(
                "{}",
                call(&GlobTool, json!({"pattern": pattern}), &ctx).await?
            );
        }
        ["bash-overhead", runs] => {
            let runs: usize = runs.parse()?;
            let dir = std::env::current_dir()?;
            let ctx = context(&dir);
            let tool = BashTool::new(Arc::new(BackgroundShells::new()));
            let mut tool_times = Vec::new();
            let mut raw_times = Vec::new();
            for _ in 0..runs {
                let t = Instant::now();
                call(&tool, json!({"command": "true"}), &ctx).await?;
                tool_times.push(t.elapsed());
                let t = Instant::now();
                tokio::process::Command::new("bash")
                    .args(["-c", "true"])
                    .status()
                    .await?;
                raw_times.push(t.elapsed());
            }
            let (tool, raw) = (median(tool_times), median(raw_times));
            println!(
                "Bash tool `true`: median {:.2} ms; bare `bash -c true`: median {:.2} ms; \
                 overhead {:.2} ms ({runs} runs each)",
                tool.as_secs_f64() * 1e3,
                raw.as_secs_f64() * 1e3,
                (tool.as_secs_f64() - raw.as_secs_f64()) * 1e3
            );
        }
        _ => anyhow::bail!(
            "usage: search_bench grep <pattern> <dir> [files|content] | glob <pattern> <dir> | \
             bash-overhead <runs>"
        ),
    }
    Ok(())
}
