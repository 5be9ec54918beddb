//! The `cairn` binary: parse the command line, set up logging, and start the TUI, headless
//! mode or a subcommand. Everything else lives in the library.

use std::io::{IsTerminal, Read};
use std::process::ExitCode;

use clap::Parser;

use cairn::cli::{Cli, Command, commands};
use cairn::host::{self, ClientKind, Host, SessionHandle, TrustDecision};

fn main() -> ExitCode {
    let started_at = std::time::Instant::now();
    host::tune_allocator();
    let cli = Cli::parse();
    init_logging(cli.verbose);
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("cairn: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli, started_at)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cairn: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli, started_at: std::time::Instant) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Some(Command::MockServer { script, port }) => {
            let text = std::fs::read_to_string(script)
                .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", script.display()))?;
            let script = cairn::llm::scripted::Script::from_json(&text)
                .map_err(|e| anyhow::anyhow!("{}: {e}", script.display()))?;
            cairn::llm::scripted::serve_forever(script, *port).await?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Acp { trust_folder }) => {
            // The folder comes from each session/new; the flags before `acp` are the template.
            let template = cli.session_spec(std::path::PathBuf::new(), ClientKind::Editor);
            let trust_all = *trust_folder || cli.trust_folder;
            cairn::acp::serve_stdio(template, trust_all).await?;
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Config) => {
            println!("{}", commands::describe_config(&cli)?);
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Mcp { action }) => return commands::mcp_command(&cli, action).await,
        Some(Command::Plugin { action }) => {
            let text = commands::plugin_command(&cli, action)?;
            print!("{text}");
            if !text.ends_with('\n') {
                println!();
            }
            return Ok(ExitCode::SUCCESS);
        }
        Some(Command::Checkpoints { action }) => {
            print!("{}", commands::checkpoints_command(&cli, action)?);
            return Ok(ExitCode::SUCCESS);
        }
        None => {}
    }
    if cli.print {
        return run_headless(cli).await;
    }
    let dir = std::env::current_dir()
        .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))?;
    let mut spec = cli.session_spec(dir, ClientKind::Tui);
    let mut folder = host::folder_trust(&spec.cwd, cli.trust_folder);
    let demo = host::runs_demo(&spec);
    if !folder.trust.is_trusted() && !demo {
        use cairn::tui::trust_dialog::{TrustAnswer, TrustDialog, TrustQuestion, ask};
        let report = host::trust_report(&spec);
        let mut items: Vec<(String, String, String)> = report
            .items
            .into_iter()
            .map(|i| (i.what.to_string(), i.detail, i.source))
            .collect();
        if !report.mcp_servers.is_empty() {
            items.push((
                "MCP servers".into(),
                report.mcp_servers.join(", "),
                folder.root.join(".mcp.json").display().to_string(),
            ));
        }
        let question = TrustQuestion {
            folder: folder.root.clone(),
            is_home: folder.is_home,
            items,
            problem: folder.problem.clone(),
        };
        match ask(TrustDialog::new(question)).await? {
            TrustAnswer::Yes => folder.accept()?,
            TrustAnswer::No => {}
            TrustAnswer::Exit => return Ok(ExitCode::SUCCESS),
        }
    }
    if folder.trust.is_trusted() {
        spec.trust = TrustDecision::Trusted;
    }
    let imports = folder.pending_external_imports(&spec.cwd);
    if !imports.is_empty() && !demo {
        use cairn::tui::trust_dialog::{TrustAnswer, TrustDialog, ask};
        match ask(TrustDialog::external_imports(&folder.root, &imports)).await? {
            TrustAnswer::Yes => folder.allow_external_imports()?,
            TrustAnswer::No => {}
            TrustAnswer::Exit => return Ok(ExitCode::SUCCESS),
        }
    }
    spec.external_imports = folder.external_imports_approved;
    let SessionHandle {
        conn,
        notices,
        facts,
        ..
    } = Host::new().open(spec).await?;
    let errors = if facts.settings_broken.is_empty() {
        Vec::new()
    } else {
        vec![host::broken_settings_report(&facts.settings_broken)]
    };
    let opts = cairn::tui::TuiOptions {
        initial_prompt: cli.prompt.clone(),
        notices,
        errors,
        pick_session: facts.pick_session,
        data_dir: Some(facts.data_root),
        cwd: Some(facts.project_dir),
        bypass_allowed: facts.bypass_allowed,
        started_at: Some(started_at),
        status_line: facts.status_line.is_some(),
    };
    let summary = cairn::tui::run(conn, opts).await?;
    println!("{summary}");
    Ok(ExitCode::SUCCESS)
}

