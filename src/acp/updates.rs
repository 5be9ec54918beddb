//! cairn's [`Event`]s as ACP `session/update`s: streamed text and thinking, tool calls with
//! their kind, locations and content (a diff for a change to a file, the output of a command,
//! the text of a search), the plan (TodoWrite's list), the mode, the slash commands, and a
//! resumed session's history replayed. Pure functions: the server sends what they return.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, ContentChunk, CurrentModeUpdate, Diff,
    Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus, SessionUpdate, TextContent, ToolCall,
    ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
    ToolKind, UnstructuredCommandInput,
};
use serde_json::Value;

use crate::protocol::{
    CallKind, Display, Event, HistoryItem, SessionInfo, TaskStatus, Todo, TodoStatus,
};

use super::modes::mode_id;

/// The updates one event makes, for the events that translate on their own (the server
/// handles permission requests, turn ends and errors itself). `cwd` resolves relative paths.
pub fn translate(event: &Event, cwd: &Path) -> Vec<SessionUpdate> {
    match event {
        Event::TextDelta { text } if !text.is_empty() => {
            vec![SessionUpdate::AgentMessageChunk(chunk(text))]
        }
        Event::ThinkingDelta { text } if !text.is_empty() => {
            vec![SessionUpdate::AgentThoughtChunk(chunk(text))]
        }
        Event::ToolCallStarted {
            call_id,
            title,
            input,
            kind,
            ..
        } => {
            let mut call = ToolCall::new(call_id.clone(), title.clone())
                .kind(acp_kind(*kind))
                .status(ToolCallStatus::Pending)
                .raw_input(input.clone());
            if let Some(location) = location_of(input, cwd) {
                call = call.locations(vec![location]);
            }
            vec![SessionUpdate::ToolCall(call)]
        }
        Event::ToolCallRunning { call_id } => vec![update(
            call_id,
            ToolCallUpdateFields::new().status(ToolCallStatus::InProgress),
        )],
        Event::Subagent {
            parent_call_id,
            agent,
            event,
        } => subagent_calls(parent_call_id, agent, translate(event, cwd)),
        Event::ToolCallProgress { call_id, output } => vec![update(
            call_id,
            ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .content(vec![text_content(&fenced(output))]),
        )],
        Event::ToolCallFinished {
            call_id,
            is_error,
            display,
            ..
        } => {
            let status = if *is_error {
                ToolCallStatus::Failed
            } else {
                ToolCallStatus::Completed
            };
            let mut fields = ToolCallUpdateFields::new()
                .status(status)
                .content(display_content(display));
            match display {
                Display::Diff { path, .. } => {
                    fields = fields.locations(vec![ToolCallLocation::new(path.clone())]);
                }
                Display::Diffs { files } => {
                    let located = files.iter().map(|f| ToolCallLocation::new(f.path.clone()));
                    fields = fields.locations(located.collect::<Vec<_>>());
                }
                _ => {}
            }
            vec![update(call_id, fields)]
        }
        Event::TodosUpdated { todos } => vec![SessionUpdate::Plan(plan(todos))],
        Event::ModeChanged { mode } => vec![SessionUpdate::CurrentModeUpdate(
            CurrentModeUpdate::new(mode_id(*mode)),
        )],
        Event::SessionConfigured(info) => vec![SessionUpdate::AvailableCommandsUpdate(
            agent_client_protocol::v1::schema::AvailableCommandsUpdate::new(commands(info)),
        )],
        Event::HistoryRestored { items } => history(items),
        Event::Compacted {
            trigger,
            pre_tokens,
            ..
        } => vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
            "(The conversation was compacted ({trigger}) from {pre_tokens} tokens.)"
        )))],
        Event::Retrying {
            attempt,
            max_attempts,
            reason,
            discarded,
            ..
        } => {
            let cut = if *discarded {
                " The answer so far was cut off; it starts again."
            } else {
                ""
            };
            vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
                "(The request failed ({reason}); trying again, {attempt} of {max_attempts}.{cut})"
            )))]
        }
        Event::BackgroundTask(task) if task.status != TaskStatus::Running => {
            vec![SessionUpdate::AgentThoughtChunk(chunk(&format!(
                "(Background {} {} ({}) {}: {})",
                task.kind.as_str(),
                task.id,
                task.agent,
                task.status.as_str(),
                task.description
            )))]
        }
        _ => Vec::new(),
    }
}

