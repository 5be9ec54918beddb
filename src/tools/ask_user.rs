//! The AskUserQuestion tool: the model asks the person one to four multiple-choice questions, as
//! in Claude Code. The call declares [`Access::AskPerson`]; the permission gate turns that into a
//! request of kind `Questions`, the person's answers come back with the approval, and the call
//! only formats them for the model. Headless, no one can be asked, and the call is refused.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{Access, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput};
use crate::protocol::{Display, Question};
use crate::session::context::SessionContext;

/// The longest a question's `header` (the chip beside it) may be, in characters.
pub const MAX_HEADER_CHARS: usize = 12;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskUserQuestionInput {
    /// One to four questions.
    pub questions: Vec<Question>,
}

#[derive(Debug, Default)]
pub struct AskUserQuestionTool;

#[async_trait]
impl Tool for AskUserQuestionTool {
    type Input = AskUserQuestionInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("AskUserQuestion", ToolKind::Interact)
            .aliases(&["ask_user_question"])
            .read_only()
    }

    fn description(&self) -> String {
        "Asks the user one to four multiple-choice questions when you need their decision to \
go on; they may always type their own answer."
            .into()
    }

    fn title(&self, input: &AskUserQuestionInput, _ctx: &SessionContext) -> String {
        match input.questions.as_slice() {
            // The question itself is shown once, in the prompt; the title names its subject.
            [one] => format!("Question: {}", one.header),
            many => format!("Ask {} questions", many.len()),
        }
    }

    fn accesses(&self, input: &AskUserQuestionInput, _ctx: &SessionContext) -> Vec<Access> {
        vec![Access::AskPerson(input.questions.clone())]
    }

    async fn validate(
        &self,
        input: &AskUserQuestionInput,
        _ctx: &ToolContext,
    ) -> Result<(), ToolError> {
        let n = input.questions.len();
        if !(1..=4).contains(&n) {
            return Err(ToolError::new(format!(
                "Ask one to four questions at a time ({n} given)."
            )));
        }
        for (i, q) in input.questions.iter().enumerate() {
            if !(2..=4).contains(&q.options.len()) {
                return Err(ToolError::new(format!(
                    "questions[{i}] has {} options; give two to four.",
                    q.options.len()
                )));
            }
            let header = q.header.chars().count();
            if header > MAX_HEADER_CHARS {
                return Err(ToolError::new(format!(
                    "questions[{i}].header \"{}\" is {header} characters; a header is at most \
                     {MAX_HEADER_CHARS} (a short label such as \"Auth method\").",
                    q.header
                )));
            }
            if q.question.trim().is_empty() || q.options.iter().any(|o| o.label.trim().is_empty()) {
                return Err(ToolError::new(format!(
                    "questions[{i}] has an empty question or option label."
                )));
            }
        }
        Ok(())
    }

    async fn call(
        &self,
        input: AskUserQuestionInput,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(answers) = &ctx.answers else {
            return Err(ToolError::new("The user gave no answers."));
        };
        let pairs: Vec<String> = input
            .questions
            .iter()
            .zip(answers)
            .map(|(q, a)| format!("\"{}\"=\"{a}\"", q.question))
            .collect();
        let text = format!(
            "User has answered your questions: {}. You can now continue with the user's answers \
             in mind.",
            pairs.join(", ")
        );
        let shown = input
            .questions
            .iter()
            .zip(answers)
            .map(|(q, a)| format!("{}: {a}", q.header))
            .collect::<Vec<_>>()
            .join("\n");
        Ok(ToolOutput::with_display(
            text,
            Display::Text { text: shown },
        ))
    }
}
