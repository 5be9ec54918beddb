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

use crate::agent::executor::{CallEnv, PendingDecisions};
use crate::agent::invoke::invoke;
use crate::config::model::{Aliases, ModelPick};
use crate::hooks::Hooks;
use crate::llm::retry::RetryPolicy;
use crate::llm::{ContentBlock, Message, ModelClient, Role, pricing};
use crate::permissions::PermissionGate;
use crate::protocol::{CommandInfo, Event, Op, PermissionMode, SessionInfo, TurnEnd, Usage};
use crate::session::checkpoints::prompt_label;
use crate::session::context::{EventSender, SessionContext};
use crate::session::transcript::{Record, Transcript};
use crate::tools::ToolRegistry;

mod request;

/// How many times in a row a Stop hook may send the model back to work in one turn.
const MAX_FORCED_CONTINUATIONS: u32 = 5;

/// Each request of a sub-agent: the model and its usage, for the session to count.
pub(crate) type UsageSink = Arc<std::sync::Mutex<Vec<(String, Usage)>>>;

pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

/// What a state record holds: the mode, the todo list and the loaded deferred tools.
pub(crate) type State = (PermissionMode, Vec<crate::protocol::Todo>, Vec<String>);

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

pub(crate) struct Core {
    pub client: Arc<dyn ModelClient>,
    /// The session's model (`/model` changes it).
    pub model: ModelPick,
    /// What the names `/model` accepts stand for.
    pub aliases: Aliases,
    pub session: Arc<SessionContext>,
    pub gate: Arc<PermissionGate>,
    pub hooks: Arc<Hooks>,
    pub registry: ToolRegistry,
    pub decisions: PendingDecisions,
    pub system: String,
    pub messages: Vec<Message>,
    pub max_turns: Option<u32>,
    pub retry: RetryPolicy,
    pub max_tokens: u32,
    pub total_usage: Usage,
    pub total_cost: f64,
    pub turn_counter: u64,
    /// Deferred tools: which, which are loaded, how requests carry them.
    pub deferral: super::deferral::Deferral,
    /// Counts the changes of the registry's late tools (MCP servers coming and going).
    pub registry_version: u64,
    pub transcript: Transcript,
    pub demo: bool,
    /// The person's own slash commands.
    pub commands: Vec<crate::commands::CustomCommand>,
    /// The memory files in the system prompt (scope, path).
    pub memory_files: Vec<(String, std::path::PathBuf)>,
    /// Auto-compaction threshold, percent of the context window (0: never).
    pub auto_compact_pct: u8,
    /// Tokens of context the last request used (input, cache, output).
    pub last_context: u64,
    /// How much of the system prompt is the memory files (for `/context`).
    pub memory_chars: usize,
    /// The mode, todo list and loaded deferred tools last written to the transcript.
    pub last_state: Option<State>,
    /// A session to take over when the core starts: what `--resume` read, whether the mode
    /// was given on the command line (it then wins), and whether this is a fork (its history
    /// is written to the new transcript).
    pub resume: Option<(crate::session::resume::Resumed, bool, bool)>,
    /// A sub-agent's: where its requests' usage goes, for the session to count.
    pub usage_sink: Option<UsageSink>,
    /// The session's: the usage its sub-agents reported, not counted yet.
    pub subagent_usage: UsageSink,
    /// The sub-agents there are (name, description), for the client.
    pub agents: Vec<(String, String)>,
    /// The person's skills (`/name args` loads one).
    pub skills: Vec<crate::commands::skills::Skill>,
    /// What undoing the last rewind puts back; forgotten when the next prompt is sent.
    pub rewind_undo: Option<crate::session::rewind::RewindUndo>,
    /// The session's background agents still running (`/tasks` stops one with
    /// [`Op::StopTask`]).
    pub background: Arc<super::running_tasks::RunningTasks>,
}

impl Core {
    pub(super) fn events(&self) -> &EventSender {
        &self.session.events
    }

