//! MCP for one session, from the settings and the command line: read the configuration
//! (approval from the settings), start the servers in the background, and say in a few lines
//! what will not start and why. Used by startup and by `cairn mcp list|get`.

use std::path::Path;

use super::config::{self, Approval, Sources};
use super::manager::{McpManager, start_servers};
use super::server::McpOptions;
use crate::config::LoadedSettings;
use crate::tools::LateTools;

/// What the command line says about MCP.
#[derive(Debug, Clone, Default)]
pub struct McpFlags {
    /// `--mcp-config` values (files or inline JSON).
    pub configs: Vec<String>,
    /// `--strict-mcp-config`.
    pub strict: bool,
}

/// The sources and approval for a session in `project_dir`.
pub fn sources(
    project_dir: &Path,
    settings: &LoadedSettings,
    flags: &McpFlags,
) -> (Sources, Approval) {
    let sources = Sources {
        project_dir: project_dir.to_path_buf(),
        claude_json: settings
            .home
            .as_ref()
            .map(|h| h.join(".claude.json"))
            .or_else(config::default_claude_json),
        cli: flags.configs.clone(),
        strict: flags.strict,
    };
    (sources, settings.mcp_approval.clone())
}

/// Read the configuration and start every server in the background; their tools join `late`.
/// Returns the manager (dropping it stops the servers) and lines for the person: the
/// problems, then the servers waiting for approval.
pub fn start(
    project_dir: &Path,
    settings: &LoadedSettings,
    flags: &McpFlags,
    late: LateTools,
) -> (McpManager, Vec<String>) {
    let (manager, mut lines) =
        start_with(project_dir, &[], settings, flags, Vec::new(), late, None);
    let waiting = manager.unapproved();
    lines.extend(approval_notices(waiting.iter().map(|s| s.name.as_str())));
    (manager, lines)
}

/// [`start`] (its lines only the problems: the waiting servers are the client's to name, see
/// [`approval_notices`]), with servers the client brings (an editor's `session/new`) besides the
/// configured ones. A client server whose name a configured one already has is not started
/// (named in a problem line): the person's configuration decides what a name means. The
/// servers' roots are `project_dir`, `more_dirs` (`--add-dir`) and the settings'
/// `additionalDirectories`. With `log_dir`, each server keeps a log file there.
pub fn start_with(
    project_dir: &Path,
    more_dirs: &[std::path::PathBuf],
    settings: &LoadedSettings,
    flags: &McpFlags,
    client_servers: Vec<config::ServerConfig>,
    late: LateTools,
    log_dir: Option<std::path::PathBuf>,
) -> (McpManager, Vec<String>) {
    let (sources, approval) = sources(project_dir, settings, flags);
    let env = |k: &str| {
        settings
            .env
            .get(k)
            .cloned()
            .or_else(|| std::env::var(k).ok())
    };
    let mut cfg = config::load(&sources, &approval, &env);
    if !settings.trust.is_trusted() {
        // Named in the session's one notice about the untrusted folder.
        skip_project_servers(&mut cfg);
    }
    for server in client_servers {
        // A plugin's server (user scope) turned off in `/mcp` stays off.
        if server.scope == config::Scope::User && cfg.turned_off.contains(&server.name) {
            cfg.disabled.push(server);
            continue;
        }
        if cfg.servers.iter().any(|s| s.name == server.name) {
            cfg.problems.push(format!(
                "{}: the client's MCP server {:?} has the name of a configured one; not started",
                server.source, server.name
            ));
            continue;
        }
        cfg.servers.push(server);
    }
    cfg.servers.sort_by(|a, b| a.name.cmp(&b.name));
    cfg.disabled.sort_by(|a, b| a.name.cmp(&b.name));
    let mut options = McpOptions::from_env(project_dir.to_path_buf(), &env);
    options.log_dir = log_dir;
    for dir in more_dirs.iter().chain(&settings.additional_directories) {
        if !options.roots.contains(dir) {
            options.roots.push(dir.clone());
        }
    }
    options.tool_env = settings
        .env
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    // The waiting servers' lines are the client's to add (`approval_notices`): the TUI asks.
    let problems = cfg.problems.iter().map(|p| format!("MCP: {p}")).collect();
    (start_servers(cfg, options, late), problems)
}

/// The project's `.mcp.json` servers by name (approved or not), for the trust question.
/// Reads the files; starts nothing.
pub fn project_servers(
    project_dir: &Path,
    settings: &LoadedSettings,
    flags: &McpFlags,
) -> Vec<String> {
    let (sources, approval) = sources(project_dir, settings, flags);
    let env = |k: &str| std::env::var(k).ok();
    let cfg = config::load(&sources, &approval, &env);
    let mut names: Vec<String> = cfg
        .servers
        .iter()
        .chain(&cfg.unapproved)
        .filter(|s| s.scope == config::Scope::Project)
        .map(|s| s.name.clone())
        .collect();
    names.sort();
    names
}

/// In a folder that is not trusted, the project's `.mcp.json` servers neither start nor ask
/// for approval.
fn skip_project_servers(cfg: &mut config::McpConfig) {
    cfg.servers.retain(|s| s.scope != config::Scope::Project);
    cfg.unapproved.retain(|s| s.scope != config::Scope::Project);
}

