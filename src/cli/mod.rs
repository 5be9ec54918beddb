//! The command line: flags and subcommands (clap derive), the session they ask for
//! (`spec.rs`) and the subcommands that answer and exit (`commands.rs`); `main.rs` dispatches.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

pub mod commands;
mod spec;

#[derive(Debug, Parser)]
#[command(
    name = "cairn",
    version,
    about = "A terminal coding agent",
    long_about = "cairn reads, searches, edits and runs things in your repository at a language \
                  model's request, asking before anything risky.\n\nWith no API key it starts a \
                  built-in demo against a scripted model on 127.0.0.1."
)]
pub struct Cli {
    /// A prompt to start with (the TUI submits it; with -p it is the whole request).
    pub prompt: Option<String>,

    /// Headless: answer the prompt and exit (reads the prompt from stdin when piped).
    #[arg(short = 'p', long = "print")]
    pub print: bool,

    /// Output of headless mode.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub output_format: OutputFormat,

    /// Stop after this many model turns.
    #[arg(long)]
    pub max_turns: Option<u32>,

    /// The model to use.
    #[arg(long)]
    pub model: Option<String>,

    /// Which API to talk to.
    #[arg(long, value_enum)]
    pub provider: Option<ProviderArg>,

    /// Base URL of the model API (e.g. http://localhost:11434/v1 for Ollama).
    #[arg(long)]
    pub base_url: Option<String>,

    /// default, acceptEdits, plan, bypassPermissions or dontAsk.
    #[arg(long)]
    pub permission_mode: Option<String>,

    /// Rules to allow without asking, e.g. "Bash(npm test *)" Read (comma or space separated).
    #[arg(long = "allowedTools", alias = "allowed-tools", num_args = 1..)]
    pub allowed_tools: Vec<String>,

    /// Rules to deny, e.g. WebFetch "Bash(curl *)".
    #[arg(long = "disallowedTools", alias = "disallowed-tools", num_args = 1..)]
    pub disallowed_tools: Vec<String>,

    /// A settings file or JSON string, above project and user settings.
    #[arg(long)]
    pub settings: Option<String>,

    /// Extra working directories.
    #[arg(long = "add-dir", num_args = 1..)]
    pub add_dir: Vec<PathBuf>,

    /// Continue the most recent session of this directory.
    #[arg(short = 'c', long = "continue")]
    pub continue_session: bool,

    /// Resume a session by its id; without one, pick from this directory's sessions.
    #[arg(short = 'r', long, num_args = 0..=1, default_missing_value = "")]
    pub resume: Option<String>,

    /// With --continue or --resume: start a new session from the old one's history.
    #[arg(long)]
    pub fork_session: bool,

    /// Run against the built-in scripted demo model.
    #[arg(long)]
    pub demo: bool,

    /// Trust this folder for this run: its hooks, MCP servers, env, allow rules and extra
    /// directories apply (without it, an untrusted folder's settings only narrow). Nothing is
    /// recorded; to trust a folder for good, answer the question `cairn` asks there.
    #[arg(long)]
    pub trust_folder: bool,

    /// MCP servers from a JSON file or string (`{"mcpServers": {...}}`); repeatable.
    #[arg(long = "mcp-config", num_args = 1.., global = true)]
    pub mcp_config: Vec<String>,

    /// Use only the --mcp-config servers (not .mcp.json or ~/.claude.json).
    #[arg(long = "strict-mcp-config", global = true)]
    pub strict_mcp_config: bool,

    /// Load the Claude Code plugin in this folder for this session; repeatable.
    #[arg(long = "plugin-dir", global = true)]
    pub plugin_dir: Vec<PathBuf>,

