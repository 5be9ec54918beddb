//! Hooks as the settings configure them (Claude Code format): per event, groups with a
//! `matcher` (empty or `*` = all; `A|B` = a list of names; otherwise an unanchored regex) and
//! `type: command` entries with an optional `timeout` in seconds (default 60). Parsing reports
//! each problem with its file and line, as broken when it concerns a PreToolUse hook (a guard).
//! Running them is `permissions::hooks`' job.

use std::time::Duration;

use regex::Regex;
use serde_json::Value;

use super::layers::{Origin, Problems, SettingsSource};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum HookEvent {
    PreToolUse,
    PostToolUse,
    UserPromptSubmit,
    Stop,
    SubagentStop,
    SessionStart,
    SessionEnd,
    Notification,
    PreCompact,
}

const EVENTS: &[HookEvent] = &[
    HookEvent::PreToolUse,
    HookEvent::PostToolUse,
    HookEvent::UserPromptSubmit,
    HookEvent::Stop,
    HookEvent::SubagentStop,
    HookEvent::SessionStart,
    HookEvent::SessionEnd,
    HookEvent::Notification,
    HookEvent::PreCompact,
];

impl HookEvent {
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::PreToolUse => "PreToolUse",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Stop => "Stop",
            HookEvent::SubagentStop => "SubagentStop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
            HookEvent::Notification => "Notification",
            HookEvent::PreCompact => "PreCompact",
        }
    }

    pub fn parse(s: &str) -> Option<HookEvent> {
        EVENTS.iter().copied().find(|e| e.name() == s)
    }
}

pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// Longer timeouts are cut to this (a day: only there so deadlines never overflow).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(24 * 60 * 60);

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookCommand {
    pub command: String,
    pub timeout: Duration,
}

/// One `{ "matcher": …, "hooks": [...] }` group of one event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookGroup {
    pub event: HookEvent,
    pub matcher: String,
    pub commands: Vec<HookCommand>,
    pub origin: Origin,
}

/// Every hook group of every layer (they all run; none overrides another).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HooksConfig {
    pub groups: Vec<HookGroup>,
}

impl HooksConfig {
    /// Whether any hook is configured for `event`.
    pub fn has(&self, event: HookEvent) -> bool {
        self.groups.iter().any(|g| g.event == event)
    }
}

/// Read the `hooks` object of one settings document; bad entries become diagnostics. A
/// PreToolUse hook can refuse calls, so losing one (or the whole `hooks` object) is a broken
/// problem: the gate fails closed rather than run without the person's guard.
pub fn parse_hooks(src: &SettingsSource, value: &Value, problems: &mut Problems) -> Vec<HookGroup> {
    let mut out = Vec::new();
    let Some(events) = value.as_object() else {
        problems.broken(src.diagnostic("\"hooks\"", "`hooks` must be an object; ignored"));
        return out;
    };
    for (name, groups) in events {
        let Some(event) = HookEvent::parse(name) else {
            problems.push(src.diagnostic(
                &format!("\"{name}\""),
                &format!(
                    "unknown hook event `{name}`; ignored (events: {})",
                    EVENTS.iter().map(|e| e.name()).collect::<Vec<_>>().join(", ")
                ),
            ));
            continue;
        };
        let report = |problems: &mut Problems, message: String| {
            if event == HookEvent::PreToolUse {
                problems.broken(message);
            } else {
                problems.push(message);
            }
        };
        let Some(groups) = groups.as_array() else {
            report(
                problems,
                src.diagnostic(
                    &format!("\"{name}\""),
                    &format!("`hooks.{name}` must be a list; ignored"),
                ),
            );
            continue;
        };
        for group in groups {
            let matcher = group
                .get("matcher")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if matcher.trim() != "*" && !simple_matcher(&matcher) && Regex::new(&matcher).is_err() {
                report(
                    problems,
                    src.diagnostic(
                        &matcher,
                        &format!("hook matcher `{matcher}` is not a valid regex; ignored"),
                    ),
                );
                continue;
            }
            let mut commands = Vec::new();
            for hook in group
                .get("hooks")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let kind = hook
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("command");
                match (kind, hook.get("command").and_then(Value::as_str)) {
                    ("command", Some(command)) if !command.trim().is_empty() => {
                        let timeout = hook
                            .get("timeout")
                            .and_then(Value::as_f64)
                            .filter(|t| *t > 0.0)
                            // `try_`: a huge or non-finite number in settings must not panic.
                            .and_then(|t| Duration::try_from_secs_f64(t).ok())
                            .map_or(DEFAULT_TIMEOUT, |t| t.min(MAX_TIMEOUT));
                        commands.push(HookCommand {
                            command: command.to_string(),
                            timeout,
                        });
                    }
                    _ => report(
                        problems,
                        src.diagnostic(
                            &format!("\"{name}\""),
                            &format!(
                                "a `hooks.{name}` entry needs `\"type\": \"command\"` and a \
                             `command`; that entry is ignored"
                            ),
                        ),
                    ),
                }
            }
            if !commands.is_empty() {
                out.push(HookGroup {
                    event,
                    matcher,
                    commands,
                    origin: src.origin.clone(),
                });
            }
        }
    }
    out
}

fn simple_matcher(m: &str) -> bool {
    m.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '|' || c == '-')
}

/// Whether a group's matcher selects `value` (a tool name, a session-start source).
pub fn matcher_matches(matcher: &str, value: Option<&str>) -> bool {
    let (m, Some(v)) = (matcher.trim(), value) else {
        return true;
    };
    if m.is_empty() || m == "*" {
        return true;
    }
    if simple_matcher(m) {
        return m.split('|').any(|part| part == v);
    }
    Regex::new(m).is_ok_and(|re| re.is_match(v))
}
