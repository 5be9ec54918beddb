//! Keeping a long session inside the context window.
//!
//! **Microcompaction** comes first: when the last request filled the window past the
//! auto-compaction threshold, the results of older tool calls (all but the last two user
//! messages') longer than [`MICRO_MIN_CHARS`] are replaced by a short note saying how to get
//! them again. When that frees enough (the estimate falls below 90% of the threshold), the
//! conversation goes on as it is.
//!
//! **Compaction** otherwise (and on `/compact [instructions]`): PreCompact hooks run, the model
//! is asked — with the same system prompt and tools, so the cached prefix still serves — for a
//! structured summary, and the conversation becomes one user message: the summary, the files
//! most recently read (current content, bounded), the todo list. The transcript gets a
//! `compact_boundary` record and then that message, so a resume starts from the summary while
//! the file keeps the whole history; the TUI keeps showing everything.

use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use super::core::Core;
use crate::llm::retry::stream_with_retry;
use crate::llm::{ContentBlock, Message, ModelRequest, Role, StreamEvent, ToolResultContent};
use crate::protocol::{Event, TodoStatus};
use crate::session::transcript::Record;
use crate::tools::{Access, ToolKind};

/// Tool results shorter than this are never cleared by microcompaction.
pub const MICRO_MIN_CHARS: usize = 2_000;
/// At most this many recently read files are attached after a compaction…
const REATTACH_FILES: usize = 5;
/// …each at most this long…
const REATTACH_FILE_CHARS: usize = 20_000;
/// …and all of them together at most this long.
const REATTACH_TOTAL_CHARS: usize = 60_000;

const SUMMARY_PROMPT: &str = "\
Your task now is to write a detailed summary of this conversation so far, so that the work can \
go on from the summary alone: the earlier messages will be removed. Use these sections:
1. Goal: what the user asked for, including every request they made, in their own words where \
it matters.
2. Decisions: what was decided and why, and every constraint or preference the user stated.
3. Files: each file read, changed or created, and what changed in it (short code snippets where \
they matter).
4. Errors and fixes: the problems met and how they were solved.
5. Open work: what is done, what remains, and the exact next step.
6. The user's latest request, quoted.
Do not call any tool. Answer with the summary only.";

/// Why a compaction ran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Manual,
    Auto,
}

impl Trigger {
    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Manual => "manual",
            Trigger::Auto => "auto",
        }
    }
}

impl Core {
    /// Before a request: when the last one filled the window past the threshold, clear old
    /// tool results, and compact when that is not enough.
    pub(crate) async fn keep_within_window(&mut self, cancel: &CancellationToken) {
        let window = crate::llm::pricing::context_window(&self.request_model());
        let pct = self.services.settings.auto_compact_pct;
        let limit = window * u64::from(pct) / 100;
        if pct == 0 || self.usage.last_context < limit {
            return;
        }
        let freed = clear_old_results(&mut self.conversation.messages);
        if freed > 0 {
            self.session.read_files.forget_read_results();
            self.usage.last_context = self.usage.last_context.saturating_sub(freed);
            self.events().send(Event::Notice {
                message: format!(
                    "Cleared old tool results (~{} tokens) to stay within the context window.",
                    freed
                ),
            });
            if self.usage.last_context < limit * 9 / 10 {
                return;
            }
        }
        self.compact(None, Trigger::Auto, cancel).await;
    }

    /// `/context`: what fills the window, estimated at four characters a token.
    pub(crate) fn report_context(&self) {
        let tokens = |chars: usize| chars as u64 / 4;
        let memory = crate::memory::render(&self.services.memory).len();
        let tools: usize = self
            .tools
            .specs(&self.conversation.messages)
            .iter()
            .filter(|t| !t.defer_loading)
            .map(|t| t.name.len() + t.description.len() + t.input_schema.to_string().len())
            .sum();
        let messages: usize = self
            .conversation
            .messages
            .iter()
            .map(|m| serde_json::to_string(m).map_or(0, |s| s.len()))
            .sum();
        let model = self.request_model();
        self.events().send(Event::ContextReport {
            window: crate::llm::pricing::context_window(&model),
            model,
            parts: vec![
                (
                    "system".into(),
                    tokens(self.system.len().saturating_sub(memory)),
                ),
                ("memory".into(), tokens(memory)),
                ("tools".into(), tokens(tools)),
                ("messages".into(), tokens(messages)),
            ],
            last_used: (self.usage.last_context > 0).then_some(self.usage.last_context),
        });
    }

    /// `/compact [instructions]`.
    pub(crate) async fn compact_manual(
        &mut self,
        instructions: Option<String>,
        cancel: &CancellationToken,
    ) {
        self.compact(instructions, Trigger::Manual, cancel).await;
    }