    /// Headless: include every event in stream-json, and log more.
    #[arg(long)]
    pub verbose: bool,

    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve a scripted model (Anthropic and OpenAI wire formats) on 127.0.0.1.
    MockServer {
        /// The JSON script of turns.
        #[arg(long)]
        script: PathBuf,
        /// Port to listen on (0 picks a free one).
        #[arg(long, default_value_t = 0)]
        port: u16,
    },
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains IDEs,
    /// Neovim): see docs/acp.md.
    Acp {
        /// Trust every folder the editor opens a session in (its hooks, MCP servers, env and
        /// allow rules apply); without it a folder is trusted only as recorded, or when the
        /// editor's session/new says so in `_meta.cairn.trustFolder`.
        #[arg(long)]
        trust_folder: bool,
    },
    /// Print the merged settings and where each value came from.
    Config,
    /// MCP servers: list them (connecting to each), or show one.
    Mcp {
        #[command(subcommand)]
        action: McpAction,
    },
    /// Claude Code plugins: list them, install them from a local marketplace, turn them on and
    /// off, remove them (writing the files Claude Code writes); see docs/plugins.md.
    Plugin {
        #[command(subcommand)]
        action: PluginAction,
    },
    /// The `/rewind` checkpoints of this project's sessions: their size, or prune them to the
    /// budget (the oldest sessions' oldest checkpoints first).
    Checkpoints {
        #[command(subcommand)]
        action: CheckpointsAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum CheckpointsAction {
    /// Each session's store and the total against the budget.
    Du {
        /// The budget in MB (default: the `checkpointBudgetMB` setting, else ten times the
        /// working tree, 50 MB to 1 GB).
        #[arg(long)]
        budget_mb: Option<u64>,
    },
    /// Prune the stores until together they fit the budget.
    Gc {
        /// The budget in MB (default: as for `du`).
        #[arg(long)]
        budget_mb: Option<u64>,
    },
}

#[derive(Debug, Subcommand)]
pub enum McpAction {
    /// Every configured server, its scope and whether it connects.
    List,
    /// One server: its configuration, status and tools.
    Get { name: String },
    /// Add a server: `cairn mcp add NAME -- COMMAND [ARGS...]` or
    /// `cairn mcp add --transport http NAME URL`.
    Add {
        /// local (~/.claude.json, this project), project (.mcp.json) or user (~/.claude.json).
        #[arg(short = 's', long, value_enum, default_value_t = McpScopeArg::Local)]
        scope: McpScopeArg,
        /// stdio, http or sse.
        #[arg(short = 't', long, default_value = "stdio")]
        transport: String,
        /// KEY=value for the server's environment (stdio).
        #[arg(short = 'e', long = "env")]
        env: Vec<String>,
        /// "Name: value" header (http, sse).
        #[arg(short = 'H', long = "header")]
        header: Vec<String>,
        name: String,
        /// The command (stdio) or URL.
        command_or_url: String,
        /// The command's arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<String>,
    },
    /// Remove a server (from the one scope that has it, or --scope).
    Remove {
        #[arg(short = 's', long, value_enum)]
        scope: Option<McpScopeArg>,
        name: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum PluginAction {
    /// The plugins a session here would load, what each contributes, and the installed ones
    /// that are off.
    List,
    /// Install NAME@MARKETPLACE from a marketplace on this machine, and turn it on.
    Install {
        id: String,
        #[arg(short = 's', long, value_enum, default_value_t = PluginScopeArg::User)]
        scope: PluginScopeArg,
    },
    /// Remove an installed plugin (and its `enabledPlugins` entry in the scope's settings).
    Uninstall {
        id: String,
        #[arg(short = 's', long, value_enum, default_value_t = PluginScopeArg::User)]
        scope: PluginScopeArg,
    },
    /// Turn an installed plugin on in the scope's settings.
    Enable {
        id: String,
        #[arg(short = 's', long, value_enum, default_value_t = PluginScopeArg::User)]
        scope: PluginScopeArg,
    },
    /// Turn a plugin off in the scope's settings.
    Disable {
        id: String,
        #[arg(short = 's', long, value_enum, default_value_t = PluginScopeArg::User)]
        scope: PluginScopeArg,
    },
    /// Plugin marketplaces: add a local one, list, remove.
    Marketplace {
        #[command(subcommand)]
        action: MarketplaceAction,
    },
}

#[derive(Debug, Subcommand)]
pub enum MarketplaceAction {
    /// Add the marketplace in a local folder (holding .claude-plugin/marketplace.json).
    Add { path: String },
    /// The known marketplaces.
    List,
    /// Forget a marketplace (its installed plugins stay).
    Remove { name: String },
}

/// Where a plugin is installed or turned on: user (~/.claude/settings.json), project
/// (.claude/settings.json) or local (.claude/settings.local.json).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PluginScopeArg {
    User,
    Project,
    Local,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum McpScopeArg {
    Local,
    Project,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    Text,
    Json,
    StreamJson,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProviderArg {
    Anthropic,
    Openai,
}
