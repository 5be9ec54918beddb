//! The command line as a [`SessionSpec`]: the one place flags become the plain data a session
//! is opened from.

use std::path::PathBuf;

use crate::config::model::ModelFlags;
use crate::host::{ClientKind, Resume, SessionSpec, TrustDecision};
use crate::llm::Provider;
use crate::mcp::session::McpFlags;

use super::{Cli, ProviderArg};

impl Cli {
    /// The session these flags ask for, working in `cwd`, driven by `client`.
    pub fn session_spec(&self, cwd: PathBuf, client: ClientKind) -> SessionSpec {
        let resume = match (self.resume.as_deref(), self.continue_session) {
            (Some(id), _) if !id.trim().is_empty() => Resume::Id(id.trim().to_string()),
            (Some(_), _) => Resume::Pick,
            (None, true) => Resume::Continue,
            (None, false) => Resume::New,
        };
        SessionSpec {
            additional_dirs: self.add_dir.clone(),
            model: ModelFlags {
                provider: self.provider.map(|p| match p {
                    ProviderArg::Anthropic => Provider::Anthropic,
                    ProviderArg::Openai => Provider::OpenAi,
                }),
                model: self.model.clone(),
                base_url: self.base_url.clone(),
                demo: self.demo,
            },
            permission_mode: self.permission_mode.clone(),
            allowed_tools: self.allowed_tools.clone(),
            disallowed_tools: self.disallowed_tools.clone(),
            settings: self.settings.clone(),
            resume,
            fork: self.fork_session,
            mcp: self.mcp_flags(),
            trust: if self.trust_folder {
                TrustDecision::Trusted
            } else {
                TrustDecision::Recorded
            },
            max_turns: self.max_turns,
            plugin_dirs: self.plugin_dir.clone(),
            ..SessionSpec::new(cwd, client)
        }
    }

    /// `--mcp-config` and `--strict-mcp-config`.
    pub fn mcp_flags(&self) -> McpFlags {
        McpFlags {
            configs: self.mcp_config.clone(),
            strict: self.strict_mcp_config,
        }
    }
}
