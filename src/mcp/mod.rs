//! The MCP client (Model Context Protocol, on the official Rust SDK `rmcp`): which servers a
//! session has and whether they may start ([`config`]), one live connection each ([`client`], with the legacy SSE transport in [`sse`]),
//! the session's servers started in the background with restarts ([`manager`]), an agent
//! run's own servers started and stopped with the run ([`run_servers`]), and the bridge
//! that turns a server's tools into cairn tools ([`tool`]). Nothing here blocks startup, and a
//! server — its config, its output, its death — is untrusted: every failure is a message.

pub mod catalog;
pub mod client;
pub mod config;
pub mod edit;
pub mod handler;
pub mod listing;
pub mod manager;
pub mod names;
pub mod run_servers;
pub mod server;
pub mod server_log;
pub mod session;
pub mod sse;
pub mod stdio;
pub mod tool;

pub use client::Timeouts;
pub use config::{Approval, McpConfig, Scope, ServerConfig, Sources, Transport};
pub use manager::{McpManager, start_servers};
pub use server::{McpOptions, Server, Status};
