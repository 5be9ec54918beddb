//! The MCP servers' side of the app: `/mcp` (a picker of the servers; Enter reconnects one or
//! asks about a waiting one), the approval of project servers from `.mcp.json` (asked once per
//! server, at start, the answer kept in local settings), and the failing servers shown in the
//! status row, refreshed whenever the servers announce a change.

use super::*;
use crate::tui::mcp_panel::{ApprovalChoice, WaitingServer};

/// The approval picker's choices, in order.
const USE_THIS: &str = "1. Use this server";
const USE_ALL: &str = "2. Use this and all future servers in this project's .mcp.json";
const REFUSE: &str = "3. Do not use this server";

impl App {
    /// Re-read what the status row shows of the servers, and ask about a newly waiting one.
    pub(super) fn refresh_mcp(&mut self) {
        let Some(mcp) = &self.mcp else { return };
        self.status.mcp_failing = mcp.failing();
        self.dirty = true;
    }

    /// At start: ask about the first project server waiting for approval, if any.
    pub fn ask_mcp_approvals(&mut self) {
        let Some(mcp) = &self.mcp else { return };
        if self.picker.is_some() {
            return;
        }
        let Some(first) = mcp.waiting().into_iter().next() else {
            return;
        };
        self.ask_mcp_approval(first);
    }

    fn ask_mcp_approval(&mut self, server: WaitingServer) {
        let WaitingServer { name, runs } = server;
        self.conversation.push_notice(
            NoticeKind::Warning,
            &format!(
                "New MCP server found in .mcp.json: \"{}\", which runs: {}\nMCP servers \
                 may execute code or access system resources. Use it?",
                printable(&name),
                printable(&runs)
            ),
        );
        let choices = [USE_THIS, USE_ALL, REFUSE]
            .into_iter()
            .map(|c| (c.to_string(), String::new()))
            .collect();
        self.picker = Some(Picker::choices(PickerKind::McpApproval, choices));
        self.mcp_asking = Some(name);
    }

    /// Enter on a choice of the approval picker.
    pub(super) fn mcp_approval_picked(&mut self, label: &str) {
        let (Some(mcp), Some(name)) = (self.mcp.clone(), self.mcp_asking.take()) else {
            return;
        };
        let choice = match label {
            USE_THIS => ApprovalChoice::UseThis,
            USE_ALL => ApprovalChoice::UseAll,
            _ => ApprovalChoice::Refuse,
        };
        match mcp.approve(&name, choice) {
            Ok(line) => self
                .conversation
                .push_notice(NoticeKind::Info, &printable(&line)),
            Err(why) => self
                .conversation
                .push_notice(NoticeKind::Error, &printable(&why)),
        }
        // The next one, if several wait.
        self.ask_mcp_approvals();
    }

    /// Esc on the approval picker: nothing is remembered; the server waits.
    pub(super) fn mcp_approval_postponed(&mut self) {
        if let Some(name) = self.mcp_asking.take() {
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

    /// `/mcp`: the servers with their status, to reconnect one or approve a waiting one.
    pub(super) fn open_mcp_picker(&mut self) {
        let lines = self.mcp.as_ref().map(|m| m.lines()).unwrap_or_default();
        if lines.is_empty() {
            self.conversation.push_notice(
                NoticeKind::Info,
                "No MCP servers are configured (.mcp.json, ~/.claude.json, --mcp-config; \
                 `cairn mcp add`).",
            );
            return;
        }
        let items = lines
            .iter()
            .map(|line| {
                let line = printable(line);
                let (name, rest) = line.split_once(' ').unwrap_or((&line, ""));
                (name.to_string(), rest.to_string())
            })
            .collect();
        self.picker = Some(Picker::choices(PickerKind::McpServers, items));
    }

    /// Enter on a server of `/mcp`.
    pub(super) fn mcp_server_picked(&mut self, name: &str) {
        let Some(mcp) = self.mcp.clone() else { return };
        if let Some(waiting) = mcp.waiting().into_iter().find(|w| w.name == name) {
            self.ask_mcp_approval(waiting);
            return;
        }
        match mcp.reconnect(name) {
            Ok(()) => self.conversation.push_notice(
                NoticeKind::Info,
                &format!("Reconnecting to MCP server \"{}\"…", printable(name)),
            ),
            Err(why) => self
                .conversation
                .push_notice(NoticeKind::Error, &printable(&why)),
        }
    }
}

/// `text` without control characters (a server's name and command come from a repository).
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() && c != '\n' { ' ' } else { c })
        .collect()
}
