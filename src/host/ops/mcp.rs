//! The session's MCP servers for the client: what they are and how they are doing (again
//! whenever that changes), the person's answer about a project server waiting for approval
//! (kept in the project's local settings), reconnecting one, and turning one off or on.

use std::path::Path;
use std::sync::Arc;

use crate::mcp::McpManager;
use crate::mcp::manager::ApprovalChoice;
use crate::mcp::server::Status;
use crate::protocol::{CommandInfo, HostEvent, McpApproval, McpServerInfo};

use super::Answer;

/// The servers as the client sees them: the running ones, then the waiting ones.
pub(super) fn servers(manager: Option<&McpManager>) -> HostEvent {
    let Some(manager) = manager else {
        return HostEvent::McpServers {
            servers: Vec::new(),
        };
    };
    let failing = manager.failing();
    let prompts = manager.prompts();
    let running = manager.servers().into_iter().map(|s| {
        let config = s.config();
        let resources = s.lists().resources;
        McpServerInfo {
            name: s.name().to_string(),
            detail: format!(
                "({}, {}): {}",
                config.scope.name(),
                config.transport.kind(),
                plain_status(&s.status())
            ),
            failed: failing.iter().any(|f| f == s.name()),
            waiting: None,
            prompts: prompts
                .iter()
                .filter(|p| p.server == s.name())
                .map(|p| CommandInfo {
                    name: p.command.clone(),
                    description: format!("{} (MCP)", p.description),
                    argument_hint: (!p.arguments.is_empty()).then(|| {
                        let names: Vec<String> =
                            p.arguments.iter().map(|(n, _)| format!("<{n}>")).collect();
                        names.join(" ")
                    }),
                    skill: false,
                    aliases: Vec::new(),
                })
                .collect(),
            resources: resources
                .iter()
                .map(|r| format!("{}:{}", s.name(), r.uri))
                .collect(),
            status: plain_status(&s.status()),
            // The library's own words only when plain ones could not be found: the log file
            // keeps them always.
            error: match s.status() {
                Status::Failed(why) if plain_failure(&why).is_none() => Some(without_types(&why)),
                _ => None,
            },
            stderr: s.stderr_tail(),
            command: crate::mcp::listing::describe(config),
            source: config.source.clone(),
            log: s.log_path().map(|p| p.display().to_string()),
            disabled: false,
        }
    });
    let waiting = manager.unapproved().into_iter().map(|s| McpServerInfo {
        detail: "(project): needs approval (add it to enabledMcpjsonServers)".into(),
        waiting: Some(crate::mcp::listing::describe(&s)),
        status: "waiting for your approval".into(),
        command: crate::mcp::listing::describe(&s),
        source: s.source.clone(),
        name: s.name,
        ..McpServerInfo::default()
    });
    let disabled = manager.disabled().into_iter().map(|s| McpServerInfo {
        detail: format!("({}, {}): disabled", s.scope.name(), s.transport.kind()),
        status: "disabled (turn it on again here)".into(),
        command: crate::mcp::listing::describe(&s),
        source: s.source.clone(),
        log: manager.log_path(&s.name).map(|p| p.display().to_string()),
        disabled: true,
        name: s.name,
        ..McpServerInfo::default()
    });
    HostEvent::McpServers {
        servers: running.chain(waiting).chain(disabled).collect(),
    }
}

/// A server's state in plain words: what a failure means to a person, not the library's
/// error (`Broken pipe (os error 32), when send initialize request`), which `error` keeps.
fn plain_status(status: &Status) -> String {
    match status {
        Status::Connecting => "connecting".into(),
        Status::Connected { tools, .. } => {
            format!(
                "connected, {tools} tool{}",
                if *tools == 1 { "" } else { "s" }
            )
        }
        Status::Failed(why) => match plain_failure(why) {
            Some(plain) => format!("failed: {plain}"),
            None => "failed (the connection's own words are below)".into(),
        },
    }
}

