//! The MCP servers' side of the app, through the session's host: `/mcp` (a picker of the
//! servers; Enter reconnects one or asks about a waiting one), the approval of project servers
//! from `.mcp.json` (asked once per server, when the host first lists them; the answer is the
//! host's to keep), and the failing servers shown in the status row, refreshed whenever the
//! host says the servers changed.

use super::*;
use crate::protocol::{HostOp, McpApproval, McpServerInfo};

/// The approval picker's choices, in order.
const USE_THIS: &str = "1. Use this server";
const USE_ALL: &str = "2. Use this and all future servers in this project's .mcp.json";
const REFUSE: &str = "3. Do not use this server";

/// What the app knows of the session's MCP servers (the host's last word on them).
#[derive(Debug, Default)]
pub(crate) struct McpView {
    pub servers: Vec<McpServerInfo>,
    /// The waiting server the open approval picker is about.
    pub asking: Option<String>,
    /// The host has listed the servers once (the waiting ones were asked about then).
    listed: bool,
}

impl McpView {
    fn waiting(&self) -> impl Iterator<Item = (&str, &str)> {
        self.servers
            .iter()
            .filter_map(|s| s.waiting.as_deref().map(|runs| (s.name.as_str(), runs)))
    }
}

/// The `/` picker's commands with the servers' prompts in place of the ones listed before.
fn with_server_prompts(
    commands: &mut Vec<crate::protocol::CommandInfo>,
    servers: &[McpServerInfo],
) {
    commands.retain(|c| !c.name.starts_with("mcp__"));
    commands.extend(servers.iter().flat_map(|s| s.prompts.iter().cloned()));
}

/// The servers' resources as the `@` picker offers them (`server:uri`).
fn resources(servers: &[McpServerInfo]) -> Vec<String> {
    servers
        .iter()
        .flat_map(|s| s.resources.iter().cloned())
        .collect()
}

impl App {
    /// Ask the host for the servers, and to say whenever they change.
    pub fn watch_mcp(&mut self) {
        self.send(Op::Host(HostOp::McpServers));
    }

    /// The host listed the servers: the status row shows the failing ones; the first time,
    /// a waiting one is asked about.
    pub(super) fn mcp_listed(&mut self, servers: &[McpServerInfo]) {
        self.mcp.servers = servers.to_vec();
        if let Some(session) = &mut self.session.status.session {
            with_server_prompts(&mut session.commands, servers);
        }
        self.input.set_resources(resources(servers));
        self.session.status.mcp_failing = servers
            .iter()
            .filter(|s| s.failed)
            .map(|s| s.name.clone())
            .collect();
        if !std::mem::replace(&mut self.mcp.listed, true) {
            self.ask_mcp_approvals();
        }
    }

    /// Ask about the first project server waiting for approval, if any.
    fn ask_mcp_approvals(&mut self) {
        if self.input.picker().is_some() {
            return;
        }
        let Some((name, runs)) = self
            .mcp
            .waiting()
            .next()
            .map(|(n, r)| (n.to_string(), r.to_string()))
        else {
            return;
        };
        self.ask_mcp_approval(name, &runs);
    }

    fn ask_mcp_approval(&mut self, name: String, runs: &str) {
        self.conversation.push_notice(
            NoticeKind::Warning,
            &format!(
                "New MCP server found in .mcp.json: \"{}\", which runs: {}\nMCP servers \
                 may execute code or access system resources. Use it?",
                printable(&name),
                printable(runs)
            ),
        );
        let choices = [USE_THIS, USE_ALL, REFUSE]
            .into_iter()
            .map(|c| (c.to_string(), String::new()))
            .collect();
        self.input
            .open_picker(Picker::choices(PickerKind::McpApproval, choices));
        self.mcp.asking = Some(name);
    }

    /// Enter on a choice of the approval picker: the answer goes to the host, and the next
    /// waiting server, if any, is asked about.
    pub(super) fn mcp_approval_picked(&mut self, label: &str) {
        let Some(name) = self.mcp.asking.take() else {
            return;
        };
        let choice = match label {
            USE_THIS => McpApproval::UseThis,
            USE_ALL => McpApproval::UseAll,
            _ => McpApproval::Refuse,
        };
        // No longer waiting (all of them, for "all future servers"), whatever the host's next
        // list says.
        for server in &mut self.mcp.servers {
            if choice == McpApproval::UseAll || server.name == name {
                server.waiting = None;
            }
        }
        self.send(Op::Host(HostOp::McpApprove { name, choice }));
        self.ask_mcp_approvals();
    }

    /// Esc on the approval picker: nothing is remembered; the server waits.
    pub(super) fn mcp_approval_postponed(&mut self) {
        if let Some(name) = self.mcp.asking.take() {
            self.conversation.push_notice(
                NoticeKind::Info,
                &format!(
                    "MCP server \"{}\" was not started; you will be asked again next time \
                     (or now: /mcp).",
                    printable(&name)
                ),
            );
        }
    }

    /// The host's answer to an approval or a reconnection.
    pub(super) fn mcp_answered(&mut self, result: &Result<String, String>) {
        match result {
            Ok(line) => self
                .conversation
                .push_notice(NoticeKind::Info, &printable(line)),
            Err(why) => self
                .conversation
                .push_notice(NoticeKind::Error, &printable(why)),
        }
    }

    /// `/mcp`: the servers with their status, to reconnect one or approve a waiting one.
    pub(super) fn open_mcp_picker(&mut self) {
        if self.mcp.servers.is_empty() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "No MCP servers are configured (.mcp.json, ~/.claude.json, --mcp-config; \
                 `cairn mcp add`).",
            );
            return;
        }
        let items = self
            .mcp
            .servers
            .iter()
            .map(|s| (printable(&s.name), printable(&s.detail)))
            .collect();
        self.input
            .open_picker(Picker::choices(PickerKind::McpServers, items));
    }

    /// Enter on a server of `/mcp`.
    pub(super) fn mcp_server_picked(&mut self, name: &str) {
        let waiting = self
            .mcp
            .waiting()
            .find(|(n, _)| printable(n) == name)
            .map(|(n, r)| (n.to_string(), r.to_string()));
        if let Some((name, runs)) = waiting {
            self.ask_mcp_approval(name, &runs);
            return;
        }
        let name = self
            .mcp
            .servers
            .iter()
            .find(|s| printable(&s.name) == name)
            .map_or_else(|| name.to_string(), |s| s.name.clone());
        self.send(Op::Host(HostOp::McpReconnect { name }));
    }
}

/// `text` without control characters (a server's name and command come from a repository).
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::CommandInfo;

    fn command(name: &str) -> CommandInfo {
        CommandInfo {
            name: name.into(),
            description: String::new(),
            argument_hint: None,
            skill: false,
            aliases: Vec::new(),
        }
    }

    #[test]
    fn the_pickers_offer_the_servers_prompts_and_resources_as_last_listed() {
        let server = McpServerInfo {
            name: "ev".into(),
            detail: String::new(),
            failed: false,
            waiting: None,
            prompts: vec![command("mcp__ev__new")],
            resources: vec!["ev:demo://a".into()],
        };
        let mut commands = vec![command("deploy"), command("mcp__ev__old")];
        with_server_prompts(&mut commands, std::slice::from_ref(&server));
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["deploy", "mcp__ev__new"]);

        assert_eq!(resources(&[server]), ["ev:demo://a"]);
    }
}
