//! `enabledPlugins`: which installed plugins the settings turn on or off, in Claude Code's
//! shape — `{"name@marketplace": true|false}`. Any layer may name a plugin; for one plugin
//! the highest layer's value wins (a project's `false` turns off a plugin the person enabled,
//! a project's `true` turns one on). A value that is not `true` or `false` is a diagnostic and
//! counts for nothing. Only values are read here: which layer said it is kept, because a
//! plugin turned on by a project's settings is project configuration, which must wait for the
//! folder's trust before its hooks and servers apply (`crate::plugins` decides that). An
//! untrusted project keeps this key through the narrowing (`untrusted.rs`) for that reason.

use super::layers::{Layer, Problems, SettingsSource};

/// One plugin named in `enabledPlugins`, as the highest layer naming it says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnabledPlugin {
    /// `name@marketplace`.
    pub id: String,
    pub enabled: bool,
    /// The layer whose value won.
    pub layer: Layer,
    /// The file it came from.
    pub source: String,
}

impl EnabledPlugin {
    /// Whether the value came from the project's own settings (shared or local).
    pub fn from_project(&self) -> bool {
        matches!(self.layer, Layer::Project | Layer::ProjectLocal)
    }
}

/// Read `enabledPlugins` from one settings document (documents come highest layer first); a
/// plugin a higher layer named keeps that layer's value.
pub fn merge(into: &mut Vec<EnabledPlugin>, src: &SettingsSource, diags: &mut Problems) {
    let Some(value) = src.value.get("enabledPlugins") else {
        return;
    };
    let Some(map) = value.as_object() else {
        diags.push(src.diagnostic(
            "\"enabledPlugins\"",
            "`enabledPlugins` must be an object of `\"name@marketplace\": true|false`; ignored",
        ));
        return;
    };
    for (id, on) in map {
        let Some(enabled) = on.as_bool() else {
            diags.push(src.diagnostic(
                &format!("\"{id}\""),
                &format!("`enabledPlugins.{id}` must be true or false; ignored"),
            ));
            continue;
        };
        if into.iter().any(|p| &p.id == id) {
            continue;
        }
        into.push(EnabledPlugin {
            id: id.clone(),
            enabled,
            layer: src.origin.layer,
            source: src.origin.source.clone(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::super::layers::Origin;
    use super::*;

    fn src(layer: Layer, text: &str) -> SettingsSource {
        SettingsSource {
            origin: Origin {
                layer,
                source: format!("/{}.json", layer.name()),
            },
            text: text.into(),
            value: serde_json::from_str(text).unwrap(),
        }
    }

    #[test]
    fn the_highest_layer_naming_a_plugin_wins_and_bad_values_are_reported() {
        let mut out = Vec::new();
        let mut diags = Problems::default();
        let project = src(
            Layer::Project,
            "{\"enabledPlugins\": {\"a@m\": false, \"c@m\": \"yes\"}}",
        );
        let user = src(
            Layer::User,
            "{\"enabledPlugins\": {\"a@m\": true, \"b@m\": true}}",
        );
        merge(&mut out, &project, &mut diags);
        merge(&mut out, &user, &mut diags);
        let got: Vec<(&str, bool, bool)> = out
            .iter()
            .map(|p| (p.id.as_str(), p.enabled, p.from_project()))
            .collect();
        assert_eq!(got, [("a@m", false, true), ("b@m", true, false)]);
        assert_eq!(
            diags.notes,
            ["/project.json:1: `enabledPlugins.c@m` must be true or false; ignored"]
        );
    }
}
