//! Hooks around calls and around the session: PreToolUse (folded into one answer for `check`),
//! PostToolUse (inside [`PermissionGate::after_call`])
//! and the methods the agent loop calls at UserPromptSubmit, Stop, SessionStart, SessionEnd
//! and Notification. Failures of hooks are reported to the person as notices, never raised.

use serde_json::{Value, json};

use super::hooks::{HookVerdict, base_payload, verdict};
use super::{CallInfo, PermissionGate, lock};
use crate::config::hooks::HookEvent;

use crate::protocol::{Event, PermissionMode};
use crate::session::context::SessionContext;
use crate::tools::ToolOutput;

/// The PreToolUse hooks' combined answer.
#[derive(Default)]
pub(super) struct PreHook {
    pub(super) deny: Option<String>,
    pub(super) ask: Option<String>,
    pub(super) allow: bool,
    pub(super) updated_input: Option<Value>,
}

impl PermissionGate {
    pub(super) async fn pre_tool_hooks(
        &self,
        call: &CallInfo<'_>,
        session: &SessionContext,
    ) -> PreHook {
        let mut out = PreHook::default();
        if !self.hooks.has(HookEvent::PreToolUse) {
            return out;
        }
        let mut payload = base_payload(
            HookEvent::PreToolUse,
            &session.session_id,
            &self.transcript_path,
            &session.cwd(),
            self.mode().as_str(),
        );
        payload.insert("tool_name".into(), call.tool.name().into());
        payload.insert("tool_input".into(), call.raw_input.clone());
        payload.insert("tool_use_id".into(), call.call_id.into());
        let runs = self
            .hooks
            .run(
                HookEvent::PreToolUse,
                Some(call.tool.name()),
                &Value::Object(payload),
            )
            .await;
        // A hook that failed might have denied: no other hook's "allow" may skip the checks.
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
            let reason = run
                .field_str("permissionDecisionReason")
                .or_else(|| run.field_str("reason"))
                .unwrap_or("no reason given")
                .to_string();
            let stop =
                run.json.as_ref().and_then(|j| j.get("continue")) == Some(&Value::Bool(false));
            let decision = run
                .field("permissionDecision")
                .or_else(|| run.field("decision"));
            if stop {
                let why = run.field_str("stopReason").unwrap_or(&reason).to_string();
                out.deny.get_or_insert(why);
            } else {
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
                        failed = true;
                        session.events.send(Event::Notice {
                            message: format!(
                                "PreToolUse hook `{}` answered permissionDecision {other}, which \
                                 is not allow, deny or ask; the call gets the usual permission \
                                 checks",
                                run.command
                            ),
                        });
                    }
                }
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

    /// PostToolUse hooks: feedback from a hook that blocks (exit 2 or `decision: block`) and
    /// `additionalContext` are appended to the result the model reads.
    ///
    /// A successful EnterPlanMode switches to plan mode here (the tool itself holds no state).
    pub async fn after_call(&self, call: &CallInfo<'_>, output: &mut ToolOutput) {
        if call.tool.name() == "EnterPlanMode" && !output.is_error {
            self.set_mode(PermissionMode::Plan);
            if let Some(facts) = lock(&self.last_session).as_ref() {
                facts.events.send(Event::ModeChanged {
                    mode: PermissionMode::Plan,
                });
            }
        }
        if !self.hooks.has(HookEvent::PostToolUse) {
            return;
        }
        let Some(facts) = lock(&self.last_session).clone() else {
            return;
        };
        let mut payload = base_payload(
            HookEvent::PostToolUse,
            &facts.session_id,
            &self.transcript_path,
            &facts.cwd,
            self.mode().as_str(),
        );
        payload.insert("tool_name".into(), call.tool.name().into());
        payload.insert("tool_input".into(), call.raw_input.clone());
        payload.insert("tool_use_id".into(), call.call_id.into());
        payload.insert(
            "tool_response".into(),
            json!({ "content": output.content, "is_error": output.is_error }),
        );
        let runs = self
            .hooks
            .run(
                HookEvent::PostToolUse,
                Some(call.tool.name()),
                &Value::Object(payload),
            )
            .await;
        let v = verdict(HookEvent::PostToolUse, &runs, false);
        for e in v.errors {
            facts.events.send(Event::Notice { message: e });
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

    async fn session_hooks(
        &self,
        event: HookEvent,
        session: &SessionContext,
        match_value: Option<&str>,
        extra: Value,
        plain_stdout_is_context: bool,
    ) -> HookVerdict {
        if !self.hooks.has(event) {
            return HookVerdict::default();
        }
        let mut payload = base_payload(
            event,
            &session.session_id,
            &self.transcript_path,
            &session.cwd(),
            self.mode().as_str(),
        );
        if let Value::Object(extra) = extra {
            payload.extend(extra);
        }
        let runs = self
            .hooks
            .run(event, match_value, &Value::Object(payload))
            .await;
        let v = verdict(event, &runs, plain_stdout_is_context);
        for e in &v.errors {
            session.events.send(Event::Notice { message: e.clone() });
        }
        v
    }

    /// Before a prompt goes to the model. `blocked`: drop the prompt and show the reason to
    /// the person; `additional_context`: add to the model's context with the prompt.
    pub async fn user_prompt_submit(&self, session: &SessionContext, prompt: &str) -> HookVerdict {
        self.session_hooks(
            HookEvent::UserPromptSubmit,
            session,
            None,
            json!({ "prompt": prompt }),
            true,
        )
        .await
    }

    /// When the model ends its turn. `blocked`: the model must continue, with the reason as
    /// its next input. `stop_hook_active` is true when this turn was itself forced by a Stop
    /// hook (hooks use it to avoid loops).
    pub async fn stop(&self, session: &SessionContext, stop_hook_active: bool) -> HookVerdict {
        self.session_hooks(
            HookEvent::Stop,
            session,
            None,
            json!({ "stop_hook_active": stop_hook_active }),
            false,
        )
        .await
    }

    /// At session start; `source` is `startup`, `resume` or `clear` (matched by matchers).
    /// `additional_context` goes into the model's context.
    pub async fn session_start(&self, session: &SessionContext, source: &str) -> HookVerdict {
        self.session_hooks(
            HookEvent::SessionStart,
            session,
            Some(source),
            json!({ "source": source }),
            true,
        )
        .await
    }

    /// At session end; `reason` is e.g. `exit`, `clear`, `logout`, `other`.
    pub async fn session_end(&self, session: &SessionContext, reason: &str) {
        self.session_hooks(
            HookEvent::SessionEnd,
            session,
            None,
            json!({ "reason": reason }),
            false,
        )
        .await;
    }

    /// When cairn notifies the person (a permission request waits, the prompt is idle).
    pub async fn notification(&self, session: &SessionContext, message: &str) {
        self.session_hooks(
            HookEvent::Notification,
            session,
            None,
            json!({ "message": message }),
            false,
        )
        .await;
    }
}
