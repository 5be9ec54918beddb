//! Recomputing a proposed file change when the file changed on disk under an open prompt.
//!
//! Pure text functions: given the tool's input and the new disk text, what would the tool write
//! now? Write proposes its `content` whatever the file holds; Edit and MultiEdit re-apply their
//! `old_string` -> `new_string` replacements to the new text with the tool's own rules (exact
//! match, unique unless `replace_all`). When a replacement no longer applies the answer is
//! [`Reapplied::NoLongerApplies`]: the prompt keeps the old diff and says so.

use serde_json::Value;

/// What the proposal becomes against the new disk text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reapplied {
    /// The content the tool would now write.
    After(String),
    /// An `old_string` is missing (or no longer unique) in the new text.
    NoLongerApplies,
    /// Not a file-writing tool this module knows.
    Unknown,
}

/// Re-apply `tool`'s `input` to `disk` (`None`: the file was deleted).
pub fn reapply(tool: &str, input: &Value, disk: Option<&str>) -> Reapplied {
    match tool {
        "Write" => match input.get("content").and_then(Value::as_str) {
            Some(content) => Reapplied::After(content.to_string()),
            None => Reapplied::Unknown,
        },
        "Edit" => match disk {
            Some(text) => apply_all(text, std::slice::from_ref(input)),
            None => Reapplied::NoLongerApplies,
        },
        "MultiEdit" => match (disk, input.get("edits").and_then(Value::as_array)) {
            (Some(text), Some(edits)) => apply_all(text, edits),
            (None, Some(_)) => Reapplied::NoLongerApplies,
            _ => Reapplied::Unknown,
        },
        _ => Reapplied::Unknown,
    }
}

fn apply_all(text: &str, edits: &[Value]) -> Reapplied {
    let mut out = text.to_string();
    for edit in edits {
        let (Some(old), Some(new)) = (
            edit.get("old_string").and_then(Value::as_str),
            edit.get("new_string").and_then(Value::as_str),
        ) else {
            return Reapplied::Unknown;
        };
        let all = edit
            .get("replace_all")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        match apply_one(&out, old, new, all) {
            Some(next) => out = next,
            None => return Reapplied::NoLongerApplies,
        }
    }
    Reapplied::After(out)
}

/// One replacement with the Edit tool's rules; `None` when it does not apply.
fn apply_one(text: &str, old: &str, new: &str, all: bool) -> Option<String> {
    if old.is_empty() {
        return None;
    }
    let count = text.matches(old).count();
    match (count, all) {
        (0, _) => None,
        (_, true) => Some(text.replace(old, new)),
        (1, false) => Some(text.replacen(old, new, 1)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn write_proposes_its_content_whatever_the_disk_holds() {
        let input = json!({"file_path": "/p/a.txt", "content": "new\n"});
        assert_eq!(
            reapply("Write", &input, Some("changed\n")),
            Reapplied::After("new\n".into())
        );
        assert_eq!(
            reapply("Write", &input, None),
            Reapplied::After("new\n".into())
        );
    }

    #[test]
    fn edit_reapplies_to_the_new_text() {
        let input = json!({"old_string": "b", "new_string": "B"});
        assert_eq!(
            reapply("Edit", &input, Some("a\nb\nc\nadded\n")),
            Reapplied::After("a\nB\nc\nadded\n".into())
        );
        assert_eq!(
            reapply("Edit", &input, Some("a\nc\n")),
            Reapplied::NoLongerApplies
        );
        // Not unique any more and not replace_all: the tool would refuse.
        assert_eq!(
            reapply("Edit", &input, Some("b\nb\n")),
            Reapplied::NoLongerApplies
        );
        let all = json!({"old_string": "b", "new_string": "B", "replace_all": true});
        assert_eq!(
            reapply("Edit", &all, Some("b\nb\n")),
            Reapplied::After("B\nB\n".into())
        );
        assert_eq!(reapply("Edit", &input, None), Reapplied::NoLongerApplies);
    }

    #[test]
    fn multi_edit_applies_in_order_and_fails_as_a_whole() {
        let input = json!({"edits": [
            {"old_string": "one", "new_string": "two"},
            {"old_string": "two two", "new_string": "three"},
        ]});
        assert_eq!(
            reapply("MultiEdit", &input, Some("one two\n")),
            Reapplied::After("three\n".into())
        );
        assert_eq!(
            reapply("MultiEdit", &input, Some("one one\n")),
            Reapplied::NoLongerApplies
        );
        assert_eq!(reapply("Bash", &input, Some("x")), Reapplied::Unknown);
    }
}
