//! The TodoWrite tool: the model keeps a list of the steps of its task, as in Claude Code. The
//! whole list is sent each time; its result carries [`Effect::Todos`], which the core keeps for
//! the session and shows to the person as a checklist. Allowed without asking: it changes
//! nothing but the list.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Effect, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::protocol::{Display, Todo, TodoStatus};
use crate::session::context::SessionContext;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The whole list.
    pub todos: Vec<Todo>,
}

#[derive(Debug, Default)]
pub struct TodoWriteTool;

#[async_trait]
impl Tool for TodoWriteTool {
    type Input = TodoWriteInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("TodoWrite", ToolKind::Interact)
            .aliases(&["todo_write"])
            .read_only()
    }

    fn description(&self) -> String {
        "Sets the todo list of a task of three or more steps, shown to the user: send the whole \
list each time, exactly one item in_progress while working, each completed as soon as done."
            .into()
    }

    fn title(&self, input: &TodoWriteInput, _ctx: &SessionContext) -> String {
        let done = input
            .todos
            .iter()
            .filter(|t| t.status == TodoStatus::Completed)
            .count();
        format!("Update todos ({done} of {} done)", input.todos.len())
    }

    async fn validate(&self, input: &TodoWriteInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        if let Some(i) = input
            .todos
            .iter()
            .position(|t| t.content.trim().is_empty() || t.active_form.trim().is_empty())
        {
            return Err(ToolError::new(format!(
                "todos[{i}] has an empty content or activeForm; give both for every item."
            )));
        }
        let busy: Vec<String> = input
            .todos
            .iter()
            .enumerate()
            .filter(|(_, t)| t.status == TodoStatus::InProgress)
            .map(|(i, _)| format!("todos[{i}]"))
            .collect();
        if busy.len() > 1 {
            return Err(ToolError::new(format!(
                "{} tasks are in_progress ({}); keep at most one task in_progress at a time.",
                busy.len(),
                busy.join(", ")
            )));
        }
        Ok(())
    }

    async fn call(
        &self,
        input: TodoWriteInput,
        _ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let text = "Todos have been modified successfully. Ensure that you continue to use the todo \
                    list to track your progress. Please proceed with the current tasks if \
                    applicable.";
        let display = Display::Text {
            text: checklist(&input.todos),
        };
        Ok(ToolOutput::with_display(text, display).with_effect(Effect::Todos(input.todos)))
    }
}

/// The list as plain lines (`☐ ◐ ☑`), for the tool cell.
pub fn checklist(todos: &[Todo]) -> String {
    todos
        .iter()
        .map(|t| {
            let mark = match t.status {
                TodoStatus::Pending => "☐",
                TodoStatus::InProgress => "◐",
                TodoStatus::Completed => "☑",
            };
            format!("{mark} {}", t.content)
        })
        .collect::<Vec<_>>()
        .join("\n")
}