    /// Summarise the conversation and go on from the summary (see the module docs). On
    /// failure the conversation stays as it was and the error is shown.
    pub(crate) async fn compact(
        &mut self,
        instructions: Option<String>,
        trigger: Trigger,
        cancel: &CancellationToken,
    ) {
        if self.conversation.messages.is_empty() {
            self.events().send(Event::Notice {
                message: "Nothing to compact yet.".into(),
            });
            return;
        }
        let hook = self
            .services
            .hooks
            .pre_compact(
                &self.session,
                self.gate().mode(),
                trigger.as_str(),
                instructions.as_deref().unwrap_or(""),
            )
            .await;
        let mut instructions = instructions.unwrap_or_default();
        for extra in hook.additional_context {
            instructions.push('\n');
            instructions.push_str(&extra);
        }
        self.events().send(Event::Notice {
            message: "Compacting the conversation…".into(),
        });
        let summary = match self.summarize(instructions.trim(), cancel).await {
            Ok(s) => s,
            Err(e) => {
                self.events().send(Event::Error {
                    message: format!("Could not compact the conversation: {e}"),
                });
                return;
            }
        };
        let pre_tokens = self.usage.last_context;
        let message = self.continuation(&summary);
        self.conversation
            .transcript
            .record(&Record::CompactBoundary {
                trigger: trigger.as_str().into(),
                pre_tokens,
            });
        self.conversation.messages.clear();
        self.tools.deferral.forget_announcements();
        self.session.read_files.forget_read_results();
        self.usage.last_context = 0;
        self.push_user(message.content);
        self.events().send(Event::Compacted {
            trigger: trigger.as_str().into(),
            pre_tokens,
            summary: summary.trim().to_string(),
        });
    }

    /// Ask the model for the summary: the conversation as it is, then the instruction.
    async fn summarize(
        &mut self,
        instructions: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let mut messages = self
            .tools
            .deferral
            .shape_messages(&self.conversation.messages);
        let mut ask = SUMMARY_PROMPT.to_string();
        if !instructions.is_empty() {
            ask.push_str("\n\nAlso follow these instructions for the summary:\n");
            ask.push_str(instructions);
        }
        let text = ContentBlock::Text { text: ask };
        match messages.last_mut() {
            Some(last) if last.role == Role::User => last.content.push(text),
            _ => messages.push(Message {
                role: Role::User,
                content: vec![text],
            }),
        }
        let model = self.request_model();
        let request = ModelRequest {
            model: model.clone(),
            system: self.system.clone(),
            messages,
            tools: self.tools.specs(&self.conversation.messages),
            max_tokens: self.services.settings.max_tokens,
            thinking_budget: None,
            server_tools: Vec::new(),
        };
        let mut stream = stream_with_retry(
            std::sync::Arc::clone(&self.services.client),
            request,
            self.services.settings.retry.clone(),
        );
        let mut summary = String::new();
        let mut usage = crate::protocol::Usage::default();
        loop {
            tokio::select! {
                _ = cancel.cancelled() => return Err("interrupted".into()),
                ev = stream.next() => match ev {
                    None => break,
                    Some(Err(e)) => return Err(e.to_string()),
                    Some(Ok(StreamEvent::Restart(_))) => summary.clear(),
                    Some(Ok(StreamEvent::BlockComplete(ContentBlock::Text { text }))) => {
                        summary.push_str(&text);
                    }
                    Some(Ok(StreamEvent::Usage(u))) => usage = u,
                    Some(Ok(_)) => {}
                },
            }
        }
        self.record_usage(&model, &usage);
        if summary.trim().is_empty() {
            return Err("the model answered with no summary".into());
        }
        Ok(summary)
    }

    /// The message the conversation continues from: the summary, the files most recently
    /// read as they are now, and the todo list.
    fn continuation(&self, summary: &str) -> Message {
        let mut text = format!("{CONTINUATION_HEAD}{}\n", summary.trim());
        let mut budget = REATTACH_TOTAL_CHARS;
        for path in self.recently_read() {
            let Ok(content) = std::fs::read_to_string(&path) else {
                continue;
            };
            let shown: String = content
                .chars()
                .take(REATTACH_FILE_CHARS.min(budget))
                .collect();
            if shown.is_empty() {
                break;
            }
            budget -= shown.len().min(budget);
            let cut = if shown.len() < content.len() {
                " (cut short; Read it for the rest)"
            } else {
                ""
            };
            text.push_str(&format!(
                "\nThe current content of {}{cut}:\n```\n{shown}\n```\n",
                path.display()
            ));
        }
        let todos = self.session.todos();
        if !todos.is_empty() {
            text.push_str("\nThe todo list:\n");
            for t in &todos {
                let mark = match t.status {
                    TodoStatus::Completed => "[x]",
                    TodoStatus::InProgress => "[~]",
                    TodoStatus::Pending => "[ ]",
                };
                text.push_str(&format!("- {mark} {}\n", t.content));
            }
        }
        text.push_str("\nContinue the work from where it was left, without asking again.");
        Message::user_text(text)
    }