    pub async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Op>) {
        self.events().send(Event::SessionConfigured(SessionInfo {
            session_id: self.session.session_id.clone(),
            model: self.model.id.clone(),
            model_label: self.model_label(),
            provider: self.client.provider().as_str().to_string(),
            cwd: self.session.cwd(),
            tools: self.registry.names(),
            mode: self.gate.mode(),
            demo: self.demo,
            commands: self
                .commands
                .iter()
                .map(|c| CommandInfo {
                    name: c.name.clone(),
                    description: c.description.clone(),
                    argument_hint: c.argument_hint.clone(),
                    skill: false,
                })
                .chain(self.skills.iter().map(|s| CommandInfo {
                    name: s.name.clone(),
                    description: s.description.clone(),
                    argument_hint: None,
                    skill: true,
                }))
                .collect(),
            memory_files: self.memory_files.clone(),
            model_choices: self.aliases.choices(),
            auto_compact_pct: self.auto_compact_pct,
            agents: self.agents.clone(),
        }));
        let source = match self.resume.take() {
            Some((resumed, keep_mode, fork)) => {
                self.restore(resumed, keep_mode);
                if fork {
                    self.write_history();
                }
                "resume"
            }
            None => "startup",
        };
        let start = self
            .hooks
            .session_start(&self.session, self.gate.mode(), source)
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
        let gate = Arc::clone(&self.gate);
        let decisions = self.decisions.clone();
        let background = Arc::clone(&self.background);
        let mut queue: VecDeque<String> = VecDeque::new();
        let mut ops_closed = false;
        loop {
            let prompt = match queue.pop_front() {
                Some(p) => p,
                None => match ops.recv().await {
                    Some(Op::Submit { text }) => text,
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
                let turn = self.run_turn(prompt, cancel.clone());
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
                            Some(Op::Submit { text }) => queue.push_back(text),
                            Some(Op::StopTask { id }) => background.stop(&id, &events),
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
        self.hooks
            .session_end(&self.session, self.gate.mode(), "exit")
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
        self.model = self.aliases.pick(name);
        self.events().send(Event::ModelChanged {
            model: self.model.id.clone(),
            label: self.model_label(),
        });
    }

    /// The model id for the next request: the turn's (a command's or skill's `model`), else
    /// the session's for the current mode (`opusplan` plans with opus).
    pub(super) fn request_model(&self) -> String {
        if let Some(name) = self.session.turn_model() {
            return self.aliases.pick(&name).id;
        }
        let planning = self.gate.mode() == PermissionMode::Plan;
        self.model.id_for(planning).to_string()
    }

    fn call_env(&self, cancel: CancellationToken) -> Arc<CallEnv> {
        Arc::new(CallEnv {
            session: Arc::clone(&self.session),
            gate: Arc::clone(&self.gate),
            hooks: Arc::clone(&self.hooks),
            registry: self.registry.clone(),
            decisions: self.decisions.clone(),
            deferred: self.deferral.tools.clone(),
            cancel,
        })
    }

    /// Drop the conversation (the model starts afresh); SessionStart hooks run with `clear`.
    async fn clear(&mut self) {
        self.messages.clear();
        // A resume (and `/rewind`) starts after this point, as the model does.
        self.transcript.record(&Record::Rewind { to: None });
        self.rewind_undo = None;
        self.deferral.tools.restore(Vec::new());
        self.deferral.forget_announcements();
        self.session.take_reminders();
        let start = self
            .hooks
            .session_start(&self.session, self.gate.mode(), "clear")
            .await;
        for context in start.additional_context {
            self.session.remind(context);
        }
        self.events().send(Event::Notice {
            message: "Conversation cleared: the model starts afresh.".into(),
        });
    }

    async fn run_turn(&mut self, prompt: String, cancel: CancellationToken) {
        self.turn_counter += 1;
        let turn_id = self.turn_counter;
        self.events().send(Event::TurnStarted { turn_id });
        // The files as they are before the prompt, recorded while the request goes out (a
        // writing tool waits for it); `/rewind` goes back to it.
        let prompt_id = uuid::Uuid::new_v4().simple().to_string();
        self.session
            .checkpoints
            .record_in_background(prompt_label(&prompt_id));
        self.rewind_undo = None;
        let typed = prompt.clone();
        let verdict = self
            .hooks
            .user_prompt_submit(&self.session, self.gate.mode(), &prompt)
            .await;
        if let Some(reason) = verdict.blocked {
            self.events().send(Event::Error {
                message: format!("A UserPromptSubmit hook blocked the prompt: {reason}"),
            });
            self.events().send(Event::TurnFinished {
                turn_id,
                end: TurnEnd::Failed,
                text: String::new(),
                num_turns: 0,
            });
            return;
        }
        let env = self.call_env(cancel.child_token());
        let prompt = match invoke(&prompt, &self.commands, &self.skills, env).await {
            Some(invoked) => {
                self.session.set_turn_model(invoked.model);
                invoked.prompt
            }
            None => prompt,
        };
        let (attached, notices) =
            super::attachments::expand(&prompt, &self.session, &self.gate).await;
        for message in notices {
            self.events().send(Event::Notice { message });
        }
        let mut content = vec![ContentBlock::Text { text: prompt }];
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
        self.transcript.record(&Record::Prompt {
            id: prompt_id,
            text: typed,
        });
        self.push_user(content);
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
                    let stop = self
                        .hooks
                        .stop(&self.session, self.gate.mode(), forced_continuations > 0)
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
            text = self.last_assistant_text();
        }
        self.count_subagent_usage();
        // What a command or skill allowed, and its model, end with the turn.
        self.gate.end_turn(&self.session.conversation);
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

    pub(super) fn record_usage(&mut self, model: &str, usage: &Usage) {
        if *usage == Usage::default() {
            return;
        }
        if let Some(sink) = &self.usage_sink {
            // A sub-agent's requests are counted by the session it works for.
            lock(sink).push((model.to_string(), *usage));
        }
        self.transcript.record(&Record::Usage {
            model: model.to_string(),
            usage: *usage,
        });
        self.total_usage.add(usage);
        self.total_cost += pricing::cost_usd(model, usage);
        self.last_context = usage.input_tokens
            + usage.cache_read_input_tokens
            + usage.cache_creation_input_tokens
            + usage.output_tokens;
        self.events().send(Event::Usage {
            last: *usage,
            total: self.total_usage,
            total_cost_usd: self.total_cost,
            context_window: pricing::context_window(model),
            model: model.to_string(),
        });
    }

    /// Append user content, merging into the last message when that is a user message too
    /// (tool results followed by a new prompt), so roles keep alternating.
    pub(super) fn push_user(&mut self, content: Vec<ContentBlock>) {
        if let Some(last) = self.messages.last_mut()
            && last.role == Role::User
        {
            last.content.extend(content.iter().cloned());
            self.transcript.append(&Message {
                role: Role::User,
                content,
            });
            self.record_state();
            return;
        }
        self.push_message(Message {
            role: Role::User,
            content,
        });
    }

    fn push_message(&mut self, message: Message) {
        self.transcript.append(&message);
        self.messages.push(message);
        self.record_state();
    }

    fn last_assistant_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .unwrap_or_default()
    }
}
