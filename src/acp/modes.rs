//! cairn's permission modes as ACP session modes: the list a session offers (bypassPermissions
//! only when the settings and the environment allow it, as in the TUI's Shift+Tab cycle), the
//! current one, and a client's `session/set_mode` read back into a [`PermissionMode`].

use agent_client_protocol::v1::schema::{SessionMode, SessionModeId, SessionModeState};

use crate::protocol::PermissionMode;

/// The modes a session offers, in the order of the TUI's cycle.
pub fn available(bypass_allowed: bool) -> Vec<PermissionMode> {
    let mut modes = vec![
        PermissionMode::Default,
        PermissionMode::AcceptEdits,
        PermissionMode::Plan,
    ];
    if bypass_allowed {
        modes.push(PermissionMode::BypassPermissions);
    }
    modes.push(PermissionMode::DontAsk);
    modes
}

/// One mode as the client lists it (its id is the settings' name: `acceptEdits`).
fn describe(mode: PermissionMode) -> SessionMode {
    let (name, description) = match mode {
        PermissionMode::Default => ("Default", "Ask before edits, commands and fetches"),
        PermissionMode::AcceptEdits => (
            "Accept Edits",
            "Edit files in the working directories without asking",
        ),
        PermissionMode::Plan => ("Plan", "Read and plan only; nothing is changed"),
        PermissionMode::BypassPermissions => (
            "Bypass Permissions",
            "Run everything without asking (deny rules still hold)",
        ),
        PermissionMode::DontAsk => (
            "Don't Ask",
            "Refuse whatever the rules do not already allow",
        ),
    };
    SessionMode::new(mode.as_str(), name).description(description.to_string())
}

/// The session's modes with `current` selected.
pub fn state(current: PermissionMode, bypass_allowed: bool) -> SessionModeState {
    let modes = available(bypass_allowed)
        .into_iter()
        .map(describe)
        .collect();
    SessionModeState::new(mode_id(current), modes)
}

pub fn mode_id(mode: PermissionMode) -> SessionModeId {
    SessionModeId::new(mode.as_str())
}

/// The mode a client asked for, when the session offers it.
pub fn parse(id: &SessionModeId, bypass_allowed: bool) -> Result<PermissionMode, String> {
    let mode = PermissionMode::parse(&id.0)
        .filter(|m| m.as_str() == &*id.0)
        .ok_or_else(|| format!("no such mode: {:?}", &*id.0))?;
    if !available(bypass_allowed).contains(&mode) {
        return Err(format!(
            "{} is not allowed here (disableBypassPermissionsMode, or running as root outside a \
             sandbox)",
            mode.as_str()
        ));
    }
    Ok(mode)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bypass_is_offered_only_when_allowed() {
        let ids = |allowed| -> Vec<String> {
            state(PermissionMode::Default, allowed)
                .available_modes
                .iter()
                .map(|m| m.id.0.to_string())
                .collect()
        };
        assert_eq!(ids(false), ["default", "acceptEdits", "plan", "dontAsk"]);
        assert_eq!(
            ids(true),
            [
                "default",
                "acceptEdits",
                "plan",
                "bypassPermissions",
                "dontAsk"
            ]
        );
    }

    #[test]
    fn set_mode_reads_back_the_ids_and_refuses_the_rest() {
        let id = |s: &str| SessionModeId::new(s);
        assert_eq!(
            parse(&id("acceptEdits"), false),
            Ok(PermissionMode::AcceptEdits)
        );
        assert_eq!(parse(&id("plan"), false), Ok(PermissionMode::Plan));
        assert!(parse(&id("bypassPermissions"), false).is_err());
        assert_eq!(
            parse(&id("bypassPermissions"), true),
            Ok(PermissionMode::BypassPermissions)
        );
        assert!(parse(&id("yolo"), true).is_err());
        // Ids are exact: the settings' spelling only.
        assert!(parse(&id("ACCEPTEDITS"), true).is_err());
    }
}