fn plain_failure(why: &str) -> Option<String> {
    let lower = why.to_lowercase();
    if lower.contains("broken pipe")
        || lower.contains("connection closed")
        || lower.contains("connectionclosed")
        || lower.contains("transport closed")
    {
        Some(
            "the server exited before it answered cairn's first message (its stderr, below, \
             usually says why)"
                .into(),
        )
    } else if lower.starts_with("cannot start") {
        Some(format!(
            "its command could not be started ({})",
            why.trim_start_matches("cannot start ")
        ))
    } else if lower.contains("did not start within") {
        Some("it did not answer within the startup time (MCP_TIMEOUT)".into())
    } else {
        None
    }
}

/// An error's text without the Rust type paths a library puts in it
/// (`Transport [cairn::mcp::…<…>] error` reads `Transport error`).
fn without_types(why: &str) -> String {
    let mut out = String::with_capacity(why.len());
    let mut rest = why;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find(']').map(|c| open + c) else {
            break;
        };
        let inner = &rest[open + 1..close];
        out.push_str(&rest[..open]);
        if !inner.contains("::") {
            out.push_str(&rest[open..=close]);
        } else if out.ends_with(' ') && rest[close + 1..].starts_with(' ') {
            out.pop();
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

/// Tell the client whenever the servers change, until it, the servers or the session are gone.
pub(super) fn watch(
    manager: &Arc<McpManager>,
    answer: Answer,
    ended: tokio_util::sync::CancellationToken,
) {
    let mut changes = manager.changes();
    // Weak: the servers stop with the session, not when this task notices.
    let manager = Arc::downgrade(manager);
    tokio::spawn(async move {
        loop {
            let changed = tokio::select! {
                changed = changes.changed() => changed.is_ok(),
                () = ended.cancelled() => false,
            };
            if !changed {
                break;
            }
            let Some(manager) = manager.upgrade() else {
                break;
            };
            if !answer.send(servers(Some(&manager))) {
                break;
            }
        }
    });
}

pub(super) fn approve(
    manager: Option<&McpManager>,
    project_root: &Path,
    name: &str,
    choice: McpApproval,
) -> HostEvent {
    let choice = match choice {
        McpApproval::UseThis => ApprovalChoice::UseThis,
        McpApproval::UseAll => ApprovalChoice::UseAll,
        McpApproval::Refuse => ApprovalChoice::Refuse,
    };
    let result = match manager {
        Some(manager) => manager.approve(project_root, name, choice),
        None => Err(no_server(name)),
    };
    HostEvent::McpAnswer { result }
}

pub(super) fn reconnect(manager: Option<&McpManager>, name: &str) -> HostEvent {
    let result = match manager {
        Some(manager) => manager
            .reconnect(name)
            .map(|()| format!("Reconnecting to MCP server \"{name}\"…")),
        None => Err(no_server(name)),
    };
    HostEvent::McpAnswer { result }
}

pub(super) fn enable(
    manager: Option<&McpManager>,
    project_root: &Path,
    name: &str,
    enabled: bool,
) -> HostEvent {
    let result = match manager {
        Some(manager) => manager.set_enabled(project_root, name, enabled),
        None => Err(no_server(name)),
    };
    HostEvent::McpAnswer { result }
}

fn no_server(name: &str) -> String {
    format!("no MCP server named \"{name}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_error_loses_its_type_paths() {
        let why = "handshake failed: Send message error Transport \
                   [cairn::mcp::handler::Watched<cairn::mcp::client::ChildTransport>] error: \
                   Broken pipe (os error 32), when send initialize request";
        assert_eq!(
            without_types(why),
            "handshake failed: Send message error Transport error: Broken pipe (os error 32), \
             when send initialize request"
        );
        assert_eq!(without_types("a [b] c [d"), "a [b] c [d");
    }

    #[test]
    fn a_failure_in_plain_words_keeps_no_library_error() {
        let status = Status::Failed("handshake failed: connection closed: initialize".into());
        assert!(plain_status(&status).starts_with("failed: the server exited"));
        assert!(plain_failure("handshake failed: connection closed").is_some());
        let odd = "handshake failed: unexpected response [x::Y]";
        assert!(plain_failure(odd).is_none());
        assert_eq!(
            plain_status(&Status::Failed(odd.into())),
            "failed (the connection's own words are below)"
        );
    }
}
