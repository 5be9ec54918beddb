//! From an editor's `session/new` or `session/load` to a [`SessionSpec`]: the folder it opens,
//! the MCP servers it brings, and whether it vouches for the folder (`_meta.cairn.trustFolder`,
//! or `cairn acp --trust-folder` for every folder) — otherwise the folder's trust is as
//! recorded, and an untrusted folder's settings only narrow.

use std::path::{Path, PathBuf};

use agent_client_protocol::v1::schema::{McpServer, Meta};

use crate::host::{ClientKind, Resume, SessionSpec, TrustDecision};
use crate::mcp::config::{Scope, ServerConfig, Transport};

/// Where the servers an editor brings are said to come from, in messages.
const CLIENT_SOURCE: &str = "the editor (ACP session/new)";

/// What a session is opened from, beside the template of flags `cairn acp` was started with.
pub struct Request<'a> {
    pub cwd: &'a Path,
    pub additional_dirs: &'a [PathBuf],
    pub mcp_servers: &'a [McpServer],
    pub meta: Option<&'a Meta>,
    pub resume: Resume,
}

/// The spec for `request`: the template's flags, the request's folder and servers; trusted
/// when `trust_all` or the request's `_meta` says so.
pub fn spec(
    template: &SessionSpec,
    trust_all: bool,
    request: Request<'_>,
) -> Result<SessionSpec, String> {
    if !request.cwd.is_absolute() {
        return Err(format!(
            "cwd must be an absolute path: {}",
            request.cwd.display()
        ));
    }
    let mut spec = template.clone();
    spec.cwd = request.cwd.to_path_buf();
    spec.client = ClientKind::Editor;
    spec.additional_dirs
        .extend(request.additional_dirs.iter().cloned());
    spec.mcp_servers = request.mcp_servers.iter().filter_map(server).collect();
    spec.resume = request.resume;
    if trust_all || vouches(request.meta) {
        spec.trust = TrustDecision::Trusted;
    }
    Ok(spec)
}

/// `_meta: {"cairn": {"trustFolder": true}}`: the client vouches for the folder.
fn vouches(meta: Option<&Meta>) -> bool {
    meta.and_then(|m| m.get("cairn"))
        .and_then(|c| c.get("trustFolder"))
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// One server the client brings, as cairn configures servers.
fn server(server: &McpServer) -> Option<ServerConfig> {
    let (name, transport) = match server {
        McpServer::Http(h) => (
            h.name.clone(),
            Transport::Http {
                url: h.url.clone(),
                headers: h
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            },
        ),
        McpServer::Sse(s) => (
            s.name.clone(),
            Transport::Sse {
                url: s.url.clone(),
                headers: s
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            },
        ),
        McpServer::Stdio(s) => (
            s.name.clone(),
            Transport::Stdio {
                command: s.command.display().to_string(),
                args: s.args.clone(),
                env: s
                    .env
                    .iter()
                    .map(|e| (e.name.clone(), e.value.clone()))
                    .collect(),
            },
        ),
        _ => return None,
    };
    Some(ServerConfig {
        name,
        scope: Scope::Cli,
        source: CLIENT_SOURCE.into(),
        transport,
    })
}

#[cfg(test)]
mod tests {
    use agent_client_protocol::v1::schema::{HttpHeader, McpServerHttp, McpServerStdio};

    use super::*;

    fn template() -> SessionSpec {
        SessionSpec::new(PathBuf::new(), ClientKind::Editor)
    }

    fn request<'a>(meta: Option<&'a Meta>, servers: &'a [McpServer]) -> Request<'a> {
        Request {
            cwd: Path::new("/work/project"),
            additional_dirs: &[],
            mcp_servers: servers,
            meta,
            resume: Resume::New,
        }
    }

    #[test]
    fn the_folder_is_trusted_only_when_the_client_or_the_flag_says_so() {
        let t = template();
        let plain = spec(&t, false, request(None, &[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(plain.trust, TrustDecision::Recorded);
        assert_eq!(plain.cwd, Path::new("/work/project"));
        assert_eq!(plain.client, ClientKind::Editor);
        let yes: Meta = serde_json::from_value(serde_json::json!({"cairn": {"trustFolder": true}}))
            .unwrap_or_default();
        let spec_yes = spec(&t, false, request(Some(&yes), &[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec_yes.trust, TrustDecision::Trusted);
        // Anything but a JSON `true` is not a yes.
        let text: Meta =
            serde_json::from_value(serde_json::json!({"cairn": {"trustFolder": "yes"}}))
                .unwrap_or_default();
        let spec_text =
            spec(&t, false, request(Some(&text), &[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(spec_text.trust, TrustDecision::Recorded);
        let all = spec(&t, true, request(None, &[])).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(all.trust, TrustDecision::Trusted);
    }

    #[test]
    fn a_relative_cwd_is_refused() {
        let mut r = request(None, &[]);
        r.cwd = Path::new("project");
        assert!(spec(&template(), false, r).is_err());
    }

    #[test]
    fn the_clients_servers_are_configured_as_given() {
        let servers = vec![
            McpServer::Http(
                McpServerHttp::new("docs", "https://mcp.example/")
                    .headers(vec![HttpHeader::new("Authorization", "Bearer t")]),
            ),
            McpServer::Stdio(
                McpServerStdio::new("fs", "/usr/bin/mcp-fs").args(vec!["--ro".into()]),
            ),
        ];
        let given =
            spec(&template(), false, request(None, &servers)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(given.mcp_servers.len(), 2);
        assert_eq!(given.mcp_servers[0].name, "docs");
        assert_eq!(
            given.mcp_servers[0].transport,
            Transport::Http {
                url: "https://mcp.example/".into(),
                headers: vec![("Authorization".into(), "Bearer t".into())]
            }
        );
        assert_eq!(
            given.mcp_servers[1].transport,
            Transport::Stdio {
                command: "/usr/bin/mcp-fs".into(),
                args: vec!["--ro".into()],
                env: vec![]
            }
        );
    }
}
