//! Headless `-p` mode: submit one prompt, wait for the turn to finish, print the answer as
//! `text`, `json` or `stream-json` in Claude Code's shapes, and exit 0 on success or non-zero
//! with the reason on stderr.
//!
//! A client of the protocol like the TUI: it reads [`Event`]s and sends [`Op`]s, nothing else.
//! No one can answer permission requests here; the gate refuses such calls itself, and any
//! request that still arrives is denied.

use std::io::Write;
use std::time::Instant;

use serde_json::{Value, json};

use crate::cli::OutputFormat;
use crate::protocol::Connection as AgentHandle;
use crate::protocol::{BackgroundTask, Decision, Event, Op, TaskKind, TaskStatus, TurnEnd, Usage};

/// How the run ended, for the exit code and the result object.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub end: TurnEnd,
    pub text: String,
    pub error: Option<String>,
    pub num_turns: u32,
    /// Background agents still running when the answer was done, stopped at exit
    /// (`agent-1 (Explore: find the parser)`).
    pub background_left: Vec<String>,
}

impl Outcome {
    pub fn is_error(&self) -> bool {
        self.end != TurnEnd::Completed
    }

    pub fn exit_code(&self) -> i32 {
        if self.is_error() { 1 } else { 0 }
    }
}

/// One MCP server as `system/init` reports it (Claude Code's shape).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McpServerState {
    pub name: String,
    /// `connected`, `failed`, `pending` (still connecting) or `needs-approval`.
    pub status: String,
    /// Where it is configured: `user`, `project`, `local` or `cli`.
    pub source: String,
}

/// What `system/init` says beyond the session's own facts, known to the caller: the MCP
/// servers once they settled and their tools, the output style, where the API key came from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitFacts {
    pub mcp_servers: Vec<McpServerState>,
    pub mcp_tools: Vec<String>,
    /// The output style's name (`default` when none is chosen).
    pub output_style: String,
    /// Claude Code's `apiKeySource`: `ANTHROPIC_API_KEY`, `apiKeyHelper`,
    /// `ANTHROPIC_AUTH_TOKEN`, `OPENAI_API_KEY` or `none`.
    pub api_key_source: String,
}

/// The `system/init` line: the session's facts and the caller's [`InitFacts`].
fn init_line(info: &crate::protocol::SessionInfo, facts: &InitFacts) -> Value {
    let mut tools = info.tools.clone();
    for t in &facts.mcp_tools {
        if !tools.contains(t) {
            tools.push(t.clone());
        }
    }
    let slash_commands: Vec<&str> = std::iter::once("init")
        .chain(info.commands.iter().map(|c| c.name.as_str()))
        .collect();
    let skills: Vec<&str> = info
        .commands
        .iter()
        .filter(|c| c.skill)
        .map(|c| c.name.as_str())
        .collect();
    let agents: Vec<&str> = info.agents.iter().map(|(name, _)| name.as_str()).collect();
    let servers: Vec<Value> = facts
        .mcp_servers
        .iter()
        .map(|s| json!({"name": s.name, "status": s.status, "source": s.source}))
        .collect();
    let style = if facts.output_style.is_empty() {
        "default"
    } else {
        facts.output_style.as_str()
    };
    let key_source = if facts.api_key_source.is_empty() {
        "none"
    } else {
        facts.api_key_source.as_str()
    };
    json!({
        "type": "system", "subtype": "init", "session_id": info.session_id,
        // Lossy: a path that is not UTF-8 cannot be a JSON string, and must not stop the run
        // (json! would panic on it).
        "cwd": info.cwd.to_string_lossy(), "model": info.model, "tools": tools,
        "mcp_servers": servers, "slash_commands": slash_commands, "skills": skills,
        "agents": agents, "output_style": style, "apiKeySource": key_source,
        "permissionMode": info.mode.as_str(), "provider": info.provider,
        "demo": info.demo,
    })
}

