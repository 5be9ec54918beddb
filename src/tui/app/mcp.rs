//! The MCP servers' side of the app, through the session's host: `/mcp` (a picker of the
//! servers; Enter shows one's detail, from which it is reconnected, turned off or on again,
//! or asks about a waiting one), the approval of project servers
//! from `.mcp.json` (one checklist of every waiting server, when the host first lists them: a
//! number or Enter toggles a server, then save; the answers are the host's to keep), and the
//! failing servers shown in the status row, refreshed whenever the host says the servers
//! changed.

use super::*;
use crate::protocol::{HostOp, McpApproval, McpServerInfo};

/// The checklist's rows after the servers.
const SAVE: &str = "Save: use the checked servers, not the others";
const USE_ALL: &str = "Use all of them and all future servers in this project's .mcp.json";

/// What the app knows of the session's MCP servers (the host's last word on them).
#[derive(Debug, Default)]
pub(crate) struct McpView {
    pub servers: Vec<McpServerInfo>,
    /// The waiting servers the open approval checklist is about: name, what it runs, checked.
    pub checklist: Vec<(String, String, bool)>,
    /// The server whose detail is open (`/mcp`, Enter on one).
    pub showing: Option<String>,
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

    /// Ask once about every project server waiting for approval, if any: one checklist.
    fn ask_mcp_approvals(&mut self) {
        if self.input.picker().is_some() {
            return;
        }
        let waiting: Vec<(String, String)> = self
            .mcp
            .waiting()
            .map(|(n, r)| (n.to_string(), r.to_string()))
            .collect();
        self.ask_mcp_approval(waiting);
    }

    /// The warning, then the checklist of `servers` (name, what it runs), none checked.
    fn ask_mcp_approval(&mut self, servers: Vec<(String, String)>) {
        if servers.is_empty() {
            return;
        }
        let (one, many) = (servers.len() == 1, servers.len() > 1);
        self.conversation.push_notice(
            NoticeKind::Warning,
            &format!(
                "New MCP server{} found in .mcp.json. MCP servers may execute code or access \
                 system resources. Check the one{} to use (a number or Enter toggles a \
                 server), then save.",
                if many { "s" } else { "" },
                if one { "" } else { "s" }
            ),
        );
        self.mcp.checklist = servers
            .into_iter()
            .map(|(name, runs)| (name, runs, false))
            .collect();
        self.open_mcp_checklist(0);
    }

    /// The checklist as it stands, the row `selected` selected.
    fn open_mcp_checklist(&mut self, selected: usize) {
        let n = self.mcp.checklist.len();
        let mut items: Vec<(String, String)> = self
            .mcp
            .checklist
            .iter()
            .enumerate()
            .map(|(i, (name, runs, on))| {
                let mark = if *on { "x" } else { " " };
                (
                    format!("{}. [{mark}] {}", i + 1, printable(name)),
                    format!("runs: {}", printable(runs)),
                )
            })
            .collect();
        items.push((format!("{}. {SAVE}", n + 1), String::new()));
        items.push((format!("{}. {USE_ALL}", n + 2), String::new()));
        let mut picker = Picker::choices(PickerKind::McpApproval, items);
        picker.selected = selected.min(n + 1);
        self.input.open_picker(picker);
    }

    /// A row of the checklist picked (its number or Enter): a server's is toggled; Save sends
    /// each server's answer to the host (checked: use it; not: do not), "all" approves every
    /// waiting server and the future ones.
    pub(super) fn mcp_approval_picked(&mut self, label: &str) {
        let Some((number, rest)) = label.split_once(". ") else {
            return;
        };
        let Ok(k) = number.parse::<usize>() else {
            return;
        };
        if let Some(row) = k.checked_sub(1).and_then(|i| self.mcp.checklist.get_mut(i)) {
            row.2 = !row.2;
            self.open_mcp_checklist(k - 1);
            return;
        }
        let list = std::mem::take(&mut self.mcp.checklist);
        let all = rest == USE_ALL;
        // No longer waiting (all of them, for "all future servers"), whatever the host's next
        // list says.
        for server in &mut self.mcp.servers {
            if all || list.iter().any(|(n, _, _)| *n == server.name) {
                server.waiting = None;
            }
        }
        if all {
            if let Some((name, _, _)) = list.into_iter().next() {
                let choice = McpApproval::UseAll;
                self.send(Op::Host(HostOp::McpApprove { name, choice }));
            }
            return;
        }
        for (name, _, on) in list {
            let choice = if on {
                McpApproval::UseThis
            } else {
                McpApproval::Refuse
            };
            self.send(Op::Host(HostOp::McpApprove { name, choice }));
        }
    }

    /// Esc on the checklist: nothing is remembered; the servers wait.
    pub(super) fn mcp_approval_postponed(&mut self) {
        let list = std::mem::take(&mut self.mcp.checklist);
        if list.is_empty() {
            return;
        }
        let names: Vec<String> = list
            .iter()
            .map(|(n, _, _)| format!("\"{}\"", printable(n)))
            .collect();
        self.conversation.push_notice(
            NoticeKind::Info,
            &format!(
                "MCP server{} {} {} not started; you will be asked again next time (or now: \
                 /mcp).",
                if names.len() == 1 { "" } else { "s" },
                names.join(", "),
                if names.len() == 1 { "was" } else { "were" }
            ),
        );
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
        if let Some(server) = waiting {
            self.ask_mcp_approval(vec![server]);
            return;
        }
        let Some(server) = self
            .mcp
            .servers
            .iter()
            .find(|s| printable(&s.name) == name)
            .cloned()
        else {
            return;
        };
        self.mcp.showing = Some(server.name.clone());
        self.input.open_picker(Picker::choices(
            PickerKind::McpServer,
            super::mcp_detail::rows(&server),
        ));
    }

    /// A row of a server's detail picked: reconnect it, turn it off or on, or back to the list.
    pub(super) fn mcp_detail_picked(&mut self, label: &str) {
        let Some(name) = self.mcp.showing.take() else {
            return;
        };
        match label {
            super::mcp_detail::RECONNECT => self.send(Op::Host(HostOp::McpReconnect { name })),
            super::mcp_detail::DISABLE | super::mcp_detail::ENABLE => {
                let enabled = label == super::mcp_detail::ENABLE;
                self.send(Op::Host(HostOp::McpEnable { name, enabled }));
            }
            super::mcp_detail::BACK | super::mcp_detail::BACK_OFF => self.open_mcp_picker(),
            // An information row: the detail stays.
            _ => {
                if let Some(server) = self.mcp.servers.iter().find(|s| s.name == name) {
                    let rows = super::mcp_detail::rows(server);
                    self.mcp.showing = Some(name);
                    self.input
                        .open_picker(Picker::choices(PickerKind::McpServer, rows));
                }
            }
        }
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
            ..McpServerInfo::default()
        };
        let mut commands = vec![command("deploy"), command("mcp__ev__old")];
        with_server_prompts(&mut commands, std::slice::from_ref(&server));
        let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["deploy", "mcp__ev__new"]);

        assert_eq!(resources(&[server]), ["ev:demo://a"]);
    }
}
