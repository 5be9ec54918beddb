//! The streaming tool executor: runs the tool calls of one assistant message while the model is
//! still streaming, and hands back their results in call order.
//!
//! Scheduling: a concurrency-safe call starts as soon as its block has streamed, provided every
//! unsafe call before it has finished, with at most [`MAX_PARALLEL`] running at once. An unsafe
//! call starts only when everything before it has finished and nothing else runs, and everything
//! after it waits for it. On interrupt, running calls are cancelled and every call without a result
//! gets an "interrupted by the user" result, so the conversation stays valid.
//!
//! Each call goes through the lifecycle of the design notes: find the tool, ask the gate for a
//! decision on the call's paths alone (deny rules, protected and outside paths: before the tool
//! touches the disk), validate its input, compute the preview, ask the permission gate (and
//! perhaps the person), run, shape the result. A denial always wins over a validation error,
//! so what the model reads for a denied path never tells whether the file exists.

use std::sync::Arc;

use serde_json::Value;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use crate::hooks::{HookCall, Hooks};
use crate::llm::{ContentBlock, ToolResultContent};
use crate::permissions::{CallInfo, GateOutcome, PermissionGate};
use crate::protocol::{CallKind, CallOutcome, Decision, Display, Event, PermissionMode};
use crate::session::context::SessionContext;
use crate::tools::{
    Access, ContentOverride, DynTool, Effect, ParsedInput, Preview, ProgressSender, ToolContext,
    ToolError, ToolHandle, ToolRegistry, spill,
};

mod alongside;
mod conflict;
mod permission;

use alongside::alongside;
pub use permission::PendingDecisions;
use permission::ask;

/// At most this many concurrency-safe calls run at once.
pub const MAX_PARALLEL: usize = 10;

pub const INTERRUPTED_MESSAGE: &str =
    "The user interrupted this tool call before it finished (interrupted by the user).";

/// What every call of a turn shares.
pub struct CallEnv {
    pub session: Arc<SessionContext>,
    pub gate: Arc<PermissionGate>,
    pub hooks: Arc<Hooks>,
    pub registry: ToolRegistry,
    pub decisions: PendingDecisions,
    /// The conversation's deferred tools (a call of one not loaded is refused).
    pub deferred: crate::tools::tool_search::DeferredTools,
    /// Whether a change conflicting with an outside change is put to the person
    /// (`SessionServices::offers_overwrite`) rather than refused.
    pub offers_overwrite: bool,
    /// Cancelled on interrupt.
    pub cancel: CancellationToken,
    /// What each finished call showed the client, for the transcript (a resume redraws it).
    pub shown: Shown,
}

/// The displays of finished calls: call id, what the client was shown, the permission outcome.
pub type Shown = Arc<std::sync::Mutex<Vec<(String, Display, Option<CallOutcome>)>>>;

enum SlotState {
    Waiting(Box<PreparedCall>),
    Running,
    Done(ContentBlock),
}

struct Slot {
    call_id: String,
    safe: bool,
    state: SlotState,
}

struct PreparedCall {
    tool: ToolHandle,
    input: ParsedInput,
    raw: Value,
    title: String,
    /// The name the model used, when it was one of the tool's aliases.
    called_as: Option<String>,
}

pub struct Executor {
    env: Arc<CallEnv>,
    slots: Vec<Slot>,
    running: JoinSet<(usize, ContentBlock)>,
}

