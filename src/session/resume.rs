//! Resuming a session from its transcript, the only source: the messages, the mode, the todo
//! list and the usage are rebuilt from what was written, and a transcript cut by a crash is
//! repaired so the first request is valid — an answer still streaming becomes an assistant
//! message marked incomplete, every `tool_use` gets a result ("interrupted" when it never
//! came), results no call asked for are dropped, roles alternate. Each repair is named for the
//! person. A transcript written in a newer format is refused, never misread.
//!
//! Also: the sessions of a project, newest first, for `--continue`, `--resume` and the picker.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::transcript::{
    FORMAT_VERSION, Record, TranscriptContents, TranscriptError, read_transcript,
};
use crate::llm::{ContentBlock, Message, Role, ToolResultContent};
use crate::protocol::{CallOutcome, Display, Event, PermissionMode, Todo, Usage};

/// What a tool call that never finished is answered with.
pub const INTERRUPTED: &str = "The session stopped before this tool call finished \
(interrupted). Whether it had any effect is unknown: check before relying on it.";

/// The note that ends an answer the session stopped in the middle of.
pub const CUT_OFF: &str = "(This answer was cut off: the session stopped while it was written.)";

/// A session rebuilt from its transcript.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Resumed {
    pub session_id: String,
    pub path: PathBuf,
    pub messages: Vec<Message>,
    pub mode: Option<PermissionMode>,
    pub todos: Vec<Todo>,
    /// The deferred tools ToolSearch had loaded, in load order.
    pub loaded_tools: Vec<String>,
    /// Each request's usage, with its model.
    pub usage: Vec<(String, Usage)>,
    /// What had to be repaired or skipped, one line each.
    pub repairs: Vec<String>,
    /// What each finished tool call showed, by call id (from `tool_shown` records).
    pub shown: std::collections::HashMap<String, (Display, Option<CallOutcome>)>,
    /// Problems found after calls' edits, as told (`Event::ToolDiagnostics`), in order.
    pub diagnostics: Vec<Event>,
}

#[derive(Debug, thiserror::Error)]
pub enum ResumeError {
    #[error(transparent)]
    Read(#[from] TranscriptError),
    #[error(
        "{} was written by a newer cairn (transcript format {version}; this one reads \
         {FORMAT_VERSION}): update cairn to resume it",
        path.display()
    )]
    Newer { path: PathBuf, version: u64 },
    #[error("{} holds no conversation to resume", path.display())]
    Empty { path: PathBuf },
    #[error("no session {id} in this project (`cairn --resume` lists them)")]
    NotFound { id: String },
    #[error("no earlier session in this project to continue")]
    NoneYet,
}

/// Read and rebuild the session at `path`.
pub fn load(path: &Path) -> Result<Resumed, ResumeError> {
    let contents = read_transcript(path)?;
    if contents.is_newer() {
        return Err(ResumeError::Newer {
            path: path.to_path_buf(),
            version: contents.version.unwrap_or_default(),
        });
    }
    let mut resumed = rebuild(&contents);
    if resumed.messages.is_empty() {
        return Err(ResumeError::Empty {
            path: path.to_path_buf(),
        });
    }
    resumed.path = path.to_path_buf();
    if resumed.session_id.is_empty() {
        resumed.session_id = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
    }
    Ok(resumed)
}