/// Run one prompt to completion, writing the chosen format to `out`; `init` completes the
/// `system/init` line of stream-json.
pub async fn run(
    mut handle: AgentHandle,
    prompt: String,
    format: OutputFormat,
    verbose: bool,
    init: &InitFacts,
    out: &mut dyn Write,
) -> std::io::Result<Outcome> {
    let started = Instant::now();
    let session_id = handle.session_id.clone();
    let _ = handle.ops.send(Op::Submit { text: prompt });
    let mut usage = Usage::default();
    let mut cost = 0.0;
    let mut last_error: Option<String> = None;
    let mut outcome = None;
    // Background agents still running.
    let mut background: Vec<BackgroundTask> = Vec::new();
    while let Some(event) = handle.events.recv().await {
        match &event {
            Event::SessionConfigured(info) if format == OutputFormat::StreamJson => {
                line(out, &init_line(info, init))?;
            }
            Event::AssistantMessage { .. } | Event::ToolResults { .. } | Event::Subagent { .. }
                if format == OutputFormat::StreamJson =>
            {
                if let Some(v) = message_line(&event, None, &session_id) {
                    line(out, &v)?;
                }
            }
            // Background shells end with the session, as they always did.
            Event::BackgroundTask(task) if task.kind == TaskKind::Agent => {
                background.retain(|t: &BackgroundTask| t.id != task.id);
                if task.status == TaskStatus::Running {
                    background.push(task.clone());
                }
            }
            Event::Retrying {
                attempt,
                max_attempts,
                delay_ms,
                reason,
                discarded,
            } => {
                // Streamed text never reaches this output (only whole messages do), so a
                // discarded attempt needs no undoing here; stream-json says it happened.
                if format == OutputFormat::StreamJson && verbose {
                    line(
                        out,
                        &json!({"type": "system", "subtype": "retry", "attempt": attempt,
                                "max_attempts": max_attempts, "delay_ms": delay_ms,
                                "reason": reason, "discarded_partial": discarded,
                                "session_id": session_id}),
                    )?;
                }
                if verbose {
                    eprintln!(
                        "cairn: {reason}; retrying in {delay_ms} ms ({attempt}/{max_attempts})"
                    );
                }
            }
            Event::Usage {
                total,
                total_cost_usd,
                ..
            } => {
                usage = *total;
                cost = *total_cost_usd;
            }
            Event::Error { message } => last_error = Some(message.clone()),
            Event::PermissionRequest(req) => {
                let _ = handle.ops.send(Op::PermissionDecision {
                    request_id: req.id,
                    decision: Decision::DenyOnce,
                });
            }
            Event::TurnFinished {
                end,
                text,
                num_turns,
                ..
            } => {
                outcome = Some(Outcome {
                    end: *end,
                    text: text.clone(),
                    error: last_error.take(),
                    num_turns: *num_turns,
                    background_left: Vec::new(),
                });
                break;
            }
            _ => {}
        }
    }
    let _ = handle.ops.send(Op::Shutdown);
    let mut outcome = outcome.unwrap_or(Outcome {
        end: TurnEnd::Failed,
        text: String::new(),
        error: Some("the agent stopped before finishing the turn".into()),
        num_turns: 0,
        background_left: Vec::new(),
    });
    if !background.is_empty() {
        // Their reports would only reach the model with a next prompt, and there is none.
        outcome.background_left = background
            .iter()
            .map(|t| format!("{} ({}: {})", t.id, t.agent, t.description))
            .collect();
        eprintln!(
            "cairn: stopped {} background agent(s) still running when the answer was done: {}",
            outcome.background_left.len(),
            outcome.background_left.join(", ")
        );
    }
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    match format {
        OutputFormat::Text => {
            if !outcome.text.is_empty() {
                writeln!(out, "{}", outcome.text)?;
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            line(
                out,
                &result_object(&outcome, &session_id, duration_ms, &usage, cost),
            )?;
        }
    }
    out.flush()?;
    Ok(outcome)
}

/// The stream-json line of a whole message (`assistant`, or `user` with tool results), with
/// `parent_tool_use_id` naming the Agent call whose sub-agent it belongs to (null for the
/// session's own), as Claude Code writes it; a sub-agent's usage and tool events give none.
fn message_line(event: &Event, parent: Option<&str>, session_id: &str) -> Option<Value> {
    let (kind, message) = match event {
        Event::Subagent {
            parent_call_id,
            event,
            ..
        } => return message_line(event, Some(parent_call_id), session_id),
        Event::AssistantMessage {
            content,
            incomplete,
        } => {
            let mut message = json!({"role": "assistant", "content": content});
            if *incomplete {
                message["incomplete"] = Value::Bool(true);
            }
            ("assistant", message)
        }
        Event::ToolResults { content } => ("user", json!({"role": "user", "content": content})),
        _ => return None,
    };
    Some(
        json!({"type": kind, "message": message, "parent_tool_use_id": parent,
                "session_id": session_id}),
    )
}

/// The reason a failed run gives on stderr.
pub fn failure_reason(outcome: &Outcome, max_turns: Option<u32>) -> String {
    match outcome.end {
        TurnEnd::MaxTurns => format!(
            "stopped after reaching the maximum of {} turns (--max-turns)",
            max_turns.unwrap_or(outcome.num_turns)
        ),
        TurnEnd::Interrupted => "interrupted".into(),
        _ => outcome
            .error
            .clone()
            .unwrap_or_else(|| "the turn failed".into()),
    }
}

fn result_object(
    outcome: &Outcome,
    session_id: &str,
    duration_ms: u64,
    usage: &Usage,
    cost: f64,
) -> Value {
    let subtype = match outcome.end {
        TurnEnd::Completed => "success",
        TurnEnd::MaxTurns => "error_max_turns",
        TurnEnd::Interrupted | TurnEnd::Failed => "error_during_execution",
    };
    let mut v = json!({
        "type": "result",
        "subtype": subtype,
        "is_error": outcome.is_error(),
        "duration_ms": duration_ms,
        "num_turns": outcome.num_turns,
        "result": outcome.text,
        "session_id": session_id,
        "total_cost_usd": cost,
        "usage": usage,
    });
    if let Some(e) = &outcome.error {
        v["error"] = Value::String(e.clone());
    }
    v
}

fn line(out: &mut dyn Write, value: &Value) -> std::io::Result<()> {
    writeln!(out, "{value}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn result_object_has_claude_code_shape() {
        let outcome = Outcome {
            end: TurnEnd::MaxTurns,
            text: "partial".into(),
            error: None,
            num_turns: 2,
            background_left: Vec::new(),
        };
        let v = result_object(&outcome, "s", 5, &Usage::default(), 0.0);
        assert_eq!(v["type"], "result");
        assert_eq!(v["subtype"], "error_max_turns");
        assert_eq!(v["is_error"], true);
        assert_eq!(v["num_turns"], 2);
        assert_eq!(v["usage"]["input_tokens"], 0);
        assert_eq!(outcome.exit_code(), 1);
        assert!(failure_reason(&outcome, Some(2)).contains("maximum of 2 turns"));
    }
}
