//! The contract between the agent core and its clients.
//!
//! Clients (the TUI, headless `-p` mode, anything future) send [`Op`]s to the core and receive
//! [`Event`]s from it. Nothing else crosses the boundary: the core never touches a terminal and a
//! client never reaches into the core's state. Every type here is plain data (serde-serialisable)
//! so a client could live in another process.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod attachment;
mod call_kind;
mod host;
mod permission;
mod task;
pub use attachment::PromptAttachment;
pub use call_kind::CallKind;
pub use host::{
    FileDiagnostics, HostEvent, HostOp, LspServerInfo, LspState, McpApproval, McpServerInfo,
    OpenSessionInfo, PluginInfo, SavedSession, StatusLineInput,
};
pub use permission::{
    Decision, EditedFile, Grant, PermissionMode, PermissionRequest, Question, QuestionOption,
    RequestKind,
};
pub use task::{BackgroundTask, TaskKind, TaskStatus};

/// A client's end of one session: the channel its [`Op`]s go in and the one its [`Event`]s
/// come out of. The session ends when the client drops `ops` (or sends [`Op::Shutdown`]);
/// `events` closes once it has.
pub struct Connection {
    pub session_id: String,
    pub ops: tokio::sync::mpsc::UnboundedSender<Op>,
    pub events: tokio::sync::mpsc::UnboundedReceiver<Event>,
}

/// Client -> core.
/// One thing of a resumed conversation, as the client shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum HistoryItem {
    /// What the person asked.
    Prompt { text: String },
    /// The model's text.
    Answer { text: String },
    /// A tool call, whether it failed, and (when the transcript recorded it) what it showed
    /// and how its permission step ended.
    Tool {
        call_id: String,
        title: String,
        is_error: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        display: Option<Display>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        outcome: Option<CallOutcome>,
    },
    /// The conversation was compacted here; `summary` is what the model went on from.
    Compacted { summary: String },
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this prompt (queued by the core if a turn is running).
    Submit { text: String },
    /// [`Op::Submit`] with images or embedded texts besides the text (an editor's prompt).
    SubmitWith {
        text: String,
        attachments: Vec<PromptAttachment>,
    },
    /// The person's answer to an [`Event::PermissionRequest`].
    PermissionDecision { request_id: u64, decision: Decision },
    /// Cancel the running request and tools; pending calls get an "interrupted" result.
    Interrupt,
    /// Change the permission mode (Shift+Tab, `/mode`, plan approval).
    SetMode { mode: PermissionMode },
    /// `/model name`: use this model (an alias or an id) from the next turn on.
    SetModel { model: String },
    /// Forget the conversation and start afresh (`/clear`); the session and its grants stay.
    Clear,
    /// Report what fills the context window (`/context`).
    ContextReport,
    /// Summarise the conversation and continue from the summary (`/compact [instructions]`).
    Compact { instructions: Option<String> },
    /// Continue the session whose transcript is at `path` (`/resume`): its conversation, mode
    /// and todo list replace the current ones, and new messages go to its transcript.
    Resume { path: PathBuf },
    /// List the prompts `/rewind` can go back to (answered by [`Event::RewindPoints`]).
    RewindList,
    /// Rewind (between turns): put the files (`code`) and/or the conversation back to how
    /// they were before a prompt, or undo the last rewind. When restoring the files would undo
    /// changes made outside cairn since its last turn, the core asks first
    /// ([`Event::RewindNeedsConfirmation`]); the same op with `confirmed` goes on.
    Rewind {
        target: RewindTarget,
        code: bool,
        conversation: bool,
        #[serde(default)]
        confirmed: bool,
    },
    /// Stop the background agent or shell `id` (`/tasks`); the model is told the person
    /// stopped an agent (a shell stopped so tells no one, as TaskStop's does).
    StopTask { id: String },
    /// What background task `id` has put out so far (`/tasks`): the core answers with an
    /// [`Event::TaskOutput`] (nothing is read away from the model's TaskOutput).
    ReadTask { id: String },
    /// Stop the core: kill background processes, flush the transcript.
    Shutdown,
    /// For the session's host, which answers it with an [`Event::Host`]; it never reaches the
    /// core.
    Host(HostOp),
}

/// What a rewind goes back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "to", rename_all = "snake_case")]
pub enum RewindTarget {
    /// Before the prompt of this id ([`RewindPoint::id`]).
    Prompt { id: String },
    /// Undo the last rewind (what it did to the files and the conversation).
    UndoLast,
}

