//! What kind of work a tool does, and the tool words of the permission-rule language.
//!
//! Permissions decide from a call's [`ToolKind`] and its accesses, never from its name: edit
//! tools share `Edit(...)` rules and the acceptEdits mode, execute tools are covered by
//! `Bash(...)` command rules, and so on. The rule language (Claude Code's) names these families
//! by the names of built-in tools, so the words live here, beside the tools they name: which
//! kind a rule's tool word speaks for, and the rule word of each kind.

/// The kind of a tool, declared by the tool itself ([`super::Tool::kind`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ToolKind {
    /// Reads or searches files (Read, Glob, Grep): `Read(path)` rules speak about them.
    Read,
    /// Changes files (Write, Edit, MultiEdit, NotebookEdit): `Edit` rules and the acceptEdits
    /// mode cover every tool of this kind.
    Edit,
    /// Runs commands (Bash and its background-shell tools): `Bash(command)` rules.
    Execute,
    /// Fetches URLs (WebFetch): `WebFetch(domain:host)` rules.
    Fetch,
    /// Switches the session in or out of plan mode.
    Plan,
    /// Asks the person something, or talks to them.
    Interact,
    /// A tool of an MCP server (`mcp__server__tool`).
    Mcp,
    /// Anything else: matched by its own name only.
    Other,
}

/// Which server and which of its tools an MCP tool is (both normalised as in its full name
/// `mcp__<server>__<tool>`). Rules match MCP tools on this pair, never on the joined name:
/// `mcp__safe` names the tools of server `safe`, not those of a server `safe__evil`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct McpName<'a> {
    pub server: &'a str,
    pub tool: &'a str,
}

/// The built-in tool words of the rule language and the kind each speaks for. A rule word
/// that is not here (an MCP tool, a test's tool) takes name specifiers.
const RULE_WORDS: &[(&str, ToolKind)] = &[
    ("Read", ToolKind::Read),
    ("Glob", ToolKind::Read),
    ("Grep", ToolKind::Read),
    ("Edit", ToolKind::Edit),
    ("Write", ToolKind::Edit),
    ("MultiEdit", ToolKind::Edit),
    ("NotebookEdit", ToolKind::Edit),
    ("Bash", ToolKind::Execute),
    ("WebFetch", ToolKind::Fetch),
];

/// Older names rules may use for a tool (`Task(...)` rules mean `Agent(...)`).
const RULE_ALIASES: &[(&str, &str)] = &[("Task", "Agent")];

/// What a rule's specifier means, by the kind its tool word speaks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleSyntax {
    /// A command pattern (`Bash(npm run *)`).
    Command,
    /// A path pattern about reading (`Read(./secrets/**)`).
    ReadPath,
    /// A path pattern about writing (`Edit(src/**)`).
    EditPath,
    /// `domain:host` (`WebFetch(domain:docs.rs)`).
    Domain,
    /// A name pattern (`Agent(Explore)`, `Skill(git-*)`).
    Name,
}

impl ToolKind {
    /// The kind a rule's tool word speaks for, when it is a built-in tool's word.
    pub fn of_rule_word(word: &str) -> Option<ToolKind> {
        RULE_WORDS
            .iter()
            .find(|(w, _)| *w == word)
            .map(|(_, kind)| *kind)
    }

    /// The rule word that names every tool of this kind in the rules cairn writes (`Edit` for
    /// edit tools, `Bash` for commands), if the kind has one.
    pub fn rule_word(self) -> Option<&'static str> {
        match self {
            ToolKind::Read => Some("Read"),
            ToolKind::Edit => Some("Edit"),
            ToolKind::Execute => Some("Bash"),
            ToolKind::Fetch => Some("WebFetch"),
            _ => None,
        }
    }

    /// A rule of this kind's word with `spec` (`Bash(git log *)`), if the kind has a word.
    pub fn rule(self, spec: &str) -> Option<String> {
        self.rule_word().map(|w| format!("{w}({spec})"))
    }

    /// Whether one rule naming a tool of this kind covers every tool of the kind (edit tools
    /// share their rules; read tools do not share bare rules).
    pub fn shares_rules(self) -> bool {
        self == ToolKind::Edit
    }
}

/// The word a rule or tool name stands for (`Task` -> `Agent`), else the word itself.
pub fn canonical_rule_word(word: &str) -> &str {
    RULE_ALIASES
        .iter()
        .find(|(old, _)| *old == word)
        .map_or(word, |(_, new)| new)
}

/// What the specifier of a rule for `word` means.
pub fn rule_syntax(word: &str) -> RuleSyntax {
    match ToolKind::of_rule_word(word) {
        Some(ToolKind::Execute) => RuleSyntax::Command,
        Some(ToolKind::Read) => RuleSyntax::ReadPath,
        Some(ToolKind::Edit) => RuleSyntax::EditPath,
        Some(ToolKind::Fetch) => RuleSyntax::Domain,
        _ => RuleSyntax::Name,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::context::SessionContext;
    use crate::tools::registry::builtin_tools;

    #[test]
    fn every_builtin_with_a_rule_word_declares_that_kind() {
        let tmp = tempfile::tempdir().unwrap();
        let session = SessionContext::for_dir(tmp.path());
        for tool in builtin_tools(&session) {
            if let Some(kind) = ToolKind::of_rule_word(tool.name()) {
                assert_eq!(tool.kind(), kind, "{}", tool.name());
            }
        }
    }

    #[test]
    fn words_and_aliases() {
        assert_eq!(rule_syntax("Write"), RuleSyntax::EditPath);
        assert_eq!(rule_syntax("Grep"), RuleSyntax::ReadPath);
        assert_eq!(rule_syntax("mcp__x__y"), RuleSyntax::Name);
        assert_eq!(canonical_rule_word("Task"), "Agent");
        assert_eq!(
            ToolKind::Execute.rule("ls *").as_deref(),
            Some("Bash(ls *)")
        );
        assert_eq!(ToolKind::Plan.rule("x"), None);
    }
}
