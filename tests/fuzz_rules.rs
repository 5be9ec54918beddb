//! Fuzz targets for permission rules: parsing arbitrary text, the documented matching
//! invariants, and the gate's central promise (an allow never overrides a deny) checked on
//! random rule sets and random commands through the real [`PermissionGate::check`].

#[path = "support/fuzz.rs"]
mod fuzz;
#[path = "support/probe.rs"]
mod probe;
#[path = "support/workspace.rs"]
mod workspace;

use std::path::PathBuf;

use cairn::config::LoadedSettings;
use cairn::permissions::{GateConfig, GateOutcome, PermissionGate};
use cairn::protocol::PermissionMode;
use cairn::rules::{Rule, RuleContext, Target};
use proptest::prelude::*;
use serde_json::json;

use probe::{Probe, check_call};

fn ctx() -> RuleContext {
    RuleContext {
        root: PathBuf::from("/proj"),
        cwd: PathBuf::from("/proj"),
        home: Some(PathBuf::from("/home/me")),
    }
}

#[test]
fn fuzz_rule_parsing_never_panics_and_round_trips() {
    let text = prop_oneof![
        any::<String>(),
        "[A-Za-z_*-]{0,10}(\\([^\n]{0,24}\\))?",
        "(Bash|Read|Edit|WebFetch|Agent|mcp__a__b)\\([ -~]{0,20}\\)?",
    ];
    let ctx = ctx();
    fuzz::fuzz("rule_parse", text, |text| {
        if let Ok(rule) = Rule::parse(&text, &ctx) {
            // What is shown (`text`) parses back to the same rule.
            prop_assert_eq!(rule.text.as_str(), text.trim());
            let again = Rule::parse(&rule.text, &ctx)
                .map_err(|e| TestCaseError::fail(format!("{} no longer parses: {e}", rule.text)))?;
            prop_assert_eq!(&again.text, &rule.text);
            prop_assert_eq!(&again.tool, &rule.tool);
            prop_assert_eq!(again.is_bare(), rule.is_bare());
        }
        Ok(())
    });
}

#[test]
fn fuzz_command_rules_match_as_documented() {
    let case = ("[a-z][a-z0-9_-]{0,6}", "[!-~][ -~]{0,20}", any::<bool>());
    let ctx = ctx();
    fuzz::fuzz("rule_match", case, |(word, rest, colon)| {
        // `Bash(x *)` (and `Bash(x:*)`) match every command that starts with `x `.
        let text = if colon {
            format!("Bash({word}:*)")
        } else {
            format!("Bash({word} *)")
        };
        let rule =
            Rule::parse(&text, &ctx).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        let command = format!("{word} {rest}");
        prop_assert!(
            rule.matches_target(Target::Command(&command), true),
            "{} does not match {:?}",
            text,
            command
        );
        // ... and not a longer word that merely starts the same (`ls *` is not `lsof`).
        let longer = format!("{word}x {rest}");
        prop_assert!(!rule.matches_target(Target::Command(&longer), true));
        // A bare tool name covers every call of the tool, whatever the input.
        for bare in ["Bash", "Bash(*)"] {
            let rule =
                Rule::parse(bare, &ctx).map_err(|e| TestCaseError::fail(format!("{bare}: {e}")))?;
            prop_assert!(
                rule.is_bare() && rule.names_tool("Bash", cairn::tools::ToolKind::Execute, None)
            );
        }
        Ok(())
    });
}

const WORDS: &[&str] = &["ls", "rm", "git", "push", "-rf", "a", "cat", "echo"];
const MODES: &[PermissionMode] = &[
    PermissionMode::Default,
    PermissionMode::AcceptEdits,
    PermissionMode::BypassPermissions,
    PermissionMode::DontAsk,
];

fn rule_text() -> impl Strategy<Value = String> {
    let word = proptest::sample::select(WORDS);
    prop_oneof![
        Just("Bash".to_string()),
        Just("Bash(*)".to_string()),
        word.clone().prop_map(|w| format!("Bash({w} *)")),
        word.clone().prop_map(|w| format!("Bash({w}:*)")),
        word.clone().prop_map(|w| format!("Bash({w})")),
        (word.clone(), word).prop_map(|(a, b)| format!("Bash({a} {b}*)")),
    ]
}

fn command() -> impl Strategy<Value = String> {
    let simple =
        proptest::collection::vec(proptest::sample::select(WORDS), 1..4).prop_map(|w| w.join(" "));
    (
        simple.clone(),
        proptest::option::of((
            proptest::sample::select(&["&&", ";", "|", "||"][..]),
            simple,
        )),
    )
        .prop_map(|(a, more)| match more {
            Some((op, b)) => format!("{a} {op} {b}"),
            None => a,
        })
}

#[test]
fn fuzz_an_allow_never_overrides_a_deny() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().canonicalize().unwrap();
    let settings = LoadedSettings {
        project_root: proj.clone(),
        project_dir: proj.clone(),
        ..LoadedSettings::default()
    };
    let (session, _rx) = workspace::session("fuzz", proj.clone(), proj.join("data"));
    let case = (
        proptest::collection::vec(rule_text(), 0..4),
        proptest::collection::vec(rule_text(), 0..4),
        command(),
        proptest::sample::select(MODES),
    );
    fuzz::fuzz(
        "allow_never_overrides_deny",
        case,
        |(deny, allow, cmd, mode)| {
            let gate = |allow: &[String]| {
                PermissionGate::new(GateConfig {
                    settings: &settings,
                    cli_allow: allow.to_vec(),
                    cli_deny: deny.clone(),
                    mode,
                    interactive: true,
                    project_dir: proj.clone(),
                    additional_dirs: Vec::new(),
                    session_data_dir: proj.join("data"),
                    running_as_root: false,
                    sandboxed: false,
                })
                .unwrap()
            };
            let shell = Probe {
                name: "Bash",
                read_only: cairn::shell::is_read_only(&cmd),
            };
            let input = json!({ "exec": [cmd] });
            let decide = |gate: PermissionGate| {
                runtime.block_on(check_call(&gate, &session, &shell, &input, "c"))
            };
            let without = decide(gate(&[]));
            let with = decide(gate(&allow));
            if let GateOutcome::Deny { message } = &without
                && message.contains("denied by the rule")
            {
                prop_assert_eq!(&with, &without, "allow rules {:?} undid a deny", allow);
            }
            Ok(())
        },
    );
}