/// A sub-agent's updates as the client sees them: its tool calls only (its text stays
/// inside, as in the terminal), each announced as a call of its own under the Agent call's
/// title (`Explore › Read src/a.rs`), with the Agent call's id in
/// `_meta.cairn.parentToolCallId` (a nested sub-agent's calls keep their own agent's).
fn subagent_calls(parent: &str, agent: &str, inner: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
    inner
        .into_iter()
        .filter_map(|u| match u {
            SessionUpdate::ToolCall(mut call) => {
                call.title = format!("{agent} › {}", call.title);
                if call.meta.is_none() {
                    let meta = serde_json::json!({"cairn": {"parentToolCallId": parent}});
                    call.meta = serde_json::from_value(meta).ok();
                }
                Some(SessionUpdate::ToolCall(call))
            }
            SessionUpdate::ToolCallUpdate(u) => Some(SessionUpdate::ToolCallUpdate(u)),
            _ => None,
        })
        .collect()
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

fn update(call_id: &str, fields: ToolCallUpdateFields) -> SessionUpdate {
    SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(call_id.to_string(), fields))
}

/// A text as tool-call content.
pub fn text_content(text: &str) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

/// Output in a Markdown code fence long enough not to be closed by the output itself.
fn fenced(output: &str) -> String {
    let mut fence = "```".to_string();
    while output.contains(&fence) {
        fence.push('`');
    }
    format!("{fence}\n{}\n{fence}", output.trim_end_matches('\n'))
}

/// One file's change as ACP's diff content (no old text for a new file).
fn diff_content(path: &std::path::Path, before: &str, after: &str) -> ToolCallContent {
    let old = (!before.is_empty()).then(|| before.to_string());
    ToolCallContent::Diff(Diff::new(path.to_path_buf(), after.to_string()).old_text(old))
}

/// What a finished call (or a preview) shows the person.
pub fn display_content(display: &Display) -> Vec<ToolCallContent> {
    let text = match display {
        Display::Empty => return Vec::new(),
        Display::Diff {
            path,
            before,
            after,
        } => {
            return vec![diff_content(path, before, after)];
        }
        Display::Diffs { files } => {
            return files
                .iter()
                .map(|f| diff_content(&f.path, &f.before, &f.after))
                .collect();
        }
        Display::Text { text } | Display::Markdown { text } => text.clone(),
        Display::Command {
            command: _,
            stdout,
            stderr,
            exit_code,
            timed_out,
        } => {
            let mut out = stdout.clone();
            if !stderr.is_empty() {
                if !out.is_empty() && !out.ends_with('\n') {
                    out.push('\n');
                }
                out.push_str(stderr);
            }
            let mut text = fenced(&out);
            if *timed_out {
                text.push_str("\n(timed out)");
            } else if let Some(code) = exit_code.filter(|c| *c != 0) {
                text.push_str(&format!("\nexit code {code}"));
            }
            text
        }
        Display::FileList { files, more } => {
            let mut lines: Vec<String> = files.iter().map(|f| f.display().to_string()).collect();
            if *more > 0 {
                lines.push(format!("… and {more} more"));
            }
            lines.join("\n")
        }
        Display::Matches { matches, more, .. } => {
            let mut lines: Vec<String> = matches
                .iter()
                .map(|m| match m.line {
                    Some(line) => format!("{}:{line}: {}", m.path.display(), m.text),
                    None => m.path.display().to_string(),
                })
                .collect();
            if *more > 0 {
                lines.push(format!("… and {more} more"));
            }
            lines.join("\n")
        }
        Display::Fields { fields } => fields
            .iter()
            .map(|f| format!("{}: {}", f.label, f.value))
            .collect::<Vec<_>>()
            .join("\n"),
        Display::Attachment {
            media_type, bytes, ..
        } => format!("({media_type}, {bytes} bytes)"),
    };
    if text.is_empty() {
        return Vec::new();
    }
    vec![text_content(&text)]
}

