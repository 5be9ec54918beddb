//! The fixture plugin (`tests/fixtures/plugins/marketplace/plugins/demo-kit`) read as a
//! session reads it, and who may turn a plugin on.

use std::path::{Path, PathBuf};

use super::*;
use crate::config::layers::Layer;
use crate::config::plugins::EnabledPlugin;
use crate::mcp::config::Transport;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/plugins/marketplace")
}

fn env(k: &str) -> Option<String> {
    (k == "CAIRN_EVERYTHING_JS").then(|| "/opt/everything.js".to_string())
}

#[test]
fn a_plugin_dir_contributes_every_part_namespaced_with_its_root_filled_in() {
    let root = fixture().join("plugins/demo-kit");
    let set = load(
        &LoadedSettings::default(),
        std::slice::from_ref(&root),
        None,
        &env,
    );
    assert_eq!(set.problems, Vec::<String>::new());
    let p = &set.plugins[0];
    assert_eq!(
        (p.id.as_str(), p.version.as_deref()),
        ("demo-kit@inline", Some("1.0.0"))
    );
    let names = |v: Vec<&str>| v.join(" ");
    assert_eq!(
        names(p.parts.commands.iter().map(|c| c.name.as_str()).collect()),
        "demo-kit:hello demo-kit:tools:count"
    );
    let root_text = root.display().to_string();
    assert!(
        p.parts.commands[0]
            .body
            .contains(&format!("lives in {root_text}."))
    );
    assert_eq!(p.parts.skills[0].name, "demo-kit:greeting");
    assert!(p.parts.skills[0].answers_to("demo-kit:greeting"));
    assert_eq!(p.parts.agents[0].name, "demo-kit:reviewer");
    let hook = &p.parts.hooks[0];
    assert_eq!(hook.event.name(), "UserPromptSubmit");
    assert_eq!(
        hook.commands[0].command,
        format!("sh {root_text}/scripts/context.sh")
    );
    let mcp = &p.parts.mcp[0];
    assert_eq!(mcp.name, "plugin:demo-kit:everything");
    let Transport::Stdio { command, args, env } = &mcp.transport else {
        panic!("{mcp:?}")
    };
    assert_eq!(
        (command.as_str(), args.as_slice()),
        ("node", &["/opt/everything.js".to_string()][..])
    );
    assert!(env.contains(&("DEMO_KIT_ROOT".into(), root_text.clone())));
    assert!(env.contains(&("CLAUDE_PLUGIN_ROOT".into(), root_text.clone())));
    let lsp = &p.parts.lsp[0];
    assert_eq!(lsp.name, "plugin:demo-kit:fake");
    assert_eq!(lsp.command, format!("{root_text}/bin/fake-lsp"));
    assert_eq!(
        lsp.extension_to_language.get(".fake").map(String::as_str),
        Some("fake")
    );
}

/// Claude Code's registry under a temp home, with demo-kit installed in the user scope.
fn installed(home: &Path) -> PluginsHome {
    let plugins = PluginsHome {
        config_dir: home.join(".claude"),
    };
    let inst = Installation {
        scope: "user".into(),
        install_path: fixture().join("plugins/demo-kit"),
        version: "1.0.0".into(),
        project_path: None,
    };
    registry::record_installation(&plugins, "demo-kit@cairn-fixtures", &inst).unwrap();
    plugins
}

fn enabled_by(layer: Layer) -> LoadedSettings {
    LoadedSettings {
        enabled_plugins: vec![EnabledPlugin {
            id: "demo-kit@cairn-fixtures".into(),
            enabled: true,
            layer,
            source: "/somewhere/settings.json".into(),
        }],
        ..LoadedSettings::default()
    }
}

#[test]
fn a_plugin_the_project_turns_on_runs_nothing_until_the_folder_is_trusted() {
    let tmp = tempfile::tempdir().unwrap();
    let home = installed(tmp.path());
    // The person's own settings: everything, trusted folder or not.
    let set = load(&enabled_by(Layer::User), &[], Some(&home), &env);
    assert_eq!(set.plugins[0].parts.hooks.len(), 1);
    assert_eq!(set.plugins[0].parts.mcp.len(), 1);
    assert_eq!(set.untrusted_notice(), None);
    // The project's settings, untrusted: prompts only, the rest named.
    let set = load(&enabled_by(Layer::Project), &[], Some(&home), &env);
    let p = &set.plugins[0];
    assert!(p.parts.hooks.is_empty() && p.parts.mcp.is_empty() && p.parts.lsp.is_empty());
    assert_eq!(p.parts.commands.len(), 2);
    assert_eq!(
        set.untrusted_notice().unwrap(),
        "plugins the project's settings turn on run nothing until you trust this folder: \
         demo-kit@cairn-fixtures (hooks: UserPromptSubmit, MCP servers: \
         plugin:demo-kit:everything, language servers: plugin:demo-kit:fake)"
    );
    // Trusted: everything.
    let trusted = LoadedSettings {
        trust: crate::config::Trust::Trusted,
        ..enabled_by(Layer::ProjectLocal)
    };
    let set = load(&trusted, &[], Some(&home), &env);
    assert_eq!(set.plugins[0].parts.hooks.len(), 1);
    // Turned off anywhere: not loaded, listed as disabled.
    let mut off = enabled_by(Layer::Project);
    off.enabled_plugins[0].enabled = false;
    let set = load(&off, &[], Some(&home), &env);
    assert!(set.plugins.is_empty());
    assert_eq!(set.disabled, ["demo-kit@cairn-fixtures"]);
}

#[test]
fn registry_writes_keep_what_they_do_not_know_and_replace_one_scope() {
    let tmp = tempfile::tempdir().unwrap();
    let home = PluginsHome {
        config_dir: tmp.path().to_path_buf(),
    };
    std::fs::create_dir_all(home.dir()).unwrap();
    std::fs::write(
        home.installed_file(),
        r#"{"version": 2, "plugins": {"x@m": [{"scope": "user", "installPath": "/c/x",
            "version": "1", "installedAt": "then", "gitCommitSha": "abc"}]}, "extra": 1}"#,
    )
    .unwrap();
    let inst = Installation {
        scope: "project".into(),
        install_path: "/c/x2".into(),
        version: "2".into(),
        project_path: Some("/proj".into()),
    };
    registry::record_installation(&home, "x@m", &inst).unwrap();
    let doc = registry::read_object(&home.installed_file()).unwrap();
    assert_eq!(doc["extra"], 1);
    let list = doc["plugins"]["x@m"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["gitCommitSha"], "abc");
    assert_eq!(list[1]["projectPath"], "/proj");
    let (path, still) = registry::remove_installation(&home, "x@m", "user", None).unwrap();
    assert_eq!((path, still), (PathBuf::from("/c/x"), false));
    let all = registry::installations(&home).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].1.install_path, PathBuf::from("/c/x2"));
}
