//! The subcommands that answer and exit: `cairn config`, `cairn mcp list|get|add|remove`,
//! `cairn checkpoints du|gc`, for the project in the current directory.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::host::{ClientKind, data_root, project_data_dir, settings_for};

use super::{CheckpointsAction, Cli, McpAction, McpScopeArg};

fn cwd() -> anyhow::Result<PathBuf> {
    std::env::current_dir().context("cannot read the current directory")
}

/// What `cairn config` prints: the merged settings for the current directory and where each
/// value came from.
pub fn describe_config(cli: &Cli) -> anyhow::Result<String> {
    let spec = cli.session_spec(cwd()?, ClientKind::Headless);
    Ok(crate::config::render_config(&settings_for(&spec)))
}

/// `cairn checkpoints du|gc` for the project in the current directory.
pub fn checkpoints_command(cli: &Cli, action: &CheckpointsAction) -> anyhow::Result<String> {
    use crate::session::store_report;
    let spec = cli.session_spec(cwd()?, ClientKind::Headless);
    let settings = settings_for(&spec);
    let project_dir = &spec.cwd;
    let data = project_data_dir(&data_root(), project_dir);
    let budget = |flag: &Option<u64>| {
        flag.or(settings.checkpoint_budget_mb)
            .map(|mb| mb.saturating_mul(1_000_000))
    };
    Ok(match action {
        CheckpointsAction::Du { budget_mb } => {
            store_report::du(&data, project_dir, budget(budget_mb))
        }
        CheckpointsAction::Gc { budget_mb } => {
            store_report::gc(&data, project_dir, budget(budget_mb))
        }
    })
}

/// `cairn mcp list|get|add|remove`.
pub async fn mcp_command(cli: &Cli, action: &McpAction) -> anyhow::Result<ExitCode> {
    let spec = cli.session_spec(cwd()?, ClientKind::Headless);
    let settings = settings_for(&spec);
    let project_dir = &spec.cwd;
    match action {
        McpAction::List => {
            print!(
                "{}",
                crate::mcp::listing::list(project_dir, &settings, &spec.mcp).await
            );
        }
        McpAction::Get { name } => {
            match crate::mcp::listing::get(project_dir, &settings, &spec.mcp, name).await {
                Some(text) => print!("{text}"),
                None => anyhow::bail!("no MCP server named {name:?} (see `cairn mcp list`)"),
            }
        }
        edit => println!("{}", mcp_edit(&spec.cwd, &settings, edit)?),
    }
    Ok(ExitCode::SUCCESS)
}

/// `cairn mcp add|remove`: the line to print, or why nothing changed.
fn mcp_edit(
    project_dir: &std::path::Path,
    settings: &crate::config::LoadedSettings,
    action: &McpAction,
) -> anyhow::Result<String> {
    use crate::mcp::edit::{EditScope, Files, add, entry_from_args, remove};
    let claude_json = settings
        .home
        .as_ref()
        .map(|h| h.join(".claude.json"))
        .or_else(crate::mcp::config::default_claude_json)
        .ok_or_else(|| anyhow::anyhow!("no home directory for ~/.claude.json"))?;
    let files = Files {
        project_dir: project_dir.to_path_buf(),
        claude_json,
    };
    let scope = |s: McpScopeArg| match s {
        McpScopeArg::Local => EditScope::Local,
        McpScopeArg::Project => EditScope::Project,
        McpScopeArg::User => EditScope::User,
    };
    let done = match action {
        McpAction::Add {
            scope: s,
            transport,
            env,
            header,
            name,
            command_or_url,
            args,
        } => entry_from_args(transport, command_or_url, args, env, header)
            .and_then(|entry| add(&files, scope(*s), name, entry)),
        McpAction::Remove { scope: s, name } => remove(&files, s.map(scope), name),
        McpAction::List | McpAction::Get { .. } => Err("not an edit".into()),
    };
    done.map_err(|e| anyhow::anyhow!(e))
}
