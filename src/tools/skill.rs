//! The Skill tool: the model loads one of the person's skills (`.claude/skills/*/SKILL.md`, by
//! its name or its directory's) or runs one of their slash commands (`.claude/commands/`), as
//! Claude Code offers both through this one tool. The description lists each with its
//! description, never its body, leaving out those marked `disable-model-invocation` (only the
//! person runs them); a call returns the body (a skill's with its directory, so the files it
//! names can be read; a command's with its arguments filled in and each `` !`cmd` `` left for
//! the model to run with Bash, through the gate like any call of its own).
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
use crate::commands::{CustomCommand, Piece, fill, pieces};
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
    commands: Vec<CustomCommand>,
}

/// What a name loads: a skill or a command.
enum Entry<'a> {
    Skill(&'a Skill),
    Command(&'a CustomCommand),
}

impl Entry<'_> {
    fn allowed_tools(&self) -> &[String] {
        match self {
            Entry::Skill(s) => &s.allowed_tools,
            Entry::Command(c) => &c.allowed_tools,
        }
    }

    fn model(&self) -> Option<&String> {
        match self {
            Entry::Skill(s) => s.model.as_ref(),
            Entry::Command(c) => c.model.as_ref(),
        }
    }
}

impl SkillTool {
    /// The tool over the skills and commands the model may use (those marked
    /// `disable-model-invocation` are left out here).
    pub fn new(skills: Vec<Skill>, commands: Vec<CustomCommand>) -> SkillTool {
        SkillTool {
            skills: skills
                .into_iter()
                .filter(|s| !s.disable_model_invocation)
                .collect(),
            commands: commands
                .into_iter()
                .filter(|c| !c.disable_model_invocation)
                .collect(),
        }
    }

    /// Whether there is anything to offer.
    pub fn is_empty(&self) -> bool {
        self.skills.is_empty() && self.commands.is_empty()
    }

    fn find(&self, name: &str) -> Option<Entry<'_>> {
        let name = name.strip_prefix('/').unwrap_or(name);
        self.skills
            .iter()
            .find(|s| s.answers_to(name))
            .map(Entry::Skill)
            .or_else(|| {
                self.commands
                    .iter()
                    .find(|c| c.name == name)
                    .map(Entry::Command)
            })
    }

    fn names(&self) -> Vec<&str> {
        self.skills
            .iter()
            .map(|s| s.name.as_str())
            .chain(self.commands.iter().map(|c| c.name.as_str()))
            .collect()
    }
}

/// A command's body as the model reads it when it runs the command through this tool: the
/// arguments filled in, each `` !`cmd` `` left for the model to run.
fn command_text(command: &CustomCommand, args: Option<&str>) -> String {
    let mut body = String::new();
    for piece in pieces(&command.body) {
        match piece {
            Piece::Text(text) => body.push_str(text),
            Piece::Shell(cmd) => body.push_str(&format!(
                "(the output of `{cmd}`: run it with the Bash tool)"
            )),
        }
    }
    format!(
        "Command \"/{}\" loaded. Follow its instructions:\n\n{}",
        command.name,
        fill(&body, args.unwrap_or_default().trim())
    )
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
        for c in &self.commands {
            text.push_str(&format!("\n- {}: {}", c.name, c.description));
        }
        text
    }

    fn title(&self, input: &SkillInput, _ctx: &SessionContext) -> String {
        format!("Skill {}", input.skill)
    }

    fn accesses(&self, input: &SkillInput, _ctx: &SessionContext) -> Vec<Access> {
        // The name the person's rules use: a skill's `name` whichever name the call gave
        // (`Skill(spec)` covers a call by its directory, `project-spec`), a command's name.
        let name = match self.find(&input.skill) {
            Some(Entry::Skill(s)) => s.name.clone(),
            Some(Entry::Command(c)) => c.name.clone(),
            None => input.skill.clone(),
        };
        vec![Access::Invoke(name)]
    }

    async fn preview(
        &self,
        input: &SkillInput,
        _ctx: &ToolContext,
    ) -> Result<Option<Preview>, ToolError> {
        let Some(entry) = self.find(&input.skill) else {
            return Ok(None);
        };
        let allowed = if entry.allowed_tools().is_empty() {
            "(none)".to_string()
        } else {
            entry.allowed_tools().join(", ")
        };
        let (name, description, from) = match &entry {
            Entry::Skill(s) => (s.name.clone(), &s.description, s.dir.display().to_string()),
            Entry::Command(c) => (
                format!("/{}", c.name),
                &c.description,
                c.path.display().to_string(),
            ),
        };
        let mut fields = vec![
            Field::text("Execute skill", name),
            Field::text("description", description.as_str()),
            Field::text("allowed-tools", allowed),
        ];
        if let Some(model) = entry.model() {
            fields.push(Field::text("model", model.as_str()));
        }
        if let Some(args) = input.args.as_deref().filter(|a| !a.trim().is_empty()) {
            fields.push(Field::text("arguments", args));
        }
        fields.push(Field::text("from", from));
        Ok(Some(Preview {
            display: Display::Fields { fields },
            new_content: None,
        }))
    }

    async fn validate(&self, input: &SkillInput, _ctx: &ToolContext) -> Result<(), ToolError> {
        if self.find(&input.skill).is_some() {
            return Ok(());
        }
        let names = self.names();
        let close = crate::commands::closest_names(&input.skill, names.iter().copied());
        let hint = if close.is_empty() {
            String::new()
        } else {
            format!(" Did you mean {}?", close.join(", "))
        };
        Err(ToolError::new(format!(
            "Unknown skill `{}`.{hint} Available: {}.",
            input.skill,
            names.join(", ")
        )))
    }

    async fn call(&self, input: SkillInput, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(entry) = self.find(&input.skill) else {
            return Err(ToolError::new(format!("Unknown skill `{}`.", input.skill)));
        };
        let (text, label) = match &entry {
            Entry::Skill(skill) => (
                skill_text(skill, input.args.as_deref()),
                format!("Loaded skill {}", skill.name),
            ),
            Entry::Command(command) => (
                command_text(command, input.args.as_deref()),
                format!("Loaded command /{}", command.name),
            ),
        };
        let output = ToolOutput::with_display(text, Display::Text { text: label });
        if entry.allowed_tools().is_empty() && entry.model().is_none() {
            return Ok(output);
        }
        Ok(output.with_effect(Effect::ForTurn {
            allowed_tools: entry.allowed_tools().to_vec(),
            model: entry.model().cloned(),
        }))
    }
}
