//! The names MCP tools go by: `mcp__<server>__<tool>`, each part normalised as Claude Code does
//! (characters outside `[A-Za-z0-9_-]` become `_`), and which server names are refused because
//! they would make that name ambiguous. Rules match a tool on its (server, tool) pair, and a
//! rule's text `mcp__a__b__c` is read as server `a`, tool `b__c`: that reading is the only one
//! when no server name holds `__` or ends in `_`, so such names are refused before a server
//! starts. Tool names need no such care: whatever follows the server's `__` is the tool.

/// A server's or tool's name as it appears in `mcp__<server>__<tool>`.
pub fn normalize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Why a server may not have this name (its tools' names would be ambiguous), or None.
pub fn server_name_problem(name: &str) -> Option<String> {
    let normal = normalize(name);
    let as_written = if normal == name {
        String::new()
    } else {
        format!(" (as a tool name prefix: {normal:?})")
    };
    let why = if name.is_empty() {
        return Some("the name is empty".into());
    } else if normal.contains("__") {
        "contains \"__\""
    } else if normal.ends_with('_') {
        "ends with \"_\""
    } else {
        return None;
    };
    Some(format!(
        "the name {why}{as_written}, which makes its tools' names mcp__<server>__<tool> \
         ambiguous (a rule for one server could match another's tools); the server is not \
         started: rename it"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_server_names_are_refused_with_the_reason() {
        for ok in ["safe", "my-server", "fs_1", "_lead", "a_b"] {
            assert_eq!(server_name_problem(ok), None, "{ok}");
        }
        let why = server_name_problem("safe__evil").unwrap();
        assert!(
            why.starts_with("the name contains \"__\", which makes"),
            "{why}"
        );
        assert!(why.contains("not started"), "{why}");
        // Characters that become `_` count: `a..b` is `a__b` in a tool's name.
        let why = server_name_problem("a..b").unwrap();
        assert!(
            why.contains("contains \"__\" (as a tool name prefix: \"a__b\")"),
            "{why}"
        );
        assert!(
            server_name_problem("trail_")
                .unwrap()
                .contains("ends with \"_\"")
        );
        assert!(
            server_name_problem("dot.")
                .unwrap()
                .contains("ends with \"_\"")
        );
        assert_eq!(server_name_problem("").unwrap(), "the name is empty");
    }
}