async fn run_headless(cli: Cli) -> anyhow::Result<ExitCode> {
    let prompt = match &cli.prompt {
        Some(p) => p.clone(),
        None if !std::io::stdin().is_terminal() => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| anyhow::anyhow!("cannot read the prompt from stdin: {e}"))?;
            text
        }
        None => anyhow::bail!("-p needs a prompt: cairn -p \"...\" or pipe one on stdin"),
    };
    if prompt.trim().is_empty() {
        anyhow::bail!("the prompt is empty");
    }
    let dir = std::env::current_dir()
        .map_err(|e| anyhow::anyhow!("cannot read the current directory: {e}"))?;
    let spec = cli.session_spec(dir, ClientKind::Headless);
    if let Some(problem) = &host::folder_trust(&spec.cwd, cli.trust_folder).problem {
        eprintln!("cairn: {problem} (no folder counts as trusted)");
    }
    let SessionHandle {
        conn,
        notices,
        mcp,
        facts,
    } = Host::new().open(spec).await?;
    // MCP servers never hold up the first request: the system prompt names those still
    // connecting, and a ToolSearch that may need one waits for it (bounded by MCP_TIMEOUT).
    // The wait comes first only when the prompt itself needs a server (`/mcp__…` prompts,
    // `@server:uri` mentions), or with MCP_CONNECTION_NONBLOCKING=0 (Claude Code's knob).
    if let Some(mcp) = mcp.as_ref().filter(|m| prompt_needs_mcp(&prompt, m)) {
        let timeouts = cairn::mcp::Timeouts::from_env(&|k| std::env::var(k).ok());
        mcp.wait_settled(timeouts.startup).await;
    }
    for notice in &notices {
        eprintln!("cairn: {notice}");
    }
    let init = init_facts(mcp.as_deref(), &facts);
    let mut stdout = std::io::stdout().lock();
    let outcome = cairn::headless::run(
        conn,
        prompt,
        cli.output_format,
        cli.verbose,
        &init,
        &mut stdout,
    )
    .await?;
    // Named at the end: a server that failed (at start, or while the model waited for it).
    for server in mcp.iter().flat_map(|m| m.servers()) {
        if let status @ cairn::mcp::Status::Failed(_) = server.status() {
            eprintln!("cairn: MCP server \"{}\" {status}", server.name());
        }
    }
    if outcome.is_error() {
        eprintln!(
            "cairn: {}",
            cairn::headless::failure_reason(&outcome, cli.max_turns)
        );
        return Ok(ExitCode::FAILURE);
    }
    Ok(ExitCode::SUCCESS)
}

/// Whether `-p` waits for the MCP servers before its first request: the prompt is an MCP
/// prompt (`/mcp__…`) or mentions a server's resource (`@server:`), or the environment asks
/// for the wait (`MCP_CONNECTION_NONBLOCKING=0` or `false`).
fn prompt_needs_mcp(prompt: &str, mcp: &cairn::mcp::McpManager) -> bool {
    let blocking = std::env::var("MCP_CONNECTION_NONBLOCKING")
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false"));
    blocking
        || prompt.trim_start().starts_with("/mcp__")
        || mcp
            .servers()
            .iter()
            .any(|s| prompt.contains(&format!("@{}:", s.name())))
}

/// What stream-json's `system/init` reports beyond the session's own facts: the MCP servers as
/// they stand at start (`pending` while connecting), their tools, the output style and the key's source.
fn init_facts(
    mcp: Option<&cairn::mcp::McpManager>,
    facts: &host::SessionFacts,
) -> cairn::headless::InitFacts {
    use cairn::headless::McpServerState;
    let mut servers = Vec::new();
    let mut tools = Vec::new();
    if let Some(mcp) = mcp {
        for s in mcp.servers() {
            let status = match s.status() {
                cairn::mcp::Status::Connecting => "pending",
                cairn::mcp::Status::Connected { .. } => "connected",
                cairn::mcp::Status::Failed(_) => "failed",
            };
            servers.push(McpServerState {
                name: s.name().to_string(),
                status: status.into(),
                source: s.config().scope.name().into(),
            });
        }
        servers.extend(mcp.unapproved().into_iter().map(|s| McpServerState {
            name: s.name,
            status: "needs-approval".into(),
            source: s.scope.name().into(),
        }));
        tools = mcp.tools().iter().map(|t| t.name().to_string()).collect();
    }
    cairn::headless::InitFacts {
        mcp_servers: servers,
        mcp_tools: tools,
        output_style: facts.output_style.clone(),
        api_key_source: facts.api_key_source.clone(),
    }
}

/// Log to a file: the terminal belongs to the UI. `CAIRN_LOG` sets the filter.
fn init_logging(verbose: bool) {
    let dir = host::data_root().join("logs");
    if std::fs::create_dir_all(&dir).is_err() {
        return;
    }
    let Ok(file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join("cairn.log"))
    else {
        return;
    };
    let default = if verbose { "debug" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("CAIRN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_writer(std::sync::Mutex::new(file))
        .try_init();
}
