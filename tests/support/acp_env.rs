//! What the in-process ACP tests share: a process environment of their own (home, config and
//! data folders in a temp dir, a fake key, no checkpoints) and `cairn acp`'s agent with its
//! sessions' model pointed at the scripted server. Include with
//! `#[path = "support/acp_env.rs"] mod acp_env;`; each such test must be the only test of its
//! binary, since it sets the process's environment.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use agent_client_protocol::{Client, ConnectTo};
use cairn::host::{ClientKind, Host, SessionSpec};

/// Point HOME, the config and the data folders into `home`; a fake key; no checkpoints.
pub fn isolate(home: &Path) {
    // SAFETY: called first thing by the only test of its binary, before anything reads the
    // environment or starts another thread that could.
    unsafe {
        std::env::set_var("HOME", home);
        std::env::set_var("XDG_CONFIG_HOME", home.join(".config"));
        std::env::set_var("CAIRN_DATA_DIR", home.join("data"));
        std::env::set_var("ANTHROPIC_API_KEY", "test-key");
        std::env::remove_var("ANTHROPIC_BASE_URL");
        std::env::set_var("CAIRN_CHECKPOINTS", "off");
    }
}

/// `cairn acp`'s agent on a fresh host, its sessions' model `test-model` at `base_url`.
pub fn agent(base_url: String) -> impl ConnectTo<Client> {
    let mut template = SessionSpec::new(PathBuf::new(), ClientKind::Editor);
    template.model.base_url = Some(base_url);
    template.model.model = Some("test-model".into());
    cairn::acp::agent(Host::new(), template, false)
}
