//! The settings that shape how a session looks rather than what it may do: `statusLine` (a
//! command whose output replaces the built-in status text) and `outputStyle` (the name of the
//! output style the system prompt follows). Both are scalars: the highest layer that sets one
//! wins, as for `model`. A wrong shape is a diagnostic naming the file and line, never an
//! error: losing either only loses a preference. This module only reads values; running the
//! command is the TUI's business and finding the style's file is the agent's.

use std::collections::BTreeMap;

use serde_json::Value;

use super::layers::{Origin, Problems, SettingsSource};

/// `"statusLine": {"type": "command", "command": "...", "padding": 0}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusLineSetting {
    /// Run with `sh -c` in the project directory.
    pub command: String,
    /// Columns left blank before the command's text.
    pub padding: u16,
}

/// The merged values.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Appearance {
    /// `statusLine`: the command whose output is the TUI's status line.
    pub status_line: Option<StatusLineSetting>,
    /// `outputStyle`: the name of the output style, as written.
    pub output_style: Option<String>,
}

impl Appearance {
    /// Read `statusLine` and `outputStyle` from one settings document (documents come highest
    /// layer first), unless a higher layer already set them; `origins` records where each
    /// value came from under its key.
    pub fn merge(
        &mut self,
        src: &SettingsSource,
        origins: &mut BTreeMap<String, Origin>,
        diags: &mut Problems,
    ) {
        if let Some(value) = src.value.get("statusLine") {
            match parse_status_line(value) {
                Ok(setting) if self.status_line.is_none() => {
                    self.status_line = Some(setting);
                    origins.insert("statusLine".into(), src.origin.clone());
                }
                Ok(_) => {}
                Err(why) => diags.push(src.diagnostic("\"statusLine\"", &why)),
            }
        }
        if let Some(value) = src.value.get("outputStyle") {
            match value.as_str().map(str::trim) {
                Some(name) if !name.is_empty() => {
                    if self.output_style.is_none() {
                        self.output_style = Some(name.to_string());
                        origins.insert("outputStyle".into(), src.origin.clone());
                    }
                }
                _ => diags.push(src.diagnostic(
                    "\"outputStyle\"",
                    "`outputStyle` must be the name of a style (a non-empty string); ignored",
                )),
            }
        }
    }
}

/// The setting, or why it cannot be used (the diagnostic's text).
fn parse_status_line(value: &Value) -> Result<StatusLineSetting, String> {
    let Some(obj) = value.as_object() else {
        return Err(
            "`statusLine` must be an object like {\"type\": \"command\", \"command\": \"...\"}; \
             ignored"
                .into(),
        );
    };
    match obj.get("type").and_then(Value::as_str) {
        Some("command") => {}
        Some(other) => {
            return Err(format!(
                "`statusLine.type` \"{other}\" is not supported (only \"command\"); ignored"
            ));
        }
        None => return Err("`statusLine.type` must be \"command\"; ignored".into()),
    }
    let command = obj
        .get("command")
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .ok_or("`statusLine.command` must be a non-empty string; ignored")?;
    let padding = match obj.get("padding") {
        None | Some(Value::Null) => 0,
        Some(p) => p
            .as_u64()
            .and_then(|n| u16::try_from(n).ok())
            .filter(|n| *n <= 40)
            .ok_or(format!(
                "`statusLine.padding` {p} must be a whole number from 0 to 40; ignored"
            ))?,
    };
    Ok(StatusLineSetting {
        command: command.to_string(),
        padding,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::layers::Layer;

    /// Merge documents given highest layer first, as the settings loader does.
    fn merged(docs: &[(Layer, &str)]) -> (Appearance, BTreeMap<String, Origin>, Problems) {
        let mut out = Appearance::default();
        let mut origins = BTreeMap::new();
        let mut diags = Problems::default();
        for (layer, text) in docs {
            let src = SettingsSource {
                origin: Origin {
                    layer: *layer,
                    source: format!("{}.json", layer.name()),
                },
                text: text.to_string(),
                value: serde_json::from_str(text).unwrap(),
            };
            out.merge(&src, &mut origins, &mut diags);
        }
        (out, origins, diags)
    }

    #[test]
    fn the_highest_layer_wins_for_both_keys() {
        let (got, origins, diags) = merged(&[
            (
                Layer::Project,
                r#"{"statusLine": {"type": "command", "command": "./line.sh", "padding": 2},
                    "outputStyle": "Explanatory"}"#,
            ),
            (
                Layer::User,
                r#"{"statusLine": {"type": "command", "command": "~/.claude/statusline.sh"},
                    "outputStyle": "Learning"}"#,
            ),
        ]);
        assert_eq!(
            got.status_line,
            Some(StatusLineSetting {
                command: "./line.sh".into(),
                padding: 2
            })
        );
        assert_eq!(got.output_style.as_deref(), Some("Explanatory"));
        assert!(diags.notes.is_empty(), "{:?}", diags.notes);
        assert_eq!(origins["statusLine"].layer, Layer::Project);
        assert_eq!(origins["outputStyle"].source, "project.json");
    }

    #[test]
    fn wrong_shapes_are_diagnostics_and_a_lower_layer_still_applies() {
        let (got, origins, diags) = merged(&[
            (
                Layer::Project,
                "{\n\"statusLine\": \"echo hi\",\n\"outputStyle\": 3\n}",
            ),
            (
                Layer::User,
                r#"{"statusLine": {"type": "command", "command": "echo from home"}}"#,
            ),
        ]);
        assert_eq!(
            got.status_line.as_ref().map(|s| s.command.as_str()),
            Some("echo from home")
        );
        assert_eq!(origins["statusLine"].layer, Layer::User);
        assert_eq!(got.output_style, None);
        assert_eq!(
            diags.notes,
            [
                "project.json:2: `statusLine` must be an object like {\"type\": \"command\", \
                 \"command\": \"...\"}; ignored",
                "project.json:3: `outputStyle` must be the name of a style (a non-empty string); \
                 ignored"
            ]
        );
        assert!(
            diags.broken.is_empty(),
            "a preference never closes the gate"
        );
    }

    #[test]
    fn status_line_fields_are_checked() {
        let bad = |v: Value| parse_status_line(&v).err().unwrap_or_default();
        assert!(bad(serde_json::json!({"type": "text", "command": "x"})).contains("\"text\""));
        assert!(bad(serde_json::json!({"command": "x"})).contains("`statusLine.type`"));
        assert!(bad(serde_json::json!({"type": "command", "command": " "})).contains("command"));
        assert!(
            bad(serde_json::json!({"type": "command", "command": "x", "padding": -1}))
                .contains("padding")
        );
        assert_eq!(
            parse_status_line(&serde_json::json!({"type": "command", "command": " x "})),
            Ok(StatusLineSetting {
                command: "x".into(),
                padding: 0
            })
        );
    }
}
