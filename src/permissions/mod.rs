//! The permission gate: decides, per tool call, whether it runs, is refused, or needs the
//! person's answer; applies that answer (session grants, saved rules, plan approval).
//!
//! This is the one place that decision is made. The present gate is the interim policy of the
//! agent-core issue: read-only tools run; others ask (or, headless, are refused) unless the
//! mode is acceptEdits or bypassPermissions. The permission-system work replaces its insides.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::Value;

use crate::agent::session::SessionContext;
use crate::protocol::{CallOutcome, Decision, PermissionMode, PermissionRequest, RequestKind};
use crate::tools::{Access, DynTool, ParsedInput, Preview, ToolOutput};

/// What the gate knows about one call.
pub struct CallInfo<'a> {
    pub call_id: &'a str,
    pub tool: &'a dyn DynTool,
    pub input: &'a ParsedInput,
    pub raw_input: &'a Value,
    pub title: &'a str,
    pub accesses: &'a [Access],
    pub preview: Option<&'a Preview>,
}

/// The gate's verdict before asking anyone.
#[derive(Debug, Clone, PartialEq)]
pub enum GateOutcome {
    Allow,
    /// Refused; the message goes to the model as the tool result.
    Deny { message: String },
    /// Ask the person. The executor assigns the request id.
    Ask(Box<PermissionRequest>),
}

/// What the person's answer means for the call.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionEffect {
    pub allow: bool,
    pub outcome: CallOutcome,
    /// For a denial: the tool result text.
    pub message: Option<String>,
    /// Plan approval switches the mode.
    pub new_mode: Option<PermissionMode>,
}

pub struct PermissionGate {
    mode: Mutex<PermissionMode>,
    /// Whether a person can be asked (false in headless mode).
    interactive: bool,
    /// Whether bypassPermissions is in the Shift+Tab cycle (started with it).
    bypass_allowed: bool,
    session_allowed: Mutex<HashSet<String>>,
    session_denied: Mutex<HashSet<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    match m.lock() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    }
}

impl PermissionGate {
    pub fn new(mode: PermissionMode, interactive: bool) -> PermissionGate {
        PermissionGate {
            mode: Mutex::new(mode),
            interactive,
            bypass_allowed: mode == PermissionMode::BypassPermissions,
            session_allowed: Mutex::new(HashSet::new()),
            session_denied: Mutex::new(HashSet::new()),
        }
    }

    pub fn mode(&self) -> PermissionMode {
        *lock(&self.mode)
    }

    pub fn set_mode(&self, mode: PermissionMode) {
        *lock(&self.mode) = mode;
    }

    pub fn bypass_allowed(&self) -> bool {
        self.bypass_allowed
    }

    /// Whether a tool is offered to the model at all (a bare deny rule hides it).
    pub fn offers_tool(&self, _tool: &dyn DynTool) -> bool {
        true
    }

    pub async fn check(&self, call: &CallInfo<'_>, _session: &SessionContext) -> GateOutcome {
        let name = call.tool.name();
        if lock(&self.session_denied).contains(name) {
            return GateOutcome::Deny {
                message: format!(
                    "The user denied {name} for the rest of this session. Do not retry it; \
                     ask the user how to proceed."
                ),
            };
        }
        let read_only = call.tool.is_read_only(call.input);
        let mode = self.mode();
        if read_only {
            return GateOutcome::Allow;
        }
        if mode == PermissionMode::Plan {
            return GateOutcome::Deny {
                message: format!(
                    "{name} is not available in plan mode: only read-only tools may run until \
                     the user approves the plan (call ExitPlanMode with your plan)."
                ),
            };
        }
        if matches!(
            mode,
            PermissionMode::AcceptEdits | PermissionMode::BypassPermissions
        ) || lock(&self.session_allowed).contains(name)
        {
            return GateOutcome::Allow;
        }
        if !self.interactive || mode == PermissionMode::DontAsk {
            return GateOutcome::Deny {
                message: format!(
                    "Permission to use {name} was not granted: no one can be asked in this mode. \
                     Run with --permission-mode acceptEdits or bypassPermissions to allow it."
                ),
            };
        }
        GateOutcome::Ask(Box::new(PermissionRequest {
            id: 0,
            call_id: call.call_id.to_string(),
            tool: name.to_string(),
            title: call.title.to_string(),
            input: call.raw_input.clone(),
            reason: format!("{name} changes things and no rule allows it"),
            preview: call.preview.map(|p| p.display.clone()),
            session_scope: Some(format!("all {name} calls")),
            saveable_rule: None,
            kind: RequestKind::Tool,
        }))
    }

    /// Apply the person's answer to `request`.
    pub fn apply_decision(
        &self,
        request: &PermissionRequest,
        decision: &Decision,
    ) -> DecisionEffect {
        let allow = |outcome| DecisionEffect {
            allow: true,
            outcome,
            message: None,
            new_mode: None,
        };
        let deny = |outcome, message: String| DecisionEffect {
            allow: false,
            outcome,
            message: Some(message),
            new_mode: None,
        };
        match decision {
            Decision::AllowOnce => allow(CallOutcome::AllowedOnce),
            Decision::AllowEdited { .. } => allow(CallOutcome::AllowedEdited),
            Decision::AllowSession | Decision::AlwaysAllow => {
                lock(&self.session_allowed).insert(request.tool.clone());
                allow(CallOutcome::AllowedForSession)
            }
            Decision::ApprovePlan { mode } => {
                self.set_mode(*mode);
                DecisionEffect {
                    new_mode: Some(*mode),
                    ..allow(CallOutcome::AllowedOnce)
                }
            }
            Decision::DenyOnce => deny(
                CallOutcome::Denied,
                "The user doesn't want to proceed with this tool use. The tool use was rejected. \
                 STOP what you are doing and wait for the user to tell you how to proceed."
                    .into(),
            ),
            Decision::DenySession => {
                lock(&self.session_denied).insert(request.tool.clone());
                deny(
                    CallOutcome::DeniedForSession,
                    format!(
                        "The user denied {} for the rest of this session. Do not retry it.",
                        request.tool
                    ),
                )
            }
            Decision::DenyWithFeedback { feedback } => deny(
                CallOutcome::Denied,
                format!(
                    "The user doesn't want to proceed with this tool use. The user said:\n{feedback}"
                ),
            ),
        }
    }

    /// PostToolUse hooks may add context to the result.
    pub async fn after_call(&self, _call: &CallInfo<'_>, _output: &mut ToolOutput) {}
}