/// Rebuild a session from what its transcript holds (see the module docs).
pub fn rebuild(contents: &TranscriptContents) -> Resumed {
    let mut out = Resumed::default();
    for p in &contents.problems {
        out.repairs
            .push(format!("line {} skipped: {}", p.line, p.reason));
    }
    let mut partial: Option<Vec<ContentBlock>> = None;
    let mut records = contents.records.iter().peekable();
    let apply = |out: &mut Resumed, partial: &mut Option<Vec<ContentBlock>>, r: &Record| match r {
        Record::Session { .. } => {}
        Record::State {
            mode,
            todos,
            loaded_tools,
        } => {
            out.mode = Some(*mode);
            out.todos = todos.clone();
            out.loaded_tools = loaded_tools.clone();
        }
        Record::Usage { model, usage } => out.usage.push((model.clone(), *usage)),
        Record::Partial { blocks } => *partial = Some(blocks.clone()),
        Record::Prompt { .. } => {}
        Record::ToolShown {
            tool_use_id,
            display,
            outcome,
        } => {
            out.shown
                .insert(tool_use_id.clone(), (display.clone(), *outcome));
        }
        Record::ToolDiagnostics {
            tool_use_id,
            path,
            problems,
            new,
        } => out.diagnostics.push(Event::ToolDiagnostics {
            call_id: tool_use_id.clone(),
            path: path.clone(),
            problems: problems.clone(),
            new: *new,
        }),
        // The summary after it (the copy of the kept conversation) replaces everything before.
        Record::CompactBoundary { .. } | Record::Rewind { .. } => {
            out.messages.clear();
            *partial = None;
        }
    };
    for (i, entry) in contents.entries.iter().enumerate() {
        while let Some((_, r)) = records.next_if(|(at, _)| *at <= i) {
            apply(&mut out, &mut partial, r);
        }
        if out.session_id.is_empty() {
            out.session_id = entry.session_id.clone();
        }
        match entry.message.role {
            // The answer the partial lines were leading up to arrived whole.
            Role::Assistant => partial = None,
            Role::User => {
                if let Some(blocks) = partial.take() {
                    push(&mut out, cut_off(blocks));
                }
            }
        }
        push(&mut out, entry.message.clone());
    }
    for (_, r) in records {
        apply(&mut out, &mut partial, r);
    }
    if let Some(blocks) = partial.take() {
        push(&mut out, cut_off(blocks));
    }
    pair_tool_calls(&mut out);
    out
}

/// The answer so far, as an assistant message that says it was cut off. Thinking blocks are
/// dropped (an unsigned or partial one would be refused).
fn cut_off(blocks: Vec<ContentBlock>) -> Message {
    let mut content: Vec<ContentBlock> = blocks
        .into_iter()
        .filter(|b| !matches!(b, ContentBlock::Thinking { .. }))
        .collect();
    content.push(ContentBlock::Text {
        text: CUT_OFF.into(),
    });
    Message {
        role: Role::Assistant,
        content,
    }
}

/// Append `message`, merging it into the last one of the same role; the conversation starts
/// with the person.
fn push(out: &mut Resumed, message: Message) {
    if message.content.is_empty() {
        return;
    }
    if out.messages.is_empty() && message.role == Role::Assistant {
        out.messages
            .push(Message::user_text("(The conversation continues.)"));
    }
    match out.messages.last_mut() {
        Some(last) if last.role == message.role => last.content.extend(message.content),
        _ => out.messages.push(message),
    }
}

/// Every `tool_use` answered in the next message (results first), no result without its call.
fn pair_tool_calls(out: &mut Resumed) {
    let mut i = 0;
    while i < out.messages.len() {
        if out.messages[i].role != Role::Assistant {
            i += 1;
            continue;
        }
        let calls: Vec<String> = out.messages[i]
            .content
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolUse { id, .. } => Some(id.clone()),
                _ => None,
            })
            .collect();
        if i + 1 == out.messages.len() {
            if calls.is_empty() {
                break;
            }
            out.messages.push(Message {
                role: Role::User,
                content: Vec::new(),
            });
        }
        let next = &mut out.messages[i + 1];
        let (mut results, rest): (Vec<ContentBlock>, Vec<ContentBlock>) = next
            .content
            .drain(..)
            .partition(|b| matches!(b, ContentBlock::ToolResult { .. }));
        let before = results.len();
        results.retain(|b| matches!(b, ContentBlock::ToolResult { tool_use_id, .. } if calls.contains(tool_use_id)));
        if results.len() < before {
            out.repairs.push(format!(
                "{} tool result(s) without their call dropped",
                before - results.len()
            ));
        }
        let answered: HashSet<String> = results
            .iter()
            .filter_map(|b| match b {
                ContentBlock::ToolResult { tool_use_id, .. } => Some(tool_use_id.clone()),
                _ => None,
            })
            .collect();
        let missing: Vec<&String> = calls.iter().filter(|c| !answered.contains(*c)).collect();
        if !missing.is_empty() {
            out.repairs.push(format!(
                "{} tool call(s) the session stopped during were answered \"interrupted\"",
                missing.len()
            ));
        }
        results.extend(missing.into_iter().map(|id| ContentBlock::ToolResult {
            tool_use_id: id.clone(),
            content: ToolResultContent::from(INTERRUPTED),
            is_error: true,
        }));
        next.content = results;
        next.content.extend(rest);
        i += 1;
    }
    // A user message left with nothing (only orphan results) goes; neighbours merge.
    let messages = std::mem::take(&mut out.messages);
    for m in messages {
        push(out, m);
    }
}