impl Executor {
    pub fn new(env: Arc<CallEnv>) -> Executor {
        Executor {
            env,
            slots: Vec::new(),
            running: JoinSet::new(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Where the displays of finished calls collect (see [`CallEnv::shown`]).
    pub fn shown(&self) -> Shown {
        Arc::clone(&self.env.shown)
    }

    /// A tool_use block finished streaming: look the tool up, parse its input, and start it if
    /// the scheduling rules allow.
    pub fn submit(&mut self, call_id: String, name: String, input: Value) {
        let events = &self.env.session.events;
        let Some(tool) = self.env.registry.get(&name).cloned() else {
            let connecting = self.env.deferred.connecting();
            if name.starts_with("mcp__") && !connecting.is_empty() {
                let message = format!(
                    "Error: {name} is not available yet (MCP servers still connecting: {}). \
                     Call {search} (query \"select:{name}\"), which waits for them.",
                    connecting.join(", "),
                    search = crate::tools::tool_search::NAME
                );
                self.finish_early(call_id, name.clone(), name, input, message);
                return;
            }
            let suggestions = self.env.registry.suggest(&name);
            let mut message = format!("Error: No such tool available: {name}");
            if !suggestions.is_empty() {
                message.push_str(&format!(". Did you mean: {}?", suggestions.join(", ")));
            }
            self.finish_early(call_id, name.clone(), name, input, message);
            return;
        };
        if self.env.deferred.is_pending(tool.name()) {
            let tool = tool.name();
            let message = format!(
                "Error: {tool} is a deferred tool and its schema is not loaded yet, so it cannot \
                 be called. Load it first with {search} (query \"select:{tool}\"), then call \
                 it again.",
                search = crate::tools::tool_search::NAME
            );
            self.finish_early(call_id, tool.to_string(), name, input, message);
            return;
        }
        let parsed = match tool.parse(&input) {
            Ok(p) => p,
            Err(e) => {
                self.finish_early(call_id, tool.name().to_string(), name, input, e.message);
                return;
            }
        };
        let title = tool.title(&parsed, &self.env.session);
        let safe = tool.is_concurrency_safe(&parsed);
        events.send(Event::ToolCallStarted {
            call_id: call_id.clone(),
            tool: tool.name().to_string(),
            title: title.clone(),
            input: input.clone(),
            kind: call_kind(tool.as_ref()),
        });
        let called_as = (name != tool.name()).then_some(name);
        self.slots.push(Slot {
            call_id,
            safe,
            state: SlotState::Waiting(Box::new(PreparedCall {
                tool,
                input: parsed,
                raw: input,
                title,
                called_as,
            })),
        });
        self.pump();
    }

    /// A tool_use block whose input JSON did not parse: answer it with an error at once.
    pub fn submit_invalid(&mut self, call_id: String, name: String, raw: String, error: String) {
        let message = format!(
            "InputValidationError: the input of {name} was not valid JSON ({error}). \
             Send the call again with a valid JSON object."
        );
        let input = Value::String(raw);
        self.finish_early(call_id, name.clone(), name, input, message);
    }

    fn finish_early(
        &mut self,
        call_id: String,
        tool: String,
        title: String,
        input: Value,
        message: String,
    ) {
        let events = &self.env.session.events;
        events.send(Event::ToolCallStarted {
            call_id: call_id.clone(),
            tool,
            title,
            input,
            kind: CallKind::Other,
        });
        events.send(Event::ToolCallFinished {
            call_id: call_id.clone(),
            is_error: true,
            display: Display::Text {
                text: message.clone(),
            },
            outcome: None,
        });
        self.slots.push(Slot {
            call_id: call_id.clone(),
            safe: true,
            state: SlotState::Done(error_result(call_id, message)),
        });
    }

    /// Start every waiting call the scheduling rules allow.
    fn pump(&mut self) {
        if self.env.cancel.is_cancelled() {
            return;
        }
        let mut running = self.running.len();
        let mut earlier_unfinished_unsafe = false;
        let mut earlier_unfinished = false;
        for index in 0..self.slots.len() {
            let slot = &self.slots[index];
            let done = matches!(slot.state, SlotState::Done(_));
            let waiting = matches!(slot.state, SlotState::Waiting(_));
            if waiting {
                let may_start = if slot.safe {
                    !earlier_unfinished_unsafe && running < MAX_PARALLEL
                } else {
                    !earlier_unfinished && running == 0
                };
                if !may_start {
                    if !slot.safe {
                        // Nothing after an unsafe call may start before it.
                        break;
                    }
                } else {
                    self.start(index);
                    running += 1;
                }
            }
            if !done {
                earlier_unfinished = true;
                if !self.slots[index].safe {
                    earlier_unfinished_unsafe = true;
                }
            }
        }
    }

    fn start(&mut self, index: usize) {
        let slot = &mut self.slots[index];
        let SlotState::Waiting(call) = std::mem::replace(&mut slot.state, SlotState::Running)
        else {
            return;
        };
        let env = Arc::clone(&self.env);
        let call_id = slot.call_id.clone();
        self.running.spawn(async move {
            let block = run_call(env, call_id, *call).await;
            (index, block)
        });
    }

    /// Run every submitted call to completion and return the results in call order.
    pub async fn finish(mut self) -> Vec<ContentBlock> {
        loop {
            self.pump();
            if self.running.is_empty() {
                let all_done = self
                    .slots
                    .iter()
                    .all(|s| matches!(s.state, SlotState::Done(_)));
                if all_done || self.env.cancel.is_cancelled() {
                    break;
                }
            }
            tokio::select! {
                biased;
                _ = self.env.cancel.cancelled() => {
                    self.running.abort_all();
                    break;
                }
                joined = self.running.join_next() => {
                    if let Some(Ok((index, block))) = joined {
                        self.slots[index].state = SlotState::Done(block);
                    }
                }
            }
        }
        let events = self.env.session.events.clone();
        self.slots
            .into_iter()
            .map(|slot| match slot.state {
                SlotState::Done(block) => block,
                SlotState::Waiting(_) | SlotState::Running => {
                    events.send(Event::ToolCallFinished {
                        call_id: slot.call_id.clone(),
                        is_error: true,
                        display: Display::Text {
                            text: INTERRUPTED_MESSAGE.to_string(),
                        },
                        outcome: None,
                    });
                    error_result(slot.call_id, INTERRUPTED_MESSAGE.to_string())
                }
            })
            .collect()
    }

    /// Let finished calls land while the model keeps streaming: resolves when one call ends.
    /// Pending forever when nothing runs, so it can sit in a `select!` beside the stream.
    pub async fn next_finished(&mut self) {
        match self.running.join_next().await {
            Some(Ok((index, block))) => {
                self.slots[index].state = SlotState::Done(block);
                self.pump();
            }
            Some(Err(_)) => {}
            None => std::future::pending::<()>().await,
        }
    }
}

fn error_result(tool_use_id: String, content: String) -> ContentBlock {
    ContentBlock::ToolResult {
        tool_use_id,
        content: content.into(),
        is_error: true,
    }
}

/// One call through validation, preview, hooks, permission, execution and result shaping.
async fn run_call(env: Arc<CallEnv>, call_id: String, call: PreparedCall) -> ContentBlock {
    let events = env.session.events.clone();
    let shown = Arc::clone(&env.shown);
    let PreparedCall {
        tool,
        input,
        raw,
        title,
        called_as,
    } = call;
    let finish = |is_error: bool, content: ToolResultContent, display: Display, outcome| {
        shown.lock().unwrap_or_else(|e| e.into_inner()).push((
            call_id.clone(),
            display.clone(),
            outcome,
        ));
        events.send(Event::ToolCallFinished {
            call_id: call_id.clone(),
            is_error,
            display,
            outcome,
        });
        ContentBlock::ToolResult {
            tool_use_id: call_id.clone(),
            content,
            is_error,
        }
    };
    let fail = |message: String, outcome| {
        finish(
            true,
            message.clone().into(),
            Display::Text { text: message },
            outcome,
        )
    };
    let mut ctx = ToolContext {
        session: Arc::clone(&env.session),
        call_id: call_id.clone(),
        cancel: env.cancel.child_token(),
        progress: ProgressSender::new(call_id.clone(), events.clone()),
        preview: None,
        content_override: None,
        answers: None,
        deferred: env.deferred.clone(),
        called_as,
        conflict: None,
    };

    let mut call = Checked::new(&env, &tool, input, raw);
    // Permission before information: a refusal that rests on the paths alone comes before
    // the tool's own checks and preview read anything, so it reads the same whether or not
    // the file exists.
    if let Some(message) = env
        .gate
        .check_before_io(&call.info(tool.as_ref(), &call_id, &title))
    {
        return fail(message, Some(CallOutcome::Denied));
    }
    // A validation or preview error waits for the full check: a denial (by a hook, say)
    // still wins over it.
    call.prepare(&tool, &ctx).await;
    let hook_call = HookCall {
        tool: tool.name(),
        call_id: &call_id,
        input: &call.raw,
    };
    let mode = env.gate.mode_for(&env.session.conversation);
    // The notes' stage 3: the PreToolUse hooks and the call's analysis (paths, shell
    // commands) start together; the gate then weighs the hooks' answer against the facts.
    let info = call.info(tool.as_ref(), &call_id, &title);
    let (hook, analysed) = alongside(
        env.hooks.pre_tool_use(hook_call, &env.session, mode),
        || env.gate.analyse(&info),
    )
    .await;
    let verdict = match &hook.updated_input {
        None => env.gate.check_analysed(&info, analysed, &hook),
        // A PreToolUse hook may replace the input: the call then runs with the new one,
        // checked and previewed like the original.
        Some(new_raw) => {
            drop(analysed);
            let parsed = match tool.parse(new_raw) {
                Ok(p) => p,
                Err(e) => {
                    let message = format!(
                        "A PreToolUse hook replaced the input with an invalid one: {}",
                        e.message
                    );
                    return fail(message, Some(CallOutcome::Denied));
                }
            };
            call = Checked::new(&env, &tool, parsed, new_raw.clone());
            if let Some(message) =
                env.gate
                    .check_before_io(&call.info(tool.as_ref(), &call_id, &title))
            {
                return fail(message, Some(CallOutcome::Denied));
            }
            call.prepare(&tool, &ctx).await;
            env.gate
                .check(&call.info(tool.as_ref(), &call_id, &title), &hook)
        }
    };
    let mut outcome = None;
    match verdict {
        GateOutcome::Deny { message } => return fail(message, Some(CallOutcome::Denied)),
        _ if call.invalid.is_some() => {
            env.gate.withdraw(&call_id);
            let error = call.invalid.take().unwrap_or_else(|| ToolError::new(""));
            // A conflict with an outside change may be the person's to resolve.
            match conflict::resolve(&env, &tool, &mut call, &ctx, &title, error).await {
                Ok((resolution, answer)) => {
                    ctx.conflict = Some(resolution);
                    outcome = Some(answer);
                }
                Err((message, answer)) => return fail(message, answer),
            }
        }
        GateOutcome::Allow => {}
        GateOutcome::Ask(request) => {
            let answered = ask(&env, &tool, &mut call, *request, &ctx).await;
            let Some((request, decision)) = answered else {
                return fail(INTERRUPTED_MESSAGE.into(), None);
            };
            let effect = env.gate.apply_decision(&request, &decision);
            if let Some(mode) = effect.new_mode {
                events.send(Event::ModeChanged { mode });
            }
            if !effect.allow {
                let message = effect
                    .message
                    .unwrap_or_else(|| "The user denied this tool call.".into());
                return fail(message, Some(effect.outcome));
            }
            match decision {
                Decision::AllowEdited {
                    content,
                    note,
                    files,
                    ..
                } => {
                    ctx.content_override = Some(ContentOverride {
                        content,
                        note,
                        files,
                    });
                }
                Decision::Answers { answers } => ctx.answers = Some(answers),
                _ => {}
            }
            outcome = Some(effect.outcome);
        }
    }
    let Checked {
        input,
        raw,
        preview,
        ..
    } = call;
    ctx.preview = preview;
    // The files as they are before a tool that may write (Bash included): recorded, and
    // waited for, before it runs.
    if !tool.is_read_only(&input) && env.session.checkpoints.is_enabled() {
        let label = format!("before {} {call_id}", tool.name());
        tokio::select! {
            biased;
            _ = env.cancel.cancelled() => return fail(INTERRUPTED_MESSAGE.into(), outcome),
            r = env.session.checkpoints.record(label) => {
                if let Err(e) = r {
                    tracing::warn!("checkpoint before {call_id} not recorded: {e}");
                }
            }
        }
    }

    let max_chars = tool.max_result_chars();
    events.send(Event::ToolCallRunning {
        call_id: call_id.clone(),
    });
    let result = tokio::select! {
        biased;
        _ = env.cancel.cancelled() => return fail(INTERRUPTED_MESSAGE.into(), outcome),
        r = tool.call(input, &ctx) => r,
    };
    match result {
        Ok(mut output) => {
            if !output.is_error {
                apply_effects(&env, &output.effects);
            }
            let hook_call = HookCall {
                tool: tool.name(),
                call_id: &call_id,
                input: &raw,
            };
            env.hooks
                .post_tool_use(
                    hook_call,
                    &env.session,
                    env.gate.mode_for(&env.session.conversation),
                    &mut output,
                )
                .await;
            // Text is limited (spilled) per the tool's limit; images pass whole unless the
            // API would refuse them, and then people see why instead of the attachment line.
            let shaped = spill::shape(
                output.content,
                max_chars,
                &env.session.data_dir.join("spill"),
                &call_id,
            );
            let display = if shaped.dropped.is_empty() {
                output.display
            } else {
                Display::Text {
                    text: shaped.dropped.join("\n"),
                }
            };
            finish(output.is_error, shaped.content, display, outcome)
        }
        Err(e) => fail(e.message, outcome),
    }
}

/// A call's input (parsed once) with what is known about it before the permission check.
struct Checked {
    input: ParsedInput,
    raw: Value,
    accesses: Vec<Access>,
    preview: Option<Preview>,
    /// The validation or preview error, reported unless the call is denied.
    invalid: Option<ToolError>,
    /// The conversation making the call.
    conversation: String,
}

impl Checked {
    fn new(env: &CallEnv, tool: &ToolHandle, input: ParsedInput, raw: Value) -> Checked {
        Checked {
            accesses: tool.accesses(&input, &env.session),
            input,
            raw,
            preview: None,
            invalid: None,
            conversation: env.session.conversation.clone(),
        }
    }

    /// Validate and preview (a preview only for valid input).
    async fn prepare(&mut self, tool: &ToolHandle, ctx: &ToolContext) {
        let checked = match tool.validate(&self.input, ctx).await {
            Ok(()) => tool.preview(&self.input, ctx).await,
            Err(e) => Err(e),
        };
        match checked {
            Ok(p) => self.preview = p,
            Err(e) => self.invalid = Some(e),
        }
        // A change to several files (a rename) writes each of them: the gate and the prompt
        // see every one, not only the file the input names.
        if let Some(Preview {
            display: Display::Diffs { files },
            ..
        }) = &self.preview
        {
            for f in files {
                let write = Access::Write(f.path.clone());
                if !self.accesses.contains(&write) {
                    self.accesses.push(write);
                }
            }
        }
    }

    fn info<'a>(&'a self, tool: &'a dyn DynTool, call_id: &'a str, title: &'a str) -> CallInfo<'a> {
        CallInfo {
            call_id,
            conversation: &self.conversation,
            tool,
            input: &self.input,
            raw_input: &self.raw,
            title,
            accesses: &self.accesses,
            preview: self.preview.as_ref(),
        }
    }
}

/// What the core does for a successful call's effects.
fn apply_effects(env: &CallEnv, effects: &[Effect]) {
    for effect in effects {
        match effect {
            Effect::EnterPlanMode => {
                env.gate.set_mode(PermissionMode::Plan);
                env.session.events.send(Event::ModeChanged {
                    mode: PermissionMode::Plan,
                });
            }
            Effect::Todos(todos) => {
                env.session.set_todos(todos.clone());
                env.session.events.send(Event::TodosUpdated {
                    todos: todos.clone(),
                });
            }
            Effect::ForTurn {
                allowed_tools,
                model,
            } => {
                let conversation = &env.session.conversation;
                for message in env.gate.allow_for_turn(conversation, allowed_tools) {
                    env.session.events.send(Event::Notice { message });
                }
                if model.is_some() {
                    env.session.set_turn_model(model.clone());
                }
            }
            Effect::LoadTools(names) => env.deferred.load(names),
        }
    }
}

/// A tool's kind as a client sees it ([`CallKind`]).
fn call_kind(tool: &dyn crate::tools::DynTool) -> CallKind {
    use crate::tools::ToolKind;
    match tool.kind() {
        _ if tool.name() == crate::tools::agent_tool::NAME => CallKind::Agent,
        ToolKind::Read if tool.searches() => CallKind::Search,
        ToolKind::Read => CallKind::Read,
        ToolKind::Edit => CallKind::Edit,
        ToolKind::Execute => CallKind::Execute,
        ToolKind::Fetch => CallKind::Fetch,
        ToolKind::Plan => CallKind::Plan,
        ToolKind::Interact => CallKind::Interact,
        ToolKind::Mcp => CallKind::Mcp,
        ToolKind::Other => CallKind::Other,
    }
}