/// A prompt of the conversation that `/rewind` can go back to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RewindPoint {
    pub id: String,
    /// The prompt as the person typed it.
    pub text: String,
    /// The files can be put back (a checkpoint was recorded before it).
    pub code: bool,
    /// The conversation can be put back (the transcript holds it).
    pub conversation: bool,
    /// What rewinding the files to before this prompt cannot undo, a line per file
    /// ("/tmp/out.txt (written outside the working directories)").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_undone: Vec<String>,
    /// The files the model's tools wrote in this prompt's turn, relative to the project.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

/// Core -> client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Sent once when the core is ready.
    SessionConfigured(SessionInfo),
    TurnStarted {
        turn_id: u64,
    },
    /// A piece of assistant text as it streams.
    TextDelta {
        text: String,
    },
    ThinkingDelta {
        text: String,
    },
    /// A whole assistant message, once it has finished streaming (used by transcripts and
    /// stream-json). `incomplete` is true when the stream broke after content started.
    AssistantMessage {
        content: Value,
        incomplete: bool,
    },
    /// The tool results sent back to the model, as one user message (stream-json `user`).
    ToolResults {
        content: Value,
    },
    ToolCallStarted {
        call_id: String,
        tool: String,
        title: String,
        input: Value,
        /// What kind of work the call does.
        #[serde(default)]
        kind: CallKind,
    },
    /// The call passed its checks (and its permission question, when there was one) and the
    /// tool starts running now.
    ToolCallRunning {
        call_id: String,
    },
    /// The latest output of a long-running tool (the tail of a shell command's output).
    ToolCallProgress {
        call_id: String,
        output: String,
    },
    ToolCallFinished {
        call_id: String,
        is_error: bool,
        display: Display,
        /// What the outcome of the permission step was, when there was one.
        outcome: Option<CallOutcome>,
    },
    /// A language server's problems in the file call `call_id` edited, found after the edit
    /// (one line each: `line 5:17 error: message`); `new`: only those the edit brought (false
    /// when the file had not been checked before it).
    ToolDiagnostics {
        call_id: String,
        path: PathBuf,
        problems: Vec<String>,
        new: bool,
    },
    PermissionRequest(PermissionRequest),
    /// An open request was replaced: what it proposes changed (a file changed on disk under
    /// it and the core planned the change again). The request has a new id and the old one's
    /// answer is ignored; the client replaces the request of the same `call_id`, or shows it
    /// afresh when that one was answered already. `note` says what changed.
    PermissionRequestUpdated {
        request: PermissionRequest,
        note: String,
    },
    /// A request failed and will be tried again, as a whole, after `delay_ms`.
    Retrying {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        reason: String,
        /// The failed attempt had already streamed text or thinking (`TextDelta`,
        /// `ThinkingDelta` since the last `AssistantMessage`): the client removes it from
        /// view, since it is not part of the conversation and the next attempt starts afresh.
        #[serde(default)]
        discarded: bool,
    },
    /// Token usage of the last request, and the session's running totals.
    Usage {
        last: Usage,
        total: Usage,
        total_cost_usd: f64,
        context_window: u64,
        /// The model that served the request (empty: the totals of a resumed session).
        #[serde(default)]
        model: String,
    },
    /// What fills the context window (`/context`): estimated tokens per part.
    ContextReport {
        model: String,
        window: u64,
        /// (part, estimated tokens): system, memory, tools, messages.
        parts: Vec<(String, u64)>,
        /// What the last request actually used, when known.
        last_used: Option<u64>,
    },
    TurnFinished {
        turn_id: u64,
        end: TurnEnd,
        /// The final assistant text of the turn (what `-p` prints).
        text: String,
        num_turns: u32,
    },
    /// A file the model read changed on disk outside cairn.
    FileChangedOnDisk {
        path: PathBuf,
        change: FileChange,
    },
    /// The conversation was compacted (`trigger`: `manual` or `auto`); the model goes on from
    /// `summary`, written of `pre_tokens` tokens of context.
    Compacted {
        trigger: String,
        pre_tokens: u64,
        #[serde(default)]
        summary: String,
    },
    /// A resumed session's conversation so far, for the client to show.
    HistoryRestored {
        items: Vec<HistoryItem>,
    },
    /// The session's model is now this (after `/model`).
    ModelChanged {
        /// The id (outside plan mode).
        model: String,
        /// As in [`SessionInfo::model_label`].
        label: String,
    },
    ModeChanged {
        mode: PermissionMode,
    },
    /// The session's todo list, whole, after the model changed it (TodoWrite).
    TodosUpdated {
        todos: Vec<Todo>,
    },
    /// The points `/rewind` offers, newest first; `undo` describes the last rewind when it
    /// can be undone.
    RewindPoints {
        points: Vec<RewindPoint>,
        undo: Option<String>,
    },
    /// Restoring the files would undo changes made outside cairn since its last turn (`files`):
    /// the person confirms (the same [`Op::Rewind`] with `confirmed`) or cancels.
    RewindNeedsConfirmation {
        target: RewindTarget,
        code: bool,
        conversation: bool,
        files: Vec<PathBuf>,
    },
    /// A rewind was done: `summary` says what it did; `prompt` is the prompt's text when the
    /// conversation went back to before it (the client puts it back into the composer). A
    /// rewound conversation is also sent as [`Event::HistoryRestored`] just before.
    Rewound {
        summary: String,
        prompt: Option<String>,
    },
    /// Something the person should know that is not an error (queued prompt started, etc.).
    Notice {
        message: String,
    },
    Error {
        message: String,
    },
    /// Something a sub-agent did: `event` happened in the sub-agent that the Agent call
    /// `parent_call_id` started (`agent` is its type). Forwarded are its tool calls (started,
    /// progress, finished), its whole messages (`AssistantMessage`, `ToolResults`) and its
    /// usage; a nested sub-agent's events arrive wrapped twice. Its permission requests,
    /// notices and errors are not wrapped: they arrive as the session's own, labelled.
    Subagent {
        parent_call_id: String,
        agent: String,
        event: Box<Event>,
    },
    /// A background agent or shell (`run_in_background`) started or ended (`/tasks`).
    BackgroundTask(BackgroundTask),
    /// The answer to [`Op::ReadTask`]: task `id`'s output so far (a shell's last lines of
    /// stdout and stderr as they came, an agent's report once it has one) and its status.
    TaskOutput {
        id: String,
        output: String,
        status: TaskStatus,
    },
    /// The session's host answering an [`Op::Host`] (or telling of a change it asked about).
    Host(HostEvent),
}