    /// Files the model read, most recent first, at most [`REATTACH_FILES`], that still exist.
    fn recently_read(&self) -> Vec<std::path::PathBuf> {
        let mut out: Vec<std::path::PathBuf> = Vec::new();
        let calls = self
            .conversation
            .messages
            .iter()
            .rev()
            .flat_map(|m| m.content.iter().rev());
        for block in calls {
            let ContentBlock::ToolUse { name, input, .. } = block else {
                continue;
            };
            let Some(tool) = self
                .tools
                .registry
                .get(name)
                .filter(|t| t.kind() == ToolKind::Read)
            else {
                continue;
            };
            let Ok(parsed) = tool.parse(input) else {
                continue;
            };
            for access in tool.accesses(&parsed, &self.session) {
                if let Access::Read(path) = access
                    && path.is_file()
                    && !out.contains(&path)
                    && !self.gate().read_denied(&path)
                {
                    out.push(path);
                }
            }
            if out.len() >= REATTACH_FILES {
                break;
            }
        }
        out.truncate(REATTACH_FILES);
        out
    }
}

/// Microcompaction: replace the long tool results of all but the last two user messages with
/// a note; the estimated tokens freed.
fn clear_old_results(messages: &mut [Message]) -> u64 {
    let users: Vec<usize> = (0..messages.len())
        .filter(|&i| messages[i].role == Role::User)
        .collect();
    let keep_from = users.len().saturating_sub(2);
    let mut freed = 0;
    for &i in &users[..keep_from] {
        for block in &mut messages[i].content {
            if let ContentBlock::ToolResult { content, .. } = block {
                let chars = content.text().chars().count();
                if chars >= MICRO_MIN_CHARS {
                    *content = ToolResultContent::from(format!(
                        "[This older tool result ({chars} characters) was cleared to save \
                         context. Run the tool again if you need it.]"
                    ));
                    freed += chars as u64 / 4;
                }
            }
        }
    }
    freed
}

/// How the message a compacted conversation continues from begins; the summary follows.
const CONTINUATION_HEAD: &str = "This session is being continued from an earlier conversation \
that was compacted to save context. Its summary:\n\n";

/// The summary in the message a compaction left (`text`), if `text` is one: up to what the
/// message adds after it (the files re-read, the todo list, the last instruction).
pub(crate) fn summary_of(text: &str) -> Option<&str> {
    let rest = text.strip_prefix(CONTINUATION_HEAD)?;
    let end = [
        "\nThe current content of ",
        "\nThe todo list:\n",
        "\nContinue the work from",
    ]
    .iter()
    .filter_map(|m| rest.find(m))
    .min()
    .unwrap_or(rest.len());
    Some(rest[..end].trim())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(texts: &[&str]) -> Message {
        Message {
            role: Role::User,
            content: texts
                .iter()
                .enumerate()
                .map(|(n, t)| ContentBlock::ToolResult {
                    tool_use_id: format!("t{n}"),
                    content: ToolResultContent::from(t.to_string()),
                    is_error: false,
                })
                .collect(),
        }
    }

    fn answer() -> Message {
        Message {
            role: Role::Assistant,
            content: vec![ContentBlock::Text {
                text: "answer".into(),
            }],
        }
    }

    #[test]
    fn only_long_results_before_the_last_two_user_messages_are_cleared() {
        let long = "x".repeat(MICRO_MIN_CHARS);
        let short = "y".repeat(MICRO_MIN_CHARS - 1);
        let mut messages = vec![
            results(&[&long, &short]),
            answer(),
            results(&[&long]),
            answer(),
            results(&[&long]),
        ];
        let freed = clear_old_results(&mut messages);
        assert_eq!(freed, MICRO_MIN_CHARS as u64 / 4);
        let text = |m: &Message, n: usize| match &m.content[n] {
            ContentBlock::ToolResult { content, .. } => content.text().into_owned(),
            _ => String::new(),
        };
        assert_eq!(
            text(&messages[0], 0),
            format!(
                "[This older tool result ({MICRO_MIN_CHARS} characters) was cleared to save \
                 context. Run the tool again if you need it.]"
            )
        );
        assert_eq!(text(&messages[0], 1), short);
        assert_eq!(text(&messages[2], 0), long);
        assert_eq!(text(&messages[4], 0), long);
    }
}
