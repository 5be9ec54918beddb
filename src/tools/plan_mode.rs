//! EnterPlanMode and ExitPlanMode: the model asks to plan before acting, and presents its plan
//! for approval.
//!
//! The tools hold no state and never touch the mode themselves. EnterPlanMode is read-only
//! (allowed unless a rule denies it); its result carries [`Effect::EnterPlanMode`], which the
//! core applies. ExitPlanMode's access is [`Access::ApprovePlan`]: the gate's check of it is
//! the plan approval (a request of kind `PlanApproval`), and approving switches the mode, so
//! when its `call` runs the plan has been approved. Outside plan mode the gate refuses it.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Access, Effect, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::protocol::Display;
use crate::session::context::SessionContext;

pub struct EnterPlanMode;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnterPlanModeInput {}

#[async_trait]
impl Tool for EnterPlanMode {
    type Input = EnterPlanModeInput;

    fn info(&self) -> ToolInfo {
        // Rarely wanted by the model: announced by name until ToolSearch loads it. (Its
        // counterpart ExitPlanMode stays loaded: plan mode is mostly entered by the person,
        // and the model must be able to leave it without a search.)
        ToolInfo::new("EnterPlanMode", ToolKind::Plan)
            .aliases(&["enter_plan_mode"])
            .read_only()
            .deferred()
    }

    fn description(&self) -> String {
        "Switch to plan mode before a non-trivial change: only read-only tools run while you \
         explore the code and design an approach; then call ExitPlanMode with the plan for the \
         user to approve."
            .into()
    }

    fn title(&self, _input: &Self::Input, _ctx: &SessionContext) -> String {
        "Enter plan mode".into()
    }

    async fn call(&self, _input: Self::Input, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::with_display(
            "Entered plan mode. Explore the codebase with read-only tools and design an \
             implementation approach. Do not edit files or run commands that change anything. \
             When the plan is ready, call ExitPlanMode with it for the user to approve.",
            Display::Text {
                text: "Entered plan mode".into(),
            },
        )
        .with_effect(Effect::EnterPlanMode))
    }
}

pub struct ExitPlanMode;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExitPlanModeInput {
    /// The plan, in markdown.
    pub plan: String,
}

#[async_trait]
impl Tool for ExitPlanMode {
    type Input = ExitPlanModeInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("ExitPlanMode", ToolKind::Plan)
            .aliases(&["exit_plan_mode"])
            .read_only()
    }

    fn description(&self) -> String {
        "In plan mode, once the plan for an implementation task is ready: present it for the \
         user's approval."
            .into()
    }

    fn title(&self, _input: &Self::Input, _ctx: &SessionContext) -> String {
        "Plan".into()
    }

    fn accesses(&self, input: &Self::Input, _ctx: &SessionContext) -> Vec<Access> {
        vec![Access::ApprovePlan(input.plan.clone())]
    }

    async fn validate(&self, input: &Self::Input, _ctx: &ToolContext) -> Result<(), ToolError> {
        if input.plan.trim().is_empty() {
            return Err(ToolError::new(
                "The plan is empty. Write the plan in the `plan` field and call ExitPlanMode again.",
            ));
        }
        Ok(())
    }

    async fn call(&self, input: Self::Input, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::with_display(
            "User has approved your plan. You can now start coding. Start with updating your \
             todo list if applicable.",
            Display::Markdown { text: input.plan },
        ))
    }
}