/// Facts about the session, for the status line and headless `system/init`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionInfo {
    pub session_id: String,
    /// The model id requests use (outside plan mode).
    pub model: String,
    /// The model as the person chose it, for display: `opusplan (claude-opus-4-5 planning,
    /// claude-sonnet-4-5 otherwise)`; empty when it is just the id.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub model_label: String,
    pub provider: String,
    pub cwd: PathBuf,
    pub tools: Vec<String>,
    pub mode: PermissionMode,
    /// True when running against the built-in scripted demo model.
    pub demo: bool,
    /// The person's own slash commands (`.claude/commands`), for the `/` picker.
    #[serde(default)]
    pub commands: Vec<CommandInfo>,
    /// The memory files in the system prompt (scope, path), for `/memory`.
    #[serde(default)]
    pub memory_files: Vec<(String, PathBuf)>,
    /// The names `/model` offers (alias, what it stands for); empty when the provider has no
    /// aliases (any id can still be typed).
    #[serde(default)]
    pub model_choices: Vec<(String, String)>,
    /// Auto-compaction starts at this share of the context window (percent; 0: never).
    #[serde(default)]
    pub auto_compact_pct: u8,
    /// The sub-agents the Agent tool offers (name, description), for `/agents`.
    #[serde(default)]
    pub agents: Vec<(String, String)>,
}

/// A custom slash command as the client shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandInfo {
    /// Without the slash (`frontend:component`).
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub argument_hint: Option<String>,
    /// A skill (`.claude/skills/`) rather than a command file.
    #[serde(default)]
    pub skill: bool,
    /// Other names it answers to (a skill's directory, when its `name` differs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub aliases: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnEnd {
    /// The model ended its turn.
    Completed,
    /// `--max-turns` was reached.
    MaxTurns,
    Interrupted,
    /// The turn failed; an [`Event::Error`] preceded this.
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileChange {
    Modified,
    Deleted,
}

/// Token counts, in the Anthropic shape (OpenAI usage is mapped onto it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_creation_input_tokens: u64,
    pub cache_read_input_tokens: u64,
}

impl Usage {
    pub fn add(&mut self, other: &Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
        self.cache_creation_input_tokens += other.cache_creation_input_tokens;
        self.cache_read_input_tokens += other.cache_read_input_tokens;
    }

    /// All input tokens of a request, cached or not: how full the context is.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens + self.cache_creation_input_tokens + self.cache_read_input_tokens
    }
}

