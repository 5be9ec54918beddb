//! The query loop. [`Core::run`] owns the conversation and serves [`Op`]s; a submitted prompt
//! becomes a turn: build the request, stream the answer (tools start while it streams), send
//! the tool results back, and loop until the model ends its turn, `--max-turns` is reached, or
//! the person interrupts.
//!
//! Invariant: the message list is always valid for the next request — every `tool_use` block
//! has a `tool_result` in the next user message, whatever happened (denial, error, interrupt,
//! broken stream).

use std::collections::VecDeque;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::agent::attachments::attachment_block;
use crate::agent::conversation::{Conversation, State};
use crate::agent::executor::CallEnv;
use crate::agent::invoke::invoke;
use crate::agent::running_tasks::RunningTasks;
use crate::agent::services::SessionServices;
use crate::agent::tool_set::ToolSet;
use crate::agent::usage::{UsageMeter, lock};
use crate::config::model::ModelPick;
use crate::llm::{ContentBlock, Message};
use crate::protocol::{
    CommandInfo, Event, Op, PermissionMode, PromptAttachment, SessionInfo, TurnEnd, Usage,
};
use crate::session::checkpoints::prompt_label;
use crate::session::context::{EventSender, SessionContext};
use crate::session::transcript::Record;

mod request;

/// How many times in a row a Stop hook may send the model back to work in one turn.
const MAX_FORCED_CONTINUATIONS: u32 = 5;

/// How one model request ended.
pub(super) enum Step {
    /// Tools ran; their results are in the conversation: ask the model again.
    ToolsRan,
    /// Nothing happened: make the same request again (the endpoint refused deferred tools and
    /// the session switched to sending them whole).
    Again,
    /// The model ended its turn with this text.
    Done(String),
    Interrupted,
    Failed(String),
}

/// What the session's core starts with that its sub-agents' cores do not have.
pub(crate) struct Opening {
    /// A session to take over: what `--resume` read, whether the mode was given on the
    /// command line (it then wins), and whether this is a fork (its history is written to the
    /// new transcript).
    pub resume: Option<(crate::session::resume::Resumed, bool, bool)>,
    /// The sub-agents there are (name, description), for the client.
    pub agents: Vec<(String, String)>,
    /// The session's background agents still running (`/tasks` stops one with
    /// [`Op::StopTask`]).
    pub background: Arc<RunningTasks>,
}

/// One conversation with the model: the session's, or a sub-agent's run.
pub(crate) struct Core {
    /// What the session's parts share: client, gate, hooks, settings, commands, ….
    pub services: Arc<SessionServices>,
    /// The conversation's model (`/model` changes the session's).
    pub model: ModelPick,
    pub session: Arc<SessionContext>,
    pub tools: ToolSet,
    pub system: String,
    pub conversation: Conversation,
    pub usage: UsageMeter,
    pub max_turns: Option<u32>,
    /// How hard the model reasons in this conversation (a custom sub-agent's `effort`).
    pub effort: Option<crate::llm::Effort>,
    /// The hooks of its tool calls and SubagentStop: the session's, and a custom agent's own.
    pub hooks: Arc<crate::hooks::Hooks>,
    /// Turns started so far (the next turn's id is one more).
    pub turns_started: u64,
    /// What undoing the last rewind puts back; forgotten when the next prompt is sent.
    pub rewind_undo: Option<crate::session::rewind::RewindUndo>,
    /// A sub-agent's temporary git worktree (`isolation: worktree`), ended with its run.
    pub worktree: Option<super::worktree::AgentWorktree>,
    /// A custom sub-agent's own MCP servers, started when its run starts.
    pub own_servers: Option<super::subagent_servers::OwnServers>,
}

impl Core {
    pub(super) fn events(&self) -> &EventSender {
        &self.session.events
    }

    /// The session's gate (the mode, rules and grants; sub-agents share it).
    pub(super) fn gate(&self) -> &crate::permissions::PermissionGate {
        &self.services.gate
    }

    /// The session's mode, todo list and loaded deferred tools, as a state record holds them.
    pub(super) fn state_now(&self) -> State {
        (
            self.gate().mode(),
            self.session.todos(),
            self.tools.deferral.tools.loaded(),
        )
    }

