//! Fuzz targets for settings files: arbitrary bytes never panic the loader; a file holding
//! deny rules, randomly corrupted, either still yields every deny rule it holds or is
//! reported broken (never "parsed, but the denies are gone"); a byte order mark changes nothing.

#[path = "support/fuzz.rs"]
mod fuzz;

use std::path::Path;

use cairn::config::layers::SettingsPaths;
use cairn::config::render_config;
use cairn::config::settings::{LoadedSettings, load_settings_from};
use proptest::prelude::*;
use serde_json::{Value, json};

fn load(dir: &Path, file: &Path, bytes: &[u8]) -> LoadedSettings {
    std::fs::write(file, bytes).unwrap();
    let paths = SettingsPaths {
        project: vec![file.to_path_buf()],
        ..SettingsPaths::default()
    };
    load_settings_from(&paths, dir, None, &|_| None, cairn::config::Trust::Trusted)
}

#[test]
fn fuzz_arbitrary_settings_bytes_never_panic() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let bytes = prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..200),
        "[{}\\[\\]\":, a-z0-9\u{feff}]{0,80}".prop_map(String::into_bytes),
        "\\{\"(permissions|hooks|env|model)\": [{}\\[\\]\":, a-zA-Z()*]{0,60}\\}"
            .prop_map(String::into_bytes),
    ];
    fuzz::fuzz("settings_bytes", bytes, |bytes| {
        let s = load(tmp.path(), &file, &bytes);
        // Every broken problem is also a diagnostic `cairn config` shows.
        prop_assert!(s.broken.iter().all(|b| s.diagnostics.contains(b)));
        let _ = render_config(&s);
        Ok(())
    });
}

const BASE: &str = r#"{
  "model": "m",
  "permissions": {
    "allow": ["Bash(ls *)"],
    "deny": ["Bash(rm *)", "Read(./.env)", "WebFetch"],
    "ask": ["Bash(git push *)"]
  },
  "env": {"A": "1"}
}"#;

#[derive(Debug, Clone)]
enum Corruption {
    Delete(usize),
    Insert(usize, u8),
    Replace(usize, u8),
}

#[test]
fn fuzz_corrupted_deny_rules_are_kept_or_reported_broken() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let byte = proptest::sample::select(&b"{}[],:\"\\ a0\n\xff"[..]);
    let one = prop_oneof![
        (0..BASE.len()).prop_map(Corruption::Delete),
        (0..BASE.len(), byte.clone()).prop_map(|(i, b)| Corruption::Insert(i, b)),
        (0..BASE.len(), byte).prop_map(|(i, b)| Corruption::Replace(i, b)),
    ];
    let case = proptest::collection::vec(one, 1..4);
    fuzz::fuzz("settings_corruption", case, |corruptions| {
        let mut bytes = BASE.as_bytes().to_vec();
        for c in corruptions {
            match c {
                Corruption::Delete(i) if i < bytes.len() => {
                    bytes.remove(i);
                }
                Corruption::Insert(i, b) => bytes.insert(i.min(bytes.len()), b),
                Corruption::Replace(i, b) if i < bytes.len() => bytes[i] = b,
                _ => {}
            }
        }
        let s = load(tmp.path(), &file, &bytes);
        if !s.broken.is_empty() {
            return Ok(());
        }
        // Not broken: the file is a JSON object, and every deny and ask rule it holds is in
        // force (the loader's view must match what the JSON says).
        let value: Value = serde_json::from_slice(&bytes)
            .map_err(|e| TestCaseError::fail(format!("not broken, yet not JSON: {e}")))?;
        for (key, loaded) in [("deny", &s.permissions.deny), ("ask", &s.permissions.ask)] {
            let Some(list) = value.pointer(&format!("/permissions/{key}")) else {
                continue;
            };
            let list = list
                .as_array()
                .ok_or_else(|| TestCaseError::fail(format!("{key} not a list, not broken")))?;
            for rule in list {
                let text = rule.as_str().ok_or_else(|| {
                    TestCaseError::fail(format!("{key} holds {rule}, not broken"))
                })?;
                prop_assert!(
                    loaded.iter().any(|r| r.rule.text == text.trim()),
                    "{} rule {:?} is missing, yet nothing is reported broken",
                    key,
                    text
                );
            }
        }
        Ok(())
    });
}

#[test]
fn fuzz_a_byte_order_mark_changes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("settings.json");
    let rule = prop_oneof![
        Just("Bash"),
        Just("Bash(rm *)"),
        Just("Read(./.env)"),
        Just("Edit(src/**)"),
        Just("WebFetch(domain:example.com)"),
        Just("Bash(ls"),
    ];
    let case = (
        proptest::collection::vec(rule.clone(), 0..4),
        proptest::collection::vec(rule, 0..4),
        proptest::option::of("[a-z0-9-]{1,10}"),
        any::<bool>(),
    );
    fuzz::fuzz("settings_bom", case, |(deny, allow, model, pretty)| {
        let mut v = json!({ "permissions": { "deny": deny, "allow": allow } });
        if let Some(m) = model {
            v["model"] = json!(m);
        }
        let text = if pretty {
            serde_json::to_string_pretty(&v).unwrap()
        } else {
            v.to_string()
        };
        let plain = load(tmp.path(), &file, text.as_bytes());
        let bom = load(tmp.path(), &file, format!("\u{feff}{text}").as_bytes());
        prop_assert_eq!(render_config(&plain), render_config(&bom));
        prop_assert_eq!(&plain.diagnostics, &bom.diagnostics);
        prop_assert_eq!(&plain.broken, &bom.broken);
        Ok(())
    });
}