/// How a tool presents its result to people. The TUI renders each kind once; a new tool reuses
/// them, so adding a tool never touches the renderer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Display {
    /// Nothing worth showing beyond the title.
    Empty,
    Text {
        text: String,
    },
    Markdown {
        text: String,
    },
    /// A change to one file. `before` is empty for a new file, `after` for a deletion.
    Diff {
        path: PathBuf,
        before: String,
        after: String,
    },
    /// One change made of changes to several files, approved as a set (a semantic rename).
    Diffs {
        files: Vec<FileTexts>,
    },
    FileList {
        files: Vec<PathBuf>,
        /// How many more matched than are listed.
        more: usize,
    },
    Matches {
        pattern: String,
        matches: Vec<SearchMatch>,
        more: usize,
    },
    Command {
        command: String,
        stdout: String,
        stderr: String,
        exit_code: Option<i32>,
        timed_out: bool,
    },
    /// What a call is about to do, as labelled fields: the preview of a command, a fetch, an
    /// MCP call in a permission prompt.
    Fields {
        fields: Vec<Field>,
    },
    /// An image or document the tool returned to the model, shown as one line (type, size,
    /// pixels when known); its data is not carried here.
    Attachment {
        media_type: String,
        /// Decoded size.
        bytes: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        width: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        height: Option<u32>,
        /// A document's name, when the tool gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        title: Option<String>,
    },
}

/// One file's part of [`Display::Diffs`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileTexts {
    pub path: PathBuf,
    pub before: String,
    pub after: String,
}

/// One item of the session's todo list (Claude Code's TodoWrite shape).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Todo {
    /// What to do, in the imperative (`Run the tests`).
    pub content: String,
    pub status: TodoStatus,
    /// The same in the present continuous, shown while it is in progress (`Running the tests`).
    #[serde(rename = "activeForm")]
    pub active_form: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    Pending,
    InProgress,
    Completed,
}

/// One labelled value of [`Display::Fields`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Field {
    /// Shown before the value (`url`, `in`); a label of one or two characters (`$`) is a
    /// prompt before code rather than a heading above it.
    pub label: String,
    pub value: String,
    /// The value is code in this language (`bash`, `json`), shown highlighted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syntax: Option<String>,
}

impl Field {
    pub fn text(label: &str, value: impl Into<String>) -> Field {
        Field {
            label: label.to_string(),
            value: value.into(),
            syntax: None,
        }
    }

    pub fn code(label: &str, syntax: &str, value: impl Into<String>) -> Field {
        Field {
            label: label.to_string(),
            value: value.into(),
            syntax: Some(syntax.to_string()),
        }
    }
}

/// One line of search output (or one file, when `line` is None).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SearchMatch {
    pub path: PathBuf,
    pub line: Option<u64>,
    pub text: String,
}

/// What happened at the permission step of a call, for the tool cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CallOutcome {
    AllowedOnce,
    AllowedForSession,
    AllowedAlways,
    AllowedEdited,
    Denied,
    DeniedForSession,
    /// A plan the person approved.
    PlanApproved,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_cycle_skips_bypass_unless_allowed() {
        let mut m = PermissionMode::Default;
        let mut seen = vec![];
        for _ in 0..4 {
            m = m.next_in_cycle(false);
            seen.push(m);
        }
        assert_eq!(
            seen,
            vec![
                PermissionMode::AcceptEdits,
                PermissionMode::Plan,
                PermissionMode::Default,
                PermissionMode::AcceptEdits
            ]
        );
        assert_eq!(
            PermissionMode::Plan.next_in_cycle(true),
            PermissionMode::BypassPermissions
        );
        assert_eq!(
            PermissionMode::BypassPermissions.next_in_cycle(true),
            PermissionMode::Default
        );
    }

    #[test]
    fn mode_names_round_trip() {
        for m in [
            "default",
            "acceptEdits",
            "plan",
            "bypassPermissions",
            "dontAsk",
        ] {
            assert_eq!(PermissionMode::parse(m).map(|m| m.as_str()), Some(m));
        }
        assert_eq!(PermissionMode::parse("yolo"), None);
        let json = serde_json::to_string(&PermissionMode::AcceptEdits).unwrap_or_default();
        assert_eq!(json, "\"acceptEdits\"");
    }

    #[test]
    fn ops_serialise_with_a_type_tag() {
        let op = Op::PermissionDecision {
            request_id: 3,
            decision: Decision::DenyWithFeedback {
                feedback: "use a test".into(),
            },
        };
        let v = serde_json::to_value(&op).unwrap_or_default();
        assert_eq!(v["type"], "permission_decision");
        assert_eq!(v["decision"]["decision"], "deny_with_feedback");
    }
}