/// cairn's kind of a call as ACP's.
pub fn acp_kind(kind: CallKind) -> ToolKind {
    match kind {
        CallKind::Read => ToolKind::Read,
        CallKind::Search => ToolKind::Search,
        CallKind::Edit => ToolKind::Edit,
        CallKind::Execute => ToolKind::Execute,
        CallKind::Fetch => ToolKind::Fetch,
        CallKind::Plan => ToolKind::SwitchMode,
        CallKind::Agent | CallKind::Interact => ToolKind::Think,
        CallKind::Mcp | CallKind::Other => ToolKind::Other,
    }
}

/// The file a call's input names (`file_path`, `notebook_path`, `path`), with the line it
/// starts at when it says (`offset`), resolved against `cwd`. Any tool's input may have these
/// words, so they are read generically, not by the tool's name.
pub fn location_of(input: &Value, cwd: &Path) -> Option<ToolCallLocation> {
    let path = ["file_path", "notebook_path", "path"]
        .iter()
        .find_map(|k| input.get(*k).and_then(Value::as_str))
        .filter(|p| !p.is_empty())?;
    let path = PathBuf::from(path);
    let path = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    let line = input
        .get("offset")
        .and_then(Value::as_u64)
        .and_then(|l| u32::try_from(l).ok());
    Some(ToolCallLocation::new(path).line(line))
}

/// The todo list as the client's plan.
pub fn plan(todos: &[Todo]) -> Plan {
    Plan::new(
        todos
            .iter()
            .map(|t| {
                let status = match t.status {
                    TodoStatus::Pending => PlanEntryStatus::Pending,
                    TodoStatus::InProgress => PlanEntryStatus::InProgress,
                    TodoStatus::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(t.content.clone(), PlanEntryPriority::Medium, status)
            })
            .collect(),
    )
}

/// The slash commands a prompt may start with: `/init` (the core's), `/clear` and `/compact`
/// (answered by the session, `prompt::local_command`) and the session's own commands and
/// skills.
pub fn commands(info: &SessionInfo) -> Vec<AvailableCommand> {
    let mut out = vec![
        AvailableCommand::new("init", "Write a CLAUDE.md describing this project"),
        AvailableCommand::new("clear", "Forget the conversation and start afresh"),
        AvailableCommand::new(
            "compact",
            "Summarise the conversation and continue from the summary",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("what the summary should keep (optional)"),
        )),
    ];
    for c in &info.commands {
        let description = if c.skill {
            format!("{} (skill)", c.description)
        } else {
            c.description.clone()
        };
        let mut command = AvailableCommand::new(c.name.clone(), description);
        if let Some(hint) = &c.argument_hint {
            command = command.input(AvailableCommandInput::Unstructured(
                UnstructuredCommandInput::new(hint.clone()),
            ));
        }
        out.push(command);
    }
    out
}

/// A resumed conversation replayed: the prompts as user messages, the answers as agent
/// messages, the tool calls as finished calls.
pub fn history(items: &[HistoryItem]) -> Vec<SessionUpdate> {
    items
        .iter()
        .map(|item| match item {
            HistoryItem::Prompt { text } => SessionUpdate::UserMessageChunk(chunk(text)),
            HistoryItem::Answer { text } => SessionUpdate::AgentMessageChunk(chunk(text)),
            HistoryItem::Compacted { .. } => SessionUpdate::AgentThoughtChunk(chunk(
                "(The conversation was compacted here; the model went on from a summary.)",
            )),
            HistoryItem::Tool {
                call_id,
                title,
                is_error,
                ..
            } => SessionUpdate::ToolCall(ToolCall::new(call_id.clone(), title.clone()).status(
                if *is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                },
            )),
        })
        .collect()
}
