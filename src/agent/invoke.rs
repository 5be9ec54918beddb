//! What a prompt invokes before it goes to the model: `/init`, one of the person's slash
//! commands, or one of their skills (`/name args`, by the skill's name or its directory's). A
//! `/name` that is none of these is not a prompt: [`unknown`] says so, with the closest names,
//! and nothing goes to the model (`/etc/hosts is wrong` is a path, not a name: a prompt).
//!
//! The person typed the invocation, so a command's or skill's `allowed-tools` are allowed for
//! the rest of the turn and its `model` is used for the turn; both end with the turn. These
//! grants are the gate's weaker kind: deny and ask rules still win, and they never cover a path
//! outside the working directories or a protected one (the call is then decided as without
//! them). A command's `` !`cmd` `` parts run first, each as a Bash call through the executor —
//! so the permission rules, the prompt and the hooks apply exactly as to the model's calls —
//! and their output replaces them. A part that is refused or fails says so in its place; the
//! prompt still goes to the model. (A skill the model loads grants nothing until the person
//! approves the call: `tools/skill.rs`.)

use std::sync::Arc;

use super::executor::{CallEnv, Executor};
use crate::commands::skills::Skill;
use crate::commands::{CustomCommand, Piece, closest_names, fill, find, invocation, pieces};
use crate::llm::ContentBlock;
use crate::tools::bash::BashTool;

/// The prompt as the model gets it, and what the invocation asks for the turn.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Invoked {
    pub prompt: String,
    pub allowed_tools: Vec<String>,
    pub model: Option<String>,
}

/// What `prompt` invokes, expanded; `None` when it is an ordinary prompt.
pub(crate) async fn invoke(
    prompt: &str,
    commands: &[CustomCommand],
    skills: &[Skill],
    env: Arc<CallEnv>,
) -> Option<Invoked> {
    if let Some(text) = super::init::expand(prompt) {
        return Some(Invoked {
            prompt: text,
            ..Invoked::default()
        });
    }
    if let Some((cmd, args)) = find(commands, prompt) {
        // Granted first: `allowed-tools: Bash(git status:*)` is what lets `!`git status`` run.
        grant(&env, &cmd.allowed_tools);
        let body = run_shell_parts(&cmd.body, &env).await;
        return Some(Invoked {
            prompt: fill(&body, args),
            allowed_tools: cmd.allowed_tools.clone(),
            model: cmd.model.clone(),
        });
    }
    let (name, args) = invocation(prompt)?;
    let skill = skills
        .iter()
        .find(|s| s.user_invocable && s.answers_to(name))?;
    grant(&env, &skill.allowed_tools);
    Some(Invoked {
        prompt: crate::tools::skill::skill_text(skill, Some(args)),
        allowed_tools: skill.allowed_tools.clone(),
        model: skill.model.clone(),
    })
}

/// The notice for `prompt` when it is `/name` and no command or skill is called `name`;
/// `None` when it is a command, a skill, `/init` or an ordinary prompt.
pub(crate) fn unknown(
    prompt: &str,
    commands: &[CustomCommand],
    skills: &[Skill],
) -> Option<String> {
    let (name, _) = invocation(prompt)?;
    let known = super::init::expand(prompt).is_some()
        || find(commands, prompt).is_some()
        || skills
            .iter()
            .any(|s| s.user_invocable && s.answers_to(name));
    if known {
        return None;
    }
    let names = std::iter::once("init")
        .chain(commands.iter().map(|c| c.name.as_str()))
        .chain(
            skills
                .iter()
                .filter(|s| s.user_invocable)
                .flat_map(|s| [s.name.as_str(), s.dir_name.as_str()]),
        );
    let close = closest_names(name, names);
    let hint = if close.is_empty() {
        String::new()
    } else {
        let close: Vec<String> = close.iter().map(|n| format!("/{n}")).collect();
        format!(" Did you mean {}?", close.join(", "))
    };
    Some(format!(
        "Unknown command: /{name}.{hint} Nothing was sent to the model."
    ))
}

fn grant(env: &CallEnv, rules: &[String]) {
    for message in env.gate.allow_for_turn(&env.session.conversation, rules) {
        env.session
            .events
            .send(crate::protocol::Event::Notice { message });
    }
}

/// `body` with each `` !`cmd` `` replaced by what running it printed (or why it did not run).
async fn run_shell_parts(body: &str, env: &Arc<CallEnv>) -> String {
    let parts = pieces(body);
    if !parts.iter().any(|p| matches!(p, Piece::Shell(_))) {
        return body.to_string();
    }
    let mut executor = Executor::new(Arc::clone(env));
    for (n, part) in parts.iter().enumerate() {
        if let Piece::Shell(command) = part {
            let (tool, input) = BashTool::call(command, "Run for a slash command");
            executor.submit(format!("command-shell-{n}"), tool, input);
        }
    }
    let mut results = executor.finish().await.into_iter();
    let mut out = String::new();
    for part in parts {
        match part {
            Piece::Text(text) => out.push_str(text),
            Piece::Shell(command) => match results.next() {
                Some(ContentBlock::ToolResult {
                    content, is_error, ..
                }) => {
                    let text = content.text();
                    if is_error {
                        out.push_str(&format!("(`{command}`: {})", text.trim()));
                    } else {
                        out.push_str(text.trim_end());
                    }
                }
                _ => out.push_str(&format!("(`{command}` did not run)")),
            },
        }
    }
    out
}
