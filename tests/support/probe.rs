//! The probe tool for permission tests: a tool of any name whose input lists what it touches
//! (`read`, `write`, `exec`, `fetch`, `named`), so a case chooses the accesses the gate sees;
//! its kind is the kind the rule language gives its name (a probe named `Edit` is an edit
//! tool; one named `mcp__server__tool` is that MCP server's tool). [`check_call`] puts one call through the gate as the executor does, and
//! [`check_with_hooks`] runs the PreToolUse hooks first. Include with
//! `#[path = "support/probe.rs"] mod probe;`.

#![allow(dead_code)]

use async_trait::async_trait;
use cairn::hooks::{HookCall, Hooks, PreToolAnswer};
use cairn::permissions::{CallInfo, GateOutcome, PermissionGate};
use cairn::session::context::SessionContext;
use cairn::tools::{
    Access, DynTool, ParsedInput, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput,
};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// A tool with any name: its input lists what it touches; calling it does nothing.
pub struct Probe {
    pub name: &'static str,
    pub read_only: bool,
}

impl Probe {
    /// A probe named `name`, read-only or not; the name is leaked, as tool names are static.
    pub fn named(name: &str, read_only: bool) -> Probe {
        Probe {
            name: Box::leak(name.to_string().into_boxed_str()),
            read_only,
        }
    }
}

#[derive(Deserialize, JsonSchema)]
pub struct ProbeInput {
    #[serde(default)]
    pub read: Vec<String>,
    #[serde(default)]
    pub write: Vec<String>,
    /// Commands, run in the session's working directory.
    #[serde(default)]
    pub exec: Vec<String>,
    #[serde(default)]
    pub fetch: Vec<String>,
    #[serde(default)]
    pub named: Vec<String>,
}

#[async_trait]
impl Tool for Probe {
    type Input = ProbeInput;
    fn info(&self) -> ToolInfo {
        // A probe named `mcp__server__tool` is that server's tool (the first `__` ends the
        // server, as the MCP configuration guarantees).
        let mcp = self.name.strip_prefix("mcp__").map(|rest| {
            rest.split_once("__")
                .map_or((rest, ""), |(server, tool)| (server, tool))
        });
        let info = match mcp {
            Some((server, tool)) => ToolInfo::new(self.name, ToolKind::Mcp).mcp(server, tool),
            None => {
                let kind = ToolKind::of_rule_word(self.name).unwrap_or(ToolKind::Other);
                ToolInfo::new(self.name, kind)
            }
        };
        if self.read_only {
            info.read_only()
        } else {
            info
        }
    }
    fn description(&self) -> String {
        "probe".into()
    }
    fn title(&self, _input: &ProbeInput, _ctx: &SessionContext) -> String {
        self.name.to_string()
    }
    fn accesses(&self, i: &ProbeInput, ctx: &SessionContext) -> Vec<Access> {
        let mut out = Vec::new();
        out.extend(i.read.iter().map(|p| Access::Read(p.into())));
        out.extend(i.write.iter().map(|p| Access::Write(p.into())));
        out.extend(i.exec.iter().map(|c| Access::Exec {
            command: c.clone(),
            cwd: ctx.cwd(),
        }));
        out.extend(i.fetch.iter().map(|u| Access::Fetch(u.clone())));
        out.extend(i.named.iter().map(|n| Access::Named(n.clone())));
        out
    }
    async fn call(&self, _input: ProbeInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text("ok"))
    }
}

/// The gate's answer to one call of `tool` with `input` (id `call_id`, title `t`) when no
/// hook ran: the executor's steps of parsing the input and listing its accesses, then the
/// check.
pub async fn check_call(
    gate: &PermissionGate,
    session: &SessionContext,
    tool: &dyn DynTool,
    input: &Value,
    call_id: &str,
) -> GateOutcome {
    decide(
        gate,
        session,
        tool,
        input,
        call_id,
        &PreToolAnswer::default(),
    )
}

/// As [`check_call`], with the PreToolUse hooks run first as the executor runs them: their
/// answer goes to the gate, and a rewritten input is what the gate decides on. Returns the
/// verdict and the rewritten input, if any.
pub async fn check_with_hooks(
    gate: &PermissionGate,
    hooks: &Hooks,
    session: &SessionContext,
    tool: &dyn DynTool,
    input: &Value,
    call_id: &str,
) -> (GateOutcome, Option<Value>) {
    let hook_call = HookCall {
        tool: tool.name(),
        call_id,
        input,
    };
    let answer = hooks.pre_tool_use(hook_call, session, gate.mode()).await;
    let input = answer
        .updated_input
        .clone()
        .unwrap_or_else(|| input.clone());
    let verdict = decide(gate, session, tool, &input, call_id, &answer);
    (verdict, answer.updated_input)
}

fn decide(
    gate: &PermissionGate,
    session: &SessionContext,
    tool: &dyn DynTool,
    input: &Value,
    call_id: &str,
    answer: &PreToolAnswer,
) -> GateOutcome {
    let parsed: ParsedInput = tool.parse(input).unwrap();
    let accesses = tool.accesses(&parsed, session);
    let info = CallInfo {
        call_id,
        conversation: &session.conversation,
        tool,
        input: &parsed,
        raw_input: input,
        title: "t",
        accesses: &accesses,
        preview: None,
    };
    gate.check(&info, answer)
}
