//! `cairn mcp list` and `cairn mcp get NAME`: the configured servers, each connected once to
//! show whether it works (as `claude mcp list` does), then stopped; `add` and `remove` hand
//! over to [`super::edit`]. Text for a terminal.

use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use super::config::{ServerConfig, Transport};
use super::manager::McpManager;
use super::server::Status;
use super::session::{McpFlags, start};
use crate::config::LoadedSettings;
use crate::tools::LateTools;

/// What a server runs (its command line) or reaches (its URL and transport), in one line.
pub fn describe(server: &ServerConfig) -> String {
    server.describe()
}

fn mark(status: &Status) -> String {
    match status {
        Status::Connected { .. } => format!("✓ {status}"),
        Status::Connecting => "… still connecting".into(),
        Status::Failed(_) => format!("✗ {status}"),
    }
}

async fn started(
    project_dir: &Path,
    settings: &LoadedSettings,
    flags: &McpFlags,
) -> (McpManager, Vec<String>) {
    let (manager, notices) = start(project_dir, settings, flags, LateTools::default());
    let bound = manager.servers().first().map_or(Duration::ZERO, |_| {
        super::Timeouts::from_env(&|k| std::env::var(k).ok()).startup
    });
    manager.wait_settled(bound + Duration::from_secs(1)).await;
    (manager, notices)
}

/// `cairn mcp list`.
pub async fn list(project_dir: &Path, settings: &LoadedSettings, flags: &McpFlags) -> String {
    let (manager, notices) = started(project_dir, settings, flags).await;
    let mut out = String::new();
    let skipped = if settings.trust.is_trusted() {
        Vec::new()
    } else {
        super::session::project_servers(project_dir, settings, flags)
    };
    if manager.servers().is_empty() && skipped.is_empty() {
        out.push_str("No MCP servers configured.\n");
    }
    if !skipped.is_empty() {
        let _ = writeln!(
            out,
            "Not started, the folder is not trusted (run `cairn` here once and trust it): {} \
             [project]",
            skipped.join(", ")
        );
    }
    for s in manager.servers() {
        let c = s.config();
        let _ = writeln!(
            out,
            "{}: {} [{}] - {}",
            c.name,
            describe(c),
            c.scope.name(),
            mark(&s.status())
        );
    }
    for n in notices {
        let _ = writeln!(out, "{n}");
    }
    manager.shutdown().await;
    out
}

/// `cairn mcp get NAME`; `None` when there is no such server.
pub async fn get(
    project_dir: &Path,
    settings: &LoadedSettings,
    flags: &McpFlags,
    name: &str,
) -> Option<String> {
    let (manager, _) = started(project_dir, settings, flags).await;
    if manager.unapproved().iter().any(|s| s.name == name) {
        return Some(format!(
            "{name}:\n  Scope: project (.mcp.json)\n  Status: not started: needs approval (add it \
             to enabledMcpjsonServers in .claude/settings.local.json)\n"
        ));
    }
    let server = manager.server(name)?;
    let c = server.config();
    let mut out = String::new();
    let _ = writeln!(out, "{}:", c.name);
    let _ = writeln!(out, "  Scope: {} ({})", c.scope.name(), c.source);
    let _ = writeln!(out, "  Type: {}", c.transport.kind());
    match &c.transport {
        Transport::Stdio { command, args, env } => {
            let _ = writeln!(out, "  Command: {command}");
            let _ = writeln!(out, "  Args: {}", args.join(" "));
            let names: Vec<&str> = env.iter().map(|(k, _)| k.as_str()).collect();
            if !names.is_empty() {
                // Values may be secrets: names only.
                let _ = writeln!(out, "  Environment: {}", names.join(", "));
            }
        }
        Transport::Http { url, headers } | Transport::Sse { url, headers } => {
            let _ = writeln!(out, "  URL: {url}");
            let names: Vec<&str> = headers.iter().map(|(k, _)| k.as_str()).collect();
            if !names.is_empty() {
                let _ = writeln!(out, "  Headers: {}", names.join(", "));
            }
        }
    }
    let _ = writeln!(out, "  Status: {}", mark(&server.status()));
    let prefix = super::tool::tool_prefix(&c.name);
    let mut names: Vec<&str> = Vec::new();
    let tools = manager.tools();
    for t in &tools {
        if t.name().starts_with(&prefix) {
            names.push(t.name());
        }
    }
    names.sort_unstable();
    for n in names {
        let _ = writeln!(out, "  Tool: {n}");
    }
    manager.shutdown().await;
    Some(out)
}
