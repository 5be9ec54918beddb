//! The person's hooks at every event of a session, owned by the core: PreToolUse (folded into
//! one [`PreToolAnswer`] the permission gate decides with), PostToolUse (feedback appended to
//! the result), and UserPromptSubmit, Stop, SessionStart, SessionEnd and Notification. Running
//! one command is [`runner`]'s job; this module builds each event's payload and reads the
//! answers. Failures of hooks are reported to the person as notices, never raised, and a
//! failed PreToolUse hook never approves anything.

pub mod runner;

use std::path::PathBuf;

use serde_json::{Value, json};

use crate::config::hooks::{HookEvent, HooksConfig};
use crate::protocol::{Event, PermissionMode};
use crate::session::context::SessionContext;
use crate::tools::ToolOutput;

pub use runner::{HookRunner, HookVerdict};
use runner::{base_payload, verdict};

/// The PreToolUse hooks' combined answer about one call.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreToolAnswer {
    /// A hook denied (exit 2, `deny`, `continue: false`): the reason.
    pub deny: Option<String>,
    /// A hook asks the person: the reason, in the gate's words.
    pub ask: Option<String>,
    /// Every hook that answered allowed, and none failed.
    pub allow: bool,
    /// A hook replaced the call's input (`updatedInput`).
    pub updated_input: Option<Value>,
}

/// One tool call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    pub tool: &'a str,
    pub call_id: &'a str,
    pub input: &'a Value,
}

/// The hooks of one session.
pub struct Hooks {
    runner: HookRunner,
    /// Given to hooks as `transcript_path`.
    transcript_path: PathBuf,
}

impl Hooks {
    /// The hooks `config` names, run in `project_dir` with `env` (the settings' `env`) on top
    /// of a credential-free environment.
    pub fn new(
        config: HooksConfig,
        project_dir: PathBuf,
        env: Vec<(String, String)>,
        transcript_path: PathBuf,
    ) -> Hooks {
        Hooks {
            runner: HookRunner::with_env(config, project_dir, env),
            transcript_path,
        }
    }

    pub fn has(&self, event: HookEvent) -> bool {
        self.runner.has(event)
    }

    /// These hooks and `more` (a sub-agent's own, for its run).
    pub fn with_groups(&self, more: Vec<crate::config::hooks::HookGroup>) -> Hooks {
        let mut runner = self.runner.clone();
        runner.config.groups.extend(more);
        Hooks {
            runner,
            transcript_path: self.transcript_path.clone(),
        }
    }

    /// Run the hooks of `fire.event` matching `fire.match_value`, with the common fields and
    /// `fire.extra` on stdin.
    async fn run(
        &self,
        fire: Fire<'_>,
        session: &SessionContext,
        mode: PermissionMode,
    ) -> Vec<runner::HookRun> {
        let Fire {
            event,
            match_value,
            extra,
        } = fire;
        let mut payload = base_payload(
            event,
            &session.session_id,
            &self.transcript_path,
            &session.cwd(),
            mode.as_str(),
        );
        if let Value::Object(extra) = extra {
            payload.extend(extra);
        }
        self.runner
            .run(event, match_value, &Value::Object(payload))
            .await
    }

    /// Before a call is decided. The answer is folded over every matching hook: a deny wins,
    /// then an ask; an allow counts only when no hook failed (a failed hook might have denied).
    pub async fn pre_tool_use(
        &self,
        call: HookCall<'_>,
        session: &SessionContext,
        mode: PermissionMode,
    ) -> PreToolAnswer {
        let mut out = PreToolAnswer::default();
        if !self.has(HookEvent::PreToolUse) {
            return out;
        }
        let extra = json!({
            "tool_name": call.tool,
            "tool_input": call.input,
            "tool_use_id": call.call_id,
        });
        let fire = Fire::new(HookEvent::PreToolUse, Some(call.tool), extra);
        let runs = self.run(fire, session, mode).await;
        let mut failed = false;
        for run in &runs {
            if run.blocked() {
                out.deny
                    .get_or_insert_with(|| run.stderr.trim().to_string());
                continue;
            }
            if let Some(err) = run.failure(HookEvent::PreToolUse) {
                failed = true;
                session.events.send(Event::Notice {
                    message: format!("{err}; the call gets the usual permission checks"),
                });
                continue;
            }
            if let Err(message) = fold_decision(run, &mut out) {
                failed = true;
                session.events.send(Event::Notice { message });
            }
            if let Some(v) = run.field("updatedInput").filter(|v| v.is_object()) {
                out.updated_input.get_or_insert_with(|| v.clone());
            }
        }
        if failed {
            out.allow = false;
        }
        out
    }

    /// After a call: feedback from a hook that blocks (exit 2 or `decision: block`) and
    /// `additionalContext` are appended to the result the model reads.
    pub async fn post_tool_use(
        &self,
        call: HookCall<'_>,
        session: &SessionContext,
        mode: PermissionMode,
        output: &mut ToolOutput,
    ) {
        if !self.has(HookEvent::PostToolUse) {
            return;
        }
        let extra = json!({
            "tool_name": call.tool,
            "tool_input": call.input,
            "tool_use_id": call.call_id,
            "tool_response": { "content": output.content, "is_error": output.is_error },
        });
        let fire = Fire::new(HookEvent::PostToolUse, Some(call.tool), extra);
        let runs = self.run(fire, session, mode).await;
        let v = verdict(HookEvent::PostToolUse, &runs, false);
        for e in v.errors {
            session.events.send(Event::Notice { message: e });
        }
        if let Some(reason) = v.blocked {
            output
                .content
                .push_str(&format!("\n\nPostToolUse hook feedback:\n{reason}"));
        }
        for ctx in v.additional_context {
            output.content.push_str(&format!("\n\n{ctx}"));
        }
    }