/// Problems and unapproved servers, one line each.
pub fn notices(cfg: &config::McpConfig) -> Vec<String> {
    let mut out: Vec<String> = cfg.problems.iter().map(|p| format!("MCP: {p}")).collect();
    out.extend(approval_notices(
        cfg.unapproved.iter().map(|s| s.name.as_str()),
    ));
    out
}

/// The line for each server waiting for approval, for a client that cannot ask (the TUI asks
/// instead, once: its question is the only warning).
pub fn approval_notices<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    names
        .into_iter()
        .map(|name| {
            format!(
                "MCP server \"{name}\" (.mcp.json) needs approval: add it to \
                 enabledMcpjsonServers in .claude/settings.local.json (or set \
                 enableAllProjectMcpServers)"
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approvals_come_from_the_settings_but_not_from_a_checked_in_project_file() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::create_dir_all(project.join(".git")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"enabledMcpjsonServers": ["a"], "disabledMcpjsonServers": ["c"]}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".claude/settings.local.json"),
            r#"{"enabledMcpjsonServers": ["b"]}"#,
        )
        .unwrap();
        // The repository's shared settings try to approve everything: ignored and reported.
        std::fs::write(
            project.join(".claude/settings.json"),
            r#"{"enableAllProjectMcpServers": true}"#,
        )
        .unwrap();
        let home_s = home.display().to_string();
        let env = |k: &str| (k == "HOME").then(|| home_s.clone());
        let settings =
            crate::config::load_settings(&project, None, &env, crate::config::Trust::Trusted);
        let a = &settings.mcp_approval;
        assert!(!a.enable_all);
        assert_eq!(a.enabled, ["b", "a"]);
        assert_eq!(a.disabled, ["c"]);
        assert!(
            settings.diagnostics.iter().any(|d| d.contains(
                "`enableAllProjectMcpServers` in a project's shared settings is ignored"
            )),
            "{:?}",
            settings.diagnostics
        );
        assert!(
            !settings
                .diagnostics
                .iter()
                .any(|d| d.contains("enabledMcpjsonServers")),
            "read keys are not reported as unused: {:?}",
            settings.diagnostics
        );
        // The sources follow: ~/.claude.json under that home.
        let (sources, approval) = sources(&project, &settings, &McpFlags::default());
        assert_eq!(sources.claude_json, Some(home.join(".claude.json")));
        assert!(approval.approves("a") && approval.approves("b") && !approval.approves("c"));
    }

    #[test]
    fn malformed_lists_fail_closed_a_refusal_list_stops_every_project_server() {
        let dir = tempfile::tempdir().unwrap();
        let home = dir.path().join("home");
        let project = dir.path().join("proj");
        std::fs::create_dir_all(home.join(".claude")).unwrap();
        std::fs::create_dir_all(project.join(".claude")).unwrap();
        std::fs::write(
            home.join(".claude/settings.json"),
            r#"{"enableAllProjectMcpServers": true, "disabledMcpjsonServers": "evil"}"#,
        )
        .unwrap();
        // One name that is not a string makes the whole approval list approve nothing.
        std::fs::write(
            project.join(".claude/settings.local.json"),
            r#"{"enabledMcpjsonServers": ["good", 1], "enableAllProjectMcpServers": "yes"}"#,
        )
        .unwrap();
        // Refusing only narrows: a repository's own refusal list counts.
        std::fs::write(
            project.join(".claude/settings.json"),
            r#"{"disabledMcpjsonServers": ["repo-off"]}"#,
        )
        .unwrap();
        std::fs::write(
            project.join(".mcp.json"),
            r#"{"mcpServers": {"good": {"command": "g"}, "evil": {"command": "e"}}}"#,
        )
        .unwrap();
        let home_s = home.display().to_string();
        let env = |k: &str| (k == "HOME").then(|| home_s.clone());
        let settings =
            crate::config::load_settings(&project, None, &env, crate::config::Trust::Trusted);
        let a = &settings.mcp_approval;
        assert!(a.enabled.is_empty(), "{a:?}");
        assert_eq!(a.disabled, ["repo-off"]);
        let blocked = a.blocked.as_deref().unwrap_or_default();
        assert!(
            blocked.ends_with(
                "`disabledMcpjsonServers` must be a list of server names; no server of the \
                 project's .mcp.json starts until it is fixed"
            ),
            "{blocked}"
        );
        let diags = settings.diagnostics.join("\n");
        assert!(diags.contains(blocked), "{diags}");
        assert!(
            diags.contains(
                "`enabledMcpjsonServers` must be a list of server names; it approves nothing"
            ),
            "{diags}"
        );
        assert!(
            diags.contains(
                "`enableAllProjectMcpServers` must be true or false; it approves nothing"
            ),
            "{diags}"
        );
        let (sources, approval) = sources(&project, &settings, &McpFlags::default());
        let cfg = config::load(&sources, &approval, &|_| None);
        assert!(cfg.servers.is_empty(), "{:?}", cfg.servers);
        assert!(
            cfg.unapproved.is_empty(),
            "nothing is offered for approval either"
        );
        let lines = notices(&cfg).join("\n");
        assert!(
            lines.contains(
                ".mcp.json: no server of this file is started, because the settings' \
                            list of refused servers could not be read"
            ),
            "{lines}"
        );
    }
}