    pub async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>, opening: Opening) {
        let services = Arc::clone(&self.services);
        self.events().send(Event::SessionConfigured(SessionInfo {
            session_id: self.session.session_id.clone(),
            model: self.model.id.clone(),
            model_label: self.model_label(),
            provider: services.client.provider().as_str().to_string(),
            cwd: self.session.cwd(),
            tools: self.tools.registry.names(),
            mode: services.gate.mode(),
            demo: services.demo,
            commands: services
                .commands
                .iter()
                .map(|c| CommandInfo {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    argument_hint: c.argument_hint.clone(),
                    skill: false,
                    aliases: Vec::new(),
                })
                .chain(
                    services
                        .skills
                        .iter()
                        .filter(|s| s.user_invocable)
                        .map(|s| CommandInfo {
                            name: s.name.clone(),
                            description: s.description.clone(),
                            argument_hint: s.argument_hint.clone(),
                            skill: true,
                            aliases: (s.dir_name != s.name)
                                .then(|| s.dir_name.clone())
                                .into_iter()
                                .collect(),
                        }),
                )
                .collect(),
            memory_files: services.memory_files(),
            model_choices: services.aliases.choices(),
            auto_compact_pct: services.settings.auto_compact_pct,
            agents: opening.agents,
        }));
        let source = match opening.resume {
            Some((resumed, keep_mode, fork)) => {
                self.restore(resumed, keep_mode);
                if fork {
                    let state = self.state_now();
                    self.conversation.write_history(state);
                }
                "resume"
            }
            None => "startup",
        };
        let start = services
            .hooks
            .session_start(&self.session, services.gate.mode(), source)
            .await;
        for context in start.additional_context {
            self.session.remind(context);
        }
        // The first checkpoint stores every file (seconds in a large tree): taken while the
        // person types, so the first prompt's is a quick delta.
        self.session
            .checkpoints
            .record_in_background(format!("session {source}"));
        let events = self.events().clone();
        let gate = Arc::clone(&services.gate);
        let decisions = services.decisions.clone();
        let background = opening.background;
        let mut queue: VecDeque<(String, Vec<PromptAttachment>)> = VecDeque::new();
        let mut ops_closed = false;
        let session = Arc::clone(&self.session);
        let wakes = services.wake_when_idle;
        let mut queue_wake = false;
        loop {
            // `None`: background work ended while idle, and its notice goes by itself.
            let next = match queue.pop_front() {
                Some(p) => Some(p),
                None if std::mem::take(&mut queue_wake) => None,
                None => match tokio::select! {
                    biased;
                    op = ops.recv() => op,
                    () = session.background_woke(), if wakes => {
                        if session.take_wake() {
                            queue_wake = true;
                        }
                        continue;
                    }
                } {
                    Some(Op::Submit { text }) => Some((text, Vec::new())),
                    Some(Op::SubmitWith { text, attachments }) => Some((text, attachments)),
                    Some(Op::SetMode { mode }) => {
                        gate.set_mode(mode);
                        events.send(Event::ModeChanged { mode });
                        continue;
                    }
                    Some(Op::PermissionDecision {
                        request_id,
                        decision,
                    }) => {
                        decisions.resolve(request_id, decision);
                        continue;
                    }
                    // The host answers these; one that got here has nothing to do.
                    Some(Op::Interrupt | Op::Host(_)) => continue,
                    Some(Op::StopTask { id }) => {
                        background.stop(&id, &events);
                        continue;
                    }
                    Some(Op::ReadTask { id }) => {
                        events.send(background.output(&id, &session.agent_tasks));
                        continue;
                    }
                    Some(Op::SetModel { model }) => {
                        self.set_model(&model);
                        continue;
                    }
                    Some(Op::Clear) => {
                        self.clear().await;
                        continue;
                    }
                    Some(Op::Resume { path }) => {
                        self.resume_from(&path).await;
                        continue;
                    }
                    Some(Op::RewindList) => {
                        self.rewind_points().await;
                        continue;
                    }
                    Some(Op::Rewind {
                        target,
                        code,
                        conversation,
                        confirmed,
                    }) => {
                        self.rewind(target, code, conversation, confirmed).await;
                        continue;
                    }
                    Some(Op::ContextReport) => {
                        self.report_context();
                        continue;
                    }
                    Some(Op::Compact { instructions }) => {
                        self.compact_now(instructions, &mut ops).await;
                        continue;
                    }
                    Some(Op::Shutdown) | None => break,
                },
            };
            let cancel = CancellationToken::new();
            let mut shutdown = false;
            let mut next_model = None;
            {
                let turn = self.run_turn_or_wake(next, cancel.clone());
                tokio::pin!(turn);
                loop {
                    tokio::select! {
                        biased;
                        op = ops.recv(), if !ops_closed => match op {
                            Some(Op::Interrupt) => cancel.cancel(),
                            Some(Op::Host(_)) => {}
                            Some(Op::PermissionDecision { request_id, decision }) => {
                                decisions.resolve(request_id, decision);
                            }
                            Some(Op::SetMode { mode }) => {
                                gate.set_mode(mode);
                                events.send(Event::ModeChanged { mode });
                            }
                            Some(Op::Submit { text }) => queue.push_back((text, Vec::new())),
                            Some(Op::SubmitWith { text, attachments }) => {
                                queue.push_back((text, attachments))
                            }
                            Some(Op::StopTask { id }) => background.stop(&id, &events),
                            Some(Op::ReadTask { id }) => {
                                events.send(background.output(&id, &session.agent_tasks))
                            }
                            // The turn's requests keep their model; the next turn uses this one.
                            Some(Op::SetModel { model }) => next_model = Some(model),
                            // Clearing mid-turn would cut the turn's messages in half: refuse.
                            Some(Op::Clear) => events.send(Event::Notice {
                                message: "Cannot clear while the model is working; interrupt first."
                                    .into(),
                            }),
                            Some(Op::ContextReport) => events.send(Event::Notice {
                                message: "/context works between turns.".into(),
                            }),
                            Some(Op::Compact { .. }) => events.send(Event::Notice {
                                message: "Cannot compact while the model is working; wait or \
                                          interrupt first."
                                    .into(),
                            }),
                            Some(Op::Resume { .. }) => events.send(Event::Notice {
                                message: "Cannot resume another session while the model is \
                                          working; interrupt first."
                                    .into(),
                            }),
                            Some(Op::RewindList | Op::Rewind { .. }) => {
                                events.send(Event::Notice {
                                    message: "Cannot rewind while the model is working; wait \
                                              or interrupt first."
                                        .into(),
                                })
                            }
                            Some(Op::Shutdown) => {
                                cancel.cancel();
                                shutdown = true;
                            }
                            None => ops_closed = true,
                        },
                        () = &mut turn => break,
                    }
                }
            }
            if let Some(model) = next_model {
                self.set_model(&model);
            }
            if shutdown {
                break;
            }
        }
        // A checkpoint still being written completes before the session ends.
        self.session.checkpoints.settle().await;
        services
            .hooks
            .session_end(&self.session, services.gate.mode(), "exit")
            .await;
    }

    /// The model as the person sees it: the name they chose, with the id it stands for (empty
    /// when the name is the id).
    fn model_label(&self) -> String {
        if self.model.name == self.model.id {
            return String::new();
        }
        match &self.model.plan_id {
            Some(plan) => format!(
                "{} ({plan} planning, {} otherwise)",
                self.model.name, self.model.id
            ),
            None => format!("{} ({})", self.model.name, self.model.id),
        }
    }

    /// `/model name`: use `name` (an alias or an id) from the next request on.
    fn set_model(&mut self, name: &str) {
        if name.trim().is_empty() {
            return;
        }
        self.model = self.services.aliases.pick(name);
        self.events().send(Event::ModelChanged {
            model: self.model.id.clone(),
            label: self.model_label(),
        });
    }

    /// The model id for the next request: the turn's (a command's or skill's `model`), else
    /// the session's for the current mode (`opusplan` plans with opus).
    pub(super) fn request_model(&self) -> String {
        if let Some(name) = self.session.turn_model() {
            return self.services.aliases.pick(&name).id;
        }
        let planning = self.gate().mode() == PermissionMode::Plan;
        self.model.id_for(planning).to_string()
    }

    fn call_env(&self, cancel: CancellationToken) -> Arc<CallEnv> {
        Arc::new(CallEnv {
            session: Arc::clone(&self.session),
            gate: Arc::clone(&self.services.gate),
            hooks: Arc::clone(&self.hooks),
            registry: self.tools.registry.clone(),
            decisions: self.services.decisions.clone(),
            deferred: self.tools.deferral.tools.clone(),
            offers_overwrite: self.services.offers_overwrite,
            cancel,
            shown: Default::default(),
        })
    }

    /// Drop the conversation (the model starts afresh); SessionStart hooks run with `clear`.
    async fn clear(&mut self) {
        self.conversation.messages.clear();
        // A resume (and `/rewind`) starts after this point, as the model does.
        self.conversation
            .transcript
            .record(&Record::Rewind { to: None });
        self.rewind_undo = None;
        self.tools.deferral.tools.restore(Vec::new());
        self.tools.deferral.forget_announcements();
        self.session.take_reminders();
        let start = self
            .services
            .hooks
            .session_start(&self.session, self.gate().mode(), "clear")
            .await;
        for context in start.additional_context {
            self.session.remind(context);
        }
        self.events().send(Event::Notice {
            message: "Conversation cleared: the model starts afresh.".into(),
        });
    }

    /// End turn `turn_id` before any request, saying why.
    fn fail_turn(&self, turn_id: u64, message: String) {
        self.events().send(Event::Error { message });
        self.events().send(Event::TurnFinished {
            turn_id,
            end: TurnEnd::Failed,
            text: String::new(),
            num_turns: 0,
        });
    }

    async fn run_turn(
        &mut self,
        prompt: String,
        attachments: Vec<PromptAttachment>,
        cancel: CancellationToken,
    ) {
        self.turns_started += 1;
        let turn_id = self.turns_started;
        self.events().send(Event::TurnStarted { turn_id });
        // `/mcp__server__prompt args`: the server's prompt goes to the model instead.
        let catalog = self.tools.registry.late().and_then(|l| l.catalog());
        let server_prompt =
            match super::mcp_invoke::expand_prompt(&prompt, catalog.as_deref()).await {
                Some(Ok(text)) => Some(text),
                Some(Err(message)) => {
                    self.fail_turn(turn_id, message);
                    return;
                }
                None => None,
            };
        // `/nosuch` is not sent: the person is told, with the closest names.
        let (commands, skills) = (&self.services.commands, &self.services.skills);
        if server_prompt.is_none()
            && let Some(message) = super::invoke::unknown(&prompt, commands, skills)
        {
            self.fail_turn(turn_id, message);
            return;
        }
        // The files as they are before the prompt, recorded while the request goes out (a
        // writing tool waits for it); `/rewind` goes back to it.
        let prompt_id = uuid::Uuid::new_v4().simple().to_string();
        self.session
            .checkpoints
            .record_in_background(prompt_label(&prompt_id));
        self.rewind_undo = None;
        let typed = prompt.clone();
        let verdict = self
            .services
            .hooks
            .user_prompt_submit(&self.session, self.gate().mode(), &prompt)
            .await;
        if let Some(reason) = verdict.blocked {
            self.fail_turn(
                turn_id,
                format!("A UserPromptSubmit hook blocked the prompt: {reason}"),
            );
            return;
        }
        let env = self.call_env(cancel.child_token());
        let services = Arc::clone(&self.services);
        let invoked = match server_prompt {
            Some(text) => Some(super::invoke::Invoked {
                prompt: text,
                ..Default::default()
            }),
            None => invoke(&prompt, &services.commands, &services.skills, env).await,
        };
        let prompt = match invoked {
            Some(invoked) => {
                self.session.set_turn_model(invoked.model);
                invoked.prompt
            }
            None => prompt,
        };
        let (mut attached, mut notices) =
            super::attachments::expand(&prompt, &self.session, &services.gate).await;
        let (resources, more) =
            super::mcp_invoke::attach_resources(&prompt, catalog.as_deref()).await;
        attached.extend(resources);
        notices.extend(more);
        for message in notices {
            self.events().send(Event::Notice { message });
        }
        let mut content = vec![ContentBlock::Text { text: prompt }];
        content.extend(attachments.into_iter().map(attachment_block));
        content.extend(attached);
        content.extend(
            verdict
                .additional_context
                .into_iter()
                .map(|c| ContentBlock::Text {
                    text: format!("<system-reminder>\n{c}\n</system-reminder>"),
                }),
        );
        self.keep_within_window(&cancel).await;
        self.conversation.transcript.record(&Record::Prompt {
            id: prompt_id,
            text: typed,
        });
        self.push_user(content);
        self.finish_turn(turn_id, &cancel).await;
    }

    /// A turn the model is sent by itself: background work ended while the session was idle,
    /// and its notice (queued as a reminder) is the request's only new content, as Claude Code
    /// sends it.
    async fn run_wake_turn(&mut self, cancel: CancellationToken) {
        self.turns_started += 1;
        let turn_id = self.turns_started;
        self.events().send(Event::TurnStarted { turn_id });
        self.keep_within_window(&cancel).await;
        self.finish_turn(turn_id, &cancel).await;
    }

    async fn run_turn_or_wake(
        &mut self,
        next: Option<(String, Vec<PromptAttachment>)>,
        cancel: CancellationToken,
    ) {
        match next {
            Some((prompt, attachments)) => self.run_turn(prompt, attachments, cancel).await,
            None => self.run_wake_turn(cancel).await,
        }
    }

    /// The rest of a turn whose input is in the conversation: requests until the model is
    /// done, then the turn's end (checkpoint, `TurnFinished`).
    async fn finish_turn(&mut self, turn_id: u64, cancel: &CancellationToken) {
        let services = Arc::clone(&self.services);
        let cancel = cancel.clone();
        let mut num_turns = 0;
        let mut forced_continuations = 0;
        let mut text = String::new();
        let end = loop {
            if self.max_turns.is_some_and(|max| num_turns >= max) {
                break TurnEnd::MaxTurns;
            }
            num_turns += 1;
            match self.one_request(&cancel).await {
                Step::ToolsRan => continue,
                Step::Again => {
                    num_turns -= 1;
                    continue;
                }
                Step::Done(t) => {
                    // A Stop hook may make the model go on, with its reason as the next input.
                    let stop = services
                        .hooks
                        .stop(
                            &self.session,
                            services.gate.mode(),
                            forced_continuations > 0,
                        )
                        .await;
                    if let Some(reason) = stop.blocked
                        && forced_continuations < MAX_FORCED_CONTINUATIONS
                    {
                        forced_continuations += 1;
                        self.push_user(vec![ContentBlock::Text { text: reason }]);
                        continue;
                    }
                    text = t;
                    break TurnEnd::Completed;
                }
                Step::Interrupted => break TurnEnd::Interrupted,
                Step::Failed(message) => {
                    self.events().send(Event::Error { message });
                    break TurnEnd::Failed;
                }
            }
        };
        if end != TurnEnd::Completed {
            text = self.conversation.last_assistant_text();
        }
        self.count_subagent_usage();
        // What a command or skill allowed, and its model, end with the turn.
        services.gate.end_turn(&self.session.conversation);
        self.session.set_turn_model(None);
        // The files as the turn left them: a file that differs from this later was changed
        // outside cairn, and a rewind asks before undoing that.
        if self.session.checkpoints.is_enabled()
            && let Err(e) = self
                .session
                .checkpoints
                .record(format!("after turn {turn_id}"))
                .await
        {
            tracing::warn!("checkpoint after turn {turn_id} not recorded: {e}");
            self.events().send(Event::Notice {
                message: format!("The checkpoint after this turn was skipped: {e}"),
            });
        }
        // Checkpoints skipped or pruned during the turn: the person hears of it.
        for message in self.session.checkpoints.take_notices() {
            self.events().send(Event::Notice { message });
        }
        self.events().send(Event::TurnFinished {
            turn_id,
            end,
            text,
            num_turns,
        });
    }

    /// `/compact` while idle: an Interrupt (Esc) cancels it.
    async fn compact_now(
        &mut self,
        instructions: Option<String>,
        ops: &mut mpsc::UnboundedReceiver<Op>,
    ) {
        let cancel = CancellationToken::new();
        let watch = async {
            loop {
                match ops.recv().await {
                    Some(Op::Interrupt) | Some(Op::Shutdown) | None => break,
                    Some(_) => {}
                }
            }
        };
        let instructions = instructions.filter(|i| !i.trim().is_empty());
        tokio::select! {
            () = self.compact_manual(instructions, &cancel) => {}
            () = watch => cancel.cancel(),
        }
    }

    /// Count a request of `model` that used `usage`: in the totals, the transcript, a Usage
    /// event; a sub-agent's also for the session to count.
    pub(super) fn record_usage(&mut self, model: &str, usage: &Usage) {
        if *usage == Usage::default() {
            return;
        }
        if self.usage.reports_to_session {
            lock(&self.services.subagent_usage).push((model.to_string(), *usage));
        }
        self.conversation.transcript.record(&Record::Usage {
            model: model.to_string(),
            usage: *usage,
        });
        self.usage.add_request(model, usage);
        let event = self.usage.event(*usage, model.to_string(), model);
        self.events().send(event);
    }

    /// Count the requests of sub-agents since the last time (the session's core only): in the
    /// totals, the transcript (so a resume counts them too) and a Usage event each (per model
    /// in `/cost`).
    pub(super) fn count_subagent_usage(&mut self) {
        if self.usage.reports_to_session {
            return;
        }
        let spent = std::mem::take(&mut *lock(&self.services.subagent_usage));
        for (model, usage) in spent {
            self.conversation.transcript.record(&Record::Usage {
                model: model.clone(),
                usage,
            });
            self.usage.add(&model, &usage);
            let event = self.usage.event(usage, model, &self.request_model());
            self.events().send(event);
        }
    }

    /// Append user content (see [`Conversation::push_user`]).
    pub(super) fn push_user(&mut self, content: Vec<ContentBlock>) {
        let state = self.state_now();
        self.conversation.push_user(content, state);
    }

    pub(super) fn push_message(&mut self, message: Message) {
        let state = self.state_now();
        self.conversation.push(message, state);
    }
}
