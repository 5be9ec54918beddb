//! The subcommands that answer and exit: `cairn config`, `cairn mcp list|get|add|remove`,
//! `cairn plugin …`, `cairn checkpoints du|gc`, for the project in the current directory.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;

use crate::host::{ClientKind, data_root, project_data_dir, settings_for};

use super::{
    CheckpointsAction, Cli, MarketplaceAction, McpAction, McpScopeArg, PluginAction, PluginScopeArg,
};

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

/// `cairn plugin …`: the text to print.
pub fn plugin_command(cli: &Cli, action: &PluginAction) -> anyhow::Result<String> {
    use crate::plugins::marketplace::{self, InstallScope};
    let spec = cli.session_spec(cwd()?, ClientKind::Headless);
    let settings = settings_for(&spec);
    let env = |k: &str| std::env::var(k).ok();
    let home = crate::plugins::PluginsHome::from_env(&env)
        .ok_or_else(|| anyhow::anyhow!("no home directory (set HOME or CLAUDE_CONFIG_DIR)"))?;
    let root = &settings.project_root;
    let scope = |s: &PluginScopeArg| match s {
        PluginScopeArg::User => InstallScope::User,
        PluginScopeArg::Project => InstallScope::Project,
        PluginScopeArg::Local => InstallScope::Local,
    };
    let done = match action {
        PluginAction::List => {
            let set = crate::plugins::load(&settings, &spec.plugin_dirs, Some(&home), &env);
            let mut text = crate::plugins::listing::text(&set);
            let installed =
                crate::plugins::registry::installations(&home).map_err(|e| anyhow::anyhow!(e))?;
            let mut quiet: Vec<&str> = installed
                .iter()
                .map(|(id, _)| id.as_str())
                .filter(|id| {
                    set.plugins.iter().all(|p| p.id != *id) && !set.disabled.iter().any(|d| d == id)
                })
                .collect();
            quiet.dedup();
            for id in quiet {
                text.push_str(&format!("{id} (installed, not enabled)\n"));
            }
            Ok(text)
        }
        PluginAction::Install { id, scope: s } => marketplace::install(&home, id, scope(s), root),
        PluginAction::Uninstall { id, scope: s } => {
            marketplace::uninstall(&home, id, scope(s), root)
        }
        PluginAction::Enable { id, scope: s } => {
            marketplace::set_enabled(&home, id, true, scope(s), root)
        }
        PluginAction::Disable { id, scope: s } => {
            marketplace::set_enabled(&home, id, false, scope(s), root)
        }
        PluginAction::Marketplace { action } => match action {
            MarketplaceAction::Add { path } => marketplace::add(&home, path, &spec.cwd),
            MarketplaceAction::List => marketplace::list_marketplaces(&home),
            MarketplaceAction::Remove { name } => {
                crate::plugins::registry::remove_marketplace(&home, name)
                    .map(|()| format!("Removed marketplace {name}"))
            }
        },
    };
    done.map_err(|e| anyhow::anyhow!(e))
}
