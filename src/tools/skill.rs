//! The Skill tool: the model loads one of the person's skills (`.claude/skills/*/SKILL.md`) by
//! name. The description lists every skill with its description, never its body; a call returns
//! the body, with the skill's directory so the files it names can be read.
//!
//! Skills come from the repository, which may be anyone's, and a skill's instructions steer the
//! model and its `allowed-tools` widen what runs: so a call asks the person first ("Execute
//! skill: name", with the description, `allowed-tools` and `model` in the preview) unless one of
//! their own rules allows `Skill(name)` (or `Skill`); `Skill(name)` deny rules refuse it. Once
//! approved, the skill's `allowed-tools` are allowed, and its `model` used, until the turn of
//! the conversation that loaded it ends (a sub-agent's run is its turn); the gate keeps those
//! grants to that conversation, inside the working directories and off protected paths.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use super::{
    Access, Effect, Preview, Tool, ToolContext, ToolError, ToolInfo, ToolKind, ToolOutput,
};
use crate::commands::skills::Skill;
use crate::protocol::{Display, Field};
use crate::session::context::SessionContext;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The name of the skill to load.
    pub skill: String,
    /// Optional arguments for the skill.
    #[serde(default)]
    pub args: Option<String>,
}

#[derive(Debug, Default)]
pub struct SkillTool {
    skills: Vec<Skill>,
}

impl SkillTool {
    pub fn new(skills: Vec<Skill>) -> SkillTool {
        SkillTool { skills }
    }

    fn find(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }
}

/// A skill's body as the model reads it, with its directory and the arguments given.
pub fn skill_text(skill: &Skill, args: Option<&str>) -> String {
    let mut text = format!(
        "Skill \"{}\" loaded. Its directory is {}: read the files it names from there.\n\n{}",
        skill.name,
        skill.dir.display(),
        skill.body
    );
    if let Some(args) = args.map(str::trim).filter(|a| !a.is_empty()) {
        text.push_str(&format!("\n\nARGUMENTS: {args}"));
    }
    text
}

#[async_trait]
impl Tool for SkillTool {
    type Input = SkillInput;

    fn info(&self) -> ToolInfo {
        ToolInfo::new("Skill", ToolKind::Other)
            .aliases(&["skill"])
            .read_only()
    }

    fn description(&self) -> String {
        let mut text = String::from(
            "Load a skill: instructions (and files beside them) the user has prepared for a kind \
             of task. Use one when the task matches its description. Available skills:",
        );
        for s in &self.skills {
            text.push_str(&format!("\n- {}: {}", s.name, s.description));
        }
        text
    }

    fn title(&self, input: &SkillInput, _ctx: &SessionContext) -> String {
        format!("Skill {}", input.skill)
    }

    fn accesses(&self, input: &SkillInput, _ctx: &SessionContext) -> Vec<Access> {
        vec![Access::Invoke(input.skill.clone())]
    }

    async fn preview(
        &self,
        input: &SkillInput,
        _ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let Some(skill) = self.find(&input.skill) else {
            return Ok(None);
        };
        let allowed = if skill.allowed_tools.is_empty() {
            "(none)".to_string()
        } else {
            skill.allowed_tools.join(", ")
        };
        let mut fields = vec![
            Field::text("Execute skill", skill.name.as_str()),
            Field::text("description", skill.description.as_str()),
            Field::text("allowed-tools", allowed),
        ];
        if let Some(model) = &skill.model {
            fields.push(Field::text("model", model.as_str()));
        }
        if let Some(args) = input.args.as_deref().filter(|a| !a.trim().is_empty()) {
            fields.push(Field::text("arguments", args));
        }
        fields.push(Field::text("from", skill.dir.display().to_string()));
        Ok(Some(Preview {
            display: Display::Fields { fields },
            new_content: None,
        }))
    }

    async fn validate(&self, input: &SkillInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        if self.find(&input.skill).is_some() {
            return Ok(());
        }
        let names: Vec<&str> = self.skills.iter().map(|s| s.name.as_str()).collect();
        Err(ToolError::new(format!(
            "Unknown skill `{}`. Available: {}.",
            input.skill,
            names.join(", ")
        )))
    }

    async fn call(&self, input: SkillInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(skill) = self.find(&input.skill) else {
            return Err(ToolError::new(format!("Unknown skill `{}`.", input.skill)));
        };
        let text = skill_text(skill, input.args.as_deref());
        let display = Display::Text {
            text: format!("Loaded skill {}", skill.name),
        };
        let output = ToolOutput::with_display(text, display);
        if skill.allowed_tools.is_empty() && skill.model.is_none() {
            return Ok(output);
        }
        Ok(output.with_effect(Effect::ForTurn {
            allowed_tools: skill.allowed_tools.clone(),
            model: skill.model.clone(),
        }))
    }
}
