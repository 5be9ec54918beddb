//! Terminals as the client runs them: the seam through which Bash runs a command in the
//! client's own terminal (an editor's, over the Agent Client Protocol's `terminal/*`) instead
//! of a process group of cairn's, so the person watches it live where they work.
//!
//! [`ClientTerminal`] is the whole contract: start a program with arguments, environment and
//! directory; read what it printed; wait for it; kill it; release it. It knows nothing of
//! permissions, hooks, timeouts or output limits: the Bash tool keeps those (the gate and
//! hooks decide before [`ClientTerminal::create`] is called; the tool's timeout and interrupt
//! end in [`ClientTerminal::kill`]; its head-and-tail cut and spill file shape what
//! [`ClientTerminal::output`] returned). Background shells do not go through it.

use std::path::PathBuf;

use async_trait::async_trait;

/// A command for the client to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalCommand {
    /// The tool call the command belongs to: the client shows the terminal in that call.
    pub call_id: String,
    pub program: String,
    pub args: Vec<String>,
    /// Added to (or replacing in) the client's environment for the command.
    pub env: Vec<(String, String)>,
    /// Absolute.
    pub cwd: PathBuf,
    /// The client keeps at most this many bytes of output (the newest).
    pub output_byte_limit: u64,
}

/// How a command in a client's terminal ended.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalExit {
    pub exit_code: Option<u32>,
    /// The signal's name (`SIGKILL`) when a signal ended it.
    pub signal: Option<String>,
}

/// What a client's terminal printed so far.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalOutput {
    /// stdout and stderr as the terminal shows them, interleaved.
    pub output: String,
    /// The client dropped the oldest output to stay within the byte limit.
    pub truncated: bool,
    /// Set once the command has ended.
    pub exit: Option<TerminalExit>,
}

/// Why the client could not do what was asked of its terminal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ClientTerminalError(pub String);

/// The client's terminals. Implementations answer from the client (an ACP connection's
/// `terminal/*`) or, in tests, from a local runner.
#[async_trait]
pub trait ClientTerminal: Send + Sync + std::fmt::Debug {
    /// Start `command`; the terminal's id.
    async fn create(&self, command: TerminalCommand) -> Result<String, ClientTerminalError>;

    /// The output so far, and the exit status once the command has ended.
    async fn output(&self, terminal: &str) -> Result<TerminalOutput, ClientTerminalError>;

    /// Wait for the command to end.
    async fn wait_for_exit(&self, terminal: &str) -> Result<TerminalExit, ClientTerminalError>;

    /// Kill the command; the terminal stays readable until released.
    async fn kill(&self, terminal: &str) -> Result<(), ClientTerminalError>;

    /// Free the terminal (killing the command if it still runs). Its id is invalid after.
    async fn release(&self, terminal: &str) -> Result<(), ClientTerminalError>;
}