/// One session of a project, for the picker.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionSummary {
    pub id: String,
    pub path: PathBuf,
    /// The first thing the person asked (one line).
    pub first_prompt: String,
    pub modified: SystemTime,
    /// How many prompts the person sent.
    pub prompts: usize,
    pub branch: Option<String>,
}

/// The sessions whose transcripts are in `dir` (a project's data folder), newest first.
/// Transcripts that hold no prompt are left out.
pub fn list(dir: &Path) -> Vec<SessionSummary> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SessionSummary> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|path| summarize(&path))
        .collect();
    out.sort_by(|a, b| b.modified.cmp(&a.modified).then(a.id.cmp(&b.id)));
    out
}

fn summarize(path: &Path) -> Option<SessionSummary> {
    let modified = std::fs::metadata(path).and_then(|m| m.modified()).ok()?;
    let contents = read_transcript(path).ok()?;
    // The prompts of the conversation as it is now: those marked after the last rewind (a
    // rewind copies the ones it keeps), or every user text in a transcript without marks.
    let marked = contents
        .records
        .iter()
        .any(|(_, r)| matches!(r, Record::Prompt { .. }));
    let prompts: Vec<String> = if marked {
        let current = contents
            .records
            .iter()
            .rposition(|(_, r)| matches!(r, Record::Rewind { .. }))
            .map_or(0, |i| i + 1);
        contents.records[current..]
            .iter()
            .filter_map(|(_, r)| match r {
                Record::Prompt { text, .. } => Some(text.trim().to_string()),
                _ => None,
            })
            .collect()
    } else {
        contents
            .entries
            .iter()
            .filter(|e| e.message.role == Role::User)
            .filter_map(|e| prompt_text(&e.message))
            .collect()
    };
    let first = prompts.first()?;
    let branch = contents.records.iter().find_map(|(_, r)| match r {
        Record::Session { git_branch, .. } => git_branch.clone(),
        _ => None,
    });
    Some(SessionSummary {
        id: path.file_stem()?.to_string_lossy().into_owned(),
        path: path.to_path_buf(),
        first_prompt: first.lines().next().unwrap_or_default().to_string(),
        modified,
        prompts: prompts.len(),
        branch,
    })
}

/// The person's own words in a user message: its first text that is not a reminder.
pub fn prompt_text(message: &Message) -> Option<String> {
    message.content.iter().find_map(|b| match b {
        ContentBlock::Text { text } if !text.starts_with("<system-reminder>") => {
            Some(text.trim().to_string())
        }
        _ => None,
    })
}

/// The transcript of session `id` in `dir`; `None` for an id that is not a plain file name.
pub fn find(dir: &Path, id: &str) -> Result<PathBuf, ResumeError> {
    let plain = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    let path = dir.join(format!("{id}.jsonl"));
    if plain && path.is_file() {
        Ok(path)
    } else {
        Err(ResumeError::NotFound { id: id.to_string() })
    }
}

/// The most recent session in `dir` that holds a prompt. Only the newest files are looked
/// into, and only for a user message: `--continue` reads the chosen one whole just after.
pub fn latest(dir: &Path) -> Result<PathBuf, ResumeError> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Err(ResumeError::NoneYet);
    };
    let mut files: Vec<(SystemTime, PathBuf)> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .filter_map(|p| Some((std::fs::metadata(&p).and_then(|m| m.modified()).ok()?, p)))
        .collect();
    files.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    files
        .into_iter()
        .map(|(_, p)| p)
        .find(|p| std::fs::read(p).is_ok_and(|bytes| has_user_line(&bytes)))
        .ok_or(ResumeError::NoneYet)
}

/// Whether transcript bytes hold a user message line: a JSON object whose `type` is
/// `user`, in any spacing (cairn writes the compact form; other writers may not). Only lines
/// that mention `"user"` are parsed.
fn has_user_line(bytes: &[u8]) -> bool {
    const NEEDLE: &[u8] = br#"{"type":"user""#;
    const USER: &[u8] = br#""user""#;
    bytes.split(|&b| b == b'\n').any(|line| {
        line.starts_with(NEEDLE)
            || (line.windows(USER.len()).any(|w| w == USER)
                && serde_json::from_slice::<serde_json::Value>(line)
                    .is_ok_and(|v| v.get("type").and_then(|t| t.as_str()) == Some("user")))
    })
}

#[cfg(test)]
mod tests;
