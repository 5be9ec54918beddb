//! The `toolSearch` setting (and `ENABLE_TOOL_SEARCH`): when MCP tools are deferred behind
//! ToolSearch. Parsing only; the agent's `deferral` module acts on it.

/// What a session decides about deferred tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ToolSearchConfig {
    pub mode: ToolSearchMode,
    /// Whether the endpoint takes `defer_loading` and `tool_reference`; `None`: as the client
    /// says (first-party Anthropic).
    pub references: Option<bool>,
}

/// When MCP tools are deferred (`toolSearch` setting, `ENABLE_TOOL_SEARCH`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolSearchMode {
    /// Once MCP tools' schemas would take more than `percent` of the context window; `auto`
    /// is 0: every MCP tool is deferred, as Claude Code and Codex do.
    Auto { percent: u8 },
    /// Always: every MCP tool is deferred.
    Always,
    /// Never: nothing is deferred and ToolSearch is not offered.
    Never,
}

impl Default for ToolSearchMode {
    fn default() -> Self {
        ToolSearchMode::Auto { percent: 0 }
    }
}

impl ToolSearchMode {
    /// `auto`, `auto:N` (percent), `always`/`true`/`1`, `never`/`false`/`0`.
    pub fn parse(value: &str) -> Option<ToolSearchMode> {
        let v = value.trim().to_ascii_lowercase();
        match v.as_str() {
            "auto" => Some(ToolSearchMode::default()),
            "always" | "true" | "1" | "on" => Some(ToolSearchMode::Always),
            "never" | "false" | "0" | "off" => Some(ToolSearchMode::Never),
            _ => {
                let percent: u8 = v.strip_prefix("auto:")?.trim().parse().ok()?;
                (percent <= 100).then_some(ToolSearchMode::Auto { percent })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_from_settings_and_the_environment() {
        assert_eq!(
            ToolSearchMode::parse("auto"),
            Some(ToolSearchMode::Auto { percent: 0 })
        );
        assert_eq!(
            ToolSearchMode::parse("auto:5"),
            Some(ToolSearchMode::Auto { percent: 5 })
        );
        assert_eq!(ToolSearchMode::parse("TRUE"), Some(ToolSearchMode::Always));
        assert_eq!(
            ToolSearchMode::parse("always"),
            Some(ToolSearchMode::Always)
        );
        assert_eq!(ToolSearchMode::parse("0"), Some(ToolSearchMode::Never));
        assert_eq!(ToolSearchMode::parse("auto:200"), None);
        assert_eq!(ToolSearchMode::parse("sometimes"), None);
    }
}