    async fn session_event(
        &self,
        fire: Fire<'_>,
        session: &SessionContext,
        mode: PermissionMode,
        plain_stdout_is_context: bool,
    ) -> HookVerdict {
        let event = fire.event;
        if !self.has(event) {
            return HookVerdict::default();
        }
        let runs = self.run(fire, session, mode).await;
        let v = verdict(event, &runs, plain_stdout_is_context);
        for e in &v.errors {
            session.events.send(Event::Notice { message: e.clone() });
        }
        v
    }

    /// Before a prompt goes to the model. `blocked`: drop the prompt and show the reason to
    /// the person; `additional_context`: add to the model's context with the prompt.
    pub async fn user_prompt_submit(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        prompt: &str,
    ) -> HookVerdict {
        let extra = json!({ "prompt": prompt });
        let fire = Fire::new(HookEvent::UserPromptSubmit, None, extra);
        self.session_event(fire, session, mode, true).await
    }

    /// When the model ends its turn. `blocked`: the model must continue, with the reason as
    /// its next input. `stop_hook_active` is true when this turn was itself forced by a Stop
    /// hook (hooks use it to avoid loops).
    pub async fn stop(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        stop_hook_active: bool,
    ) -> HookVerdict {
        let extra = json!({ "stop_hook_active": stop_hook_active });
        self.session_event(
            Fire::new(HookEvent::Stop, None, extra),
            session,
            mode,
            false,
        )
        .await
    }

    /// At session start; `source` is `startup`, `resume` or `clear` (matched by matchers).
    /// `additional_context` goes into the model's context.
    pub async fn session_start(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        source: &str,
    ) -> HookVerdict {
        let extra = json!({ "source": source });
        let fire = Fire::new(HookEvent::SessionStart, Some(source), extra);
        self.session_event(fire, session, mode, true).await
    }

    /// When a sub-agent has answered. `blocked`: it must go on, with the reason as its next
    /// input. `stop_hook_active`: a SubagentStop hook already sent it back once.
    pub async fn subagent_stop(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        stop_hook_active: bool,
    ) -> HookVerdict {
        let extra = json!({ "stop_hook_active": stop_hook_active });
        let fire = Fire::new(HookEvent::SubagentStop, None, extra);
        self.session_event(fire, session, mode, false).await
    }

    /// Before the conversation is compacted; `trigger` is `manual` or `auto` (matched by
    /// matchers), `custom_instructions` what `/compact` was given.
    pub async fn pre_compact(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        trigger: &str,
        custom_instructions: &str,
    ) -> HookVerdict {
        let extra = json!({ "trigger": trigger, "custom_instructions": custom_instructions });
        let fire = Fire::new(HookEvent::PreCompact, Some(trigger), extra);
        self.session_event(fire, session, mode, false).await
    }

    /// At session end; `reason` is e.g. `exit`, `clear`, `logout`, `other`.
    pub async fn session_end(&self, session: &SessionContext, mode: PermissionMode, reason: &str) {
        let extra = json!({ "reason": reason });
        self.session_event(
            Fire::new(HookEvent::SessionEnd, None, extra),
            session,
            mode,
            false,
        )
        .await;
    }

    /// When cairn notifies the person (a permission request waits, the prompt is idle).
    pub async fn notification(
        &self,
        session: &SessionContext,
        mode: PermissionMode,
        message: &str,
    ) {
        let extra = json!({ "message": message });
        self.session_event(
            Fire::new(HookEvent::Notification, None, extra),
            session,
            mode,
            false,
        )
        .await;
    }
}

/// One event to fire: which, what its matchers see, and its own fields.
struct Fire<'a> {
    event: HookEvent,
    match_value: Option<&'a str>,
    extra: Value,
}

impl<'a> Fire<'a> {
    fn new(event: HookEvent, match_value: Option<&'a str>, extra: Value) -> Fire<'a> {
        Fire {
            event,
            match_value,
            extra,
        }
    }
}

/// Fold one successful PreToolUse run's JSON answer into `out`. An answer that is neither
/// allow, deny nor ask is an error (the hook counts as failed).
fn fold_decision(run: &runner::HookRun, out: &mut PreToolAnswer) -> Result<(), String> {
    let reason = run
        .field_str("permissionDecisionReason")
        .or_else(|| run.field_str("reason"))
        .unwrap_or("no reason given")
        .to_string();
    let stop = run.json.as_ref().and_then(|j| j.get("continue")) == Some(&Value::Bool(false));
    if stop {
        let why = run.field_str("stopReason").unwrap_or(&reason).to_string();
        out.deny.get_or_insert(why);
        return Ok(());
    }
    let decision = run
        .field("permissionDecision")
        .or_else(|| run.field("decision"));
    match decision {
        None | Some(Value::Null) => {}
        Some(Value::String(d)) if d == "deny" || d == "block" => {
            out.deny.get_or_insert(reason);
        }
        Some(Value::String(d)) if d == "ask" => {
            out.ask
                .get_or_insert(format!("a PreToolUse hook asks: {reason}"));
        }
        Some(Value::String(d)) if d == "allow" || d == "approve" => out.allow = true,
        Some(other) => {
            return Err(format!(
                "PreToolUse hook `{}` answered permissionDecision {other}, which is not allow, \
                 deny or ask; the call gets the usual permission checks",
                run.command
            ));
        }
    }
    Ok(())
}
