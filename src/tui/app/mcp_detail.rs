//! One MCP server's detail for `/mcp` (Enter on a server): the actions (reconnect, disable,
//! back; enable for a server that is off) and what a person needs to see why it failed — its
//! state in plain words, the connection's own error, what it runs, the configuration file it
//! came from, its log file and the last lines it wrote to stderr — as picker rows, each value wrapped to a width that fits a 60-column terminal, so
//! nothing is cut. Pure: the rows are built from the host's [`McpServerInfo`].

use crate::protocol::McpServerInfo;
use crate::tui::conversation::wrap::str_width;

/// The actions of a server that is on, first (their numbers are the keys).
pub(super) const RECONNECT: &str = "1. Reconnect";
pub(super) const DISABLE: &str = "2. Disable";
pub(super) const BACK: &str = "3. Back";
/// The actions of a server that is off.
pub(super) const ENABLE: &str = "1. Enable";
pub(super) const BACK_OFF: &str = "2. Back";

/// The columns a value is wrapped to: a 60-column window's picker, less its border, the label
/// column and the gap.
const VALUE_WIDTH: usize = 42;

/// The rows: the actions, then label and value rows (a wrapped value's further rows have no
/// label). Text from the server is made printable.
pub(super) fn rows(server: &McpServerInfo) -> Vec<(String, String)> {
    let actions: &[&str] = match server.disabled {
        true => &[ENABLE, BACK_OFF],
        false => &[RECONNECT, DISABLE, BACK],
    };
    let mut rows: Vec<(String, String)> = actions
        .iter()
        .map(|a| (a.to_string(), String::new()))
        .collect();
    let mut add = |label: &str, value: &str| {
        for (i, line) in wrap(&printable(value), VALUE_WIDTH).into_iter().enumerate() {
            let label = if i == 0 { label } else { "" };
            rows.push((label.to_string(), line));
        }
    };
    add("server", &server.name);
    add("status", &server.status);
    if let Some(error) = &server.error {
        add("error", error);
    }
    add("runs", &server.command);
    add("from", &server.source);
    if let Some(log) = &server.log {
        add("log", log);
    }
    if server.stderr.is_empty() {
        add("stderr", "(nothing)");
    }
    for (i, line) in server.stderr.iter().enumerate() {
        add(if i == 0 { "stderr" } else { "" }, line);
    }
    rows
}

/// `text` cut into lines of at most `width` columns, at spaces when it can (a longer word is
/// cut between characters). At least one line.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let gap = usize::from(!line.is_empty());
        if str_width(&line) + gap + str_width(word) <= width {
            if gap == 1 {
                line.push(' ');
            }
            line.push_str(word);
            continue;
        }
        if !line.is_empty() {
            lines.push(std::mem::take(&mut line));
        }
        for c in word.chars() {
            if str_width(&line) + str_width(c.encode_utf8(&mut [0; 4])) > width {
                lines.push(std::mem::take(&mut line));
            }
            line.push(c);
        }
    }
    lines.push(line);
    lines
}

/// `text` as one printable line: control characters (a line break too) become spaces.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_values_wrap_within_the_width() {
        assert_eq!(wrap("", 10), [""]);
        assert_eq!(wrap("a bb ccc dddd", 6), ["a bb", "ccc", "dddd"]);
        assert_eq!(wrap("abcdefgh", 3), ["abc", "def", "gh"]);
    }
}
