//! cairn: a full-screen terminal coding agent.
//!
//! The crate is one library with two clients. The core (`agent`, `llm`, `tools`, `files`,
//! `permissions`, `hooks`, `config`) knows nothing of terminals; the TUI (`tui`) and headless mode
//! (`headless`) talk to it only through [`protocol`]. See `docs/ARCHITECTURE.md` for the map.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod acp;
pub mod agent;
pub mod checkpoint;
pub mod cli;
pub mod commands;
pub mod config;
pub mod diff;
pub mod files;
pub mod headless;
pub mod hooks;
pub mod host;
pub mod llm;
pub mod lsp;
pub mod mcp;
pub mod media;
pub mod memory;
pub mod permissions;
pub mod plugins;
pub mod protocol;
pub mod rules;
pub mod session;
pub mod shell;
pub mod suggest;
pub mod tools;
pub mod tui;
