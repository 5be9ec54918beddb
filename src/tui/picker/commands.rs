//! The slash commands: a table of names and help, and filtering it for the `/` picker.

/// A slash command the composer understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Help,
    Clear,
    Model,
    Mode,
    Copy,
    Transcript,
    Plan,
    Diff,
    Init,
    Memory,
    Resume,
    Rewind,
    Compact,
    Cost,
    Context,
    Agents,
    Tasks,
    Mcp,
    Plugin,
    Lsp,
    Diagnostics,
    Exit,
}

/// (name without the slash, command, one-line help).
pub const COMMANDS: &[(&str, Command, &str)] = &[
    ("help", Command::Help, "show keys and commands"),
    ("clear", Command::Clear, "start a fresh conversation"),
    (
        "model",
        Command::Model,
        "switch the model (/model opus, sonnet, haiku, opusplan or an id)",
    ),
    (
        "mode",
        Command::Mode,
        "show or set the permission mode (/mode plan)",
    ),
    ("copy", Command::Copy, "copy the last answer (OSC 52)"),
    (
        "transcript",
        Command::Transcript,
        "open the full transcript",
    ),
    (
        "plan",
        Command::Plan,
        "enter plan mode (plan first, change nothing)",
    ),
    (
        "diff",
        Command::Diff,
        "review every file cairn changed in this session",
    ),
    (
        "init",
        Command::Init,
        "have the model write a CLAUDE.md for this project",
    ),
    (
        "memory",
        Command::Memory,
        "list the memory files and edit one in $EDITOR",
    ),
    (
        "resume",
        Command::Resume,
        "continue an earlier session of this project",
    ),
    (
        "rewind",
        Command::Rewind,
        "go back to before a prompt: the files, the conversation or both (Esc Esc)",
    ),
    (
        "compact",
        Command::Compact,
        "summarise the conversation to free context (/compact [what to keep])",
    ),
    (
        "cost",
        Command::Cost,
        "tokens, cache hits and cost of this session, per model",
    ),
    ("context", Command::Context, "what fills the context window"),
    (
        "agents",
        Command::Agents,
        "the sub-agents the model can hand tasks to",
    ),
    (
        "tasks",
        Command::Tasks,
        "the background agents: running and finished",
    ),
    (
        "mcp",
        Command::Mcp,
        "the MCP servers: transport, status, tool count",
    ),
    (
        "plugin",
        Command::Plugin,
        "the plugins and what each contributes",
    ),
    (
        "lsp",
        Command::Lsp,
        "the language servers: state and log (/lsp restart NAME)",
    ),
    (
        "diagnostics",
        Command::Diagnostics,
        "what the language servers report for the open files",
    ),
    ("exit", Command::Exit, "quit cairn"),
];

/// Parse `/name args`: the command and its argument text. `None` for an unknown name.
pub fn parse(text: &str) -> Option<(Command, &str)> {
    let rest = text.strip_prefix('/')?;
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    COMMANDS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|(_, c, _)| (*c, args.trim()))
}

/// Commands whose name starts with `query` (then those containing it).
pub fn filter(query: &str) -> Vec<(&'static str, &'static str)> {
    let q = query.to_lowercase();
    let mut out: Vec<(&str, &str)> = COMMANDS
        .iter()
        .filter(|(n, _, _)| n.starts_with(&q))
        .map(|(n, _, h)| (*n, *h))
        .collect();
    out.extend(
        COMMANDS
            .iter()
            .filter(|(n, _, _)| !n.starts_with(&q) && n.contains(&q))
            .map(|(n, _, h)| (*n, *h)),
    );
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_and_arguments() {
        assert_eq!(parse("/mode plan"), Some((Command::Mode, "plan")));
        assert_eq!(parse("/exit"), Some((Command::Exit, "")));
        assert_eq!(parse("/nope"), None);
        assert_eq!(parse("exit"), None);
    }

    #[test]
    fn filters_by_prefix_first() {
        let names: Vec<&str> = filter("c").into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            [
                "clear",
                "copy",
                "compact",
                "cost",
                "context",
                "transcript",
                "mcp",
                "diagnostics"
            ]
        );
        assert_eq!(parse("/plan"), Some((Command::Plan, "")));
        assert_eq!(parse("/diff"), Some((Command::Diff, "")));
        assert_eq!(filter("").len(), COMMANDS.len());
    }
}
